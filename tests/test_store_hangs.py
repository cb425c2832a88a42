"""An index store that stops answering, and background indexing that fails or runs late.

A store behind a network partition keeps its connection open and never replies: the
turn must wait at most ``store_timeout`` and go on without the stored index (once per
turn, not once per store call). Background jobs report their failures: to
``wait_for_background_indexing`` and to the session's next turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import sqlite3
import threading
import time
import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.sqlite import SqliteStore

from fakes import ScriptedChatModel
from langgraph_librarian import (
    LangGraphIndexStore,
    LibrarianConfig,
    create_librarian_graph,
    wait_for_background_indexing,
)
from langgraph_librarian._kit import background

RELEASE_AFTER = 12.0
"""Seconds after which a frozen store answers again anyway: without a bound on store
calls, the frozen turn takes this long (and the test fails) instead of hanging."""


class FreezableSqliteStore(SqliteStore):
    """A real SQLite store that can stop answering: while frozen, every call blocks until
    it is thawed (a network partition: the connection stays open, no reply comes)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self.answering = threading.Event()
        self.answering.set()
        self.calls_while_frozen = 0

    def freeze(self) -> None:
        self.answering.clear()
        timer = threading.Timer(RELEASE_AFTER, self.thaw)
        timer.daemon = True
        timer.start()

    def thaw(self) -> None:
        self.answering.set()

    def batch(self, ops: Any) -> list[Any]:
        if not self.answering.is_set():
            self.calls_while_frozen += 1
            self.answering.wait()
        return super().batch(ops)


@contextlib.contextmanager
def frozen_sqlite(tmp_path) -> Any:
    conn = sqlite3.connect(tmp_path / "index.sqlite", check_same_thread=False, isolation_level=None)
    store = FreezableSqliteStore(conn)
    store.setup()
    try:
        yield store
    finally:
        store.thaw()
        time.sleep(0.2)  # let abandoned calls finish before the connection closes
        conn.close()


def reply(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [AIMessage(f"I read {len(state['curated_messages'])} messages.")]}


async def _turn(graph: Any, text: str, cfg: dict, mode: str) -> dict[str, Any]:
    payload = {"messages": [HumanMessage(text)]}
    if mode == "async":
        return await graph.ainvoke(payload, cfg)
    return await asyncio.to_thread(graph.invoke, payload, cfg)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_store_that_stops_answering_costs_a_turn_one_bounded_wait(tmp_path, mode):
    with frozen_sqlite(tmp_path) as backend:
        graph = create_librarian_graph(
            reply, LibrarianConfig(store=backend, store_timeout=0.5), checkpointer=InMemorySaver()
        )
        cfg = {"configurable": {"thread_id": f"frozen-{mode}"}}
        for text in ("The launch is on March 3.", "The budget is 12,000 dollars."):
            await _turn(graph, text, cfg, mode)

        backend.freeze()
        started = time.perf_counter()
        out = await _turn(graph, "When is the launch?", cfg, mode)
        took = time.perf_counter() - started

        assert out["messages"][-1].content.startswith("I read")  # the turn was answered
        error = out["librarian_metadata"]["store_error"]
        assert "did not answer within 0.5 s" in error
        assert "did not answer earlier this turn" in error  # indexing did not wait again
        assert backend.calls_while_frozen == 1  # selection asked; indexing did not
        assert took < 0.5 + 2.0, f"the frozen turn took {took:.1f} s"

        backend.thaw()
        out = await _turn(graph, "And the budget?", cfg, mode)
        assert "store_error" not in out["librarian_metadata"]
        saved = LangGraphIndexStore(backend).load(f"frozen-{mode}")
        assert saved is not None
        assert [e.message_id for e in saved] == [m.id for m in out["messages"]]


