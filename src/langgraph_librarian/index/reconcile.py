"""Keep the index aligned with the real conversation, by identity rather than position.

Every turn reconciles the stored index with the current messages. Done from scratch
that means hashing every message's content, which dominates a turn over a long
history. So the result is also kept in a small per-process snapshot; the next call
whose messages start with exactly the same messages (same ids, types, names, contents
and tool linkage, compared by equality, not by hash) and whose stored entries start
with the same entry objects reuses the aligned prefix and reconciles only the new tail.
Anything else (a deletion, an edit, another index) takes the full path. Both paths give
the same result; a property test checks it.
"""

from __future__ import annotations

import dataclasses
import operator
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_librarian._messages import content_hash
from langgraph_librarian.entry import IndexEntry

__all__ = ["reconcile_index"]

_REUSABLE = frozenset({"summarized", "verbatim", "extractive"})


@dataclass
class Reconciled:
    """The index matched against the current messages.

    Attributes:
        entries: One slot per message: its entry (``id`` set to the current
            position) or ``None`` when the message still needs indexing.
        keys: Identity key of each message (its id, or a content-derived key).
        hashes: Content hash of each message.
        dropped: Old entries whose message was removed or edited.
        reused: Entries carried over from another message with the same content
            (a re-sent history), so no model call is needed for them.
    """

    entries: list[IndexEntry | None] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    dropped: int = 0
    reused: int = 0
    _missing: list[int] | None = field(default=None, repr=False, compare=False)

    @property
    def missing(self) -> list[int]:
        """Positions of messages without an entry."""
        if self._missing is None:
            self._missing = [i for i, e in enumerate(self.entries) if e is None]
        return list(self._missing)

    def complete(self) -> list[IndexEntry]:
        """The entries that exist, in message order."""
        return [e for e in self.entries if e is not None]


_COMMON = attrgetter("id", "type", "name", "content")


@dataclass(frozen=True)
class _Columns:
    """Per-message fields a content hash depends on, read once into plain lists.

    Comparing two such column sets is a handful of C-level list comparisons (string
    equality is a length check plus memcmp), much cheaper than hashing every content.
    Fields are read from ``__dict__``: ``getattr`` with a default goes through
    pydantic's slow ``AttributeError`` path for fields a message type does not have.
    """

    ids: list[Any]
    types: list[str]
    names: list[Any]
    contents: list[Any]
    call_ids: list[Any]  # of the AI and tool messages only, in order
    calls: list[Any]  # likewise

    @classmethod
    def of(cls, messages: Sequence[BaseMessage]) -> _Columns:
        ids, types, names, contents = (
            (list(column) for column in zip(*map(_COMMON, messages), strict=True))
            if messages
            else ([], [], [], [])
        )
        linkage = [
            m.__dict__
            for m, kind in zip(messages, types, strict=True)
            if kind == "ai" or kind == "tool"
        ]
        return cls(
            ids=ids,
            types=types,
            names=names,
            contents=contents,
            call_ids=[f.get("tool_call_id") for f in linkage],
            calls=[f.get("tool_calls") for f in linkage],
        )

    def starts_with(self, other: _Columns) -> bool:
        k, j = len(other.ids), len(other.call_ids)
        return len(self.ids) >= k and (
            self.ids[:k] == other.ids
            and self.types[:k] == other.types
            and self.contents[:k] == other.contents
            and self.names[:k] == other.names
            and self.call_ids[:j] == other.call_ids
            and self.calls[:j] == other.calls
        )


@dataclass
class _Matcher:
    """Lookups over stored entries, and the bookkeeping of one alignment."""

    by_key: dict[str, IndexEntry] = field(default_factory=dict)
    by_hash: dict[str, IndexEntry] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    reused_at: set[int] = field(default_factory=set)  # positions aligned by content

    def add(self, entries: Sequence[IndexEntry]) -> None:
        for entry in entries:
            if entry.status == "pending":
                continue
            if entry.message_id:
                self.by_key[entry.message_id] = entry
            if entry.status in _REUSABLE:
                self.by_hash.setdefault(entry.content_hash, entry)

    def match(self, position: int, key: str, digest: str) -> IndexEntry | None:
        found = self.by_key.get(key)
        if found is not None and found.content_hash == digest:
            self.used.add(key)
            # Unchanged position (the usual append-only case): no copy needed.
            return found if found.id == position else dataclasses.replace(found, id=position)
        donor = self.by_hash.get(digest)
        if donor is not None:
            self.reused_at.add(position)
            return dataclasses.replace(donor, id=position, message_id=key)
        return None


@dataclass(frozen=True)
class _Snapshot:
    columns: _Columns
    hashes: list[str]
    keys: list[str]
    seen: dict[str, int]  # occurrences of each hash among id-less messages
    stored: list[IndexEntry]
    aligned: list[IndexEntry | None]
    missing: list[int]  # positions without an entry
    key_set: frozenset[str]  # every message key
    unmatched: dict[str, IndexEntry]  # stored entries (by message id) matched to no message
    by_hash: dict[str, IndexEntry]
    reused_at: frozenset[int]

    @property
    def reused(self) -> int:
        return len(self.reused_at)


_SNAPSHOTS: OrderedDict[Any, _Snapshot] = OrderedDict()
_SNAPSHOT_LIMIT = 64
_LOCK = threading.Lock()


def _anchor(messages: Sequence[BaseMessage]) -> Any:
    first = messages[0]
    return first.id or (first.type, len(messages[0].content))


