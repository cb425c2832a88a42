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
    # No digits: a number the conversation does not contain is an invented fact.
    writer = ScriptedChatModel(
        script=lambda messages: f"- summary {'x' * len(writer.calls)}: vegetarian, allergic to nuts"
    )
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
    assert (
        f"<previous_summary>\n- summary {'x' * (n - 1)}: vegetarian, allergic to nuts\n"
        "</previous_summary>" in last_prompt
    )
    assert SUMMARY_PREFIX not in last_prompt  # the old summary is data, not a message
    assert summary_of(state).endswith(f"- summary {'x' * n}: vegetarian, allergic to nuts")


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


# -- the current question is never summarized (A7) ----


def looping_agent_model(calls: int = 3) -> ToolCallingScriptedModel:
    """One long agentic turn: ``calls`` pantry calls, then an answer."""
    made = {"n": 0}

    def decide(messages: list[Any]) -> AIMessage:
        if made["n"] < calls:
            made["n"] += 1
            call = {"name": "pantry", "args": {"item": f"x{made['n']}"}, "id": f"c{made['n']}"}
            return AIMessage("", tool_calls=[{**call, "type": "tool_call"}])
        return AIMessage("done")

    return ToolCallingScriptedModel(script=decide)


QUESTION = "Which of x1, x2, x3 do I have? Answer in French."


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
async def test_a_long_agentic_turn_keeps_its_question(tmp_path, run_async):
    model = looping_agent_model()
    middleware = RunningSummaryMiddleware(model, trigger=("messages", 4), keep=("messages", 2))
    agent = make_agent(model, [middleware], None)
    payload = {"messages": [HumanMessage(QUESTION)]}
    state = await agent.ainvoke(payload) if run_async else agent.invoke(payload)
    for call in model.calls:
        questions = [
            m for m in call if m.type == "human" and "lc_source" not in m.additional_kwargs
        ]
        assert [m.content for m in questions] == [QUESTION]  # never folded into the summary
        assert history_problems(call) == []
    assert QUESTION not in summary_of(state)
    assert state["summary_metadata"]["turn_aligned"] is False
    assert state["messages"][-1].content == "done"


# -- metadata (A11) ----


def test_metadata_counts_only_conversation_and_matches_the_graph_nodes_schema(tmp_path):
    model = agent_model()
    agent = make_agent(
        model,
        [RunningSummaryMiddleware(model, trigger=("messages", 6), keep=("messages", 2))],
        SqliteSaver(sqlite3.connect(tmp_path / "db", check_same_thread=False)),
    )
    summarized = []
    for text in ["I'm allergic to nuts.", "Lunch?", "I love curry.", "Dessert?", "Tea?", "Soup?"]:
        before = agent.get_state(cfg("sam")).values.get("messages", [])
        state = agent.invoke({"messages": [HumanMessage(text)]}, cfg("sam"))
        metadata = state.get("summary_metadata")
        if metadata and len(summarized) < 2 and metadata != (summarized or [None])[-1]:
            had_summary = any("lc_source" in m.additional_kwargs for m in before)
            conversation = len(before) + 1 - (1 if had_summary else 0)  # + the new question
            assert metadata["summarized_count"] == conversation - metadata["kept_count"]
            assert metadata["removed_count"] == len(before) + 1 - metadata["kept_count"]
            summarized.append(metadata)
    assert len(summarized) == 2  # a first and a second summarization
    second = summarized[1]
    assert second["removed_count"] == second["summarized_count"] + 1  # the old summary message
    for key in ("summary_method", "summary_tokens", "summary_recompressed", "turn_aligned"):
        assert key in second
    assert second["summary_method"] == "extractive" and second["turn_aligned"] is True


# -- LangChain-style arguments (D) ----


