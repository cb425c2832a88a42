"""benchmarks/bench_chats.py: your own chats as a JSON file, read and scored."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_chats.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_chats", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_chats"] = module
    spec.loader.exec_module(module)
    return module


def _write(tmp_path: Path, questions: list[dict]) -> Path:
    data = {
        "conversations": [
            {
                "id": "c1",
                "sessions": [
                    {
                        "messages": [
                            {"role": "user", "content": "I'm allergic to sesame.", "key": "a"},
                            {"role": "assistant", "content": "Noted, I'll remember that."},
                        ]
                    },
                    {
                        "messages": [
                            {"role": "user", "content": "My sister Ines is vegan.", "key": "s"},
                            {"role": "assistant", "content": "I'll plan a vegan menu."},
                        ]
                    },
                ],
                "questions": questions,
            }
        ]
    }
    path = tmp_path / "chats.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_question_is_scored_by_its_evidence(bench, tmp_path):
    path = _write(
        tmp_path,
        [
            {"q": "What does my sister Ines eat?", "evidence": ["s"], "type": "fact"},
            {"q": "Which airline do I like?", "evidence": [], "type": "absent"},
        ],
    )
    rows = bench.run(bench.load(path), recall=True, misses=False)
    assert [r["type"] for r in rows] == ["fact", "absent"]
    assert rows[0]["librarian"] == 1.0 and rows[0]["recall"] == 1.0
    assert rows[1]["recall"] in (0.0, 1.0)


@pytest.mark.parametrize(
    ("question", "error"),
    [
        ({"q": "?", "evidence": ["nope"], "type": "fact"}, "unknown evidence keys"),
        ({"q": "?", "evidence": [], "type": "fact"}, "no evidence"),
    ],
)
def test_a_bad_file_names_its_problem(bench, tmp_path, question, error):
    with pytest.raises(SystemExit, match=error):
        bench.load(_write(tmp_path, [question]))
