"""The store protocol and async helpers that work with any implementation."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from langgraph_librarian._engine.concurrency import off_loop
from langgraph_librarian.entry import IndexEntry

__all__ = ["BaseIndexStore"]


@runtime_checkable
class BaseIndexStore(Protocol):
    """Storage backend for a session's index.

    Implement ``load``/``save``/``delete``. Optionally add ``aload``/``asave``/``adelete``
    coroutines; when they are missing the async nodes run the sync methods in a thread.
    """

    def load(self, session_id: str) -> list[IndexEntry] | None:
        """Return the saved index, or ``None`` when the session has none."""
        ...

    def save(self, session_id: str, entries: list[IndexEntry]) -> None:
        """Replace the session's index with ``entries``."""
        ...

    def delete(self, session_id: str) -> None:
        """Forget the session's index (no error when absent)."""
        ...


async def aload_index(store: BaseIndexStore, session_id: str) -> list[IndexEntry] | None:
    """Load through ``store.aload`` when it exists, else the sync method in a thread."""
    aload = getattr(store, "aload", None)
    if aload is not None:
        result: list[IndexEntry] | None = await aload(session_id)
        return result
    return await off_loop(store.load, session_id, name="librarian-store")


async def asave_index(store: BaseIndexStore, session_id: str, entries: list[IndexEntry]) -> None:
    """Save through ``store.asave`` when it exists, else the sync method in a thread."""
    asave = getattr(store, "asave", None)
    if asave is not None:
        await asave(session_id, entries)
        return
    await off_loop(store.save, session_id, entries, name="librarian-store")