async def test_a_langchain_style_async_summarizer_and_summary_prompt_pass_through():
    async def summarize(messages: list[Any]) -> str:
        return f"{len(messages)} messages about nuts"

    model = agent_model()
    agent = make_agent(
        model,
        [
            RunningSummaryMiddleware(
                model, summarizer=summarize, trigger=("messages", 4), keep=("messages", 2)
            )
        ],
        None,
    )
    history = [HumanMessage("I'm allergic to nuts."), AIMessage("Noted."), HumanMessage("Lunch?")]
    state = await agent.ainvoke({"messages": [*history, AIMessage("Soup."), HumanMessage("Tea?")]})
    assert summary_of(state).endswith("messages about nuts")
    assert state["summary_metadata"]["summarized_count"] == 3

    writer = ScriptedChatModel(script="- Sam is allergic to nuts.")
    middleware = RunningSummaryMiddleware(
        model,
        summarizer=writer,
        summary_prompt="Summarize briefly:\n{messages}",
        trigger=("messages", 4),
        keep=("messages", 2),
    )
    agent = make_agent(model, [middleware], None)
    state = agent.invoke({"messages": [*history, AIMessage("Soup."), HumanMessage("Tea?")]})
    assert summary_of(state).endswith("- Sam is allergic to nuts.")
    assert prompt_text(writer.calls[0]).startswith("Summarize briefly:")


def test_bad_summarizer_arguments_get_clear_errors():
    model = agent_model()
    with pytest.raises(TypeError, match="not int"):
        RunningSummaryMiddleware(model, summarizer=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"RunningSummarizer\(prompt="):
        RunningSummaryMiddleware(model, summarizer=RunningSummarizer(), summary_prompt="{messages}")


# -- budgets, restarts of the summary, cool-down ----


def test_the_token_counter_reaches_the_running_summary(tmp_path):
    def per_char(messages: Any) -> int:
        return sum(len(str(getattr(m, "content", m))) for m in messages)

    model = agent_model()
    middleware = RunningSummaryMiddleware(
        model,
        summarizer=RunningSummarizer(max_summary_tokens=60),
        trigger=("messages", 4),
        keep=("messages", 2),
        token_counter=per_char,
    )
    agent = make_agent(model, [middleware], None)
    history: list[Any] = []
    for i in range(4):
        history += [HumanMessage(f"第{i}天。" + "我们讨论了菜谱和做法。" * 5), AIMessage("好的。")]
    state = agent.invoke({"messages": [*history, HumanMessage("还有吗？")]})
    body = summary_of(state).removeprefix(SUMMARY_PREFIX).strip()
    assert body and len(body) <= 60


def test_the_previous_summary_is_read_back_whatever_langchain_writes_around_it():
    (written,) = SummarizationMiddleware._build_new_messages("- User: allergic to nuts.")
    runnable = RunningSummarizer(max_summary_tokens=200).as_langchain_summarizer()
    assert runnable.invoke([written]) == "- User: allergic to nuts."  # LangChain's own message
    (ours,) = RunningSummaryMiddleware._build_new_messages("- User: likes basil.")
    ours.content = "Some other wording entirely:\n\n- User: likes basil."
    assert runnable.invoke([ours]) == "- User: likes basil."


def test_after_a_failure_the_middleware_waits_before_trying_again():
    failing = ScriptedChatModel(script=[ConnectionError("down")])
    model = agent_model()
    agent = make_agent(
        model,
        [
            RunningSummaryMiddleware(
                model,
                summarizer=RunningSummarizer(failing, max_retries=0),
                trigger=("messages", 2),
                keep=("messages", 1),
            )
        ],
        SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False)),
    )
    for i in range(4):
        state = agent.invoke({"messages": [HumanMessage(f"turn {i}")]}, cfg("t"))
    # due from the 2nd turn (3 messages): tries at 3, then from 3 + 4 = 7 messages on
    assert len(failing.calls) == 2
    assert state["summary_metadata"]["summary_failures"] == 2
    assert state["messages"][0].content == "turn 0"
