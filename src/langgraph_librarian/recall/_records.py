"""Memory records: what one remembered message or explicit memory looks like in a store.

A record keeps the message text (bounded), the index entry the Librarian made for it
(summary, embedding) and where it came from (thread, message id, time,
role). Records are presented to the selectors as index entries plus messages.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_librarian._engine.text import clean_text
from langgraph_librarian._kit.cache import BoundedCache
from langgraph_librarian.entry import IndexEntry

__all__ = [
    "MAX_RECORD_CHARS",
    "MemoryRecord",
    "RecordKind",
    "clean_text",
    "exact_fields",
    "joined_key",
    "legacy_ambiguous",
    "needs_exact",
    "now_iso",
    "read_id",
    "record_from_value",
    "records_as_history",
    "records_as_index",
    "stable_key",
    "time_order",
]

logger = logging.getLogger("langgraph_librarian.recall")

RecordKind = Literal["turn", "explicit"]
MAX_RECORD_CHARS = 12_000
"""Longer message text is cut when it is copied into scope memory."""
_FORMAT = 1
_STATUSES = frozenset({"summarized", "verbatim", "extractive", "fallback"})
_KINDS = frozenset({"turn", "explicit"})


def now_iso() -> str:
    """Current UTC time, ISO 8601 with microseconds (sorts as text)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def stable_key(*parts: str | None) -> str:
    """A store key from identifying parts (hex, so any input gives a safe key).

    Distinct parts give distinct keys. The parts are joined with U+001F, as they always
    were (the keys of stored records and cursors stay what they are), unless a part
    before the last holds U+001F: joined, ``("a\\x1fb", "c")`` and ``("a", "b\\x1fc")``
    would be one key (thread "a\\x1fid:b"'s message "c" and thread "a"'s message
    "b\\x1fid:c"), so such parts are hashed as a JSON list (ASCII: no U+001F in it)
    after U+001E, which no joined key starts with (the first part is a literal).
    """
    texts = ["" if p is None else p for p in parts]
    if any("\x1f" in text for text in texts[:-1]):
        return _digest("\x1e" + json.dumps(texts))
    return joined_key(*texts)


def joined_key(*parts: str | None) -> str:
    """:func:`stable_key` as it was before: the parts joined with U+001F (the key of a
    record written then)."""
    return _digest("\x1f".join("" if p is None else p for p in parts))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def time_order(record: MemoryRecord) -> tuple[str, str, int, str]:
    """Sort key of records in time order: when written, then by thread (records written
    at the same moment stay grouped by thread), then in their thread's order."""
    return record.created_at, record.thread_id or "", record.seq, record.key


@dataclass
class MemoryRecord:
    """One item of scope memory.

    Attributes:
        key: Store key (unique within the scope).
        text: The remembered text (a message's text, cut at 12,000 characters).
        summary: The index summary made when the record was written.
        role: ``"human"``, ``"ai"``, ``"tool"`` for copied messages, ``"memory"`` for
            explicit memories.
        kind: ``"turn"`` (copied from a completed turn) or ``"explicit"`` (remember).
        thread_id: The thread it came from, when known: the exact id (the store holds
            it with NUL and lone surrogates made U+FFFD, and beside that, escaped, the
            exact one; records written before that read the cleaned id).
        message_id: The message it was copied from, when it had an id (kept as
            ``thread_id`` is).
        created_at: When it was written (ISO 8601, UTC).
        seq: Order within its thread (copied messages), for stable ordering.
        name: The message's ``name``, if any: the tool's name for a tool message, the
            speaker's for a named message (a group chat). The recalled block shows it
            with the role (``"ana (user)"``). Records stored without it read as ``None``.
        status: How the summary was produced (as in :class:`IndexEntry`).
        content_hash: Hash of the source content (selection caches key on it).
        vector: Embedding (base64 float16) when an embedding model was available.
        original_tokens: Estimated tokens of the source message.
    """

    key: str
    text: str
    summary: str
    role: str
    kind: RecordKind
    thread_id: str | None = None
    message_id: str | None = None
    created_at: str = ""
    seq: int = 0
    name: str | None = None
    status: str = "verbatim"
    content_hash: str = ""
    vector: str | None = None
    original_tokens: int = 0

    @classmethod
    def from_entry(
        cls,
        entry: IndexEntry,
        text: str,
        *,
        key: str,
        kind: RecordKind,
        role: str,
        thread_id: str | None,
        message_id: str | None,
        created_at: str,
        seq: int = 0,
        name: str | None = None,
    ) -> MemoryRecord:
        """A record for ``text`` carrying what the indexer made of it.

        ``name`` is the message's own ``name`` (who said it); without it, the entry's.
        """
        if len(text) > MAX_RECORD_CHARS:
            text = text[: MAX_RECORD_CHARS - 1] + "…"
        return cls(
            key=key,
            text=clean_text(text),
            summary=clean_text(entry.summary),
            role=role,
            kind=kind,
            thread_id=thread_id,
            message_id=message_id,
            created_at=created_at,
            seq=seq,
            name=_optional_str(name if name else entry.name),
            status=entry.status if entry.status in _STATUSES else "verbatim",
            content_hash=entry.content_hash or stable_key("text", text),
            vector=entry.vector,
            original_tokens=entry.original_tokens,
        )

    def to_value(self) -> dict[str, Any]:
        """The JSON-safe value stored in the ``BaseStore`` item."""
        return {
            "v": _FORMAT,
            "text": self.text,
            "summary": self.summary,
            "role": self.role,
            "kind": self.kind,
            "thread_id": _stored(self.thread_id),
            "message_id": _stored(self.message_id),
            "created_at": self.created_at,
            "seq": self.seq,
            "name": self.name,
            "status": self.status,
            "content_hash": self.content_hash,
            "vector": self.vector,
            "original_tokens": self.original_tokens,
            **exact_fields(thread_id=self.thread_id, message_id=self.message_id),
        }


