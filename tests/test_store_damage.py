"""A damaged store database, met by a save or a delete, and chunks left past a gap.

Found by a review of the damage reporting (``IndexStoreError`` for SQLite's
"database disk image is malformed" and PostgreSQL's XX001 / XX002): only ``load`` and
``aload`` reported it; ``save``, ``delete``, ``delete_thread`` and their async twins
raised the backend's raw ``sqlite3.DatabaseError``, with no hint, and an index SQLite
found inconsistent while writing (``SQLITE_CORRUPT_INDEX``, the extended code the
``sqlite3`` module reports) was not taken for damage at all. A settled load's repair of
the manifest (a write) raised it raw too. And a delete over an unreadable manifest
stopped at the first missing chunk: with chunk 0 gone, every later chunk of the deleted
thread stayed in the store. Run on an in-memory store, a real SQLite file and a real
PostgreSQL (its damage raised by a wrapper).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore

from langgraph_librarian import IndexStoreError, LangGraphIndexStore
from langgraph_librarian._engine.failures import classify
from langgraph_librarian.stores.base import session_key
from test_store_threads import (
    BACKENDS,
    BAD_MANIFESTS,
    NAMESPACE,
    corrupt_manifest,
    damage,
    entries,
    open_store,
    stored_keys,
    unique,
)

# -- a damaged SQLite database met by a save or a delete -----------------------------------


def break_an_index(path: Path) -> None:
    """Make the ``store`` table's prefix index disagree with its rows: SQLite reads
    the table as before but a write that must update the index finds it inconsistent
    ("database disk image is malformed", SQLITE_CORRUPT_INDEX, as ``PRAGMA
    integrity_check`` reports it)."""
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("pragma writable_schema = on")
        conn.execute(
            "update sqlite_master set sql = 'CREATE INDEX store_prefix_idx ON store (key)' "
            "where name = 'store_prefix_idx'"
        )


def calls(index: LangGraphIndexStore, key: str, thread: str) -> dict[str, Callable[[], Any]]:
    """Every write of the index, as a user or a turn makes it."""
    return {
        "save": lambda: index.save(key, entries(5)),  # shrinks: chunks are deleted
        "asave": lambda: asyncio.run(index.asave(key, entries(5))),
        "delete": lambda: index.delete(key),
        "adelete": lambda: asyncio.run(index.adelete(key)),
        "delete_thread": lambda: index.delete_thread(thread),
        "adelete_thread": lambda: asyncio.run(index.adelete_thread(thread)),
    }


CALLS = ["save", "asave", "delete", "adelete", "delete_thread", "adelete_thread"]


def assert_damage_reported(error: IndexStoreError, call: str, thread: str) -> None:
    text = str(error)
    assert isinstance(error.__cause__, sqlite3.DatabaseError), repr(error.__cause__)
    assert "malformed" in text and "integrity_check" in text, text
    assert f"thread {thread!r}" in text, text
    doing = "save" if "save" in call else "delete"
    assert f"failed to {doing} the index" in text, text
    # A delete that failed does not name a delete as the way out.
    assert ("removes it" in text) == (doing == "save"), text
    # The failure policy takes it as it took the raw error: a failure, not transient
    # (absorbed after the reply, raised before the model), not a settings problem.
    assert classify(error) == classify(error.__cause__) == "failure"


@pytest.mark.parametrize("call", CALLS)
def test_a_write_meeting_a_damaged_sqlite_index_raises_index_store_error(
    call: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.sqlite"
    thread = "CORP\\sam"
    key = session_key(thread)
    with SqliteStore.from_conn_string(str(path)) as store:
        store.setup()
        LangGraphIndexStore(store).save(key, entries(300))
    break_an_index(path)
    with SqliteStore.from_conn_string(str(path)) as store:
        assert LangGraphIndexStore(store).load(key) == entries(300)  # reads still work
        with pytest.raises(sqlite3.DatabaseError) as raw:  # the damage is real
            store.delete(NAMESPACE, f"{LangGraphIndexStore._check(key)}#1")
        assert raw.value.sqlite_errorcode == sqlite3.SQLITE_CORRUPT_INDEX
        with pytest.raises(IndexStoreError) as raised:
            calls(LangGraphIndexStore(store), key, thread)[call]()
        assert_damage_reported(raised.value, call, thread)
    # The way out the error names works: REINDEX, then the write goes through.
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("reindex")
        assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
    with SqliteStore.from_conn_string(str(path)) as store:
        calls(LangGraphIndexStore(store), key, thread)[call]()


@pytest.mark.parametrize("call", CALLS)
def test_a_write_to_a_malformed_sqlite_file_raises_index_store_error(
    call: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.sqlite"
    thread = "tenant|sam"
    key = session_key(thread)
    with SqliteStore.from_conn_string(str(path)) as store:
        store.setup()
        LangGraphIndexStore(store).save(key, entries(300))
    damage(path)  # the store table's root page overwritten
    with SqliteStore.from_conn_string(str(path)) as store:
        with pytest.raises(IndexStoreError) as raised:
            calls(LangGraphIndexStore(store), key, thread)[call]()
        assert_damage_reported(raised.value, call, thread)
        assert raised.value.__cause__.sqlite_errorcode == sqlite3.SQLITE_CORRUPT


# -- the same, reported by PostgreSQL or met by a load's repair ------------------------------


class Refusing:
    """A real store whose writes (batches holding a put or a delete) raise ``error``
    while it is set: PostgreSQL's pages cannot be damaged from a test."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.error: BaseException | None = None
        self.reads = 0

    def _check(self, ops: Any) -> list[Any]:
        ops = list(ops)
        if self.error is not None and any(isinstance(op, PutOp) for op in ops):
            raise self.error
        self.reads += not any(isinstance(op, PutOp) for op in ops)
        return ops

    def batch(self, ops: Any) -> Any:
        return self.store.batch(self._check(ops))

    async def abatch(self, ops: Any) -> Any:
        return await self.store.abatch(self._check(ops))

    def get(self, namespace: Any, key: str) -> Any:
        self.reads += 1
        return self.store.get(namespace, key)

    async def aget(self, namespace: Any, key: str) -> Any:
        self.reads += 1
        return await self.store.aget(namespace, key)

    def put(self, namespace: Any, key: str, value: Any, index: Any = None) -> None:
        self.batch([PutOp(namespace, key, value, index)])

    async def aput(self, namespace: Any, key: str, value: Any, index: Any = None) -> None:
        await self.abatch([PutOp(namespace, key, value, index)])


