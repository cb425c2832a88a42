"""A call's own ``TimeoutError`` is reported as its own, not as our timer's.

Since Python 3.11 ``concurrent.futures.TimeoutError`` is the builtin ``TimeoutError``,
and ``asyncio.wait_for`` raises the same class: a model or store that raised its own
timeout at once was reported as "exceeded 60s" (a newcomer trial saw "model call
exceeded 57.9s" for a model that failed in a millisecond).
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import MemorySaver

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig, create_librarian_graph
from langgraph_librarian._engine.calls import ModelCaller
from langgraph_librarian._kit.bounded import awithin, within


def _slow(_: object) -> str:
    raise TimeoutError("the provider says: slow")


def test_sync_model_call_keeps_the_models_own_timeout():
    call = ModelCaller(RunnableLambda(_slow), step="select", timeout=30.0, retries=0)
    with pytest.raises(TimeoutError, match="the provider says: slow"):
        call.invoke("x")


async def test_async_model_call_keeps_the_models_own_timeout():
    async def slow(_: object) -> str:
        raise TimeoutError("the provider says: slow")

    call = ModelCaller(RunnableLambda(_slow, afunc=slow), step="select", timeout=30.0, retries=0)
    with pytest.raises(TimeoutError, match="the provider says: slow"):
        await call.ainvoke("x")


async def test_our_timer_is_still_reported_as_ours():
    async def hang(_: object) -> str:
        await asyncio.sleep(5)
        return "late"

    call = ModelCaller(RunnableLambda(_slow, afunc=hang), step="select", timeout=0.05, retries=0)
    with pytest.raises(TimeoutError, match=r"model call exceeded 0\.05s"):
        await call.ainvoke("x")


def test_bounded_store_calls_keep_the_stores_own_timeout():
    def store_read() -> None:
        raise TimeoutError("statement timeout")

    with pytest.raises(TimeoutError, match="statement timeout"):
        within(store_read, 30.0, threading.Semaphore(4), "the index store")
    release = threading.Event()
    with pytest.raises(TimeoutError, match=r"did not answer within 0\.05 s"):
        within(release.wait, 0.05, threading.Semaphore(4), "the index store")
    release.set()


async def test_async_bounded_store_calls_keep_the_stores_own_timeout():
    async def store_read() -> None:
        raise TimeoutError("statement timeout")

    with pytest.raises(TimeoutError, match="statement timeout"):
        await awithin(store_read(), 30.0, "the index store")
    with pytest.raises(TimeoutError, match=r"did not answer within 0\.05 s"):
        await awithin(asyncio.sleep(5), 0.05, "the index store")


def test_selector_fallback_reason_names_the_models_own_timeout():
    def raise_timeout(_: object) -> AIMessage:
        raise TimeoutError("slow")

    selector = ScriptedChatModel(script=raise_timeout)
    config = LibrarianConfig(selector_model=selector, always_include_recent_turns=1, max_retries=0)
    graph = create_librarian_graph(
        lambda state: {"messages": [AIMessage("ok")]}, config, checkpointer=MemorySaver()
    )
    cfg = {"configurable": {"thread_id": "own-timeout"}}
    history = [HumanMessage(f"Fact {i}: code {1000 + i}. " + "filler " * 40) for i in range(6)]
    graph.invoke({"messages": history}, cfg)
    result = graph.invoke({"messages": [HumanMessage("code of fact 3?")]}, cfg)
    reason = result["librarian_metadata"]["fallback_reason"]
    assert "TimeoutError: slow" in reason and "exceeded" not in reason


async def test_a_client_turning_our_cancellation_into_its_timeout_is_our_timer():
    async def aborted(_: object) -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            raise TimeoutError("client: request aborted") from None
        return "late"

    call = ModelCaller(RunnableLambda(_slow, afunc=aborted), step="select", timeout=0.05, retries=0)
    with pytest.raises(TimeoutError, match=r"model call exceeded 0\.05s"):
        await call.ainvoke("x")
