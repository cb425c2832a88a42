"""Wrong-typed settings are refused when built, naming the parameter (not at the first turn,
nor by a summary that fails open on every message)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from langgraph_librarian import LibrarianConfig, LibrarianMiddleware
from langgraph_librarian.recall import (
    RecallMiddleware,
    ScopeMemory,
    create_capture_node,
    create_memory_tools,
    create_recall_hook,
)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("summary_prompt", 5),
        ("summary_prompt", ["Summarize."]),
        ("selection_prompt", 5),
        ("selection_prompt", b"{query} {index}"),
        ("token_counter", 5),
        ("token_counter", "tiktoken"),
    ],
)
def test_wrong_typed_settings_raise_naming_the_field(field: str, value: Any):
    with pytest.raises(TypeError, match=field):
        LibrarianConfig(**{field: value})
    with pytest.raises(TypeError, match=field):  # as a run's configurable["librarian"] dict
        LibrarianMiddleware({field: value})


def test_right_typed_settings_are_kept():
    def counter(messages: Any) -> int:
        return 7 * len(messages)

    config = LibrarianConfig(
        summary_prompt="Summarize in one line.",
        selection_prompt="Question: {query}\nIndex:\n{index}",
        token_counter=counter,
    )
    assert config.summary_prompt == "Summarize in one line." and config.token_counter is counter


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda bad: RecallMiddleware(bad), "RecallMiddleware"),
        (lambda bad: create_recall_hook(bad), "create_recall_hook"),
        (lambda bad: create_capture_node(bad), "create_capture_node"),
        (lambda bad: create_memory_tools(bad), "create_memory_tools"),
    ],
)
@pytest.mark.parametrize("bad", ["user:42", InMemoryStore(), None])
def test_recall_faces_refuse_what_is_not_a_scope_memory(build: Any, name: str, bad: Any):
    with pytest.raises(TypeError, match=f"{name} takes a ScopeMemory"):
        build(bad)


def test_recall_middleware_flags_must_be_booleans():
    memory = ScopeMemory(InMemoryStore())
    with pytest.raises(TypeError, match="capture_turns"):
        RecallMiddleware(memory, capture_turns="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="report"):
        RecallMiddleware(memory, report=1)  # type: ignore[arg-type]
    assert RecallMiddleware(memory, capture_turns=True).capture_turns is True
