"""The two graph nodes: ``select_and_hydrate`` (online) and ``index_messages`` (after the reply).

Both are thin faces over :mod:`langgraph_librarian._librarian.turn`: they resolve the run
(config, thread, store) and call the shared turn functions. Each node object runs
natively sync (``invoke``) and async (``ainvoke``), and can be called directly.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig

from langgraph_librarian._engine.view import turn_key
from langgraph_librarian._kit.cache import BoundedCache
from langgraph_librarian._kit.node import LibrarianNode, run_config
from langgraph_librarian._kit.state import read_messages
from langgraph_librarian._librarian.turn import (
    Run,
    StateUpdate,
    aindex_turn,
    aselect_turn,
    index_turn,
    select_turn,
)
from langgraph_librarian.config import (
    ConfigLike,
    LibrarianConfig,
    as_config,
    index_session,
    session_id_from_config,
)
from langgraph_librarian.stores.base import BaseIndexStore

__all__ = [
    "aindex_messages",
    "aselect_and_hydrate",
    "create_index_node",
    "create_librarian_node",
    "index_messages",
    "select_and_hydrate",
]


_Bound = tuple[LibrarianConfig | None, BaseIndexStore | None]

_BOUND_THIS_TURN: BoundedCache[tuple[str, str], _Bound] = BoundedCache(256)
"""The config a selection node was built with, per turn, for an index node built without
one. Users wire ``create_librarian_node(config)`` before their agent and the module's
``index_messages`` after it; without this, that index node would run with the offline
defaults: an LLM indexer never called, a store never written (so the next selection
finds no index). A config passed at run time, or one bound to the index node, wins."""


_BOUND_NODES: OrderedDict[str, list[_Bound]] = OrderedDict()
_BOUND_NODES_LOCK = threading.Lock()
"""Every ``create_librarian_node(config)`` of this process by :func:`_describe` of its
config. A turn interrupted after
its selection and resumed in another worker process (human-in-the-loop on a server with
several processes) has no entry in ``_BOUND_THIS_TURN`` there; the tag the selection
wrote into ``librarian_metadata`` (checkpointed) finds the same config in this process,
which built the same graph."""

_TAG = "bound_config"
_logger = logging.getLogger("langgraph_librarian")


def _describe(bound: _Bound) -> str:
    """A digest of what a bound config does, equal in every process that builds it.

    Plain values as they are; a model, embeddings, store or function by its class (and
    a model's name), never by its address.
    """

    def part(value: Any) -> str:
        if value is None or isinstance(value, (bool, int, float, str)):
            return repr(value)
        name = getattr(value, "model_name", None) or getattr(value, "model", None)
        label = f"{type(value).__module__}.{type(value).__qualname__}"
        return f"{label}:{name}" if isinstance(name, str) else label

    config, store = bound
    fields = [] if config is None else dataclasses.fields(config)
    text = "|".join(f"{f.name}={part(getattr(config, f.name))}" for f in fields if f.init)
    return hashlib.sha256(f"{text}|store={part(store)}".encode()).hexdigest()[:16]


def _store_identity(store: Any) -> tuple[int, Any]:
    """A store by what it writes to: ``LibrarianConfig(store=...)`` wraps a LangGraph
    store in a new ``LangGraphIndexStore`` each time, over the same store and namespace."""
    return id(getattr(store, "store", store)), getattr(store, "namespace", None)


def _same(a: _Bound, b: _Bound) -> bool:
    """Two bound configs that do the same work (a graph built per request with a fresh
    ``LibrarianConfig(store=shared)``), not merely ones that describe alike."""
    if _store_identity(a[1]) != _store_identity(b[1]):
        return False
    first, second = a[0], b[0]
    if first is second:
        return True
    if first is None or second is None:
        return False
    if _store_identity(first.store) != _store_identity(second.store):
        return False
    try:
        return dataclasses.replace(first, store=None) == dataclasses.replace(second, store=None)
    except Exception:  # a field that cannot be compared: not known to be the same
        return False


def _register(bound: _Bound) -> str:
    tag = _describe(bound)
    with _BOUND_NODES_LOCK:
        known = _BOUND_NODES.get(tag, [])
        if not any(_same(k, bound) for k in known):
            # Two different configs that describe alike (two tenants' stores of one
            # class, two API keys of one model) cannot be told apart by the tag: kept
            # as two, which makes the tag ambiguous (see _resumed). The same config
            # object used again (a graph built per request) is one.
            known = [*known, bound][-2:]
        _BOUND_NODES[tag] = known
        _BOUND_NODES.move_to_end(tag)
        while len(_BOUND_NODES) > 256:  # graphs built per request: the oldest go
            _BOUND_NODES.popitem(last=False)
    return tag


def _resumed(state: dict[str, Any]) -> _Bound | None:
    """The bound config a resumed turn's selection wrote its tag for, when this process
    built exactly one config of that description. Else ``None`` and a warning: the index
    node uses its own defaults, never a config that might be another tenant's (its store
    would receive this thread's index)."""
    metadata = state.get("librarian_metadata")
    tag = metadata.get(_TAG) if isinstance(metadata, dict) else None
    if not isinstance(tag, str):
        return None
    with _BOUND_NODES_LOCK:
        found = list(_BOUND_NODES.get(tag, []))
    if len(found) == 1:
        return found[0]
    _logger.warning(
        "index_messages: this turn was selected by a create_librarian_node(config) node "
        "whose config %s; indexing with index_messages' own config. Give the index node "
        "the same config: create_index_node(config)",
        "this process did not build" if not found else "is not the only one of its kind here",
    )
    return None


def _turn(state: dict[str, Any], config: RunnableConfig | None) -> tuple[str, str] | None:
    try:
        thread = session_id_from_config(config)
        return turn_key(thread and index_session(thread, config), read_messages(state))
    except Exception:  # an unreadable state: the node itself reports it
        return None


def _bind(
    sync: Callable[[dict[str, Any], Run], StateUpdate],
    async_: Callable[[dict[str, Any], Run], Awaitable[StateUpdate]],
    default: LibrarianConfig | None,
    name: str,
    store: BaseIndexStore | None,
    selects: bool,
) -> LibrarianNode:
    tag = _register((default, store)) if selects and (default or store) else None

    def bound(state: dict[str, Any], config: RunnableConfig | None) -> _Bound:
        if selects:
            if default is not None or store is not None:
                key = _turn(state, config)
                if key is not None:
                    _BOUND_THIS_TURN.put(key, (default, store))
            return default, store
        # Every index node takes the turn's entry (a bound one too: nothing lingers for
        # another graph with the same thread and message ids); only an unbound one uses
        # it. A run-time LibrarianConfig replaces it; a dict of fields applies on top.
        key = _turn(state, config)
        found = _BOUND_THIS_TURN.pop(key) if key is not None else None
        override = ((config or {}).get("configurable") or {}).get("librarian")
        unbound = default is None and store is None
        if found is None and unbound and not isinstance(override, LibrarianConfig):
            found = _resumed(state)
        if found is not None and unbound and not isinstance(override, LibrarianConfig):
            return found
        return default, store

    # The parameter must be named ``config``: LangGraph passes the RunnableConfig by name.
    def tagged(update: StateUpdate) -> StateUpdate:
        metadata = update.get("librarian_metadata")
        if tag is not None and isinstance(metadata, dict):
            update["librarian_metadata"] = {**metadata, _TAG: tag}
        return update

    def run(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        config_default, bound_store = bound(state, config)
        return tagged(sync(state, Run.open(config_default, config, store=bound_store)))

    async def arun(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        config_default, bound_store = bound(state, config)
        return tagged(await async_(state, Run.open(config_default, config, store=bound_store)))

    return LibrarianNode(run, afunc=arun, name=name)


def create_librarian_node(
    config: ConfigLike = None, *, store: BaseIndexStore | None = None
) -> LibrarianNode:
    """A ``select_and_hydrate`` node bound to ``config``.

    A config passed at run time (``configurable["librarian"]``) still overrides it.
    Add :data:`index_messages` (or :func:`create_index_node`) after your agent node.
    ``store`` binds an index store to the node: it is used whenever the config in force
    names none (give the index node the same one).

    Example:
        >>> node = create_librarian_node(LibrarianConfig(always_include_recent_turns=3))
    """
    return _bind(
        select_turn,
        aselect_turn,
        as_config(config, "create_librarian_node(config)"),
        "select_and_hydrate",
        store,
        selects=True,
    )


def create_index_node(
    config: ConfigLike = None, *, store: BaseIndexStore | None = None
) -> LibrarianNode:
    """An ``index_messages`` node bound to ``config`` (run-time config still wins).

    Built without a config or store (the module's :data:`index_messages`), it uses the
    config of the turn's ``create_librarian_node(config)`` node, so one config wires
    both nodes of a hand-built graph.
    """
    return _bind(
        index_turn,
        aindex_turn,
        as_config(config, "create_index_node(config)"),
        "index_messages",
        store,
        selects=False,
    )


select_and_hydrate: LibrarianNode = create_librarian_node()
"""Node: select relevant messages and hydrate the curated context.

Reads ``messages``, ``query`` and ``index``; writes ``curated_messages``,
``selected_ids`` and ``librarian_metadata``. The config comes from
``configurable["librarian"]`` (default: the offline engine)."""

index_messages: LibrarianNode = create_index_node()
"""Node: bring the index up to date after the agent replied.

Writes ``index`` (and clears a consumed ``query``) plus indexing metadata."""


async def aselect_and_hydrate(
    state: dict[str, Any], config: RunnableConfig | LibrarianConfig | None = None
) -> StateUpdate:
    """Async form of :data:`select_and_hydrate`."""
    return await aselect_turn(state, Run.open(None, run_config(config)))


async def aindex_messages(
    state: dict[str, Any], config: RunnableConfig | LibrarianConfig | None = None
) -> StateUpdate:
    """Async form of :data:`index_messages`."""
    return await aindex_turn(state, Run.open(None, run_config(config)))