_EXACT = "_exact"
"""Suffix of the fields keeping an id a store cannot hold as it is (``thread_id_exact``)."""


def _stored(value: str | None) -> str | None:
    """``value`` as a store holds it: NUL and lone surrogates made U+FFFD."""
    return None if value is None else clean_text(value)


def needs_exact(value: str) -> bool:
    """Whether ``value`` is kept escaped beside its cleaned form: cleaning changes it, or
    it holds U+FFFD (which its cleaned look-alikes hold too). A record without the exact
    field whose id holds U+FFFD is then one written before exact ids were kept."""
    return "\ufffd" in value or clean_text(value) != value


def exact_fields(**ids: str | None) -> dict[str, str]:
    # JSON-escaped (ASCII: NUL and lone surrogates as \u escapes), so every store holds
    # it and it reads back exactly. Written only for such ids: records of ordinary ids
    # are what they were (and what earlier versions read).
    return {
        name + _EXACT: json.dumps(value)
        for name, value in ids.items()
        if value is not None and needs_exact(value)
    }


def read_id(value: dict[str, Any], name: str) -> str | None:
    """The id ``name`` of a stored record (or cursor): exact when it was kept escaped
    beside the stored one, else as stored (cleaned: what a record written before exact
    ids were kept holds)."""
    stored = _optional_str(value.get(name))
    escaped = value.get(name + _EXACT)
    if stored is None or not isinstance(escaped, str):
        return stored
    try:
        exact = json.loads(escaped)
    except ValueError:
        return stored
    # An exact id that is not the stored one's (edited by hand) is not believed.
    return exact if isinstance(exact, str) and clean_text(exact) == stored else stored


def legacy_ambiguous(value: Any) -> bool:
    """Whether a stored record's thread id may have been cleaned when it was written: it
    holds U+FFFD and no exact id (a record from before exact ids were kept), so it is
    that id's or that of a thread whose id held NUL or a lone surrogate there."""
    if not isinstance(value, dict) or "thread_id" + _EXACT in value:
        return False
    thread = value.get("thread_id")
    return isinstance(thread, str) and "\ufffd" in thread


def _optional_str(value: Any) -> str | None:
    return None if value is None else clean_text(str(value))


