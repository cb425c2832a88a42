"""Deleting a thread erases it everywhere the library wrote it (ScopeMemory.delete_thread).

Before, ``checkpointer.delete_thread`` left the thread's Librarian index in the store and
its captured records in every scope it was copied into: a new thread of the same user
recalled the deleted thread's text. Checked on a SQLite file and on PostgreSQL, with
the raw tables searched for the secret afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import PutOp, SearchOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore

from fakes import ScriptedChatModel
from langgraph_librarian import LangGraphIndexStore, LibrarianConfig, LibrarianMiddleware
from langgraph_librarian.errors import LibrarianError
from langgraph_librarian.recall import RecallMiddleware, RecallScope, ScopeMemory


@contextlib.contextmanager
def open_backend(kind: str, tmp_path: Path, dsn: str | None) -> Iterator[tuple[Any, Any]]:
    """A checkpointer and a store of ``kind``, set up (one SQLite file for both)."""
    if kind == "sqlite":
        path = str(tmp_path / "app.sqlite")
        with (
            SqliteSaver.from_conn_string(path) as saver,
            SqliteStore.from_conn_string(path) as store,
        ):
            store.setup()
            yield saver, store
    else:
        assert dsn is not None
        with (
            PostgresSaver.from_conn_string(dsn) as saver,
            PostgresStore.from_conn_string(dsn) as store,
        ):
            saver.setup()
            store.setup()
            yield saver, store


def rows_holding(kind: str, tmp_path: Path, dsn: str | None, secret: str) -> list[str]:
    """Tables with a row whose raw bytes contain ``secret`` (store and checkpoints)."""
    needle = secret.encode()
    found = []
    if kind == "sqlite":
        with contextlib.closing(sqlite3.connect(tmp_path / "app.sqlite")) as conn:
            for table, column in (
                ("store", "value"),
                ("checkpoints", "checkpoint"),
                ("writes", "value"),
            ):
                query = f"select count(*) from {table} where instr(cast({column} as blob), ?) > 0"
                if conn.execute(query, (needle,)).fetchone()[0]:
                    found.append(table)
        return found
    assert dsn is not None
    with psycopg.connect(dsn) as conn:
        as_text = "position(%s in convert_to({}::text, 'UTF8')) > 0"
        checks = {
            "store": as_text.format("value"),
            "checkpoints": as_text.format("checkpoint"),
            "checkpoint_blobs": "position(%s in blob) > 0",
            "checkpoint_writes": "position(%s in blob) > 0",
        }
        for table, query in checks.items():
            row = conn.execute(f"select count(*) from {table} where {query}", (needle,))
            if row.fetchone()[0]:  # type: ignore[index]
                found.append(table)
    return found


class App:
    """An agent with the Librarian (index in the store) and scoped recall with capture."""

    def __init__(self, saver: Any, store: Any) -> None:
        run = uuid.uuid4().hex
        # Namespaces of their own: runs never see each other's data in a shared database.
        self.config = LibrarianConfig(store=LangGraphIndexStore(store, ("index_test", run)))
        self.memory = ScopeMemory(store, namespace=("recall_test", run))
        self.model = ScriptedChatModel(script="Noted.")
        self.saver = saver
        self.agent = create_agent(
            self.model,
            middleware=[
                LibrarianMiddleware(self.config),
                RecallMiddleware(self.memory, capture_turns=True, report=True),
            ],
            context_schema=RecallScope,
            checkpointer=saver,
        )
        self.secret = f"My bank PIN is {run[:4]}-{run[4:8]}, please remember it."

    def ask(self, thread: str, scope: str, text: str) -> dict[str, Any]:
        return self.agent.invoke(
            {"messages": [HumanMessage(text)]},
            {"configurable": {"thread_id": thread}},
            context=RecallScope(scope_id=scope),
        )

    async def aask(self, thread: str, scope: str, text: str) -> dict[str, Any]:
        return await self.agent.ainvoke(
            {"messages": [HumanMessage(text)]},
            {"configurable": {"thread_id": thread}},
            context=RecallScope(scope_id=scope),
        )

    def state(self, thread: str) -> dict[str, Any]:
        return dict(self.agent.get_state({"configurable": {"thread_id": thread}}).values)


def written(app: App, thread: str, kept: str) -> None:
    """Thread ``thread`` says the secret in two scopes; thread ``kept`` talks of lemons."""
    app.ask(thread, "user:1", app.secret)
    app.ask(thread, "team:x", "And the garden needs water.")  # copied into a second scope
    app.ask(kept, "user:1", "I like lemon desserts.")
    assert app.config.store is not None and app.config.store.load(thread)
    assert app.memory.thread_records("team:x", thread)


def erased(app: App, thread: str, kept: str) -> None:
    assert app.state(thread) == {}
    assert app.config.store is not None and app.config.store.load(thread) is None
    assert app.memory.thread_records("user:1", thread) == []
    assert app.memory.thread_records("team:x", thread) == []
    assert len(app.memory.thread_records("user:1", kept)) == 2  # other threads stay
    assert app.state(kept)["messages"]


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_delete_thread_leaves_nothing_readable(kind: str, tmp_path: Path, request: Any) -> None:
    dsn = request.getfixturevalue("postgres_dsn") if kind == "postgres" else None
    with open_backend(kind, tmp_path, dsn) as (saver, store):
        app = App(saver, store)
        thread, kept = f"A-{uuid.uuid4()}", f"K-{uuid.uuid4()}"
        written(app, thread, kept)
        pin = app.secret.split()[4]
        before = rows_holding(kind, tmp_path, dsn, pin)
        assert "store" in before and len(before) >= 2  # the scan does find the text
        deleted = app.memory.delete_thread(thread, checkpointer=saver, index_store=app.config.store)
        assert deleted == 6  # a question and answer in user:1, the whole thread in team:x
        erased(app, thread, kept)
        report = app.ask(f"B-{uuid.uuid4()}", "user:1", "What is my PIN?")["librarian_recall"]
        assert all(r["thread_id"] != thread for r in report["records"])
        assert app.secret not in str(app.model.calls[-1])
        # Repeating the call is harmless (a retry after a failure part-way).
        assert app.memory.delete_thread(thread, checkpointer=saver, index_store=store) == 0
    assert rows_holding(kind, tmp_path, dsn, pin) == []


@pytest.mark.postgres
def test_adelete_thread_on_async_postgres(postgres_dsn: str) -> None:
    async def main() -> None:
        async with (
            AsyncPostgresSaver.from_conn_string(postgres_dsn) as saver,
            AsyncPostgresStore.from_conn_string(postgres_dsn) as store,
        ):
            await saver.setup()
            await store.setup()
            app = App(saver, store)
            thread = f"A-{uuid.uuid4()}"
            await app.aask(thread, "user:1", app.secret)
            await app.aask(thread, "team:x", "And the garden needs water.")
            # The scopes named: no listing of the store's scopes.
            deleted = await app.memory.adelete_thread(
                thread,
                checkpointer=saver,
                index_store=app.config.store,
                scopes=["user:1", "team:x"],
            )
            assert deleted == 6
            assert (
                await app.agent.aget_state({"configurable": {"thread_id": thread}})
            ).values == {}
            assert await app.memory.athread_records("team:x", thread) == []
            assert app.config.store is not None
            assert await app.config.store.aload(thread) is None  # type: ignore[attr-defined]
        assert rows_holding("postgres", Path(), postgres_dsn, app.secret.split()[4]) == []

    asyncio.run(main())


def test_adelete_thread_on_sqlite_runs_the_sync_saver_in_a_thread(tmp_path: Path) -> None:
    with open_backend("sqlite", tmp_path, None) as (saver, store):
        app = App(saver, store)
        thread, kept = f"A-{uuid.uuid4()}", f"K-{uuid.uuid4()}"
        written(app, thread, kept)
        deleted = asyncio.run(
            app.memory.adelete_thread(thread, checkpointer=saver, index_store=app.config.store)
        )
        assert deleted == 6
        erased(app, thread, kept)
    assert rows_holding("sqlite", tmp_path, None, app.secret.split()[4]) == []


def test_subgraph_indexes_and_bad_arguments(tmp_path: Path) -> None:
    with open_backend("sqlite", tmp_path, None) as (saver, store):
        app = App(saver, store)
        index = app.config.store
        assert index is not None
        index.save("A|agent", index.load("missing") or [])
        app.memory.delete_thread("A", index_store=index, subgraphs=["agent"])
        assert index.load("A|agent") is None
        with pytest.raises(ValueError):
            app.memory.delete_thread("", checkpointer=saver)
        with pytest.raises(TypeError):
            app.memory.delete_thread("A", subgraphs="agent")


def test_a_thread_id_holding_a_bar_keeps_its_own_index(tmp_path: Path) -> None:
    # Thread "B|agent" of the top-level graph and thread "B" in subgraph "agent" were
    # both keyed "B|agent": one index, and deleting either thread deleted it.
    from langgraph_librarian.config import session_key

    assert session_key("B", "agent") == "B|agent"
    assert session_key("B|agent") != session_key("B", "agent")
    assert session_key("a\\|b") != session_key("a\\", "b")  # escapes stay injective
    assert session_key("plain-id") == "plain-id"  # other ids keyed as before
    with open_backend("sqlite", tmp_path, None) as (saver, store):
        app = App(saver, store)
        index = app.config.store
        assert index is not None
        top = session_key("B|agent")
        index.save(top, [])
        index.save(session_key("B", "agent"), [])
        app.memory.delete_thread("B", index_store=index, subgraphs=["agent"])
        assert index.load(session_key("B", "agent")) is None
        assert index.load(top) == []  # the other thread's index is left
        app.memory.delete_thread("B|agent", index_store=index)
        assert index.load(top) is None


def _by_thread(store: Any, prefix: tuple[str, ...]) -> dict[str, set[str]]:
    """Keys of the captured records under ``prefix`` by thread, read in one search."""
    out: dict[str, set[str]] = {}
    for item in store.search(prefix, limit=100_000):
        if item.namespace[-1] == "memory" and item.value.get("kind") == "turn":
            out.setdefault(str(item.value.get("thread_id")), set()).add(item.key)
    return out


def _many_records(memory: ScopeMemory, gone: str, kept: str) -> None:
    """``gone`` captured into three scopes (many records each, written in one batch: one
    ``updated_at`` for all in PostgreSQL), ``kept`` into those and three more."""
    for s, scope in enumerate(["user:1", "team:x", "team:y", "a:1", "a:2", "a:3"]):
        if s < 3:
            history = []
            for i in range(40):
                history += [HumanMessage(f"{gone} line {i} of {scope}: the PIN is {i}.")]
            memory.capture(scope, history, thread_id=gone)
        memory.capture(
            scope,
            [HumanMessage(f"{kept} in {scope}: lemons {i}.") for i in range(9)],
            thread_id=kept,
        )


@pytest.mark.postgres
@pytest.mark.parametrize("face", ["sync", "async"])
def test_delete_thread_pages_through_ties_on_postgres(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch, face: str
) -> None:
    # Without ``scopes=``, the thread's scopes are listed and its records read in pages
    # (LIMIT/OFFSET). PostgresStore orders a search by updated_at alone, and records
    # captured in one batch share it: two pages of such ties are not two halves of one
    # order, so records were skipped (left readable) or read twice. Small pages make
    # every read many pages; every record of the thread must go, and no other.
    from langgraph_librarian.recall import _memory

    monkeypatch.setattr(_memory, "SEARCH_PAGE", 7)
    monkeypatch.setattr(_memory, "_THREAD_PAGE", 7, raising=False)
    monkeypatch.setattr(_memory, "_SCOPES_PAGE", 2)
    with PostgresStore.from_conn_string(postgres_dsn) as store:
        store.setup()
        prefix = ("recall_paging", uuid.uuid4().hex)
        memory = ScopeMemory(store, namespace=prefix)
        gone, kept = f"G-{uuid.uuid4()}", f"K-{uuid.uuid4()}"
        _many_records(memory, gone, kept)
        before = _by_thread(store, prefix)
        assert len(before[gone]) == 120 and len(before[kept]) == 54
        if face == "sync":
            deleted = memory.delete_thread(gone)
        else:
            deleted = asyncio.run(memory.adelete_thread(gone))
        after = _by_thread(store, prefix)
        assert gone not in after, f"{len(after.get(gone, ()))} records of the thread left"
        assert after[kept] == before[kept]
        assert deleted == 120
        assert memory.delete_thread(gone) == 0


@pytest.mark.postgres
def test_thread_records_reads_each_record_once_on_postgres(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thread's records written in one batch (one updated_at), read in LIMIT/OFFSET
    # pages of the search page's size: some came twice and others not at all (capture
    # reconciles a thread against this read). A thread is read in one search now.
    from langgraph_librarian.recall import _memory

    monkeypatch.setattr(_memory, "SEARCH_PAGE", 7)
    with PostgresStore.from_conn_string(postgres_dsn) as store:
        store.setup()
        memory = ScopeMemory(store, namespace=("recall_paging", uuid.uuid4().hex))
        history = [HumanMessage(f"Line {i}: tomatoes.") for i in range(60)]
        memory.capture("user:1", history, thread_id="t")
        keys = [r.key for r in memory.thread_records("user:1", "t")]
        assert len(keys) == len(set(keys)) == 60
        akeys = [r.key for r in asyncio.run(memory.athread_records("user:1", "t"))]
        assert sorted(akeys) == sorted(keys)


class _CappedStore(InMemoryStore):
    """A store whose search answers at most ``cap`` records, whatever the limit asked."""

    cap = 100

    def batch(self, ops: Any) -> Any:
        ops = [
            op._replace(limit=min(op.limit, self.cap)) if isinstance(op, SearchOp) else op
            for op in ops
        ]
        return super().batch(ops)

    async def abatch(self, ops: Any) -> Any:
        return self.batch(ops)


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_store_that_caps_its_searches_is_read_whole(face: str) -> None:
    # A thread was read in one search of 50,000 records: a store answering at most 100
    # made the read stop there (capture's reconcile and delete_thread saw 100 of 250).
    store = _CappedStore()
    memory = ScopeMemory(store, namespace=("capped",))
    memory.capture("user:1", [HumanMessage(f"Line {i}: figs.") for i in range(250)], thread_id="t")
    memory.capture("user:1", [HumanMessage("Other thread.")], thread_id="k")
    if face == "sync":
        assert len({r.key for r in memory.thread_records("user:1", "t")}) == 250
        assert memory.delete_thread("t") == 250
    else:
        assert len({r.key for r in asyncio.run(memory.athread_records("user:1", "t"))}) == 250
        assert asyncio.run(memory.adelete_thread("t")) == 250
    assert memory.thread_records("user:1", "t") == []
    assert len(memory.thread_records("user:1", "k")) == 1


class _Rewriting(InMemoryStore):
    """A store where a record comes back after its delete ``times`` times, as a capture of
    the thread running meanwhile writes it again."""

    times = 1
    kept: Any = None  # the record (an Item)

    def batch(self, ops: Any) -> Any:
        out = super().batch(ops)
        kept = self.kept
        deleted = {op.key for op in ops if isinstance(op, PutOp) and op.value is None}
        if kept is not None and kept.key in deleted and self.times:
            self.times -= 1
            super().batch([PutOp(kept.namespace, kept.key, kept.value)])
        return out


def test_a_record_written_again_while_deleting_is_deleted_again() -> None:
    # A record found again after its delete made delete_thread raise "store did not
    # delete" at once, although the store deletes: a concurrent capture wrote it again.
    # It is deleted again (a few times), and the error says what may be going on.
    store = _Rewriting()
    memory = ScopeMemory(store, namespace=("rewriting",))
    memory.capture("user:1", [HumanMessage(f"Line {i}: figs.") for i in range(5)], thread_id="t")
    (ns,) = [ns for ns in store.list_namespaces(prefix=("rewriting",)) if ns[-1] == "memory"]
    store.kept = next(i for i in store.search(ns, limit=100) if "Line 0" in str(i.value))
    assert memory.forget_thread("user:1", "t") == 5
    assert memory.thread_records("user:1", "t") == [] and store.times == 0
    memory.capture("user:1", [HumanMessage(f"Line {i}: figs.") for i in range(5)], thread_id="t")
    store.times = 10  # a store that never deletes it
    with pytest.raises(LibrarianError, match="still in the store after being deleted 3 times"):
        memory.forget_thread("user:1", "t")
