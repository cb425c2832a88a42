"""A thread's stored index, read and dropped by its thread id, whatever the id and
whatever is stored.

Found by a production trial: the documented way to forget a conversation
(``LangGraphIndexStore(store).delete(thread_id)``) silently left the index of a thread
whose id holds ``\\`` or ``|`` in the store (the Librarian keys it escaped, by
``session_key``); the way out a corrupt-index error named crashed on a manifest whose
``chunks`` was not a list (``TypeError``) or on an undecodable SQLite row, leaving the
thread failing every turn; and a damaged SQLite file raised the raw
``sqlite3.DatabaseError`` out of ``invoke``, with no hint. Run on an in-memory store, a
real SQLite file and a real PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import doctest
import json
import re
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore

import helpers
from langgraph_librarian import (
    FileIndexStore,
    IndexEntry,
    IndexStoreError,
    LangGraphIndexStore,
    LibrarianConfig,
    create_librarian_graph,
)
from langgraph_librarian.stores import base
from langgraph_librarian.stores.base import key_thread, session_key, thread_keys

NAMESPACE = ("librarian", "index")
HOSTILE_IDS = ["sam", "CORP\\sam", "tenant|sam", "a\\|b", "a\\", "|", "\\"]


def entries(n: int, text: str = "fact") -> list[IndexEntry]:
    return [
        IndexEntry(id=i, role="human", summary=f"{text} {i}", message_id=f"m{i}") for i in range(n)
    ]


SQLITE_FILE = "memory.sqlite"
"""The file :func:`helpers.open_store` keeps a SQLite store in (rows are garbled there)."""


def open_store(
    kind: str, tmp_path: Path, request: Any
) -> contextlib.AbstractContextManager[BaseStore]:
    """:func:`helpers.open_store`, the PostgreSQL DSN asked of pytest only for "postgres"."""
    dsn = request.getfixturevalue("postgres_dsn") if kind == "postgres" else None
    return helpers.open_store(kind, tmp_path, dsn)


BACKENDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def unique(thread: str) -> str:
    """``thread`` made unique (the PostgreSQL store is shared by every test run)."""
    return f"{thread}-{uuid.uuid4().hex[:8]}"


def stored_keys(store: BaseStore, key: str) -> list[str]:
    """The items of the index under ``key`` that are still stored (manifest, chunks,
    the 0.1 layout's single item)."""
    item_key = LangGraphIndexStore._check(key)
    candidates = [item_key, f"{item_key}#m", *(f"{item_key}#{n}" for n in range(40))]
    return [k for k in candidates if _exists(store, k)]


def _exists(store: BaseStore, key: str) -> bool:
    try:
        return store.get(NAMESPACE, key) is not None
    except ValueError:  # an undecodable row is there all the same
        return True


def graph_on(store: Any) -> Any:
    return create_librarian_graph(
        lambda state: {"messages": [AIMessage("Noted.")]},
        LibrarianConfig(store=store),
        checkpointer=InMemorySaver(),
    )


# -- keys ---------------------------------------------------------------------------------


def test_session_key_lives_in_the_stores_and_is_still_importable_from_config() -> None:
    from langgraph_librarian import config

    assert config.session_key is session_key


@pytest.mark.parametrize("thread", HOSTILE_IDS)
@pytest.mark.parametrize("namespace", ["", "agent", "team|agent"])
def test_a_key_names_the_thread_it_was_made_for(thread: str, namespace: str) -> None:
    assert key_thread(session_key(thread, namespace)) == (thread, namespace)


def test_a_key_no_thread_gives_names_itself() -> None:
    for key in ["a\\b", "x\\", "", "|agent", "a|"]:
        assert key_thread(key) is None
        assert base.key_deletion(key) == f"delete({key!r})"
    assert base.key_deletion(session_key("CORP\\sam")) == "delete_thread('CORP\\\\sam')"
    assert base.key_name(session_key("CORP\\sam", "agent")) == (
        "thread 'CORP\\\\sam' (subgraph 'agent')"
    )


def test_thread_keys() -> None:
    assert thread_keys("t|1", ["agent", "", "agent", "team|agent"]) == [
        "t\\|1",
        "t\\|1|agent",
        "t\\|1|team|agent",
    ]
    assert thread_keys(7) == ["7"]  # LangGraph keys thread_id=7 as "7"
    for bad in ("", None):
        with pytest.raises(ValueError):
            thread_keys(bad)
    with pytest.raises(TypeError):
        thread_keys("t", "agent")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        thread_keys("t", [1])  # type: ignore[list-item]


def test_the_docstring_examples_run() -> None:
    result = doctest.testmod(base)
    assert result.attempted > 0 and result.failed == 0


# -- load_thread / delete_thread -----------------------------------------------------------


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("thread", ["sam", "CORP\\sam", "tenant|sam"])
def test_a_thread_is_read_and_forgotten_by_its_id(
    kind: str, thread: str, tmp_path: Path, request: Any
) -> None:
    # The documented recipe called delete(thread_id): for "CORP\\sam" and "tenant|sam"
    # it deleted nothing (and load(thread_id) read None), the passport number stayed.
    thread = unique(thread)
    secret = f"X{uuid.uuid4().hex[:10]}"
    with open_store(kind, tmp_path, request) as store:
        graph = graph_on(store)
        cfg = {"configurable": {"thread_id": thread}}
        graph.invoke({"messages": [HumanMessage(f"My passport number is {secret}.")]}, cfg)
        index = LangGraphIndexStore(store)
        loaded = index.load_thread(thread)
        assert loaded is not None and any(secret in e.summary for e in loaded)
        assert stored_keys(store, session_key(thread))
        index.delete_thread(thread)
        assert index.load_thread(thread) is None
        assert stored_keys(store, session_key(thread)) == []
        if kind != "postgres":  # a shared database: the keys above are checked instead
            left = [it.value for ns in store.list_namespaces() for it in store.search(ns)]
            assert secret not in str(left)


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_async_twins_and_subgraph_indexes(kind: str, tmp_path: Path, request: Any) -> None:
    thread = unique("tenant|sam\\x")
    with open_store(kind, tmp_path, request) as store:
        index = LangGraphIndexStore(store)
        index.save(session_key(thread), entries(3, "top"))
        index.save(session_key(thread, "agent"), entries(2, "sub"))
        other = unique("other")
        index.save(session_key(other, "agent"), entries(1))

        async def scenario() -> None:
            assert await index.aload_thread(thread) == entries(3, "top")
            assert await index.aload_thread(thread, subgraph="agent") == entries(2, "sub")
            await index.adelete_thread(thread, subgraphs=["agent"])
            assert await index.aload_thread(thread) is None
            assert await index.aload_thread(thread, subgraph="agent") is None

        assert index.load_thread(thread, subgraph="agent") == entries(2, "sub")
        asyncio.run(scenario())
        assert LangGraphIndexStore(store).load_thread(other, subgraph="agent") == entries(1)
        index.delete_thread(other, subgraphs=["agent"])
        assert stored_keys(store, session_key(other, "agent")) == []


def test_an_int_thread_id_is_the_thread_langgraph_runs() -> None:
    store = InMemoryStore()
    graph = graph_on(store)
    graph.invoke({"messages": [HumanMessage("Budget is 12k.")]}, {"configurable": {"thread_id": 7}})
    index = LangGraphIndexStore(store)
    assert index.load_thread(7) is not None
    assert index.load_thread(7) == index.load_thread("7") == index.load("7")
    index.delete_thread(7)
    assert index.load_thread("7") is None


def test_bad_thread_arguments_are_refused() -> None:
    index = LangGraphIndexStore(InMemoryStore())
    for bad in ("", None):
        with pytest.raises(ValueError):
            index.load_thread(bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            index.delete_thread(bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            asyncio.run(index.adelete_thread(bad))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        index.delete_thread("t", subgraphs="agent")
    with pytest.raises(TypeError):
        index.load_thread("t", subgraph=["agent"])  # type: ignore[arg-type]


@pytest.mark.parametrize("thread", ["sam", "CORP\\sam", "tenant|sam"])
def test_a_file_store_reads_and_forgets_a_thread_by_its_id(thread: str, tmp_path: Path) -> None:
    store = FileIndexStore(tmp_path)
    graph = graph_on(store)
    graph.invoke(
        {"messages": [HumanMessage("My PIN is 4417.")]}, {"configurable": {"thread_id": thread}}
    )
    assert store.load_thread(thread)
    assert asyncio.run(store.aload_thread(thread)) == store.load_thread(thread)
    store.save(session_key(thread, "agent"), entries(1))
    asyncio.run(store.adelete_thread(thread, subgraphs=["agent"]))
    assert store.load_thread(thread) is None
    assert store.load_thread(thread, subgraph="agent") is None
    assert list(tmp_path.iterdir()) == []


# -- the way out a corrupt index names ------------------------------------------------------


def way_out(error: BaseException) -> str:
    found = re.search(r"LangGraphIndexStore\(store\)\.(\w+\(.*?\)) removes it", str(error))
    assert found is not None, str(error)
    return found.group(1)


@pytest.mark.parametrize("thread", ["t", "CORP\\sam", "tenant|sam"])
def test_the_way_out_of_a_corrupt_index_is_a_call_that_works(thread: str) -> None:
    store = InMemoryStore()
    graph = graph_on(store)
    cfg = {"configurable": {"thread_id": thread}}
    graph.invoke({"messages": [HumanMessage("hello")]}, cfg)
    key = LangGraphIndexStore._check(session_key(thread))
    store.put(NAMESPACE, f"{key}#m", {"format": 2, "chunks": "x", "count": 1})
    with pytest.raises(IndexStoreError) as raised:
        graph.invoke({"messages": [HumanMessage("again")]}, cfg)
    assert f"thread {thread!r}" in str(raised.value)
    call = way_out(raised.value)
    assert call == f"delete_thread({thread!r})"
    eval(f"index.{call}", {"index": LangGraphIndexStore(store)})  # as a user pastes it
    out = graph.invoke({"messages": [HumanMessage("after the way out")]}, cfg)
    assert out["messages"][-1].content == "Noted."


def test_the_way_out_of_a_corrupt_subgraph_index_works() -> None:
    store = InMemoryStore()
    index = LangGraphIndexStore(store)
    key = session_key("CORP\\sam", "agent")
    index.save(key, entries(2))
    store.put(NAMESPACE, f"{LangGraphIndexStore._check(key)}#m", {"format": 2, "chunks": "x"})
    with pytest.raises(IndexStoreError, match=re.escape("thread 'CORP\\\\sam' (subgraph")):
        LangGraphIndexStore(store).load(key)
    with pytest.raises(IndexStoreError) as raised:
        LangGraphIndexStore(store).load(key)
    eval(f"index.{way_out(raised.value)}", {"index": LangGraphIndexStore(store)})
    assert stored_keys(store, key) == []


def test_a_corrupt_file_names_the_thread_and_a_way_out_that_works(tmp_path: Path) -> None:
    store = FileIndexStore(tmp_path)
    thread = "CORP\\sam"
    store.path_for(session_key(thread)).write_text("{corrupt", encoding="utf-8")
    with pytest.raises(IndexStoreError) as raised:
        graph_on(store).invoke(
            {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": thread}}
        )
    text = str(raised.value)
    assert "thread 'CORP\\\\sam'" in text
    found = re.search(r"(FileIndexStore\(.*?\)\.delete_thread\(.*?\))\)", text)
    assert found is not None, text
    eval(found.group(1), {"FileIndexStore": FileIndexStore})
    assert list(tmp_path.iterdir()) == []


# -- a manifest of any value -----------------------------------------------------------------

BAD_MANIFESTS: list[Any] = [
    {"format": 2, "count": 2, "chunks": 5},
    {"format": 2, "count": 2, "chunks": "x"},
    {"format": 2, "count": 2, "chunks": None},
    {"format": 2, "count": 2, "chunks": {"0": "a"}},
    {"format": 2, "count": 2, "chunks": [1, 2]},
    {"format": "2", "chunks": []},
    {"garbage": True},
]


def corrupt_manifest(
    kind: str, store: BaseStore, tmp_path: Path, request: Any, key: str, value: Any
) -> None:
    """Store ``value`` as ``key``'s manifest; on SQL backends also values that are not
    JSON objects (a number, a list, a string), written in the table itself."""
    item_key = f"{LangGraphIndexStore._check(key)}#m"
    if isinstance(value, dict):
        store.put(NAMESPACE, item_key, value, index=False)
        return
    where = (json.dumps(value), ".".join(NAMESPACE), item_key)
    if kind == "sqlite":
        with contextlib.closing(sqlite3.connect(tmp_path / SQLITE_FILE)) as conn, conn:
            query = "update store set value = ? where prefix = ? and key = ?"
            assert conn.execute(query, where).rowcount == 1
    else:
        dsn = request.getfixturevalue("postgres_dsn")
        with psycopg.connect(dsn, autocommit=True) as conn:
            query = "update store set value = %s::jsonb where prefix = %s and key = %s"
            assert conn.execute(query, where).rowcount == 1


RAW_MANIFESTS: list[Any] = [5, [1, 2], "chunks"]


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_unreadable_manifest_is_deleted_with_every_chunk(
    kind: str, mode: str, tmp_path: Path, request: Any
) -> None:
    # delete() raised TypeError on {"chunks": 5}: the way out the error names crashed,
    # and the thread failed every turn.
    with open_store(kind, tmp_path, request) as store:
        cases = BAD_MANIFESTS + (RAW_MANIFESTS if kind != "memory" else [])
        for value in cases:
            key = session_key(unique("CORP\\sam"))
            LangGraphIndexStore(store).save(key, entries(300))  # chunks #0..#2 and more
            before = stored_keys(store, key)
            assert len(before) > 4
            corrupt_manifest(kind, store, tmp_path, request, key, value)
            with pytest.raises(IndexStoreError, match="removes it") as raised:
                LangGraphIndexStore(store).load(key)
            fresh = LangGraphIndexStore(store)  # another worker: no cached layout
            if mode == "async":
                asyncio.run(fresh.adelete(key))
            else:
                fresh.delete(key)
            assert stored_keys(store, key) == [], value
            assert "delete_thread" in str(raised.value)
            assert LangGraphIndexStore(store).load(key) is None


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_save_overwrites_an_unreadable_manifest_and_its_chunks(
    kind: str, mode: str, tmp_path: Path, request: Any
) -> None:
    with open_store(kind, tmp_path, request) as store:
        cases = BAD_MANIFESTS + (RAW_MANIFESTS if kind != "memory" else [])
        for value in cases:
            key = session_key(unique("tenant|sam"))
            LangGraphIndexStore(store).save(key, entries(300))
            corrupt_manifest(kind, store, tmp_path, request, key, value)
            fresh = LangGraphIndexStore(store)
            if mode == "async":
                asyncio.run(fresh.asave(key, entries(5, "new")))
            else:
                fresh.save(key, entries(5, "new"))
            assert LangGraphIndexStore(store).load(key) == entries(5, "new"), value
            item_key = LangGraphIndexStore._check(key)
            assert sorted(stored_keys(store, key)) == [f"{item_key}#0", f"{item_key}#m"]


def test_a_newer_release_manifest_is_still_refused_by_a_save() -> None:
    store = InMemoryStore()
    LangGraphIndexStore(store).save("s", entries(2))
    newer = {**store.get(NAMESPACE, "s#m").value, "format": 99, "chunks": 5}
    store.put(NAMESPACE, "s#m", newer)
    with pytest.raises(IndexStoreError, match="does not overwrite"):
        LangGraphIndexStore(store).save("s", entries(1))
    LangGraphIndexStore(store).delete("s")  # forgetting it is always possible
    assert stored_keys(store, "s") == []


def test_a_thread_with_a_garbled_manifest_recovers_through_the_named_way_out() -> None:
    store = InMemoryStore()
    graph = graph_on(store)
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [HumanMessage("hello")]}, cfg)
    store.put(NAMESPACE, "t#m", {**store.get(NAMESPACE, "t#m").value, "chunks": 5})
    with pytest.raises(IndexStoreError) as raised:
        graph.invoke({"messages": [HumanMessage("again")]}, cfg)
    eval(f"index.{way_out(raised.value)}", {"index": LangGraphIndexStore(store)})
    out = graph.invoke({"messages": [HumanMessage("and now")]}, cfg)
    assert out["messages"][-1].content == "Noted."


def test_an_undecodable_sqlite_row_is_deleted_and_overwritten(tmp_path: Path) -> None:
    # The error for a row the backend cannot decode named delete(); delete read the row
    # and raised the same JSONDecodeError.
    path = tmp_path / "store.sqlite"
    for mode in ("delete", "adelete", "save"):
        with SqliteStore.from_conn_string(str(path)) as store:
            store.setup()
            LangGraphIndexStore(store).save(session_key("CORP\\sam"), entries(300))
        with contextlib.closing(sqlite3.connect(path)) as conn, conn:
            conn.execute("update store set value = '{not json' where prefix like 'librarian%'")
        with SqliteStore.from_conn_string(str(path)) as store:
            with pytest.raises(IndexStoreError) as raised:
                LangGraphIndexStore(store).load(session_key("CORP\\sam"))
            index = LangGraphIndexStore(store)
            if mode == "delete":  # the call the error names, as a user pastes it
                eval(f"index.{way_out(raised.value)}", {"index": index})
            elif mode == "adelete":
                asyncio.run(index.adelete(session_key("CORP\\sam")))
            else:
                index.save(session_key("CORP\\sam"), entries(3))
            assert way_out(raised.value) == "delete_thread('CORP\\\\sam')"
            expected = entries(3) if mode == "save" else None
            assert LangGraphIndexStore(store).load(session_key("CORP\\sam")) == expected
            key = LangGraphIndexStore._check(session_key("CORP\\sam"))
            left = stored_keys(store, session_key("CORP\\sam"))
            assert left == ([f"{key}#m", f"{key}#0"] if mode == "save" else [])


# -- a store that cannot be read ------------------------------------------------------------


def damage(path: Path) -> None:
    """Overwrite the ``store`` table's root page: "database disk image is malformed"."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        page_size = conn.execute("pragma page_size").fetchone()[0]
        (root,) = conn.execute("select rootpage from sqlite_master where name = 'store'").fetchone()
    with path.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xaa" * page_size)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_damaged_sqlite_file_raises_index_store_error_with_a_hint(
    mode: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.sqlite"
    with SqliteStore.from_conn_string(str(path)) as store:
        store.setup()
        LangGraphIndexStore(store).save("t", entries(300))
    damage(path)
    with SqliteStore.from_conn_string(str(path)) as store:
        with pytest.raises(sqlite3.DatabaseError):
            store.get(NAMESPACE, "t#m")  # the damage is real
        index = LangGraphIndexStore(store)
        with pytest.raises(IndexStoreError, match="integrity_check") as raised:
            if mode == "async":
                asyncio.run(index.aload("t"))
            else:
                index.load("t")
        assert isinstance(raised.value.__cause__, sqlite3.DatabaseError)
        assert "thread 't'" in str(raised.value)
        graph = graph_on(store)
        with pytest.raises(IndexStoreError, match="malformed") as raised:
            if mode == "async":
                asyncio.run(
                    graph.ainvoke(
                        {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t"}}
                    )
                )
            else:
                graph.invoke(
                    {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t"}}
                )
        assert isinstance(raised.value.__cause__, sqlite3.DatabaseError)


def test_the_middleware_raises_a_damaged_store_before_the_model(tmp_path: Path) -> None:
    # It passed every message to the model (selection failed open), then absorbed the
    # failed read after the reply, every turn: billed calls, no index ever saved, and the
    # graph face raising the raw sqlite3.DatabaseError for the same store.
    from langchain.agents import create_agent

    from fakes import ToolCallingScriptedModel
    from langgraph_librarian import LibrarianMiddleware

    path = tmp_path / "store.sqlite"
    with SqliteStore.from_conn_string(str(path)) as store:
        store.setup()
        LangGraphIndexStore(store).save("t", entries(3))
    damage(path)
    model = ToolCallingScriptedModel(script="answer")
    with SqliteStore.from_conn_string(str(path)) as store:
        agent = create_agent(
            model,
            middleware=[LibrarianMiddleware(LibrarianConfig(store=store))],
            checkpointer=InMemorySaver(),
        )
        with pytest.raises(IndexStoreError, match="malformed"):
            agent.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t"}})
    assert model.calls == []


class Failing(InMemoryStore):
    """An in-memory store whose reads raise ``error`` while it is set."""

    error: BaseException | None = None

    def batch(self, ops: Any) -> Any:
        if self.error is not None:
            raise self.error
        return super().batch(ops)

    async def abatch(self, ops: Any) -> Any:
        if self.error is not None:
            raise self.error
        return await super().abatch(ops)


@pytest.mark.parametrize(
    "error",
    [
        sqlite3.OperationalError("database is locked"),
        ConnectionError("connection reset"),
        TimeoutError("no answer"),
        sqlite3.OperationalError("no such table: store"),  # settings: raised as they are
    ],
)
def test_transient_and_configuration_failures_are_raised_as_they_are(error: Exception) -> None:
    store = Failing()
    index = LangGraphIndexStore(store)
    index.save("t", entries(2))
    store.error = error
    with pytest.raises(type(error)) as raised:
        index.load("t")
    assert raised.value is error
    with pytest.raises(type(error)) as raised:
        asyncio.run(index.aload("t"))
    assert raised.value is error


def test_a_locked_database_is_still_a_blip_the_turn_absorbs() -> None:
    store = Failing()
    graph = graph_on(store)
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [HumanMessage("hello")]}, cfg)
    store.error = sqlite3.OperationalError("database is locked")
    out = graph.invoke({"messages": [HumanMessage("again")]}, cfg)
    assert out["messages"][-1].content == "Noted."
    assert "database is locked" in out["librarian_metadata"]["store_error"]


# Found by a review of the fixes above: every ValueError of a backend was read as an
# undecodable row, so a backend refusing every read (a closed connection, an invalid
# namespace) kept delete and save probing for ever; an error of a backend the failure
# policy does not know (a Redis connection dropping) and PostgreSQL's read-only
# transaction of a failover were reported as a damaged database.


def test_a_closed_async_store_raises_at_once_and_never_probes_for_ever(tmp_path: Path) -> None:
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    async def run() -> list[str]:
        async with AsyncSqliteStore.from_conn_string(str(tmp_path / "a.sqlite")) as store:
            await store.setup()
            await LangGraphIndexStore(store).asave("t", entries(2))
        index = LangGraphIndexStore(store)  # its connection is closed now
        raised = []
        for call in (index.adelete("t"), index.asave("t", entries(1)), index.adelete_thread("t")):
            with pytest.raises(ValueError) as error:
                await asyncio.wait_for(call, 10)
            raised.append(str(error.value))
        return raised

    assert all("connection" in text for text in asyncio.run(run()))


@pytest.mark.parametrize("namespace", [("myapp.prod", "index"), (), ("librarian", "")])
def test_a_namespace_langgraph_refuses_is_refused_at_once(namespace: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="namespace"):
        LangGraphIndexStore(InMemoryStore(), namespace=namespace)


class RedisConnectionError(Exception):
    """What a backend the failure policy does not know raises for a dropped connection."""


@pytest.mark.parametrize(
    "error",
    [
        RedisConnectionError("Error 111 connecting to redis:6379. Connection refused."),
        psycopg.errors.ReadOnlySqlTransaction("cannot execute UPDATE in a read-only transaction"),
    ],
)
def test_a_failure_that_is_no_damage_keeps_the_middleware_failing_open(error: Exception) -> None:
    from langchain.agents import create_agent

    from fakes import ToolCallingScriptedModel
    from langgraph_librarian import LibrarianMiddleware

    store = Failing()
    model = ToolCallingScriptedModel(script="answer")
    agent = create_agent(
        model,
        middleware=[LibrarianMiddleware(LibrarianConfig(store=store))],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("hello")]}, cfg)
    store.error = error
    out = agent.invoke({"messages": [HumanMessage("again")]}, cfg)
    assert out["messages"][-1].type == "ai"
    assert len(model.calls) == 2
    with pytest.raises(type(error)):
        LangGraphIndexStore(store).load("t")  # as it is, not as a damaged index


@pytest.mark.postgres
def test_a_read_only_postgres_connection_is_a_passing_failure(postgres_dsn: str) -> None:
    """A server that became a standby in a failover refuses the store's reads (they
    refresh TTLs): the next attempt reaches the new primary, so the turn absorbs it."""
    from langgraph_librarian._engine.failures import classify

    with PostgresStore.from_conn_string(postgres_dsn) as store:
        store.setup()
    read_only = postgres_dsn + ("&" if "?" in postgres_dsn else "?")
    read_only += "options=-c%20default_transaction_read_only%3Don"
    with (
        PostgresStore.from_conn_string(read_only) as store,
        pytest.raises(psycopg.errors.ReadOnlySqlTransaction) as raised,
    ):
        LangGraphIndexStore(store).load(unique("read-only"))
    assert classify(raised.value) == "transient"
