"""Copying completed turns into scope memory: what is new since the thread's cursor.

Each thread of a scope has a cursor (the last message copied and a sequence number),
so a capture after every turn copies only that turn, and a capture that failed is made
up for by the next one.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.messages import content_hash, message_keys, message_text
from langgraph_librarian.entry import IndexEntry, entries_from_dicts
from langgraph_librarian.hydrate import recent_turns_start
from langgraph_librarian.recall._records import MemoryRecord, clean_text, now_iso, stable_key

__all__ = ["CapturePlan", "capture_records", "known_entries", "plan_capture"]


@dataclass
class CapturePlan:
    """The messages one capture copies, their identity keys, and the new cursor."""

    messages: list[BaseMessage]
    keys: list[str]
    seq: int
    last: str

    def cursor(self) -> dict[str, Any]:
        """The thread's cursor after this capture."""
        return {"last": clean_text(self.last), "seq": self.seq + len(self.messages)}


def _has_text(message: BaseMessage) -> bool:
    # An AI message that only calls tools says nothing worth recalling by itself.
    return bool(message.text.strip())


def _readable(cursor: object) -> dict[str, Any]:
    """The stored cursor, or ``{}`` when it is not one this module wrote (edited by hand,
    another writer, a migration): an unreadable cursor is a thread seen anew (copied
    whole; records are keyed by message identity, so nothing is duplicated) and is
    rewritten by this capture, rather than failing every capture from then on."""
    if not isinstance(cursor, dict):
        return {}
    last, seq = cursor.get("last"), cursor.get("seq", 0)
    if not isinstance(last, str) or isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        return {}
    return {"last": last, "seq": seq}


def plan_capture(
    messages: Sequence[BaseMessage], cursor: object, roles: Collection[str]
) -> CapturePlan:
    """The messages after the thread's cursor (where the previous capture stopped).

    A thread seen for the first time is copied whole; if the cursor's message is no
    longer in the history (deleted, trimmed), only the latest turn is copied. System
    messages, roles outside ``roles`` and messages without text are skipped.
    """
    keys = message_keys(messages, [content_hash(m) for m in messages])
    cursor = _readable(cursor)
    last, seq = cursor.get("last"), cursor.get("seq", 0)
    if not cursor:
        start = 0
    elif last in keys:
        start = len(keys) - keys[::-1].index(last)  # just after its last occurrence
    else:
        start = recent_turns_start(messages, 1)
    chosen = [
        (m, k)
        for m, k in zip(messages[start:], keys[start:], strict=True)
        if m.type in roles and m.type != "system" and _has_text(m)
    ]
    return CapturePlan(
        [m for m, _ in chosen], [k for _, k in chosen], seq, keys[-1] if keys else ""
    )


def capture_records(
    plan: CapturePlan, thread_id: str | None, entries: Sequence[IndexEntry]
) -> list[MemoryRecord]:
    """One record per planned message, with its index entry and provenance.

    Keys derive from the thread and the message identity, so copying a message twice
    rewrites one record instead of adding a second.
    """
    created = now_iso()
    return [
        MemoryRecord.from_entry(
            entry,
            message_text(message),
            key=stable_key("turn", thread_id, key),
            kind="turn",
            role=message.type,
            thread_id=thread_id,
            message_id=message.id,
            created_at=created,
            seq=plan.seq + n,
        )
        for n, (message, key, entry) in enumerate(
            zip(plan.messages, plan.keys, entries, strict=True)
        )
    ]


def known_entries(index: Any) -> list[IndexEntry]:
    """A thread's index (e.g. the Librarian's ``state["index"]``), or ``[]`` when unreadable."""
    try:
        return entries_from_dicts(index) if index else []
    except ValueError:
        return []  # an unreadable thread index only costs re-summarizing
