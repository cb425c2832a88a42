"""Bugs found by hunting through the Librarian's public faces (graph, middleware, hook)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ConfigDict, Field

from langgraph_librarian import (
    FileIndexStore,
    IndexEntry,
    IndexStoreError,
    LibrarianConfig,
    create_librarian_graph,
)


def _reply(state: dict) -> dict:
    return {"messages": [AIMessage("Noted.")]}


@pytest.mark.parametrize("value", [10**30, -(10**6)])
def test_stored_entry_with_an_impossible_token_count_is_a_corrupt_index(tmp_path, value):
    # A file store whose entry says original_tokens=10**30 was read as valid: the turn
    # ran the agent, then the checkpointer failed with "TypeError: Integer exceeds
    # 64-bit range" (the sum went into librarian_metadata). A negative count freed room
    # in every budget. Both are a corrupt index: IndexStoreError before the model.
    store = FileIndexStore(tmp_path)
    calls: list[int] = []

    def agent(state: dict) -> dict:
        calls.append(1)
        return _reply(state)

    config = LibrarianConfig(store=store, always_include_recent_turns=1)
    graph = create_librarian_graph(agent, config, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [HumanMessage("The venue is Porto."), AIMessage("Great.")]}, thread)
    path = store.path_for("t")
    data = json.loads(path.read_text())
    data["entries"][0]["original_tokens"] = value
    path.write_text(json.dumps(data))
    before = len(calls)
    with pytest.raises(IndexStoreError, match="original_tokens"):
        graph.invoke({"messages": [HumanMessage("Where is the venue?")]}, thread)
    assert len(calls) == before


@pytest.mark.parametrize("field", ["id", "status"])
def test_entry_field_of_a_wrong_kind_is_named(field):
    bad = {"id": 10**30} if field == "id" else {"status": ["summarized"]}
    item = {**IndexEntry(id=0, role="human", summary="s").to_dict(), **bad}
    with pytest.raises(ValueError, match=field):
        IndexEntry.from_dict(item)


@pytest.mark.parametrize("count", [-5, 10**30])
def test_a_token_counter_returning_an_impossible_count_is_not_believed(count):
    # A counter answering -5 made original_tokens and curated_tokens negative (-65, -5)
    # and every message free under the budget; 10**30 could not be checkpointed. Such
    # a count is treated as a failing counter: the approximate count is used.
    config = LibrarianConfig(token_counter=lambda messages: count, always_include_recent_turns=1)
    graph = create_librarian_graph(_reply, config, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": f"counter-{count}"}}
    for n in range(4):
        graph.invoke({"messages": [HumanMessage(f"Box {n} holds code {n * 7}.")]}, thread)
    result = graph.invoke({"messages": [HumanMessage("What does box 2 hold?")]}, thread)
    meta = result["librarian_metadata"]
    assert 0 < meta["curated_tokens"] <= meta["original_tokens"] < 10_000
    assert all(0 < e["original_tokens"] < 10_000 for e in result["index"])


class _SyncOnlyHangingModel(BaseChatModel):
    """A chat model without native async (LangChain runs its ``_generate`` on the event
    loop's default executor) that hangs until released."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    release: Any = Field(default_factory=threading.Event)

    @property
    def _llm_type(self) -> str:
        return "sync-only-hanging"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
        self.release.wait(60)
        return ChatResult(generations=[ChatGeneration(message=AIMessage("A summary."))])


def test_async_turn_is_not_held_by_hung_model_calls_on_the_default_executor():
    # A sync-only indexer model that hangs. LangChain runs such a model's ainvoke on the
    # event loop's default executor (6 threads on a two-core machine), where a call past
    # model_timeout=0.3 kept its thread until it returned; the loop's other work there
    # (sync nodes, sync callback handlers, the Librarian's own steps) queued behind it,
    # so an ainvoke took as long as the model hung (30 s for a 30 s hang).
    model = _SyncOnlyHangingModel()
    config = LibrarianConfig(indexer_model=model, model_timeout=0.3, max_retries=0)
    graph = create_librarian_graph(_reply, config, checkpointer=InMemorySaver())
    long = "The refund policy needs approval from Maria in finance for any invoice. " * 4
    history = [HumanMessage(f"{n}: {long}") for n in range(6)]

    async def turn() -> dict:
        executor = ThreadPoolExecutor(max_workers=2)
        asyncio.get_running_loop().set_default_executor(executor)
        try:
            thread = {"configurable": {"thread_id": "hung"}}
            return await asyncio.wait_for(graph.ainvoke({"messages": history}, thread), 8)
        finally:
            model.release.set()
            executor.shutdown(wait=False)

    started = time.monotonic()
    result = asyncio.run(turn())
    assert time.monotonic() - started < 8
    assert result["librarian_metadata"]["indexing_failed_count"] == 6


def test_async_turns_are_not_held_by_a_hung_sync_only_index_store():
    # A store with only load/save (FileIndexStore, or your own: the documented minimum)
    # that stops answering, e.g. on a hung network mount. In async runs its calls went
    # to the event loop's default executor: each turn failed open after store_timeout,
    # but its call kept a thread there, and once they were all taken every later turn
    # of the process waited for the store (27 s of a 30 s hang on the 6th turn).
    release = threading.Event()

    class HungStore:
        def load(self, session_id: str) -> None:
            release.wait(60)

        def save(self, session_id: str, entries: list) -> None:
            release.wait(60)

        def delete(self, session_id: str) -> None:
            pass

    config = LibrarianConfig(store=HungStore(), store_timeout=0.3)
    graph = create_librarian_graph(_reply, config, checkpointer=InMemorySaver())

    async def turns() -> list[dict]:
        executor = ThreadPoolExecutor(max_workers=2)
        asyncio.get_running_loop().set_default_executor(executor)
        try:
            results = []
            for n in range(4):
                thread = {"configurable": {"thread_id": f"hung-store-{n}"}}
                turn = graph.ainvoke({"messages": [HumanMessage(f"Hello {n}.")]}, thread)
                results.append(await asyncio.wait_for(turn, 8))
            return results
        finally:
            release.set()
            executor.shutdown(wait=False)

    results = asyncio.run(turns())
    assert all("did not answer" in r["librarian_metadata"]["store_error"] for r in results)


def test_a_hung_sync_only_langgraph_store_leaves_the_event_loops_executor_free():
    """``LangGraphIndexStore`` over a sync-only store (``SqliteStore``) read and wrote it
    through ``asyncio.to_thread``: hung calls kept the loop's default executor's few
    threads, and the loop's other work sent there waited for the store."""
    from fakes import hung_sync_only_calls_leave_the_default_executor_free
    from langgraph_librarian.stores.langgraph_store import LangGraphIndexStore

    assert hung_sync_only_calls_leave_the_default_executor_free(
        lambda store: LangGraphIndexStore(store).aload("t")
    )


def test_a_turns_store_failure_does_not_outlive_the_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store call of a turn that got no answer in time made the turn's later calls
    skip the store; it held until 256 newer turns pushed it out, so a retry or
    regenerate of the same turn (same latest user message) once the store was back still
    skipped it. It holds for the turn's own later calls only."""
    from langchain_core.messages import HumanMessage
    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian import LibrarianConfig
    from langgraph_librarian._librarian import turn as turn_module

    run = turn_module.Run.open(
        LibrarianConfig(store=InMemoryStore()), {"configurable": {"thread_id": "t"}}
    )
    messages = [HumanMessage("Where is my order?", id="q1")]
    now = [1_000.0]
    monkeypatch.setattr(turn_module, "_clock", lambda: now[0])
    run.store_failed(messages, TimeoutError("no connection"))
    assert run.store_down(messages) is not None  # the turn's own later calls skip it
    now[0] += 5 * 60  # the user retries the turn minutes later
    assert run.store_down(messages) is None
