"""One failure policy for the library's own model calls, through every face.

Configuration errors (the provider refusing the key: HTTP 401/403; an unknown model: 404)
raise out of the run, so a revoked key is noticed; transient errors and unusable answers
fail open with metadata saying so. Automatic scoped recall is the one documented
exception (spec 04: it skips its block and reports ``misconfigured`` at ERROR).

The errors are the ones ``openai`` raises (``langchain_openai`` re-raises subclasses of
them), built on real ``httpx`` responses.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

import httpx
import openai
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

from fakes import ScriptedChatModel
from langgraph_librarian import (
    LibrarianConfig,
    LibrarianMiddleware,
    create_index_node,
    create_librarian_graph,
    create_librarian_hook,
    merge_index,
)
from langgraph_librarian.memory import (
    RunningSummarizer,
    RunningSummaryMiddleware,
    create_summary_graph,
)
from langgraph_librarian.recall import RecallMiddleware, RecallScope, ScopeMemory

_ERRORS: dict[int, type[openai.APIStatusError]] = {
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    429: openai.RateLimitError,
    503: openai.InternalServerError,
}


def api_error(status: int) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    body = {"error": {"message": f"scripted {status}"}}
    response = httpx.Response(status, request=request, json=body)
    return _ERRORS[status](f"Error code: {status}", response=response, body=body)


LONG = " and we compared several more options in detail with the whole team" * 5
TURNS = [f"The budget is 12 thousand dollars{LONG}.", "Unrelated: tea?", "What is the budget?"]
CONFIGURATION = [401, 403, 404]


def refusing(status: int) -> ScriptedChatModel:
    return ScriptedChatModel(script=api_error(status))


def settings(**kwargs: Any) -> LibrarianConfig:
    base: dict[str, Any] = {
        "selector_model": "local",
        "indexer_model": "local",
        "always_include_recent_turns": 1,
        "retry_backoff": 0,
    }
    return LibrarianConfig(**{**base, **kwargs})


def graph_face(config: LibrarianConfig) -> Any:
    return create_librarian_graph(
        lambda state: {"messages": [AIMessage("ok")]}, config, checkpointer=InMemorySaver()
    )


def middleware_face(config: LibrarianConfig) -> Any:
    return create_agent(
        ScriptedChatModel(script="ok"),
        middleware=[LibrarianMiddleware(config)],
        checkpointer=InMemorySaver(),
    )


class HookState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    llm_input_messages: list[AnyMessage]
    index: Annotated[list[Any], merge_index]


def hook_face(config: LibrarianConfig) -> Any:
    model = ScriptedChatModel(script="ok")

    def call_model(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [model.invoke(state.get("llm_input_messages") or state["messages"])]}

    builder = StateGraph(HookState)
    builder.add_node("hook", create_librarian_hook(config))
    builder.add_node("model", call_model)
    builder.add_node("indexer", create_index_node(config))
    builder.add_edge(START, "hook")
    builder.add_edge("hook", "model")
    builder.add_edge("model", "indexer")
    builder.add_edge("indexer", END)
    return builder.compile(checkpointer=InMemorySaver())


FACES = {"graph": graph_face, "middleware": middleware_face, "pre_model_hook": hook_face}


async def turns(runner: Any, use_async: bool, thread: str = "t") -> dict[str, Any]:
    """Run the turns; the final state, with ``librarian_metadata`` merged over the last
    turn's node updates (a hook graph's index node writes its own after the hook's)."""
    cfg = {"configurable": {"thread_id": thread}}
    metadata: dict[str, Any] = {}
    for text in TURNS:
        message = {"messages": [HumanMessage(text)]}
        metadata = {}
        if use_async:
            updates = [u async for u in runner.astream(message, cfg, stream_mode="updates")]
        else:
            updates = list(runner.stream(message, cfg, stream_mode="updates"))
        for update in updates:
            for written in update.values():
                metadata.update((written or {}).get("librarian_metadata") or {})
    return {**runner.get_state(cfg).values, "librarian_metadata": metadata}


# -- configuration errors raise ------------------------------------------------------------------


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("face", list(FACES))
@pytest.mark.parametrize("status", CONFIGURATION)
async def test_a_refusing_selector_model_raises_out_of_every_face(face, status, use_async):
    selector = refusing(status)
    runner = FACES[face](settings(selector_model=selector, max_retries=3))
    with pytest.raises(_ERRORS[status]):
        await turns(runner, use_async)
    assert selector.calls  # the selector was asked...
    if status != 404:  # ...once: not retried, no simpler output form tried
        assert len(selector.calls) == 1


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("face", ["graph", "middleware"])
@pytest.mark.parametrize("status", CONFIGURATION)
async def test_a_refusing_indexer_model_raises_out_of_every_face(face, status, use_async):
    indexer = refusing(status)
    runner = FACES[face](settings(indexer_model=indexer, max_retries=3))
    with pytest.raises(_ERRORS[status]):
        await turns(runner, use_async)
    assert len(indexer.calls) == 1  # the first long message; never retried


