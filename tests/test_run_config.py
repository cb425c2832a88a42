"""The library's own model calls belong to the user's run: traced, never streamed."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import MemorySaver

from fakes import ScriptedChatModel, StreamingScriptedModel, ToolCallingScriptedModel
from helpers import conversation
from langgraph_librarian import LibrarianConfig, LibrarianMiddleware, create_librarian_graph

SELECTOR_ANSWER = "Reasoning about the budget.\nIDs: [4, 16]"
SUMMARY = "A short summary of the message."


class RunRecorder(BaseCallbackHandler):
    """Records every chat-model run: its first prompt line, tags and parent."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.runs.append(
            {
                "parent": parent_run_id,
                "tags": list(tags or []),
                "step": (metadata or {}).get("librarian_step"),
            }
        )


def agent_with_model(model: ScriptedChatModel):
    def agent(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [model.invoke(list(state["curated_messages"]))]}

    async def aagent(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(list(state["curated_messages"]))]}

    return agent, aagent


def llm_graph(agent_model: ScriptedChatModel, use_async: bool):
    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script=SUMMARY),
        selector_model=ScriptedChatModel(script=SELECTOR_ANSWER),
        always_include_recent_turns=1,
        retry_backoff=0,
    )
    sync_agent, async_agent = agent_with_model(agent_model)
    return create_librarian_graph(
        async_agent if use_async else sync_agent, config, checkpointer=MemorySaver()
    )


def streamed_texts(chunks: list[Any]) -> list[str]:
    return [str(message.content) for message, _meta in chunks]


def test_stream_shows_only_the_agents_tokens_sync():
    graph = llm_graph(ScriptedChatModel(script="The budget is 15,500 dollars."), use_async=False)
    cfg = {"configurable": {"thread_id": "s"}}
    graph.invoke({"messages": conversation(10)}, cfg)  # indexing with the LLM indexer
    question = {"messages": [HumanMessage("What is the budget?")]}
    chunks = list(graph.stream(question, cfg, stream_mode="messages"))
    assert streamed_texts(chunks) == ["The budget is 15,500 dollars."]


async def test_stream_shows_only_the_agents_tokens_async():
    graph = llm_graph(ScriptedChatModel(script="The budget is 15,500 dollars."), use_async=True)
    cfg = {"configurable": {"thread_id": "a"}}
    await graph.ainvoke({"messages": conversation(10)}, cfg)
    chunks = [
        c
        async for c in graph.astream(
            {"messages": [HumanMessage("What is the budget?")]}, cfg, stream_mode="messages"
        )
    ]
    assert streamed_texts(chunks) == ["The budget is 15,500 dollars."]


@pytest.mark.parametrize("use_async", [False, True])
async def test_callbacks_see_internal_calls_as_tagged_child_runs(use_async):
    recorder = RunRecorder()
    graph = llm_graph(ScriptedChatModel(script="answer"), use_async=use_async)
    cfg = {"configurable": {"thread_id": "cb"}, "callbacks": [recorder]}
    first = {"messages": conversation(10)}
    second = {"messages": [HumanMessage("What is the budget?")]}
    if use_async:
        await graph.ainvoke(first, cfg)
        await graph.ainvoke(second, cfg)
    else:
        graph.invoke(first, cfg)
        graph.invoke(second, cfg)
    steps = [r["step"] for r in recorder.runs]
    # Both turns select: the first one's 10 long turns are over the default budget.
    assert steps.count("index") >= 20 and steps.count("select") == 2
    for run in recorder.runs:
        assert run["parent"] is not None  # a child of the user's graph run, not a root
        if run["step"] is not None:
            assert "nostream" in run["tags"] and "langgraph_librarian" in run["tags"]
        else:  # the agent's own model call is not tagged by us
            assert "nostream" not in run["tags"]


