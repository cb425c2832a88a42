"""The two graph nodes: ``select_and_hydrate`` (online) and ``index_messages`` (after the reply).

Both are thin: they resolve the config, load the index and call the turn logic shared
with the middleware (:mod:`~langgraph_librarian._pipeline`) and the indexing pipeline
(:mod:`~langgraph_librarian.index.pipeline`). Each node object
runs natively sync (``invoke``) and async (``ainvoke``), and can be called directly.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_librarian._background import submit_indexing
from langgraph_librarian._pipeline import (
    StateUpdate,
    finish_turn,
    index_update_result,
    make_selector,
    plan_turn,
    read_messages,
    state_entries,
)
from langgraph_librarian.config import LibrarianConfig, resolve_config, session_id_from_config
from langgraph_librarian.index.pipeline import aupdate_index, update_index
from langgraph_librarian.stores.base import aload_index, asave_index

__all__ = [
    "LibrarianNode",
    "aindex_messages",
    "aselect_and_hydrate",
    "create_index_node",
    "create_librarian_node",
    "index_messages",
    "make_selector",
    "select_and_hydrate",
]


class LibrarianNode(RunnableLambda[dict[str, Any], StateUpdate]):
    """A graph node with native sync and async paths that can also be called directly.

    ``node(state, config)`` runs the sync path; ``await node.ainvoke(state, config)``
    and LangGraph's ``ainvoke``/``astream`` run the async one.
    """

    def __call__(self, state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        func: Callable[[dict[str, Any], RunnableConfig | None], StateUpdate] = self.func  # type: ignore[assignment]
        return func(state, config)


# -- select_and_hydrate ---------------------------------------------------------------


def _select_sync(
    state: dict[str, Any], runnable_config: RunnableConfig | None, default: LibrarianConfig | None
) -> StateUpdate:
    started = time.perf_counter()
    config = resolve_config(default, runnable_config)
    stored = config.store.load(session_id_from_config(runnable_config)) if config.store else None
    plan = plan_turn(state, config, stored, started)
    if plan.skip is not None:
        return plan.skip
    selection = make_selector(config).select(
        plan.query, plan.messages, plan.candidates, exclude=plan.exclude
    )
    return finish_turn(plan, selection)


async def _select_async(
    state: dict[str, Any], runnable_config: RunnableConfig | None, default: LibrarianConfig | None
) -> StateUpdate:
    started = time.perf_counter()
    config = resolve_config(default, runnable_config)
    stored = (
        await aload_index(config.store, session_id_from_config(runnable_config))
        if config.store
        else None
    )
    plan = plan_turn(state, config, stored, started)
    if plan.skip is not None:
        return plan.skip
    selector = make_selector(config)
    selection = await selector.aselect(
        plan.query, plan.messages, plan.candidates, exclude=plan.exclude
    )
    return finish_turn(plan, selection)


# -- index_messages -------------------------------------------------------------------


def _background(state: dict[str, Any], config: LibrarianConfig, session: str) -> StateUpdate:
    submit_indexing(config, session, read_messages(state))
    result: StateUpdate = {"librarian_metadata": {"indexing_background": True}}
    if state.get("query"):
        result["query"] = ""
    return result


def _index_sync(
    state: dict[str, Any], runnable_config: RunnableConfig | None, default: LibrarianConfig | None
) -> StateUpdate:
    config = resolve_config(default, runnable_config)
    session = session_id_from_config(runnable_config)
    if config.background_indexing:
        return _background(state, config, session)
    stored = config.store.load(session) if config.store else None
    entries = stored if stored is not None else state_entries(state)
    update = update_index(read_messages(state), entries, config)
    if config.store:
        config.store.save(session, update.entries)
    return index_update_result(state, update, in_state=config.store is None)


async def _index_async(
    state: dict[str, Any], runnable_config: RunnableConfig | None, default: LibrarianConfig | None
) -> StateUpdate:
    config = resolve_config(default, runnable_config)
    session = session_id_from_config(runnable_config)
    if config.background_indexing:
        return _background(state, config, session)
    stored = await aload_index(config.store, session) if config.store else None
    entries = stored if stored is not None else state_entries(state)
    update = await aupdate_index(read_messages(state), entries, config)
    if config.store:
        await asave_index(config.store, session, update.entries)
    return index_update_result(state, update, in_state=config.store is None)


# -- public node objects ----------------------------------------------------------------


def _bind(
    sync: Callable[[dict[str, Any], RunnableConfig | None, LibrarianConfig | None], StateUpdate],
    async_: Callable[
        [dict[str, Any], RunnableConfig | None, LibrarianConfig | None], Awaitable[StateUpdate]
    ],
    default: LibrarianConfig | None,
    name: str,
) -> LibrarianNode:
    def run(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        return sync(state, config, default)

    async def arun(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        return await async_(state, config, default)

    return LibrarianNode(run, afunc=arun, name=name)


def create_librarian_node(config: LibrarianConfig | None = None) -> LibrarianNode:
    """A ``select_and_hydrate`` node bound to ``config``.

    A config passed at run time (``configurable["librarian"]``) still overrides it.
    Add :data:`index_messages` (or :func:`create_index_node`) after your agent node.

    Example:
        >>> node = create_librarian_node(LibrarianConfig(always_include_recent_turns=3))
    """
    return _bind(_select_sync, _select_async, config, "select_and_hydrate")


def create_index_node(config: LibrarianConfig | None = None) -> LibrarianNode:
    """An ``index_messages`` node bound to ``config`` (run-time config still wins)."""
    return _bind(_index_sync, _index_async, config, "index_messages")


select_and_hydrate: LibrarianNode = create_librarian_node(None)
"""Node: select relevant messages and hydrate the curated context.

Reads ``messages``, ``query`` and ``index``; writes ``curated_messages``,
``selected_ids`` and ``librarian_metadata``. The config comes from
``configurable["librarian"]`` (default: the offline engine)."""

index_messages: LibrarianNode = create_index_node(None)
"""Node: bring the index up to date after the agent replied.

Writes ``index`` (and clears a consumed ``query``) plus indexing metadata."""


async def aselect_and_hydrate(
    state: dict[str, Any], config: RunnableConfig | None = None
) -> StateUpdate:
    """Async form of :data:`select_and_hydrate`."""
    return await _select_async(state, config, None)


async def aindex_messages(
    state: dict[str, Any], config: RunnableConfig | None = None
) -> StateUpdate:
    """Async form of :data:`index_messages`."""
    return await _index_async(state, config, None)