@pytest.mark.parametrize("use_async", [False, True])
async def test_a_refusing_gist_model_raises(use_async):
    indexer = refusing(401)
    config = settings(
        indexer_model=indexer, running_summary_tokens=100, short_message_threshold=100_000
    )
    cfg = {"configurable": {"thread_id": "gist"}}
    runner = graph_face(config)
    with pytest.raises(openai.AuthenticationError):
        for n in range(8):
            message = {"messages": [HumanMessage(f"Fact {n}: the shuttle leaves at {n} pm.")]}
            if use_async:
                await runner.ainvoke(message, cfg)
            else:
                runner.invoke(message, cfg)
    assert indexer.calls


@pytest.mark.parametrize("face", ["graph", "middleware"])
def test_a_refusing_running_summary_model_raises(face):
    texts = [f"Fact {i}: the shuttle leaves at {i} pm, remember it for the trip." for i in range(8)]
    summarizer = RunningSummarizer(refusing(401), max_retries=0)
    if face == "graph":
        runner: Any = create_summary_graph(
            ScriptedChatModel(script="ok"),
            summarizer=summarizer,
            max_messages=4,
            keep_last=2,
            checkpointer=InMemorySaver(),
        )
    else:
        runner = create_agent(
            ScriptedChatModel(script="ok"),
            middleware=[
                RunningSummaryMiddleware(
                    ScriptedChatModel(script="x"),
                    summarizer=summarizer,
                    trigger=("messages", 4),
                    keep=("messages", 2),
                )
            ],
            checkpointer=InMemorySaver(),
        )
    with pytest.raises(openai.AuthenticationError):
        for text in texts:
            runner.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": "s"}})


# -- automatic recall: skipped, reported as misconfigured (spec 04) ------------------------------


def recall_memory(selector: ScriptedChatModel) -> ScopeMemory:
    memory = ScopeMemory(InMemoryStore(), config=settings(selector_model=selector, max_retries=3))
    memory.remember("user:1", "Severe peanut allergy: no nuts in any recipe.")
    memory.remember("user:1", "Prefers metric units.")
    return memory


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("status", [401, 403])
async def test_recall_with_a_refusing_selector_is_misconfigured_not_recalled(
    status, use_async, caplog
):
    selector = refusing(status)
    memory = recall_memory(selector)
    model = ScriptedChatModel(script="An answer anyway.")
    agent = create_agent(
        model,
        middleware=[RecallMiddleware(memory, report=True)],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )
    message = {"messages": [HumanMessage("Any allergy I should know about for the cake?")]}
    cfg = {"configurable": {"thread_id": "r"}}
    with caplog.at_level(logging.ERROR, logger="langgraph_librarian.recall"):
        if use_async:
            out = await agent.ainvoke(message, cfg, context=RecallScope(scope_id="user:1"))
        else:
            out = agent.invoke(message, cfg, context=RecallScope(scope_id="user:1"))
    assert out["messages"][-1].content == "An answer anyway."  # the turn went on
    assert out["librarian_recall"]["status"] == "misconfigured"
    assert not out["librarian_recall"].get("records")
    assert len(selector.calls) == 1
    assert any("configuration problem" in r.getMessage() for r in caplog.records)


def test_recall_called_directly_raises_a_refused_key():
    memory = recall_memory(refusing(401))
    with pytest.raises(openai.AuthenticationError):
        memory.recall("user:1", "Any allergy for the cake?")


# -- transient errors and unusable answers fail open, and say so ---------------------------------


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("face", list(FACES))
@pytest.mark.parametrize("failure", ["429", "503", "garbage"])
async def test_transient_or_unusable_selector_answers_fall_back_with_a_reason(
    face, failure, use_async
):
    script: Any = "I think the budget matters." if failure == "garbage" else api_error(int(failure))
    selector = ScriptedChatModel(script=script)
    runner = FACES[face](settings(selector_model=selector, max_retries=1))
    state = await turns(runner, use_async)
    assert state["messages"][-1].content == "ok"
    assert selector.calls
    if face == "pre_model_hook":  # the hook writes only the model's input: no metadata
        assert state["llm_input_messages"][-1].content == TURNS[-1]
        return
    metadata = state["librarian_metadata"]
    assert metadata["selection_strategy"] == "local_fallback"
    assert metadata["fallback_reason"]
    if failure != "garbage":
        assert failure in metadata["fallback_reason"]


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("face", ["graph", "middleware"])
async def test_a_transient_indexer_failure_gives_marked_fallback_entries(face, use_async):
    indexer = ScriptedChatModel(script=api_error(503))
    runner = FACES[face](settings(indexer_model=indexer, max_retries=1))
    state = await turns(runner, use_async)
    assert "fallback" in [entry["status"] for entry in state["index"]]
    assert len(indexer.calls) == 2  # retried once, then failed open


def test_recall_with_a_failing_selector_falls_back_to_local():
    memory = recall_memory(ScriptedChatModel(script=api_error(503)))
    result = memory.recall("user:1", "Any peanut allergy for the cake?")
    assert result.status == "recalled" and result.strategy == "local_fallback"
