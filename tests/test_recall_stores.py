"""Scope memory on real stores: a SQLite file and PostgreSQL (127.0.0.1:5432).

The same store-layer cases run on both; each store also gets one end-to-end agent run
whose saved checkpoint is read back raw from the database and searched for the
recalled text.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import BaseStore
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from fakes import ToolCallingScriptedModel
from helpers import open_store
from langgraph_librarian.recall import (
    RecallMiddleware,
    RecallScope,
    ScopeMemory,
    create_memory_tools,
)
from langgraph_librarian.recall._result import RECALL_MESSAGE_ID
from test_recall_scope import HOSTILE

ALLERGY = "Please remember that I have a severe nut allergy."
QUESTION = "Suggest a dessert with nuts for tonight."


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def real_store(request: Any, tmp_path: Any) -> Iterator[BaseStore]:
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None
    with open_store(request.param, tmp_path, dsn) as store:
        yield store


def fresh_memory(store: BaseStore) -> ScopeMemory:
    # A root namespace of its own: runs never see each other's data in a shared database.
    return ScopeMemory(store, namespace=("recall_test", uuid.uuid4().hex))


def first_thread() -> list[Any]:
    return [
        HumanMessage(ALLERGY, id="h1"),
        AIMessage("Understood: no nuts.", id="a1"),
        HumanMessage("I also love lemon desserts.", id="h2"),
        AIMessage("Lemon it is.", id="a2"),
    ]


def test_store_layer_round_trip(real_store):
    memory = fresh_memory(real_store)
    assert memory.capture("user:42", first_thread(), thread_id="thread-1") == 4
    memory.remember("user:42", "Birthday on 3 March.", thread_id="thread-1")
    records = memory.records("user:42")
    assert [r.message_id for r in records[:4]] == ["h1", "a1", "h2", "a2"]
    assert memory.search("user:42", "nut allergy", limit=1)[0].message_id == "h1"
    result = memory.recall("user:42", QUESTION)
    assert result.status == "recalled" and ALLERGY in result.text
    assert memory.recall("user:43", QUESTION).status == "empty"
    assert memory.delete_scope("user:42") == 6
    assert memory.records("user:42") == []


def test_hostile_scope_ids_and_text(real_store):
    memory = fresh_memory(real_store)
    for n, scope in enumerate(HOSTILE):
        memory.remember(scope, f"note {n}: nul\x00 and lone \ud800 inside", thread_id="t\x00/..")
    for n, scope in enumerate(HOSTILE):
        (record,) = memory.records(scope)
        assert record.text.startswith(f"note {n}:") and "\x00" not in record.text
        assert record.thread_id == "t\x00/.."  # stored cleaned, read back exact
        assert memory.delete_scope(scope) == 1
        assert memory.records(scope) == []


async def test_async_layer_on_a_sync_store(real_store):
    # SqliteStore has no async API: the work runs in a thread; PostgresStore uses its own.
    memory = fresh_memory(real_store)
    assert await memory.acapture("user:42", first_thread(), thread_id="t") == 4
    await memory.aremember("user:42", "Birthday on 3 March.")
    result = await memory.arecall("user:42", QUESTION)
    assert result.status == "recalled" and ALLERGY in result.text
    assert await memory.adelete_scope("user:42") == 6


async def test_async_sqlite_store(tmp_path):
    async with AsyncSqliteStore.from_conn_string(str(tmp_path / "a.sqlite")) as store:
        await store.setup()
        memory = fresh_memory(store)
        await memory.acapture("user:42", first_thread(), thread_id="t")
        assert (await memory.arecall("user:42", QUESTION)).status == "recalled"
        assert await memory.adelete_scope("user:42") == 5


@pytest.mark.postgres
async def test_async_postgres_store(postgres_dsn):
    async with AsyncPostgresStore.from_conn_string(postgres_dsn) as store:
        await store.setup()
        memory = fresh_memory(store)
        await memory.acapture("user:42", first_thread(), thread_id="t")
        await memory.aremember("\x00" + "x" * 10_000, "hostile scope works async too")
        assert (await memory.arecall("user:42", QUESTION)).status == "recalled"
        assert len(await memory.arecords("\x00" + "x" * 10_000)) == 1
        assert await memory.adelete_scope("user:42") == 5
        assert await memory.adelete_scope("\x00" + "x" * 10_000) == 1


def agent_for(memory: ScopeMemory, model: Any, checkpointer: Any) -> Any:
    """An agent with recall, capture and the memory tools (the model must bind tools)."""
    return create_agent(
        model,
        tools=create_memory_tools(memory),
        middleware=[RecallMiddleware(memory, capture_turns=True)],
        context_schema=RecallScope,
        checkpointer=checkpointer,
    )


def ask(agent: Any, thread: str, scope: str, text: str) -> Any:
    return agent.invoke(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=RecallScope(scope_id=scope),
    )


def test_end_to_end_sqlite(tmp_path):
    path = str(tmp_path / "app.sqlite")
    model = ToolCallingScriptedModel(script="An idea.")
    with SqliteSaver.from_conn_string(path) as saver, SqliteStore.from_conn_string(path) as store:
        store.setup()
        memory = fresh_memory(store)
        agent = agent_for(memory, model, saver)
        t1, t2 = f"t1-{uuid.uuid4()}", f"t2-{uuid.uuid4()}"
        ask(agent, t1, "user:42", ALLERGY)
        ask(agent, t2, "user:42", QUESTION)
        assert model.calls[-1][0].id == RECALL_MESSAGE_ID
        assert ALLERGY in model.calls[-1][0].content
        ask(agent, f"t3-{uuid.uuid4()}", "user:43", QUESTION)
        assert model.calls[-1][0].id != RECALL_MESSAGE_ID
    with sqlite3.connect(path) as raw:

        def saved(thread: str) -> bytes:
            rows = raw.execute(
                "select checkpoint from checkpoints where thread_id = ? "
                "union all select value from writes where thread_id = ?",
                (thread, thread),
            ).fetchall()
            return b"".join(bytes(row[0]) for row in rows)

        assert ALLERGY.encode() in saved(t1)  # the raw read does see message text
        assert ALLERGY.encode() not in saved(t2) and b"UNTRUSTED" not in saved(t2)


@pytest.mark.postgres
def test_end_to_end_postgres(postgres_dsn):
    model = ToolCallingScriptedModel(script="An idea.")
    t1, t2 = f"t1-{uuid.uuid4()}", f"t2-{uuid.uuid4()}"
    with (
        PostgresSaver.from_conn_string(postgres_dsn) as saver,
        PostgresStore.from_conn_string(postgres_dsn) as store,
    ):
        saver.setup()
        store.setup()
        memory = fresh_memory(store)
        agent = agent_for(memory, model, saver)
        ask(agent, t1, "user:42", ALLERGY)
        ask(agent, t2, "user:42", QUESTION)
        assert ALLERGY in model.calls[-1][0].content
        ask(agent, f"t3-{uuid.uuid4()}", "user:43", QUESTION)
        assert model.calls[-1][0].id != RECALL_MESSAGE_ID
        assert memory.delete_scope("user:42") > 0 and memory.delete_scope("user:43") > 0
    with psycopg.connect(postgres_dsn) as conn:

        def saved(thread: str) -> bytes:
            rows = conn.execute(
                "select convert_to(checkpoint::text, 'UTF8') from checkpoints where thread_id = %s "
                "union all select blob from checkpoint_blobs where thread_id = %s "
                "union all select blob from checkpoint_writes where thread_id = %s",
                (thread, thread, thread),
            ).fetchall()
            return b"".join(bytes(row[0]) for row in rows if row[0] is not None)

        assert ALLERGY.encode() in saved(t1)
        assert ALLERGY.encode() not in saved(t2) and b"UNTRUSTED" not in saved(t2)


def tool_call_model() -> ToolCallingScriptedModel:
    def decide(messages: list[Any]) -> AIMessage:
        if isinstance(messages[-1], HumanMessage):
            call = {"name": "memory_search", "args": {"query": "nuts"}, "id": "s1"}
            return AIMessage("", tool_calls=[call])
        return AIMessage(f"tool said: {messages[-1].content}")

    return ToolCallingScriptedModel(script=decide)


def test_read_only_database_is_a_configuration_problem_sqlite(tmp_path, caplog):
    # SqliteStore creates its tables on first use; a database opened read-only cannot.
    path = tmp_path / "empty.sqlite"
    sqlite3.connect(path).close()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    with contextlib.closing(conn):
        memory = fresh_memory(SqliteStore(conn))
        agent = agent_for(memory, tool_call_model(), None)
        with caplog.at_level(logging.WARNING, logger="langgraph_librarian.recall"):
            result = ask(agent, "t", "user:42", QUESTION)
    tool_text = next(m.content for m in result["messages"] if isinstance(m, ToolMessage))
    assert tool_text == "memory unavailable: memory is misconfigured (OperationalError)"
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("recall skipped: configuration problem" in m for m in errors)
    assert result["messages"][-1].content.startswith("tool said:")


@pytest.mark.postgres
def test_store_never_set_up_is_a_configuration_problem_postgres(postgres_dsn, caplog):
    schema = f"recall_nosetup_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(f"create schema {schema}")
    try:
        dsn = f"{postgres_dsn}?options=-csearch_path%3D{schema}"
        with PostgresStore.from_conn_string(dsn) as store:  # setup() never ran here
            memory = fresh_memory(store)
            with caplog.at_level(logging.WARNING, logger="langgraph_librarian.recall"):
                result = ask(agent_for(memory, tool_call_model(), None), "t", "user:42", QUESTION)
        tool_text = next(m.content for m in result["messages"] if isinstance(m, ToolMessage))
        assert tool_text == "memory unavailable: memory is misconfigured (UndefinedTable)"
        assert any(
            "configuration problem" in r.getMessage()
            for r in caplog.records
            if r.levelno == logging.ERROR
        )
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(f"drop schema {schema} cascade")
