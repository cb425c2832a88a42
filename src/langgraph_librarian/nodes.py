"""The two graph nodes: ``select_and_hydrate`` (online) and ``index_messages`` (after the reply).

Both are thin faces over :mod:`langgraph_librarian._librarian.turn`: they resolve the run
(config, thread, store) and call the shared turn functions. Each node object runs
natively sync (``invoke``) and async (``ainvoke``), and can be called directly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig

from langgraph_librarian._kit.node import LibrarianNode
from langgraph_librarian._librarian.turn import (
    Run,
    StateUpdate,
    aindex_turn,
    aselect_turn,
    index_turn,
    select_turn,
)
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.stores.base import BaseIndexStore

__all__ = [
    "aindex_messages",
    "aselect_and_hydrate",
    "create_index_node",
    "create_librarian_node",
    "index_messages",
    "select_and_hydrate",
]


def _bind(
    sync: Callable[[dict[str, Any], Run], StateUpdate],
    async_: Callable[[dict[str, Any], Run], Awaitable[StateUpdate]],
    default: LibrarianConfig | None,
    name: str,
    store: BaseIndexStore | None,
) -> LibrarianNode:
    # The parameter must be named ``config``: LangGraph passes the RunnableConfig by name.
    def run(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        return sync(state, Run.open(default, config, store=store))

    async def arun(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        return await async_(state, Run.open(default, config, store=store))

    return LibrarianNode(run, afunc=arun, name=name)


def create_librarian_node(
    config: LibrarianConfig | None = None, *, store: BaseIndexStore | None = None
) -> LibrarianNode:
    """A ``select_and_hydrate`` node bound to ``config``.

    A config passed at run time (``configurable["librarian"]``) still overrides it.
    Add :data:`index_messages` (or :func:`create_index_node`) after your agent node.
    ``store`` binds an index store to the node: it is used whenever the config in force
    names none (give the index node the same one).

    Example:
        >>> node = create_librarian_node(LibrarianConfig(always_include_recent_turns=3))
    """
    return _bind(select_turn, aselect_turn, config, "select_and_hydrate", store)


def create_index_node(
    config: LibrarianConfig | None = None, *, store: BaseIndexStore | None = None
) -> LibrarianNode:
    """An ``index_messages`` node bound to ``config`` (run-time config still wins)."""
    return _bind(index_turn, aindex_turn, config, "index_messages", store)


select_and_hydrate: LibrarianNode = create_librarian_node()
"""Node: select relevant messages and hydrate the curated context.

Reads ``messages``, ``query`` and ``index``; writes ``curated_messages``,
``selected_ids`` and ``librarian_metadata``. The config comes from
``configurable["librarian"]`` (default: the offline engine)."""

index_messages: LibrarianNode = create_index_node()
"""Node: bring the index up to date after the agent replied.

Writes ``index`` (and clears a consumed ``query``) plus indexing metadata."""


async def aselect_and_hydrate(
    state: dict[str, Any], config: RunnableConfig | None = None
) -> StateUpdate:
    """Async form of :data:`select_and_hydrate`."""
    return await aselect_turn(state, Run.open(None, config))


async def aindex_messages(
    state: dict[str, Any], config: RunnableConfig | None = None
) -> StateUpdate:
    """Async form of :data:`index_messages`."""
    return await aindex_turn(state, Run.open(None, config))