def record_from_value(key: str, value: Any) -> MemoryRecord | None:
    """Parse a stored value; ``None`` (and a warning) when it is not a record we wrote."""
    try:
        if not isinstance(value, dict) or value.get("v") != _FORMAT:
            raise ValueError("not a scope memory record")
        text, role, kind = value["text"], value["role"], value["kind"]
        if not (isinstance(text, str) and isinstance(role, str) and kind in _KINDS):
            raise ValueError("text, role or kind has the wrong type")
        vector = value.get("vector")
        return MemoryRecord(
            key=key,
            text=clean_text(text),
            summary=clean_text(str(value.get("summary") or "")),
            role=role,
            kind=kind,
            thread_id=read_id(value, "thread_id"),
            message_id=read_id(value, "message_id"),
            created_at=str(value.get("created_at") or ""),
            seq=int(value.get("seq") or 0),
            name=_optional_str(value.get("name")),
            status=str(value.get("status") or "verbatim"),
            content_hash=str(value.get("content_hash") or stable_key("text", text)),
            vector=vector if isinstance(vector, str) else None,
            original_tokens=int(value.get("original_tokens") or 0),
        )
    except (KeyError, TypeError, ValueError) as exc:
        # Once per record (while remembered), then at DEBUG: a scope holding foreign
        # items is read at every turn, and each turn logged each of them again.
        warned = _WARNED.get((key, str(exc))) is not None
        _WARNED.put((key, str(exc)), True)
        log = logger.debug if warned else logger.warning
        log("scope memory: skipping unreadable record %s: %s", key[:48], exc)
        return None


_WARNED: BoundedCache[tuple[str, str], bool] = BoundedCache(4_096)
"""Unreadable records already logged at WARNING (by key and problem)."""


def _message_for(record: MemoryRecord) -> BaseMessage:
    if record.role == "ai":
        return AIMessage(content=record.text, id=record.key, name=record.name)
    return HumanMessage(content=record.text, id=record.key, name=record.name)


def records_as_index(
    records: Sequence[MemoryRecord],
) -> tuple[list[BaseMessage], list[IndexEntry]]:
    """Records as the selectors' inputs: one message and one index entry per record.

    Position ``i`` of both lists is ``records[i]``; records should be in time order so
    the selectors' "later wins" preference means "more recent".
    """
    messages = [_message_for(r) for r in records]
    entries = [_entry_for(i, r) for i, r in enumerate(records)]
    return messages, entries


def _entry_for(position: int, record: MemoryRecord) -> IndexEntry:
    """``record``'s index entry at ``position`` of the selectors' input."""
    return IndexEntry(
        id=position,
        role=record.role,
        summary=record.summary or record.text[:400],
        original_tokens=record.original_tokens,
        message_id=record.key,
        content_hash=record.content_hash,
        name=record.name,
        status=record.status if record.status in _STATUSES else "verbatim",  # type: ignore[arg-type]
        vector=record.vector,
    )


_BREAK = "librarian-recall-break"
"""Id prefix of the empty messages laid between records that do not follow each other."""


def follows(before: MemoryRecord, after: MemoryRecord) -> bool:
    """Whether ``after`` is the message captured right after ``before`` in its thread."""
    return (
        before.kind == after.kind == "turn"
        and before.thread_id is not None
        and before.thread_id == after.thread_id
        and after.seq == before.seq + 1
    )


def records_as_history(
    records: Sequence[MemoryRecord],
) -> tuple[list[BaseMessage], list[IndexEntry], list[int]]:
    """Records as the selectors' inputs, each exchange kept apart from the others.

    Like :func:`records_as_index`, but wherever a record does not follow the one before
    it in its thread (another thread, another capture with messages between, an
    explicit memory) an empty message is laid between them. The selectors read a
    message with its neighbours (a short reply is embedded with the end of the message
    before it; a short match lends its score to the message before it): records of
    different conversations must not lend each other context. The third list gives
    each position's record index, ``-1`` for a break; pass the breaks to the selectors
    as ``exclude`` (they are empty filler, never evidence, never chosen).
    """
    messages: list[BaseMessage] = []
    entries: list[IndexEntry] = []
    slots: list[int] = []
    for i, record in enumerate(records):
        if i and not follows(records[i - 1], record):
            position = len(messages)
            messages.append(HumanMessage(content="", id=f"{_BREAK}-{position}"))
            entries.append(
                IndexEntry(
                    id=position,
                    role="human",
                    summary="",
                    original_tokens=0,
                    message_id=f"{_BREAK}-{position}",
                    content_hash=_BREAK,
                    status="verbatim",
                )
            )
            slots.append(-1)
        entries.append(_entry_for(len(messages), record))
        messages.append(_message_for(record))
        slots.append(i)
    return messages, entries, slots
