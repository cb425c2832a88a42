"""RunningSummaryMiddleware in a real create_agent, alone and stacked with LibrarianMiddleware."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from fakes import ScriptedChatModel, ToolCallingScriptedModel, prompt_text
from langgraph_librarian import LibrarianMiddleware
from langgraph_librarian.memory import (
    RunningSummarizer,
    RunningSummaryMiddleware,
    history_problems,
)
from langgraph_librarian.tokens import count_text_tokens

TURNS = [
    "I'm vegetarian and allergic to nuts.",
    "check the pantry for rice",
    "I love Thai curry.",
    "What about a shopping list?",
    "How long for jasmine rice?",
    "check the pantry again",
    "Any breakfast idea?",
    "Could I make a nut tart tonight?",
]
SUMMARY_PREFIX = "Here is a summary of the conversation to date:"


@tool
def pantry(item: str) -> str:
    """Say how much of an item is in the pantry."""
    return f"{item}: 2 left"


def agent_model() -> ToolCallingScriptedModel:
    counter = {"n": 0}

    def decide(messages: list[Any]) -> AIMessage:
        last = messages[-1]
        if last.type == "human" and "pantry" in str(last.content):
            counter["n"] += 1
            call = {"name": "pantry", "args": {"item": "rice"}, "id": f"c{counter['n']}"}
            return AIMessage("", tool_calls=[{**call, "type": "tool_call"}])
        return AIMessage(f"answer seeing {len(messages)} messages")

    return ToolCallingScriptedModel(script=decide)


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def summary_of(state: dict[str, Any]) -> str:
    first = state["messages"][0]
    assert first.additional_kwargs.get("lc_source") == "summarization"
    return str(first.content)


def make_agent(model: Any, middleware: list[Any], checkpointer: Any) -> Any:
    return create_agent(
        model,
        tools=[pantry],
        system_prompt="You are Chef Aria.",
        middleware=middleware,
        checkpointer=checkpointer,
    )


@pytest.mark.parametrize("summary_first", [True, False], ids=["summary-first", "librarian-first"])
def test_stacks_with_librarian_middleware(tmp_path, summary_first):
    model = agent_model()
    summarizer = RunningSummarizer(max_summary_tokens=90)
    summary = RunningSummaryMiddleware(
        model, summarizer=summarizer, trigger=("messages", 8), keep=("messages", 4)
    )
    librarian = LibrarianMiddleware()
    stack = [summary, librarian] if summary_first else [librarian, summary]
    conn = sqlite3.connect(tmp_path / "agent.db", check_same_thread=False)
    agent = make_agent(model, stack, SqliteSaver(conn))
    summaries = []
    for text in TURNS:
        state = agent.invoke({"messages": [HumanMessage(text)]}, cfg("sam"))
        if state.get("summary_metadata"):
            summaries.append(summary_of(state))
        # the Librarian keeps its index reconciled with the rewritten history
        assert len(state["index"]) == len(state["messages"])
        assert "selection_skipped" in state["librarian_metadata"]
    assert len(set(summaries)) >= 2 and "allergic to nuts" in summaries[-1]
    assert summaries[-1].startswith(SUMMARY_PREFIX)
    body = summaries[-1].removeprefix(SUMMARY_PREFIX)
    assert count_text_tokens(body.strip()) <= 90
    assert len(state["messages"]) <= 9
    for call in model.calls:  # every model input is a valid history
        assert history_problems(call) == []
        assert not any("Context Extraction Assistant" in str(m.content) for m in call)
    # the Thursday question reaches the gist: the Librarian selects the summary message
    assert "allergic to nuts" in prompt_text(model.calls[-1])
    # restart: a new connection on the same file sees the summary and the index
    agent = make_agent(
        model,
        [RunningSummaryMiddleware(model), LibrarianMiddleware()],
        SqliteSaver(sqlite3.connect(tmp_path / "agent.db", check_same_thread=False)),
    )
    assert "allergic to nuts" in summary_of(agent.get_state(cfg("sam")).values)
    assert agent.get_state(cfg("other")).values == {}


async def test_stacks_async(tmp_path):
    model = agent_model()
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "agent.db")) as saver:
        agent = make_agent(
            model,
            [
                RunningSummaryMiddleware(model, trigger=("messages", 8), keep=("messages", 4)),
                LibrarianMiddleware(),
            ],
            saver,
        )
        for text in TURNS:
            state = await agent.ainvoke({"messages": [HumanMessage(text)]}, cfg("sam"))
    assert "allergic to nuts" in summary_of(state)
    assert model.async_calls == len(model.calls)
    assert len(state["index"]) == len(state["messages"])


def test_llm_summarizer_extends_the_previous_summary_message(tmp_path):
    model = agent_model()
    writer = ScriptedChatModel(script=lambda messages: f"- summary {len(writer.calls)}")
    agent = make_agent(
        model,
        [
            RunningSummaryMiddleware(
                model, summarizer=writer, trigger=("messages", 6), keep=("messages", 2)
            )
        ],
        SqliteSaver(sqlite3.connect(tmp_path / "db", check_same_thread=False)),
    )
    for text in TURNS[:6]:
        state = agent.invoke({"messages": [HumanMessage(text)]}, cfg("sam"))
    n = len(writer.calls)
    assert n >= 2
    last_prompt = prompt_text(writer.calls[-1])
    assert f"<previous_summary>\n- summary {n - 1}\n</previous_summary>" in last_prompt
    assert SUMMARY_PREFIX not in last_prompt  # the old summary is data, not a message
    assert summary_of(state).endswith(f"- summary {n}")


def failing_summarizer() -> RunningSummarizer:
    return RunningSummarizer(
        ScriptedChatModel(script=[RuntimeError("provider down")]), max_retries=0
    )


def test_failed_summary_leaves_the_history_and_the_agent_answers(tmp_path):
    model = agent_model()
    agent = make_agent(
        model,
        [
            RunningSummaryMiddleware(
                model,
                summarizer=failing_summarizer(),
                trigger=("messages", 4),
                keep=("messages", 2),
            )
        ],
        SqliteSaver(sqlite3.connect(tmp_path / "db", check_same_thread=False)),
    )
    for text in TURNS[:4]:
        state = agent.invoke({"messages": [HumanMessage(text)]}, cfg("sam"))
    assert state["messages"][0].content == TURNS[0]  # nothing removed
    assert state["messages"][-1].content.startswith("answer seeing")
    assert "provider down" in state["summary_metadata"]["summary_error"]


async def test_failed_summary_async():
    model = agent_model()
    agent = make_agent(
        model,
        [
            RunningSummaryMiddleware(
                model,
                summarizer=failing_summarizer(),
                trigger=("messages", 2),
                keep=("messages", 1),
            )
        ],
        None,
    )
    state = await agent.ainvoke(
        {"messages": [HumanMessage("hi"), AIMessage("yo"), HumanMessage("again")]}
    )
    assert state["messages"][-1].content.startswith("answer seeing")
    assert "summary_error" in state["summary_metadata"]


def test_plain_summarization_middleware_fails_the_turn_which_is_why_we_subclass():
    model = agent_model()

    def broken(messages: list[Any]) -> str:
        raise RuntimeError("provider down")

    agent = make_agent(
        model,
        [
            SummarizationMiddleware(
                model, trigger=("messages", 2), keep=("messages", 1), summarizer=broken
            )
        ],
        None,
    )
    with pytest.raises(RuntimeError, match="provider down"):
        agent.invoke({"messages": [HumanMessage("hi"), AIMessage("yo"), HumanMessage("again")]})