DAMAGE = [
    psycopg.errors.DataCorrupted("invalid page in block 7 of relation base/16384/16385"),
    psycopg.errors.IndexCorrupted('index "store_pkey" contains unexpected zero page'),
]
NO_DAMAGE = [
    sqlite3.OperationalError("database is locked"),
    psycopg.OperationalError("server closed the connection unexpectedly"),
    psycopg.errors.ReadOnlySqlTransaction("cannot execute DELETE in a read-only transaction"),
    sqlite3.OperationalError("no such table: store"),
    ValueError("Namespace labels cannot contain periods ('.')"),
]


@pytest.mark.postgres
@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("error", DAMAGE + NO_DAMAGE, ids=lambda e: type(e).__name__)
def test_postgres_damage_on_a_write_is_reported_and_nothing_else_is(
    call: str, error: Exception, postgres_dsn: str
) -> None:
    thread = unique("CORP\\sam")
    key = session_key(thread)
    with PostgresStore.from_conn_string(postgres_dsn) as real:
        real.setup()
        store = Refusing(real)
        LangGraphIndexStore(store).save(key, entries(300))  # type: ignore[arg-type]
        store.error = error
        index = LangGraphIndexStore(store)  # type: ignore[arg-type]
        if error in DAMAGE:
            with pytest.raises(IndexStoreError) as raised:
                calls(index, key, thread)[call]()
            assert raised.value.__cause__ is error
            assert f"{type(error).__name__}: {error}" in str(raised.value)
            assert f"thread {thread!r}" in str(raised.value)
            assert classify(raised.value) == classify(error) == "failure"
        else:  # a transient error, a setting, a refused namespace: as it is
            with pytest.raises(type(error)) as passed:
                calls(index, key, thread)[call]()
            assert passed.value is error
        store.error = None
        LangGraphIndexStore(store).delete(key)  # type: ignore[arg-type]
        assert stored_keys(real, key) == []


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_load_whose_manifest_repair_meets_damage_raises_index_store_error(mode: str) -> None:
    # A load that settles (the manifest names chunk versions no longer stored) rewrites
    # the manifest; that write raised the raw backend error out of load().
    store = Refusing(InMemoryStore())
    LangGraphIndexStore(store).save("t", entries(3))  # type: ignore[arg-type]
    manifest = store.get(NAMESPACE, "t#m").value
    store.put(NAMESPACE, "t#m", {**manifest, "chunks": ["gone"]})
    error = sqlite3.DatabaseError("database disk image is malformed")
    error.sqlite_errorcode = sqlite3.SQLITE_CORRUPT  # type: ignore[attr-defined]
    store.error = error
    index = LangGraphIndexStore(store)  # type: ignore[arg-type]
    with pytest.raises(IndexStoreError, match="integrity_check") as raised:
        if mode == "async":
            asyncio.run(index.aload("t"))
        else:
            index.load("t")
    assert raised.value.__cause__ is error
    store.error = None
    assert LangGraphIndexStore(store).load("t") == entries(3)  # type: ignore[arg-type]


