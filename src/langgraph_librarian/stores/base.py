"""The store protocol, how a thread's index is keyed, and helpers that work with any
implementation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable
from uuid import UUID

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


async def adelete_index(store: BaseIndexStore, session_id: str) -> None:
    """Delete through ``store.adelete`` when it exists, else the sync method in a thread."""
    adelete = getattr(store, "adelete", None)
    if adelete is not None:
        await adelete(session_id)
        return
    await off_loop(store.delete, session_id, name="librarian-store")


# -- how a thread's index is keyed ------------------------------------------------------


def session_key(thread: str, namespace: str = "") -> str:
    """``thread``, then ``|`` and the subgraph ``namespace`` when there is one.

    A thread id holding ``|`` or ``\\`` has them escaped (``\\|``, ``\\\\``), so thread
    ``"a|agent"`` of the top-level graph and thread ``"a"`` in subgraph ``agent`` keep
    two indexes (they shared one, and deleting either deleted both). Other ids are keyed
    as they always were.
    """
    if "|" in thread or "\\" in thread:
        thread = thread.replace("\\", "\\\\").replace("|", "\\|")
    return f"{thread}|{namespace}" if namespace else thread


def thread_text(value: object) -> str | None:
    """A thread id as LangGraph keys its checkpoints by it: ``str(value)`` (a run with
    ``thread_id=1`` and one with ``"1"`` continue one thread; a ``uuid.UUID`` is its
    text); ``None`` for ``None`` or an empty id."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text or None


def thread_id_text(thread_id: object) -> str:
    """:func:`thread_text`, for a thread that must exist.

    Raises:
        ValueError: ``None`` or an empty id (no run is keyed by it).
    """
    text = thread_text(thread_id)
    if text is None:
        raise ValueError(f"thread_id must be a non-empty id, got {thread_id!r}")
    return text


def thread_keys(thread_id: object, subgraphs: Sequence[str] = ()) -> list[str]:
    """The index keys of a thread: its top-level graph's (:func:`session_key`), then
    one per subgraph namespace in ``subgraphs`` (``"agent"``, ``"team|agent"``).

    Raises:
        ValueError: an empty thread id.
        TypeError: ``subgraphs`` is a string (it would be split in letters) or holds
            something else than strings.
    """
    thread = thread_id_text(thread_id)
    if isinstance(subgraphs, str):
        raise TypeError("subgraphs must be a sequence of graph namespaces, not a string")
    keys = [session_key(thread)]
    for name in subgraphs:
        if not isinstance(name, str):
            raise TypeError(f"a subgraph namespace is a string, got {name!r}")
        if name and session_key(thread, name) not in keys:
            keys.append(session_key(thread, name))
    return keys


def key_thread(key: str) -> tuple[str, str] | None:
    """The ``(thread id, subgraph namespace)`` :func:`session_key` turned into ``key``,
    or ``None`` when no call of it gives ``key`` (an id a caller chose itself)."""
    thread: list[str] = []
    escaped = False
    for at, char in enumerate(key):
        if escaped:
            if char not in "\\|":
                return None
            thread.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "|":
            found = "".join(thread), key[at + 1 :]
            break
        else:
            thread.append(char)
    else:
        if escaped:
            return None
        found = "".join(thread), ""
    if not found[0] or session_key(*found) != key:
        return None
    return found


def key_name(key: str) -> str:
    """How an error names the index under ``key``: by the thread id (and subgraph) the
    application knows it by, else by the key itself."""
    found = key_thread(key)
    if found is None:
        return f"session {key!r}"
    thread, namespace = found
    return f"thread {thread!r}" + (f" (subgraph {namespace!r})" if namespace else "")


def key_deletion(key: str) -> str:
    """The call that deletes the index under ``key``, for an error's way out:
    ``delete_thread(<thread id>)`` for a thread's top-level index (``delete`` of a raw
    thread id misses when the id holds ``|`` or ``\\``), else ``delete(<key>)``."""
    found = key_thread(key)
    if found is not None and not found[1]:
        return f"delete_thread({found[0]!r})"
    return f"delete({key!r})"


class ThreadIndexMethods:
    """``load_thread``/``delete_thread`` and their async twins, for a concrete
    :class:`BaseIndexStore`: a thread's index as the Librarian keys it.

    The Librarian keys a thread's index by :func:`session_key` (the thread id, with
    ``|`` and ``\\`` escaped, and a subgraph's namespace), not by the raw thread id:
    ``store.delete(thread_id)`` misses the index of a thread whose id holds ``|`` or
    ``\\``; these methods never do.
    """

    def load_thread(
        self: BaseIndexStore, thread_id: str | int | UUID, *, subgraph: str = ""
    ) -> list[IndexEntry] | None:
        """The index the Librarian keeps for thread ``thread_id`` (``None`` when it has
        none): its top-level graph's, or with ``subgraph`` that of the Librarian
        subgraph running under that namespace (``"agent"``).

        ``thread_id`` is taken as LangGraph takes it (``1`` is thread ``"1"``).

        Raises:
            ValueError: an empty thread id.
            IndexStoreError: the stored index is corrupt.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langgraph_librarian import LangGraphIndexStore
            >>> index = LangGraphIndexStore(InMemoryStore())
            >>> index.load_thread("CORP\\\\sam") is None
            True
        """
        if not isinstance(subgraph, str):
            raise TypeError(f"subgraph is a graph namespace (a string), got {subgraph!r}")
        return self.load(session_key(thread_id_text(thread_id), subgraph))

    def delete_thread(
        self: BaseIndexStore, thread_id: str | int | UUID, *, subgraphs: Sequence[str] = ()
    ) -> None:
        """Forget thread ``thread_id``'s index, and with ``subgraphs`` (``["agent"]``)
        the indexes of the Librarian subgraphs that ran in it (no error when absent).

        The way to drop a thread's index next to ``checkpointer.delete_thread``: a
        thread id holding ``|`` or ``\\`` is keyed escaped, so ``delete(thread_id)``
        would miss it. ``ScopeMemory.delete_thread`` does this and more (recall records).

        Raises:
            ValueError: an empty thread id.
            TypeError: ``subgraphs`` is a single string.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langgraph_librarian import LangGraphIndexStore
            >>> index = LangGraphIndexStore(InMemoryStore())
            >>> index.delete_thread("tenant|sam", subgraphs=["agent"])
            >>> index.load_thread("tenant|sam") is None
            True
        """
        for key in thread_keys(thread_id, subgraphs):
            self.delete(key)

    async def aload_thread(
        self: BaseIndexStore, thread_id: str | int | UUID, *, subgraph: str = ""
    ) -> list[IndexEntry] | None:
        """Async twin of :meth:`load_thread` (through the store's ``aload`` when it has
        one, else the sync method in a worker thread)."""
        if not isinstance(subgraph, str):
            raise TypeError(f"subgraph is a graph namespace (a string), got {subgraph!r}")
        return await aload_index(self, session_key(thread_id_text(thread_id), subgraph))

    async def adelete_thread(
        self: BaseIndexStore, thread_id: str | int | UUID, *, subgraphs: Sequence[str] = ()
    ) -> None:
        """Async twin of :meth:`delete_thread` (through the store's ``adelete`` when it
        has one, else the sync method in a worker thread)."""
        for key in thread_keys(thread_id, subgraphs):
            await adelete_index(self, key)
