"""Scale-out persistence on a real PostgreSQL: checkpointer and LangGraph store."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore

from helpers import conversation
from langgraph_librarian import LangGraphIndexStore, LibrarianConfig, create_librarian_graph

pytestmark = pytest.mark.postgres


def agent(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [AIMessage(f"saw {len(state['curated_messages'])} messages")]}


def test_two_workers_share_a_thread_through_postgres_checkpointer(postgres_dsn):
    thread = f"pg-{uuid.uuid4()}"
    cfg = {"configurable": {"thread_id": thread}}
    with (
        PostgresSaver.from_conn_string(postgres_dsn) as saver_a,
        PostgresSaver.from_conn_string(postgres_dsn) as saver_b,
    ):
        saver_a.setup()
        worker_a = create_librarian_graph(agent, LibrarianConfig(), checkpointer=saver_a)
        worker_b = create_librarian_graph(agent, LibrarianConfig(), checkpointer=saver_b)
        worker_a.invoke({"messages": conversation(8)}, cfg)
        result = worker_b.invoke(
            {"messages": [HumanMessage("What is the offsite budget now?")]}, cfg
        )
    meta = result["librarian_metadata"]
    assert meta["selection_skipped"] is False
    assert len(result["index"]) == 8 * 2 + 3
    curated_ids = {m.id for m in result["curated_messages"]}
    assert {"h2"} <= curated_ids


def test_index_in_postgres_store_shared_by_workers(postgres_dsn):
    thread = f"pgs-{uuid.uuid4()}"
    with PostgresStore.from_conn_string(postgres_dsn) as backing:
        backing.setup()
        store = LangGraphIndexStore(backing, namespace=("librarian-test", "index"))
        config = LibrarianConfig(store=store)
        graph = create_librarian_graph(agent, config)
        graph.invoke({"messages": conversation(4)}, {"configurable": {"thread_id": thread}})
        loaded = store.load(thread)
        assert loaded is not None and len(loaded) == 9
        # another worker (no checkpointer at all) selects from the shared index
        other = create_librarian_graph(agent, LibrarianConfig(store=store))
        messages = [
            *conversation(4),
            AIMessage("saw 8 messages", id="prev"),
            HumanMessage("budget?", id="q"),
        ]
        result = other.invoke({"messages": messages}, {"configurable": {"thread_id": thread}})
        assert result["librarian_metadata"]["selection_skipped"] is False
        store.delete(thread)
        assert store.load(thread) is None


async def test_async_postgres_saver_and_store(postgres_dsn):
    thread = f"pga-{uuid.uuid4()}"
    cfg = {"configurable": {"thread_id": thread}}
    async with (
        AsyncPostgresSaver.from_conn_string(postgres_dsn) as saver,
        AsyncPostgresStore.from_conn_string(postgres_dsn) as backing,
    ):
        await saver.setup()
        await backing.setup()
        store = LangGraphIndexStore(backing, namespace=("librarian-test", "async"))
        graph = create_librarian_graph(agent, LibrarianConfig(store=store), checkpointer=saver)
        await graph.ainvoke({"messages": conversation(5)}, cfg)
        result = await graph.ainvoke({"messages": [HumanMessage("offsite budget?")]}, cfg)
        assert result["librarian_metadata"]["selection_skipped"] is False
        saved = await store.aload(thread)
        assert saved is not None and len(saved) == len(result["messages"])
        await store.adelete(thread)


def test_hostile_session_ids_in_postgres_store(postgres_dsn):
    from langgraph_librarian import IndexEntry

    hostile = [
        "../../etc/passwd",
        "a.b.c",
        "名前🙂",
        "x" * 3000,
        "'; DROP TABLE store; --",
        "\x00zero",
    ]
    with PostgresStore.from_conn_string(postgres_dsn) as backing:
        backing.setup()
        store = LangGraphIndexStore(
            backing, namespace=("librarian-test", f"ids-{uuid.uuid4().hex}")
        )
        for n, session in enumerate(hostile):
            store.save(session, [IndexEntry(id=0, role="human", summary=f"s{n}")])
        for n, session in enumerate(hostile):
            loaded = store.load(session)
            assert loaded is not None and loaded[0].summary == f"s{n}"
            store.delete(session)
            assert store.load(session) is None


@pytest.mark.parametrize("bad", ["binary\x00blob", "half an emoji \ud83d here"])
def test_text_the_database_rejects_is_stored_cleaned_and_the_thread_goes_on(postgres_dsn, bad):
    """A NUL byte or a lone surrogate in a message (a tool that read a binary file) must
    not make every later save of the thread's index fail: PostgreSQL's JSONB rejects both."""
    from langgraph_librarian import IndexEntry

    with (
        PostgresSaver.from_conn_string(postgres_dsn) as saver,
        PostgresStore.from_conn_string(postgres_dsn) as backing,
    ):
        saver.setup()
        backing.setup()
        store = LangGraphIndexStore(backing, namespace=("librarian-test", uuid.uuid4().hex))
        graph = create_librarian_graph(
            lambda state: {"messages": [AIMessage(f"The file says: {bad}")]},
            LibrarianConfig(store=store, embeddings=None),
            checkpointer=saver,
        )
        cfg = {"configurable": {"thread_id": f"bad-{uuid.uuid4().hex}"}}
        for question in ("What is in file.bin?", "Thanks. And the size?", "Anything else?"):
            graph.invoke({"messages": [HumanMessage(question)]}, cfg)
        # Read back by another worker (no in-process cache): what the database holds.
        fresh = LangGraphIndexStore(backing, namespace=store.namespace)
        entries = fresh.load(cfg["configurable"]["thread_id"])
        assert entries is not None and len(entries) == 6
        summary = entries[1].summary
        assert "file says" in summary and "\x00" not in summary
        summary.encode("utf-8")  # no lone surrogate left
        # An entry from elsewhere (an older state) with such a message id is cleaned too.
        store.save("odd", [IndexEntry(id=0, role="tool", summary="x", message_id=f"id-{bad}")])
        loaded = LangGraphIndexStore(backing, namespace=store.namespace).load("odd")
        assert loaded is not None and "\ufffd" in str(loaded[0].message_id)
