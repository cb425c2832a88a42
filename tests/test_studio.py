"""LangGraph Studio / ``langgraph dev``: langgraph.json and the example graph it serves.

The LangGraph CLI is not needed here: the config is checked against the rules of
langgraph-cli's ``validate_config`` (0.4.x) that apply to it, and the graph module is
imported by file path, the way ``langgraph dev`` loads it, then run.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph.state import CompiledStateGraph

ROOT = Path(__file__).resolve().parents[1]
CONFIG = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
# Top-level keys of langgraph-cli's Config (schemas.py); anything else is a typo there.
CLI_KEYS = {
    "python_version", "node_version", "api_version", "base_image", "image_distro",
    "pip_config_file", "pip_installer", "source", "dockerfile_lines", "dependencies",
    "graphs", "env", "store", "checkpointer", "auth", "encryption", "priority", "http",
    "webhooks", "ui", "ui_config", "keep_pkg_tools",
}  # fmt: skip


def graph_specs() -> dict[str, str]:
    return {
        name: spec["path"] if isinstance(spec, dict) else spec
        for name, spec in CONFIG["graphs"].items()
    }


def load(spec: str):
    path, attribute = spec.rsplit(":", 1)
    module_name = f"studio_{Path(path).stem}"
    loader = importlib.util.spec_from_file_location(module_name, ROOT / path)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    sys.modules[module_name] = module
    loader.loader.exec_module(module)
    return module, getattr(module, attribute)


def test_config_follows_the_cli_rules():
    assert set(CONFIG) <= CLI_KEYS
    assert re.fullmatch(r"3\.\d+", CONFIG["python_version"])
    assert tuple(map(int, CONFIG["python_version"].split("."))) >= (3, 11)
    assert CONFIG["dependencies"] == ["."]  # installs this project, as `pip install .` does
    assert CONFIG["graphs"], "the CLI refuses a config without graphs"
    for name, spec in CONFIG["graphs"].items():
        if isinstance(spec, dict):
            assert set(spec) <= {"path", "description"}
        path, _, attribute = graph_specs()[name].partition(":")
        assert attribute.isidentifier() and (ROOT / path).is_file(), spec
    assert isinstance(CONFIG.get("env", {}), dict | str)


@pytest.mark.parametrize("name", list(graph_specs()))
def test_graph_module_imports_and_compiles_without_a_checkpointer(name):
    _, graph = load(graph_specs()[name])
    assert isinstance(graph, CompiledStateGraph)
    assert graph.checkpointer is None  # the server brings its own persistence
    assert "messages" in graph.get_input_jsonschema()["properties"]  # Studio's chat input
    result = graph.invoke({"messages": [HumanMessage("The venue is Porto.")]})
    assert result["index"] and result["messages"][-1].type == "ai"


def test_studio_graph_shows_index_and_metadata_over_a_thread():
    module, _ = load(graph_specs()["librarian"])
    graph = module.build_graph(checkpointer=MemorySaver())
    thread = {"configurable": {"thread_id": "studio"}}
    graph.invoke({"messages": [HumanMessage("The offsite venue is Porto, in May.")]}, thread)
    graph.invoke({"messages": [HumanMessage("Separately: the pasta recipe needs basil.")]}, thread)
    result = graph.invoke({"messages": [HumanMessage("Where is the offsite venue?")]}, thread)
    state = graph.get_state(thread).values
    assert len(state["index"]) == len(state["messages"]) == 6
    meta = state["librarian_metadata"]
    assert meta["selection_strategy"] == "local"
    assert 0 in meta["selected_ids"] and 2 not in meta["selected_ids"]  # venue in, pasta out
    reply = result["messages"][-1].content
    assert "The offsite venue is Porto" in reply and "pasta" not in reply
