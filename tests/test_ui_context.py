"""``context_for_strategy``: four model inputs from one Librarian thread, nothing deleted."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import MemorySaver

from langgraph_librarian import LibrarianConfig, create_librarian_graph
from langgraph_librarian.context import (
    CONTEXT_STRATEGIES,
    context_for_strategy,
    is_running_summary,
)


def _graph(config: LibrarianConfig) -> tuple[Any, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        seen.append(
            {
                "state": dict(state),
                **{s: context_for_strategy(state, s) for s in CONTEXT_STRATEGIES},
            }
        )
        return {"messages": [AIMessage(f"reply {len(seen)}")]}

    return create_librarian_graph(agent, config, checkpointer=MemorySaver()), seen


def _chat(graph: Any, thread: str, texts: list[str]) -> None:
    cfg = {"configurable": {"thread_id": thread}}
    for text in texts:
        graph.invoke({"messages": [HumanMessage(text)]}, cfg)


TURNS = [
    "I'm allergic to peanuts and tree nuts, please remember it.",
    "Our flat has a tiny oven that only fits one tray.",
    "My sister visits on Friday and she is vegan.",
    "What is a good weeknight pasta?",
    "Could you suggest a dessert without nuts for Friday?",
]


def test_four_strategies_on_one_thread_with_a_gist() -> None:
    graph, seen = _graph(LibrarianConfig(running_summary_tokens=200, always_include_recent_turns=2))
    _chat(graph, "t", TURNS)
    last = seen[-1]
    messages = last["state"]["messages"]
    curated = last["state"]["curated_messages"]

    assert last["everything"] == messages
    assert last["both"] == curated
    assert is_running_summary(last["both"][0])  # the gist starts the curated context
    assert [m for m in last["librarian"]] == [m for m in curated if not is_running_summary(m)]
    assert not any(is_running_summary(m) for m in last["librarian"])

    summary_input = last["running_summary"]
    assert is_running_summary(summary_input[0])
    assert summary_input[0].content == curated[0].content  # the same gist, not a second one
    tail = summary_input[1:]
    # Spec 02's input: the gist, then the messages not folded yet (the recent turns).
    assert tail == messages[len(messages) - len(tail) :]
    assert tail[-1].content == TURNS[-1]
    assert len(tail) < len(messages)
    gist = last["state"]["librarian_summary"]
    assert all(m.id != gist["upto"] for m in tail)
    # The allergy was folded: it is in the gist, not among the kept messages.
    assert "allergic to peanuts" in summary_input[0].content
    assert all("allergic" not in str(m.content) for m in tail)


def test_without_a_gist_librarian_is_both_and_summary_is_everything() -> None:
    graph, seen = _graph(LibrarianConfig(always_include_recent_turns=1))
    _chat(graph, "t", TURNS)
    last = seen[-1]
    assert last["librarian"] == last["both"] == last["state"]["curated_messages"]
    assert last["running_summary"] == last["everything"] == last["state"]["messages"]


def test_a_gist_whose_messages_were_deleted_is_not_used() -> None:
    graph, seen = _graph(LibrarianConfig(running_summary_tokens=200, always_include_recent_turns=2))
    _chat(graph, "t", TURNS[:4])
    cfg = {"configurable": {"thread_id": "t"}}
    state = graph.get_state(cfg).values
    upto = state["librarian_summary"]["upto"]
    assert upto and state["librarian_summary"]["text"]
    graph.update_state(cfg, {"messages": [RemoveMessage(id=upto)]})
    _chat(graph, "t", [TURNS[4]])
    last = seen[-1]
    # The gist names a message that is gone: the running-summary input is the history.
    assert last["running_summary"] == last["state"]["messages"]


def test_bad_arguments_are_named() -> None:
    state = {"messages": [HumanMessage("hi")]}
    with pytest.raises(ValueError, match="curated_messages"):
        context_for_strategy(state, "librarian")
    with pytest.raises(ValueError, match="unknown context strategy 'all'"):
        context_for_strategy(state, "all")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be a list"):
        context_for_strategy({"messages": "hi"}, "everything")
    # No selection needed for these two.
    assert [m.content for m in context_for_strategy(state, "running_summary")] == ["hi"]
    assert [m.content for m in context_for_strategy(state, "everything")] == ["hi"]