def test_the_next_turn_asks_the_store_again(tmp_path):
    # The skip lasts one turn: a store that answers again is used at once.
    with frozen_sqlite(tmp_path) as backend:
        graph = create_librarian_graph(
            reply, LibrarianConfig(store=backend, store_timeout=0.3), checkpointer=InMemorySaver()
        )
        cfg = {"configurable": {"thread_id": "again"}}
        graph.invoke({"messages": [HumanMessage("The launch is on March 3.")]}, cfg)
        backend.freeze()
        first = graph.invoke({"messages": [HumanMessage("When is the launch?")]}, cfg)
        second = graph.invoke({"messages": [HumanMessage("Still frozen?")]}, cfg)
        assert backend.calls_while_frozen == 2  # one call per turn
        assert "did not answer within 0.3 s" in first["librarian_metadata"]["store_error"]
        assert "did not answer within 0.3 s" in second["librarian_metadata"]["store_error"]


def test_a_refused_store_is_not_skipped_for_the_rest_of_the_turn():
    # A dropped connection fails fast and the pool reconnects: indexing tries again
    # (only a store that does not answer in time is skipped for the rest of the turn).
    from langgraph.store.base import GetOp
    from langgraph.store.memory import InMemoryStore

    class DropsOneRead(InMemoryStore):
        drop = False

        def batch(self, ops: Any) -> list[Any]:
            ops = list(ops)
            if self.drop and any(isinstance(op, GetOp) for op in ops):
                self.drop = False
                raise ConnectionError("server closed the connection unexpectedly")
            return super().batch(ops)

    backend = DropsOneRead()
    graph = create_librarian_graph(
        reply, LibrarianConfig(store=backend), checkpointer=InMemorySaver()
    )
    cfg = {"configurable": {"thread_id": "dropped"}}
    graph.invoke({"messages": [HumanMessage("The launch is on March 3.")]}, cfg)
    backend.drop = True
    out = graph.invoke({"messages": [HumanMessage("When is the launch?")]}, cfg)
    assert "ConnectionError" in out["librarian_metadata"]["store_error"]
    saved = LangGraphIndexStore(backend).load("dropped")
    assert saved is not None
    assert [e.message_id for e in saved] == [m.id for m in out["messages"]]  # indexed


def test_store_timeout_is_validated():
    with pytest.raises(ValueError, match="store_timeout"):
        LibrarianConfig(store_timeout=0)
    with pytest.raises(TypeError, match="store_timeout"):
        LibrarianConfig(store_timeout="5")  # type: ignore[arg-type]
    assert LibrarianConfig(store_timeout=None).store_timeout is None
    assert LibrarianConfig().store_timeout == 5.0


@pytest.mark.postgres
def test_a_locked_postgres_table_costs_a_turn_one_bounded_wait(postgres_dsn):
    # A stuck PostgreSQL for real: another session holds an exclusive lock on the
    # store's table, so every read and write of the index waits for it. The table
    # lives in a schema of its own, so no other test's store is held up.
    import psycopg
    from langgraph.store.postgres import PostgresStore
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    schema = f"librarian_hang_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(f"create schema {schema}")
        try:
            kwargs = {
                "autocommit": True,
                "prepare_threshold": 0,
                "row_factory": dict_row,
                "options": f"-c search_path={schema}",
            }
            with ConnectionPool(postgres_dsn, max_size=4, kwargs=kwargs) as pool:
                backend = PostgresStore(pool)
                backend.setup()
                graph = create_librarian_graph(
                    reply,
                    LibrarianConfig(store=backend, store_timeout=1.0),
                    checkpointer=InMemorySaver(),
                )
                cfg = {"configurable": {"thread_id": "locked"}}
                graph.invoke({"messages": [HumanMessage("The launch is on March 3.")]}, cfg)
                with psycopg.connect(postgres_dsn) as locker:
                    locker.execute(f"lock table {schema}.store in access exclusive mode")
                    # Without a bound the turn would wait on the lock for ever: the lock
                    # goes with its session after RELEASE_AFTER seconds in any case.
                    pid = locker.info.backend_pid
                    watchdog = threading.Timer(
                        RELEASE_AFTER,
                        lambda: admin.execute("select pg_terminate_backend(%s)", (pid,)),
                    )
                    watchdog.start()
                    started = time.perf_counter()
                    out = graph.invoke({"messages": [HumanMessage("When is the launch?")]}, cfg)
                    took = time.perf_counter() - started
                    watchdog.cancel()
                    locker.rollback()  # the abandoned read now completes
                assert out["messages"][-1].content.startswith("I read")
                assert "did not answer within 1 s" in out["librarian_metadata"]["store_error"]
                assert took < 1.0 + 2.5, f"the locked turn took {took:.1f} s"
                out = graph.invoke({"messages": [HumanMessage("And the budget?")]}, cfg)
                assert "store_error" not in out["librarian_metadata"]
                saved = LangGraphIndexStore(backend).load("locked")
                assert saved is not None
                assert [e.message_id for e in saved] == [m.id for m in out["messages"]]
        finally:
            admin.execute(f"drop schema {schema} cascade")


