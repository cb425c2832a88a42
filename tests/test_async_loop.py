"""The async faces keep the Librarian's CPU work off the event loop.

A web server runs every conversation on one loop: selection over a long history, whose
view is new to the process (a restart, an imported thread), and indexing take hundreds
of milliseconds, which on the loop stall every other conversation. The work runs in a
worker thread; only model calls are awaited on the loop. Checked by where the work
runs, not by timing.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import MemorySaver

from fakes import ScriptedChatModel
from helpers import conversation
from langgraph_librarian import LibrarianConfig, LibrarianMiddleware, create_librarian_graph
from langgraph_librarian.index import pipeline
from langgraph_librarian.select import local


@pytest.fixture
def threads_of(monkeypatch):
    """Record the thread each wrapped function runs on."""
    seen: dict[str, set[int]] = {}

    def watch(owner: Any, name: str) -> None:
        original = getattr(owner, name)

        def recorded(*args: Any, **kwargs: Any) -> Any:
            seen.setdefault(name, set()).add(threading.get_ident())
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, recorded)

    watch(local.LocalSelector, "_select")
    watch(pipeline, "_assemble")
    return seen


def _agent(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [AIMessage("Noted, the figures are in the report for the team.")]}


@pytest.mark.parametrize("face", ["graph", "middleware"])
async def test_selection_and_indexing_run_off_the_event_loop(face, threads_of):
    loop_thread = threading.get_ident()
    history = conversation(turns=40)
    config = LibrarianConfig(always_include_recent_turns=1, context_token_budget=300)
    thread = {"configurable": {"thread_id": f"loop-{face}"}}
    if face == "graph":
        app: Any = create_librarian_graph(_agent, config, checkpointer=MemorySaver())
    else:
        app = create_agent(
            ScriptedChatModel(script="Noted."),
            middleware=[LibrarianMiddleware(config)],
            checkpointer=MemorySaver(),
        )
    await app.ainvoke({"messages": history}, thread)
    await app.ainvoke({"messages": [HumanMessage("What is the budget?")]}, thread)
    assert threads_of["_select"] and threads_of["_assemble"]
    assert loop_thread not in threads_of["_select"]
    assert loop_thread not in threads_of["_assemble"]


async def test_waiting_for_background_indexing_on_the_event_loop(caplog):
    """With a store that answers through the event loop (an ``AsyncBatchedBaseStore``
    such as ``AsyncPostgresStore``), blocking the loop deadlocked: a clear error. With
    another store a wait on a loop (a notebook cell) works, with a warning."""
    import asyncio
    import logging

    from langgraph.store.base.batch import AsyncBatchedBaseStore
    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian import wait_for_background_indexing

    class LoopStore(AsyncBatchedBaseStore):
        def __init__(self) -> None:
            super().__init__()
            self.inner = InMemoryStore()

        async def abatch(self, ops: Any) -> Any:
            return self.inner.batch(ops)

    thread = {"configurable": {"thread_id": "bg"}}
    for store in (LoopStore(), InMemoryStore()):
        config = LibrarianConfig(store=store, background_indexing=True)
        graph = create_librarian_graph(_agent, config)
        await graph.ainvoke({"messages": conversation(turns=4)}, thread)
        if isinstance(store, LoopStore):
            with pytest.raises(RuntimeError, match=r"asyncio\.to_thread"):
                wait_for_background_indexing(10)
            assert await asyncio.to_thread(wait_for_background_indexing, 10)
        else:
            with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
                assert wait_for_background_indexing(10)
            assert "blocks this thread's event loop" in caplog.text
