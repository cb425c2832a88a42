"""Scoped recall for the chat: :class:`~langgraph_librarian.recall.ScopeMemory` in the chat's file.

The chat's threads share one scope (``"default"``, or ``--scope NAME``). After each turn
the thread's new messages are copied into the scope with the index the Librarian
already made for them; before each reply the question recalls from the scope,
leaving out the records copied from the thread itself. The memory is a LangGraph
``SqliteStore`` in the same SQLite file as the checkpoints.

Nothing here selects or summarizes: :class:`ScopeMemory` does, with the chat's
:class:`~langgraph_librarian.config.LibrarianConfig`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.sqlite import SqliteStore

from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.recall import RecallResult, RecallScope, ScopeMemory
from langgraph_librarian.recall import scope_key as _scope_key
from langgraph_librarian.recall._records import MemoryRecord, clean_text
from langgraph_librarian.recall._result import failure_status
from langgraph_librarian.recall._turn import recall_for_turn

__all__ = ["DEFAULT_SCOPE", "SCOPE_CONFIG_KEY", "ScopeRecall"]

DEFAULT_SCOPE = "default"
"""The scope every thread of the chat shares unless ``--scope`` names another."""

SCOPE_CONFIG_KEY = "librarian_ui_scope"
"""``configurable`` key naming the scope of the thread being answered (see
:meth:`ScopeRecall.__call__`): a thread keeps the scope it started in."""

_TEXT_CHARS = 2_000


def _record(record: MemoryRecord) -> dict[str, Any]:
    return {
        "text": record.text[:_TEXT_CHARS],
        # Records read back exact ids; shown as stores hold them (NUL, lone surrogates
        # made U+FFFD), which every JSON encoder can write.
        "thread_id": None if record.thread_id is None else clean_text(record.thread_id),
        "message_id": None if record.message_id is None else clean_text(record.message_id),
        "role": record.role,
        "kind": record.kind,
        "created_at": record.created_at,
    }


def _messages(state: dict[str, Any]) -> list[BaseMessage]:
    return [m for m in state.get("messages") or [] if isinstance(m, BaseMessage)]


class ScopeRecall:
    """The chat's :class:`~langgraph_librarian.ui.RecallSource`: one scope, recall and capture.

    Args:
        memory: The scope memory (any store).
        scope_id: The scope every thread of the chat belongs to.

    Use :meth:`open` for the memory in the chat's own SQLite file.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> recall = ScopeRecall(ScopeMemory(InMemoryStore()), "default")
        >>> recall.scope_id
        'default'
    """

    def __init__(self, memory: ScopeMemory, scope_id: str = DEFAULT_SCOPE) -> None:
        _scope_key(scope_id)  # RecallConfigError for an empty or non-string scope
        self.memory = memory
        self.scope_id = scope_id
        self._conn: sqlite3.Connection | None = None

    @classmethod
    def open(
        cls,
        db_path: str | Path,
        scope_id: str = DEFAULT_SCOPE,
        config: LibrarianConfig | None = None,
    ) -> ScopeRecall:
        """Scope memory in a ``SqliteStore`` inside ``db_path`` (its tables are created once).

        The store has its own connection to the file (autocommit, as ``SqliteStore``
        expects); :meth:`close` closes it.
        """
        _scope_key(scope_id)
        conn = sqlite3.connect(str(db_path), check_same_thread=False, isolation_level=None)
        try:
            store = SqliteStore(conn)
            store.setup()
        except BaseException:
            conn.close()
            raise
        recall = cls(ScopeMemory(store, config=config), scope_id)
        recall._conn = conn
        return recall

    def _context(self, scope_id: str | None = None) -> RecallScope:
        return RecallScope(scope_id=scope_id or self.scope_id)

    def __call__(
        self, state: dict[str, Any], config: RunnableConfig
    ) -> tuple[BaseMessage | None, dict[str, Any]]:
        """Recall for the turn's question; never raises (a failure comes back as a status).

        Every message of the thread is passed as already seen, so records copied from
        this thread are never recalled into it. The scope is the thread's own when the
        run config names one (``configurable["librarian_ui_scope"]``), else
        :attr:`scope_id`.
        """
        messages = _messages(state)
        scope = (config.get("configurable") or {}).get(SCOPE_CONFIG_KEY) or self.scope_id
        result = recall_for_turn(self.memory, self._context(scope), messages, config)
        return result.message(), self._summary(result, scope)

    def _summary(self, result: RecallResult, scope: str) -> dict[str, Any]:
        return {
            "status": result.status,
            "reason": result.reason,
            "scope": scope,
            "strategy": result.strategy,
            "records": [_record(r) for r in result.records],
        }

    def capture(
        self, thread_id: str, state: dict[str, Any], scope_id: str | None = None
    ) -> dict[str, Any]:
        """Copy the thread's messages since its last capture into the scope.

        ``scope_id`` is the thread's own scope (default: :attr:`scope_id`). The
        thread's Librarian index (``state["index"]``) is reused for the summaries.
        Never raises: a failure is returned as ``{"status": "unavailable" |
        "misconfigured", "reason": ...}``; the next capture makes up for it.
        """
        messages: Sequence[BaseMessage] = _messages(state)
        try:
            written = self.memory.capture(
                scope_id or self.scope_id, messages, thread_id=thread_id, index=state.get("index")
            )
        except Exception as exc:  # the turn already has its answer
            return {
                "status": failure_status(exc),
                "reason": f"{type(exc).__name__}: {exc}"[:300],
            }
        return {"status": "captured", "records": written}

    def forget(self, thread_id: str, scope_id: str | None = None) -> int:
        """Delete what was copied from ``thread_id`` into its scope; the records deleted."""
        return self.memory.forget_thread(scope_id or self.scope_id, thread_id)

    def close(self) -> None:
        """Close the store's connection when :meth:`open` made it."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