# -- background indexing -------------------------------------------------------------


@pytest.fixture
def drained():
    """Background jobs of earlier tests finished and their failures reported, before
    and after the test (the job pool and its failure count are process-wide)."""
    wait_for_background_indexing(60)
    yield
    wait_for_background_indexing(60)


class _InOrder:
    """A set that iterates in insertion order."""

    def __init__(self) -> None:
        self._items: dict[Any, None] = {}

    def add(self, item: Any) -> None:
        self._items[item] = None

    def discard(self, item: Any) -> None:
        self._items.pop(item, None)

    def __iter__(self) -> Any:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)


def test_wait_timeout_bounds_the_whole_wait(drained, monkeypatch):
    # Eight jobs of 0.5 s on two workers: 2 s of work. Each job finishes within 0.6 s
    # of the one before, so waiting up to 0.6 s per job in turn waited for all of them
    # (and said True). The timeout is one deadline for the whole wait.
    from langgraph.store.memory import InMemoryStore

    config = LibrarianConfig(
        store=InMemoryStore(),
        background_indexing=True,
        indexer_model=ScriptedChatModel(script="Dana decides the venue.", latency=0.5),
    )
    graph = create_librarian_graph(reply, config, checkpointer=InMemorySaver())
    # Waited for in the order submitted (a set's order is arbitrary): each job then
    # finishes within 0.6 s of the one before.
    monkeypatch.setattr(background, "_PENDING", _InOrder())
    for n in range(8):
        cfg = {"configurable": {"thread_id": f"late-{n}"}}
        graph.invoke({"messages": [HumanMessage(f"Note {n}: the venue is Porto. " * 12)]}, cfg)
    started = time.perf_counter()
    assert wait_for_background_indexing(0.6) is False
    took = time.perf_counter() - started
    assert took < 1.1, f"wait_for_background_indexing(0.6) took {took:.1f} s"
    assert wait_for_background_indexing(30) is True


class _ClosedPool(Exception):
    """What a closed connection pool raises (psycopg_pool.PoolClosed is an OperationalError)."""


