"""How the summarize node fails: open for a provider that is down (with a cool-down),
loudly for a configuration that can never work, never for LangGraph's interrupts."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.errors import GraphInterrupt

from fakes import ScriptedChatModel, StatusError
from langgraph_librarian.memory import (
    RunningSummarizer,
    create_summarize_node,
    create_summary_graph,
)


def chef() -> ScriptedChatModel:
    return ScriptedChatModel(script=lambda messages: f"Answer number {len(messages)}.")


def cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def graph_with(summarizer: Any, tmp_path: Any, **kwargs: Any) -> Any:
    conn = sqlite3.connect(tmp_path / "db", check_same_thread=False)
    return create_summary_graph(
        chef(), summarizer=summarizer, checkpointer=SqliteSaver(conn), **kwargs
    )


HISTORY = [
    HumanMessage("I'm allergic to nuts.", id="1"),
    AIMessage("Noted.", id="2"),
    HumanMessage("Lunch?", id="3"),
    AIMessage("Soup.", id="4"),
]


# -- configuration errors raise (A8) ----


def test_a_misspelled_provider_raises_instead_of_failing_open_forever(tmp_path):
    graph = graph_with("opnai:gpt-4o-mini", tmp_path, max_messages=2)
    graph.invoke({"messages": [HumanMessage("hi")]}, cfg())
    with pytest.raises(ValueError, match="summary_model"):
        graph.invoke({"messages": [HumanMessage("again")]}, cfg())


def test_a_missing_provider_package_is_reported_when_the_summarizer_is_built():
    with pytest.raises(ValueError, match="pip install langchain-anthropic"):
        RunningSummarizer("anthropic:claude-3-5-haiku-latest")


def test_a_model_string_is_built_like_the_librarys_other_model_calls(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    summarizer = RunningSummarizer("openai:gpt-4o-mini", timeout=7.0)
    model = summarizer.model
    assert model is not None
    assert model.request_timeout == 7.0  # type: ignore[attr-defined]
    assert model.max_retries == 0  # type: ignore[attr-defined]  # we retry ourselves


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_provider_refusing_the_configuration_raises(status):
    model = ScriptedChatModel(script=[StatusError(status)])
    node = create_summarize_node(RunningSummarizer(model, max_retries=0), keep_last=2)
    with pytest.raises(StatusError):
        node({"messages": HISTORY, "summary": ""})


def test_defaults_fail_fast():
    assert RunningSummarizer().timeout == 20.0


# -- a provider that is down is not called on every turn (A9) ----


def test_after_a_failure_the_node_waits_for_more_messages_before_trying_again(tmp_path):
    down = ScriptedChatModel(script=[ConnectionError("provider down")])
    graph = graph_with(RunningSummarizer(down, max_retries=0), tmp_path, max_messages=2)
    attempts = []
    for i in range(9):
        state = graph.invoke({"messages": [HumanMessage(f"turn {i}")]}, cfg())
        attempts.append(len(down.calls))
    # due from turn 2 on (4 messages); tries at 4, then 4+4=8, then 8+8=16 messages
    assert attempts == [0, 1, 1, 2, 2, 2, 2, 3, 3]
    metadata = state["summary_metadata"]
    assert metadata["summary_failures"] == 3 and metadata["summary_retry_at"] == 16 + 16
    assert "provider down" in metadata["summary_error"]
    assert len(state["messages"]) == 18  # nothing was deleted, nothing was lost


def test_a_success_after_failures_clears_the_cool_down(tmp_path):
    flaky = ScriptedChatModel(
        script=[ConnectionError("down"), "- User allergic to nuts; asked about turns."]
    )
    graph = graph_with(RunningSummarizer(flaky, max_retries=0), tmp_path, max_messages=2)
    graph.invoke({"messages": [HumanMessage("I'm allergic to nuts.")]}, cfg())
    for i in range(3):
        state = graph.invoke({"messages": [HumanMessage(f"turn {i}")]}, cfg())
    assert len(flaky.calls) == 2 and state["summary"].startswith("- User allergic to nuts")
    assert "summary_retry_at" not in state["summary_metadata"]
    assert len(state["messages"]) == 2


# -- interrupts and bad state (A12) ----


def test_an_interrupt_raised_while_summarizing_is_not_swallowed():
    model = ScriptedChatModel(script=[GraphInterrupt()])
    node = create_summarize_node(RunningSummarizer(model, max_retries=0), keep_last=2)
    with pytest.raises(GraphInterrupt):
        node({"messages": HISTORY, "summary": ""})


async def test_an_interrupt_is_not_swallowed_async():
    model = ScriptedChatModel(script=[GraphInterrupt()])
    node = create_summarize_node(RunningSummarizer(model, max_retries=0), keep_last=2)
    with pytest.raises(GraphInterrupt):
        await node.ainvoke({"messages": HISTORY, "summary": ""})


@pytest.mark.parametrize("summary", [["- a list"], 42])
def test_a_summary_that_is_not_a_string_loses_nothing(summary):
    update = create_summarize_node(keep_last=2)({"messages": HISTORY, "summary": summary})
    assert "messages" not in update and "summary" not in update
    assert "must be a string" in update["summary_metadata"]["summary_error"]