# -- chunks past a gap ------------------------------------------------------------------------


def drop(store: Any, key: str, *positions: int) -> None:
    item_key = LangGraphIndexStore._check(key)
    for n in positions:
        store.delete(NAMESPACE, f"{item_key}#{n}")


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("mode", ["delete", "adelete", "save", "asave"])
def test_chunks_past_a_gap_are_deleted_with_an_unreadable_manifest(
    kind: str, mode: str, tmp_path: Path, request: Any
) -> None:
    # The search for an unreadable manifest's chunks stopped at the first missing one:
    # with chunk 0 gone, chunks 1-4 of a deleted thread (what the user said) stayed.
    with open_store(kind, tmp_path, request) as store:
        for value, gap in [(BAD_MANIFESTS[0], (0,)), (BAD_MANIFESTS[-1], (1, 2))]:
            key = session_key(unique("CORP\\sam"))
            LangGraphIndexStore(store).save(key, entries(300))  # chunks #0..#4
            item_key = LangGraphIndexStore._check(key)
            assert len(stored_keys(store, key)) == 6
            drop(store, key, *gap)
            corrupt_manifest(kind, store, tmp_path, request, key, value)
            fresh = LangGraphIndexStore(store)  # another worker: no cached layout
            if mode == "delete":
                fresh.delete(key)
            elif mode == "adelete":
                asyncio.run(fresh.adelete(key))
            elif mode == "save":
                fresh.save(key, entries(5, "new"))
            else:
                asyncio.run(fresh.asave(key, entries(5, "new")))
            if mode.endswith("save"):
                assert sorted(stored_keys(store, key)) == [f"{item_key}#0", f"{item_key}#m"]
                assert LangGraphIndexStore(store).load(key) == entries(5, "new")
            else:
                assert stored_keys(store, key) == [], (value, gap)


def test_a_gap_is_stepped_over_within_a_batch_and_a_normal_delete_reads_once() -> None:
    store = Refusing(InMemoryStore())
    index = LangGraphIndexStore(store)  # type: ignore[arg-type]
    index.save("t", entries(300))  # chunks #0..#4
    store.put(NAMESPACE, "t#11", {"token": "x", "entries": []})  # 6 missing before it
    store.put(NAMESPACE, "t#m", {"format": 2, "chunks": 5})
    LangGraphIndexStore(store).delete("t")  # type: ignore[arg-type]
    assert stored_keys(store, "t") == []  # type: ignore[arg-type]
    # Bounded: a chunk a whole batch (8 positions) past the last one is not looked for.
    index.save("u", entries(3))
    store.put(NAMESPACE, "u#9", {"token": "x", "entries": []})
    LangGraphIndexStore(store).delete("u")  # type: ignore[arg-type]
    assert stored_keys(store, "u") == ["u#9"]  # type: ignore[arg-type]
    # The cost of a delete of a sound index is what it was: the manifest, one batch.
    index.save("v", entries(300))
    store.reads = 0
    LangGraphIndexStore(store).delete("v")  # type: ignore[arg-type]
    assert store.reads == 2
    assert stored_keys(store, "v") == []  # type: ignore[arg-type]
