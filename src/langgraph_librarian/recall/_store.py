"""Store plumbing for scope memory: namespaces, batched ops, sync-only stores from async code."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, SearchOp

from langgraph_librarian._engine.concurrency import off_loop
from langgraph_librarian.recall._scope import RecallConfigError

__all__ = [
    "DELETE_PAGE",
    "SEARCH_PAGE",
    "abatch",
    "batch",
    "check_namespace",
    "get_op",
    "items_in",
    "newest",
    "orders_newest_first",
    "put_op",
    "search_op",
    "updated",
]

SEARCH_PAGE = 500
DELETE_PAGE = 500


def check_namespace(namespace: Sequence[str]) -> tuple[str, ...]:
    """Validate the root namespace scope memory lives under.

    Raises:
        RecallConfigError: on an empty namespace or a label LangGraph stores reject.
    """
    labels = tuple(namespace)
    if not labels:
        raise RecallConfigError("namespace must have at least one label")
    for label in labels:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise RecallConfigError(f"invalid namespace label {label!r}")
    if labels[0] == "langgraph":
        raise RecallConfigError('the root namespace label cannot be "langgraph"')
    return labels


def get_op(namespace: tuple[str, ...], key: str) -> GetOp:
    return GetOp(namespace, key)


def put_op(namespace: tuple[str, ...], key: str, value: dict[str, Any] | None) -> PutOp:
    # index=False: selection is ours; a store with its own vector index must not embed
    # every record a second time.
    return PutOp(namespace, key, value, index=False if value is not None else None)


def search_op(
    prefix: tuple[str, ...], limit: int, offset: int = 0, where: dict[str, Any] | None = None
) -> SearchOp:
    return SearchOp(namespace_prefix=prefix, filter=where, limit=limit, offset=offset)


def batch(store: BaseStore, ops: Sequence[Op]) -> list[Any]:
    """Run ``ops`` in one round trip."""
    return list(store.batch(list(ops))) if ops else []


async def abatch(store: BaseStore, ops: Sequence[Op]) -> list[Any]:
    """Async :func:`batch`; a sync-only store (``SqliteStore``) runs in a worker thread."""
    if not ops:
        return []
    try:
        return list(await store.abatch(list(ops)))
    except NotImplementedError:
        return await off_loop(batch, store, ops, name="librarian-recall")


def items_in(result: Any, namespace: tuple[str, ...]) -> list[Item]:
    """Items of a search result that sit exactly in ``namespace``.

    Prefix search also matches deeper namespaces; scope memory never writes there,
    and filtering here keeps one scope's read from ever returning another's items.
    """
    return [item for item in result or [] if tuple(item.namespace) == namespace]


_NEWEST_FIRST = ("langgraph.store.sqlite", "langgraph.store.postgres")
"""Modules of the stores whose search without a query answers the most recently updated
items first (``ORDER BY updated_at DESC``): LangGraph's SQLite and PostgreSQL stores, sync
and async. ``InMemoryStore`` answers in insertion order, oldest first."""


def orders_newest_first(store: BaseStore) -> bool:
    """Whether a search of ``store`` without a query returns the newest items first, so
    the first ``max_candidates`` it gives are the newest ones (subclasses included)."""
    return any(cls.__module__.startswith(_NEWEST_FIRST) for cls in type(store).__mro__)


def updated(item: Item) -> float:
    """When ``item`` was last written, POSIX seconds (``-inf`` for an item without it).
    SQLite keeps whole seconds, so items written in one second tie."""
    value = getattr(item, "updated_at", None)
    return value.timestamp() if isinstance(value, datetime) else float("-inf")


def _recency(item: Item) -> tuple[float, str]:
    """Last written, then the record's own write time (ISO with microseconds, breaking the
    ties of a store that keeps whole seconds)."""
    value = item.value if isinstance(item.value, dict) else {}
    own = value.get("created_at")
    return updated(item), own if isinstance(own, str) else ""


def newest(kept: Sequence[Item], page: Sequence[Item], limit: int) -> list[Item]:
    """The ``limit`` most recently written of ``kept`` and ``page`` (of items written at
    the same moment, the later read: the later written, in insertion order)."""
    found = [*kept, *page]
    if len(found) <= limit:
        return found
    chosen = heapq.nlargest(limit, range(len(found)), key=lambda n: (*_recency(found[n]), n))
    return [found[n] for n in sorted(chosen)]
