"""The outcome of one recall, how failures are classified, and the per-turn cache."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.messages import BaseMessage, SystemMessage

from langgraph_librarian._messages import message_text
from langgraph_librarian.recall._records import MemoryRecord
from langgraph_librarian.recall._scope import MAX_QUERY_CHARS, RecallConfigError

__all__ = [
    "RECALL_MESSAGE_ID",
    "RecallCache",
    "RecallResult",
    "RecallStatus",
    "failure_status",
    "latest_human",
    "turn_key",
]

RecallStatus = Literal["recalled", "empty", "skipped", "unavailable", "misconfigured"]
RECALL_MESSAGE_ID = "librarian-scope-recall"
"""``id`` of the recalled ``SystemMessage`` (it is never written to ``messages``)."""

# SQLSTATE classes that mean "your settings are wrong", not "try again later":
# 28 invalid authorization, 42501 insufficient privilege, 42P01 undefined table
# (the store's setup() was never run), 3D000 unknown database.
_CONFIG_SQLSTATES = ("28", "42501", "42P01", "3D000")
_CONFIG_WORDS = (
    "authentication failed",
    "permission denied",
    "access denied",
    "unauthorized",
    "forbidden",
    "no such table",
    "readonly database",
    "does not exist",
)


@dataclass
class RecallResult:
    """What one recall produced.

    Attributes:
        status: ``"recalled"`` (evidence found), ``"empty"`` (nothing relevant or no
            memory in the scope), ``"skipped"`` (no human message or query),
            ``"unavailable"`` (the store or selector failed) or ``"misconfigured"``
            (missing scope, bad bound, store not set up, authentication...).
        text: The fenced evidence block (empty unless ``status == "recalled"``).
        records: The records included in ``text``, in time order.
        scope: The scope's namespace label (``None`` when no scope was resolved).
        reason: Why the result is not ``"recalled"`` (for logs and metadata).
        strategy: The selector that chose the records (``"local"``, ``"llm"``...).
        relevance: How far the scope's best record stands above chance for the
            question (standard deviations; a shared rare word counts as 2.0). With the
            offline selector recall is ``"empty"`` when nothing shares a rare word and
            this stays under the floor for the scope's size (1.5 for a few records,
            about 3.5 for 400; see ``docs/recall.md``). ``None`` when no ranking ran
            (an empty scope, a failure).
    """

    status: RecallStatus
    text: str = ""
    records: list[MemoryRecord] = field(default_factory=list)
    scope: str | None = None
    reason: str = ""
    strategy: str = ""
    relevance: float | None = None

    def message(self) -> SystemMessage | None:
        """The ``SystemMessage`` to hand the model, or ``None`` when nothing was recalled."""
        if self.status != "recalled" or not self.text:
            return None
        return SystemMessage(content=self.text, id=RECALL_MESSAGE_ID)

    def apply(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """``messages`` with the recalled message in front (after leading system messages).

        Your own leading system messages stay first so instructions precede evidence;
        everything else keeps its order. Without a recall, a copy of ``messages``.
        """
        recalled = self.message()
        out = list(messages)
        if recalled is None:
            return out
        at = 0
        while at < len(out) and out[at].type == "system":
            at += 1
        out.insert(at, recalled)
        return out


def failure_status(exc: BaseException) -> RecallStatus:
    """``"misconfigured"`` for configuration and authentication problems, else ``"unavailable"``."""
    if isinstance(exc, RecallConfigError | PermissionError):
        return "misconfigured"
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and sqlstate.startswith(_CONFIG_SQLSTATES):
        return "misconfigured"
    if isinstance(exc, sqlite3.Error | ConnectionError) or type(exc).__module__.startswith(
        "psycopg"
    ):
        text = str(exc).lower()
        if any(word in text for word in _CONFIG_WORDS):
            return "misconfigured"
    return "unavailable"


def latest_human(messages: Sequence[BaseMessage]) -> BaseMessage | None:
    """The latest human message, or ``None``."""
    for message in reversed(messages):
        if message.type == "human":
            return message
    return None


def turn_key(message: BaseMessage) -> tuple[str, str]:
    """(cache key of the user turn, the query): the message id, else a hash of its text."""
    text = message_text(message)
    query = text[:MAX_QUERY_CHARS]
    if message.id:
        return f"id:{message.id}", query
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"text:{digest}", query


class RecallCache:
    """Bounded LRU of recall results keyed by (scope label, turn key, byte bound)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str, int], RecallResult] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, int]) -> RecallResult | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: tuple[str, str, int], result: RecallResult) -> None:
        if self._size <= 0:
            return
        with self._lock:
            self._items[key] = result
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def drop_scope(self, scope: str) -> None:
        """Forget every cached turn of ``scope`` (its memory was deleted)."""
        with self._lock:
            for key in [k for k in self._items if k[0] == scope]:
                del self._items[key]
