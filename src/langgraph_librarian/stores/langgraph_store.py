"""Keep the index in any LangGraph ``BaseStore`` (in-memory, SQLite, Postgres...)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from langgraph.store.base import BaseStore

from langgraph_librarian.entry import IndexEntry, entries_from_dicts, entries_to_dicts
from langgraph_librarian.errors import IndexStoreError

__all__ = ["LangGraphIndexStore"]

_SAFE_KEY = re.compile(r"[\w.:@/+=-]{1,200}")


class LangGraphIndexStore:
    """Adapter from :class:`BaseIndexStore` to a LangGraph ``BaseStore``.

    Each session's index is one item under ``namespace`` whose key is the session id,
    so every worker that shares the store shares the index.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = LangGraphIndexStore(InMemoryStore())
        >>> store.save("thread-1", [])
        >>> store.load("thread-1")
        []
    """

    def __init__(
        self, store: BaseStore, namespace: tuple[str, ...] = ("librarian", "index")
    ) -> None:
        self.store = store
        self.namespace = tuple(namespace)

    @staticmethod
    def _check(session_id: str) -> str:
        """The item key for a session id.

        Plain ids are used as they are; anything else (NUL bytes, which PostgreSQL text
        cannot hold, control characters, ids too long for a btree key) becomes a hash
        under a ``~`` prefix that a plain id can never have, so keys stay distinct.
        """
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("session_id must be a non-empty string")
        if _SAFE_KEY.fullmatch(session_id):
            return session_id
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
        return f"~sha256:{digest}"

    def _decode(self, session_id: str, value: dict[str, Any] | None) -> list[IndexEntry] | None:
        if value is None:
            return None
        try:
            return entries_from_dicts(value.get("entries"))
        except (ValueError, AttributeError) as exc:
            raise IndexStoreError(f"corrupt index for session {session_id!r}: {exc}") from exc

    def load(self, session_id: str) -> list[IndexEntry] | None:
        item = self.store.get(self.namespace, self._check(session_id))
        return self._decode(session_id, None if item is None else item.value)

    def save(self, session_id: str, entries: list[IndexEntry]) -> None:
        value = {"entries": entries_to_dicts(list(entries))}
        self.store.put(self.namespace, self._check(session_id), value, index=False)

    def delete(self, session_id: str) -> None:
        self.store.delete(self.namespace, self._check(session_id))

    async def aload(self, session_id: str) -> list[IndexEntry] | None:
        item = await self.store.aget(self.namespace, self._check(session_id))
        return self._decode(session_id, None if item is None else item.value)

    async def asave(self, session_id: str, entries: list[IndexEntry]) -> None:
        value = {"entries": entries_to_dicts(list(entries))}
        await self.store.aput(self.namespace, self._check(session_id), value, index=False)

    async def adelete(self, session_id: str) -> None:
        await self.store.adelete(self.namespace, self._check(session_id))
