"""The "done when" scenario: examples/recall_allergy.py, checked end to end."""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path
from types import ModuleType

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_librarian.recall._result import RECALL_MESSAGE_ID

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "recall_allergy.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("recall_allergy", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def check(seen: dict) -> None:
    evidence = seen["recalled_input"][0]
    assert evidence.id == RECALL_MESSAGE_ID and evidence.type == "system"
    assert "I have a nut allergy" in evidence.content and "UNTRUSTED" in evidence.content
    assert "nut allergy" in seen["recalled_answer"]
    assert all(m.id != RECALL_MESSAGE_ID for m in seen["other_scope_input"])
    assert "walnut" in seen["other_scope_answer"]
    assert seen["checkpoint_has_recall"] is False
    assert seen["failing_answer"]  # the turn still answers with the store down
    assert seen["failing_tool"].startswith("The memory tool said: memory unavailable:")


def test_allergy_scenario_lexical():
    check(load_example().run())


@pytest.mark.embeddings
def test_allergy_scenario_with_the_packaged_embedding_model():
    check(load_example().run())


def test_checkpoint_probe_detects_recalled_text_where_it_is():
    example = load_example()
    saver = InMemorySaver()
    example.run(checkpointer=saver)
    assert example.checkpoint_mentions(saver, "thread-1", "I have a nut allergy")
    assert not example.checkpoint_mentions(saver, "thread-2", "I have a nut allergy")


def test_script_runs(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE)])
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    assert "recalled text in thread-2's checkpoint: False" in out
    assert "store down, tool: The memory tool said: memory unavailable" in out