def test_background_indexing_calls_run_as_tagged_children_of_the_turn():
    """The worker thread does not inherit the turn's context: the run config is passed,
    so the user's callbacks see the indexer's calls as they do in the foreground."""
    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian import wait_for_background_indexing

    indexer = ScriptedChatModel(script=SUMMARY)
    config = LibrarianConfig(
        indexer_model=indexer,
        selector_model="local",
        embeddings=None,
        store=InMemoryStore(),
        background_indexing=True,
        retry_backoff=0,
    )
    graph = create_librarian_graph(agent_with_model(ScriptedChatModel(script="ok"))[0], config)
    recorder = RunRecorder()
    cfg = {"configurable": {"thread_id": "bg"}, "callbacks": [recorder], "tags": ["user-tag"]}
    graph.invoke({"messages": conversation(4)}, cfg)
    assert wait_for_background_indexing(10)
    indexed = [r for r in recorder.runs if r["step"] == "index"]
    assert indexer.calls and len(indexed) == len(indexer.calls)
    for run in indexed:
        assert run["parent"] is not None
        assert {"nostream", "langgraph_librarian", "user-tag"} <= set(run["tags"])


def test_middleware_stream_shows_only_the_agents_tokens():
    selector = ScriptedChatModel(script=SELECTOR_ANSWER)
    model = ToolCallingScriptedModel(script=lambda _messages: AIMessage("Final answer."))
    agent = create_agent(
        model,
        tools=[],
        middleware=[
            LibrarianMiddleware(LibrarianConfig(selector_model=selector, indexer_model="local"))
        ],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "mw"}}
    agent.invoke({"messages": conversation(10)}, cfg)
    before = len(selector.calls)
    question = {"messages": [HumanMessage("What is the budget?")]}
    chunks = list(agent.stream(question, cfg, stream_mode="messages"))
    assert len(selector.calls) == before + 1  # the selector did run in this turn...
    assert streamed_texts(chunks) == ["Final answer."]  # ...and did not stream


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_running_summary_middleware_stream_shows_only_the_agents_tokens(use_async):
    """RunningSummaryMiddleware's model call in before_model is one of the library's own
    calls: tagged nostream (a streaming summarizer's tokens do not reach
    stream_mode="messages") and a child of the user's run, with the user's tags."""
    from langgraph_librarian.memory import RunningSummaryMiddleware

    summary = "- User: vegetarian, allergic to nuts, budget question"
    writer = StreamingScriptedModel(script=summary)
    model = StreamingScriptedModel(script="Final answer from the agent.")
    agent = create_agent(
        model,
        tools=[],
        middleware=[
            RunningSummaryMiddleware(
                model, summarizer=writer, trigger=("messages", 4), keep=("messages", 2)
            )
        ],
        checkpointer=MemorySaver(),
    )
    recorder = RunRecorder()
    config = {
        "configurable": {"thread_id": f"rs-{use_async}"},
        "callbacks": [recorder],
        "tags": ["user-tag"],
    }
    history = {
        "messages": [
            HumanMessage("I'm vegetarian and allergic to nuts."),
            AIMessage("Noted: vegetarian, allergic to nuts."),
            HumanMessage("What is the budget for the dinner?"),
            AIMessage("The dinner budget is not set yet."),
            HumanMessage("Suggest a main course."),
        ]
    }
    if use_async:
        chunks = [c async for c in agent.astream(history, config, stream_mode="messages")]
    else:
        chunks = list(agent.stream(history, config, stream_mode="messages"))
    assert writer.calls, "the summarizer model was called in this turn"
    # Tokens streamed are the agent model's only. (The summary message the middleware
    # writes to the state is streamed whole, as a node's update, by LangGraph, as
    # LangChain's own SummarizationMiddleware's is.)
    tokens = [m for m, _meta in chunks if isinstance(m, AIMessageChunk)]
    assert "".join(str(m.content) for m in tokens) == "Final answer from the agent."
    assert {meta["langgraph_node"] for m, meta in chunks if isinstance(m, AIMessageChunk)} == {
        "model"
    }
    summarizer_runs = [r for r in recorder.runs if r["step"] is not None]
    assert summarizer_runs
    for run in summarizer_runs:
        assert run["parent"] is not None
        assert {"nostream", "langgraph_librarian", "user-tag"} <= set(run["tags"])