def _key(message: BaseMessage, digest: str, seen: dict[str, int]) -> str:
    """Identity key: the message id, else the content hash plus its occurrence number."""
    if message.id:
        return str(message.id)
    n = seen.get(digest, 0)
    seen[digest] = n + 1
    return f"h:{digest}:{n}"


def _full(
    messages: Sequence[BaseMessage], columns: _Columns, entries: Sequence[IndexEntry]
) -> _Snapshot:
    matcher = _Matcher()
    matcher.add(entries)
    seen: dict[str, int] = {}
    hashes = [content_hash(m) for m in messages]
    keys = [_key(m, d, seen) for m, d in zip(messages, hashes, strict=True)]
    aligned = [matcher.match(p, k, d) for p, (k, d) in enumerate(zip(keys, hashes, strict=True))]
    return _snapshot(columns, hashes, keys, seen, entries, aligned, frozenset(keys), matcher)


def _snapshot(
    columns: _Columns,
    hashes: list[str],
    keys: list[str],
    seen: dict[str, int],
    stored: Sequence[IndexEntry],
    aligned: list[IndexEntry | None],
    key_set: frozenset[str],
    matcher: _Matcher,
) -> _Snapshot:
    unmatched = {k: e for k, e in matcher.by_key.items() if k not in matcher.used}
    return _Snapshot(
        columns=columns,
        hashes=hashes,
        keys=keys,
        seen=seen,
        stored=list(stored),
        aligned=aligned,
        missing=[i for i, e in enumerate(aligned) if e is None],
        key_set=key_set,
        unmatched=unmatched,
        by_hash=matcher.by_hash,
        reused_at=frozenset(matcher.reused_at),
    )


def _extend(
    snap: _Snapshot,
    messages: Sequence[BaseMessage],
    columns: _Columns,
    entries: Sequence[IndexEntry],
) -> _Snapshot | None:
    """The snapshot extended by new messages and entries, or None to take the full path."""
    k, s = len(snap.hashes), len(snap.stored)
    if len(entries) < s or not all(map(operator.is_, entries[:s], snap.stored)):
        return None
    if not columns.starts_with(snap.columns):
        return None
    new_entries = entries[s:]
    missing_keys = {snap.keys[p] for p in snap.missing}
    duplicate_keys = len(snap.key_set) != len(snap.keys)
    rematch: list[int] = []
    for entry in new_entries:
        if entry.message_id not in snap.key_set or (
            not duplicate_keys and entry.message_id in missing_keys
        ):
            continue
        # The stored form of an entry this snapshot aligned by reusing another
        # message's summary (same content, e.g. a repeated "Noted."): align it like the
        # full path does (by key) instead of starting over.
        p = entry.id
        if (
            not duplicate_keys
            and 0 <= p < k
            and snap.keys[p] == entry.message_id
            and snap.hashes[p] == entry.content_hash
        ):
            rematch.append(p)
            continue
        # Any other second entry for an aligned message (or for a key several messages
        # share): the full path's rule (the later entry wins) decides, not this shortcut.
        return None
    seen = dict(snap.seen)
    tail = messages[k:]
    tail_hashes = [content_hash(m) for m in tail]
    tail_keys = [_key(m, d, seen) for m, d in zip(tail, tail_hashes, strict=True)]
    if not snap.key_set.isdisjoint(tail_keys):
        return None  # a duplicate message id: the full path handles it
    matcher = _Matcher(
        by_key=dict(snap.unmatched), by_hash=dict(snap.by_hash), reused_at=set(snap.reused_at)
    )
    matcher.reused_at.difference_update(rematch)  # now stored: matched by key below
    matcher.add(new_entries)
    aligned = list(snap.aligned)
    # Indexed since (e.g. by the node after selection)? Stored since?
    for position in [*snap.missing, *rematch]:
        aligned[position] = matcher.match(position, snap.keys[position], snap.hashes[position])
    aligned += [
        matcher.match(k + i, key, digest)
        for i, (key, digest) in enumerate(zip(tail_keys, tail_hashes, strict=True))
    ]
    hashes, keys = snap.hashes + tail_hashes, snap.keys + tail_keys
    return _snapshot(
        columns, hashes, keys, seen, entries, aligned, snap.key_set.union(tail_keys), matcher
    )


def reconcile_index(messages: Sequence[BaseMessage], entries: Sequence[IndexEntry]) -> Reconciled:
    """Match ``entries`` to ``messages`` by message id and content hash.

    Removed messages (``RemoveMessage``, ``REMOVE_ALL_MESSAGES``) drop out, edited
    messages (same id, new content) need a new summary, and every kept entry gets its
    current position as ``id``. A message whose exact content was already summarized
    under another id (a history sent again without ids) reuses that summary.
    """
    if not messages:
        dropped = sum(1 for e in entries if e.status != "pending" and e.message_id)
        return Reconciled(dropped=dropped)
    anchor = _anchor(messages)
    columns = _Columns.of(messages)
    with _LOCK:
        previous = _SNAPSHOTS.get(anchor)
    snap = _extend(previous, messages, columns, entries) if previous is not None else None
    if snap is None:
        snap = _full(messages, columns, entries)
    with _LOCK:
        _SNAPSHOTS[anchor] = snap
        _SNAPSHOTS.move_to_end(anchor)
        while len(_SNAPSHOTS) > _SNAPSHOT_LIMIT:
            _SNAPSHOTS.popitem(last=False)
    return Reconciled(
        entries=list(snap.aligned),
        keys=list(snap.keys),
        hashes=list(snap.hashes),
        dropped=len(snap.unmatched),
        reused=snap.reused,
        _missing=list(snap.missing),
    )
