"""Erasing one thread everywhere the library wrote it (:meth:`ScopeMemory.delete_thread`).

A thread's text lives in up to three places: its checkpoints (messages, and the index
unless the Librarian keeps it in a store), the Librarian's index store (summaries of
every message, keyed by thread), and the scopes scoped recall copied it into (records
other threads recall). Deleting the checkpoints alone leaves the other two readable.
The UI's "delete" and applications share this one path.

Order: recall records first (what other threads can read), then the index, then the
checkpoints, so a failure part-way leaves the thread still listed by the application
and the call can be repeated (every step is idempotent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from langgraph_librarian.stores.base import BaseIndexStore
from langgraph_librarian.stores.langgraph_store import LangGraphIndexStore

if TYPE_CHECKING:
    from langgraph_librarian.recall._memory import ScopeMemory

__all__ = ["aerase_thread", "erase_thread"]


def _index_store(store: BaseIndexStore | BaseStore | None) -> BaseIndexStore | None:
    # A bare BaseStore is what LibrarianConfig(store=...) accepts and wraps the same way.
    return LangGraphIndexStore(store) if isinstance(store, BaseStore) else store


def _sessions(thread_id: str, subgraphs: Sequence[str]) -> list[str]:
    """The index sessions of ``thread_id`` (see ``config.index_session``)."""
    if not isinstance(thread_id, str) or not thread_id:
        raise ValueError("thread_id must be a non-empty string")
    if isinstance(subgraphs, str):  # one namespace passed bare would be split in letters
        raise TypeError("subgraphs must be a sequence of graph namespaces, not a string")
    return [thread_id, *(f"{thread_id}|{name}" for name in subgraphs if name)]


def erase_thread(
    thread_id: str,
    *,
    memory: ScopeMemory | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    index_store: BaseIndexStore | BaseStore | None = None,
    scopes: Iterable[str] | None = None,
    subgraphs: Sequence[str] = (),
) -> int:
    """Erase ``thread_id`` from ``memory`` (every scope, or ``scopes``), ``index_store``
    and ``checkpointer``; the number of recall records deleted."""
    sessions = _sessions(thread_id, subgraphs)
    deleted = memory._forget_everywhere(thread_id, scopes) if memory is not None else 0
    store = _index_store(index_store)
    if store is not None:
        for session in sessions:
            store.delete(session)
    if checkpointer is not None:
        checkpointer.delete_thread(thread_id)
    return deleted


async def aerase_thread(
    thread_id: str,
    *,
    memory: ScopeMemory | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    index_store: BaseIndexStore | BaseStore | None = None,
    scopes: Iterable[str] | None = None,
    subgraphs: Sequence[str] = (),
) -> int:
    """Async twin of :func:`erase_thread`."""
    sessions = _sessions(thread_id, subgraphs)
    deleted = await memory._aforget_everywhere(thread_id, scopes) if memory is not None else 0
    store = _index_store(index_store)
    if store is not None:
        adelete = getattr(store, "adelete", None)
        for session in sessions:
            if adelete is not None:
                await adelete(session)
            else:
                await asyncio.to_thread(store.delete, session)
    if checkpointer is not None:
        try:
            await checkpointer.adelete_thread(thread_id)
        except NotImplementedError:  # a sync-only saver (SqliteSaver)
            await asyncio.to_thread(checkpointer.delete_thread, thread_id)
    return deleted