def test_a_failed_background_job_is_reported_by_the_wait_and_the_next_turn(drained, caplog):
    from langgraph.store.base import PutOp
    from langgraph.store.memory import InMemoryStore

    class Closing(InMemoryStore):
        closed = False

        def batch(self, ops: Any) -> list[Any]:
            ops = list(ops)
            if self.closed and any(isinstance(op, PutOp) for op in ops):
                raise _ClosedPool("the pool 'pool-1' is already closed")
            return super().batch(ops)

    backend = Closing()
    config = LibrarianConfig(
        store=backend,
        background_indexing=True,
        indexer_model=ScriptedChatModel(script="Dana decides the venue."),
    )
    graph = create_librarian_graph(reply, config, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "closing"}}
    graph.invoke({"messages": [HumanMessage("The venue is Porto. " * 20)]}, cfg)
    assert wait_for_background_indexing(30) is True

    backend.closed = True
    with caplog.at_level(logging.ERROR, logger="langgraph_librarian"):
        graph.invoke({"messages": [HumanMessage("Dana decides the venue. " * 20)]}, cfg)
        assert wait_for_background_indexing(30) is False
    assert any("background indexing failed" in r.getMessage() for r in caplog.records)
    assert wait_for_background_indexing(30) is True  # reported once

    backend.closed = False
    out = graph.invoke({"messages": [HumanMessage("Who decides?")]}, cfg)
    error = out["librarian_metadata"]["background_indexing_error"]
    assert "_ClosedPool" in error and "already closed" in error
    assert wait_for_background_indexing(30) is True
    saved = LangGraphIndexStore(backend).load("closing")
    assert saved is not None  # the next job indexed what the failed one missed
    assert [e.message_id for e in saved] == [m.id for m in out["messages"]]
    out = graph.invoke({"messages": [HumanMessage("Thanks.")]}, cfg)
    assert "background_indexing_error" not in out["librarian_metadata"]  # reported once


def test_a_background_job_after_its_event_loop_closed_fails_cleanly(drained, recwarn):
    # AsyncPostgresStore-like stores answer through the loop of the asyncio.run() that
    # served the turn; a job that runs after that loop closed must fail with a clear
    # error (no coroutine left un-awaited behind it).
    from langgraph.store.base.batch import AsyncBatchedBaseStore
    from langgraph.store.memory import InMemoryStore

    class LoopStore(AsyncBatchedBaseStore):
        def __init__(self) -> None:
            super().__init__()
            self.inner = InMemoryStore()

        def batch(self, ops: Any) -> list[Any]:  # pragma: no cover - a closed loop's job
            raise AssertionError("a job whose loop closed must not reach the store")

        async def abatch(self, ops: Any) -> list[Any]:
            return await self.inner.abatch(ops)

    slow = ScriptedChatModel(script="Dana decides the venue.", latency=1.0)
    holder: dict[str, Any] = {}

    async def serve() -> None:
        backend = LoopStore()
        config = LibrarianConfig(store=backend, background_indexing=True, indexer_model=slow)
        graph = create_librarian_graph(reply, config, checkpointer=InMemorySaver())
        cfg = {"configurable": {"thread_id": "loop-closed"}}
        await graph.ainvoke({"messages": [HumanMessage("The venue is Porto. " * 20)]}, cfg)
        holder["backend"] = backend
        # Return (closing the loop) once the job is inside its model call: its store read
        # is done while the loop runs, its save comes after the loop closed. Returning
        # earlier could close the loop in the middle of the read, a race no store
        # survives cleanly (the scheduled read is never run), and that made this flaky.
        for _ in range(2000):
            if slow.in_flight:
                break
            await asyncio.sleep(0.005)

    asyncio.run(serve())  # returns while the job's summary is still being written
    assert wait_for_background_indexing(30) is False
    gc.collect()
    assert not [w for w in recwarn.list if "never awaited" in str(w.message)]
    assert holder["backend"].inner is not None  # (the store lived until here)


def test_an_in_process_store_is_called_without_a_thread(monkeypatch):
    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian._kit import bounded

    def no_thread(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a thread was started for an in-process store")

    monkeypatch.setattr(bounded, "on_own_thread", no_thread)
    store = LangGraphIndexStore(InMemoryStore())
    graph = create_librarian_graph(
        reply, LibrarianConfig(store=store, store_timeout=5.0), checkpointer=InMemorySaver()
    )
    cfg = {"configurable": {"thread_id": "in-process"}}
    for text in ("The launch is on March 3.", "When is the launch?"):
        out = graph.invoke({"messages": [HumanMessage(text)]}, cfg)
        assert "store_error" not in out["librarian_metadata"]
    assert len(store.load("in-process") or []) == len(out["messages"])
