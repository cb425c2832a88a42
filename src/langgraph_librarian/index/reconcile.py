"""Keep the index aligned with the real conversation, by identity rather than position.

Every turn reconciles the stored index with the current messages. Done from scratch
that means hashing every message's content, which dominates a turn over a long
history. The messages' keys and hashes come from the history's view
(:mod:`langgraph_librarian._engine.view`, read once and extended by each turn's new
messages), and the last result is kept with the view: the next call on a longer form
of the same history, whose stored entries start with the same entry objects, reuses
the aligned prefix and reconciles only the new tail. Anything else (a deletion, an
edit, another index) takes the full path. Both paths give the same result; a property
test checks it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.view import HistoryView, same_prefix, view_of
from langgraph_librarian.entry import IndexEntry

__all__ = ["reconcile_index"]  # (reconciled: the turn's own, not public)

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
    tokens: int = 0
    """The summed ``original_tokens`` of ``entries`` (kept up to date turn by turn)."""
    _missing: list[int] | None = field(default=None, repr=False, compare=False)

    @property
    def missing(self) -> list[int]:
        """Positions of messages without an entry."""
        if self._missing is None:
            self._missing = [i for i, e in enumerate(self.entries) if e is None]
        return list(self._missing)

    def complete(self) -> list[IndexEntry]:
        """The entries that exist, in message order."""
        return list(filter(None, self.entries))  # (in C; an entry is always true)


@dataclass
class _Matcher:
    """Lookups over stored entries, and the bookkeeping of one alignment."""

    by_key: dict[str, IndexEntry] = field(default_factory=dict)
    by_hash: dict[str, IndexEntry] = field(default_factory=dict)
    base: dict[str, IndexEntry] = field(default_factory=dict)
    """Donors by hash of an earlier snapshot, shared with it and never changed (copying
    them each turn was a pass over the whole index); ``by_hash`` holds the later ones."""
    used: set[str] = field(default_factory=set)
    reused_at: set[int] = field(default_factory=set)  # positions aligned by content

    def add(self, entries: Sequence[IndexEntry]) -> None:
        for entry in entries:
            if entry.status == "pending":
                continue
            if entry.message_id:
                self.by_key[entry.message_id] = entry
            if entry.status in _REUSABLE and entry.content_hash not in self.base:
                self.by_hash.setdefault(entry.content_hash, entry)  # the first one wins

    def match(self, position: int, key: str, digest: str) -> IndexEntry | None:
        found = self.by_key.get(key)
        if found is not None and found.content_hash == digest:
            self.used.add(key)
            # Unchanged position (the usual append-only case): no copy needed.
            return found if found.id == position else dataclasses.replace(found, id=position)
        donor = self.base.get(digest) or self.by_hash.get(digest)
        if donor is not None:
            self.reused_at.add(position)
            return dataclasses.replace(donor, id=position, message_id=key)
        return None


@dataclass(frozen=True)
class _Snapshot:
    """One reconciliation of the first ``n`` messages of a history view."""

    n: int
    stored: list[IndexEntry]
    aligned: list[IndexEntry | None]
    missing: list[int]  # positions without an entry
    unmatched: dict[str, IndexEntry]  # stored entries (by message id) matched to no message
    base: dict[str, IndexEntry]  # donors by content hash, shared by later snapshots
    by_hash: dict[str, IndexEntry]  # donors added since ``base`` was made (few)
    reused_at: frozenset[int]
    tokens: int  # summed original_tokens of the aligned entries

    @property
    def reused(self) -> int:
        return len(self.reused_at)

    def valid_below(self, p: int) -> bool:
        """Still true of a history whose first ``p`` messages are unchanged."""
        return self.n <= p


def _tokens(entry: IndexEntry | None) -> int:
    return 0 if entry is None else entry.original_tokens


_LAYER = 256
"""Donors a snapshot keeps apart from its shared ``base`` before the two are merged."""

_SNAPSHOT = "reconcile"
"""Name of the last reconciliation in its history view's cache."""


def _full(view: HistoryView, n: int, entries: Sequence[IndexEntry]) -> _Snapshot:
    matcher = _Matcher()
    matcher.add(entries)
    pairs = zip(view.keys[:n], view.hashes[:n], strict=True)
    aligned = [matcher.match(p, k, d) for p, (k, d) in enumerate(pairs)]
    missing = [i for i, e in enumerate(aligned) if e is None]
    tokens = sum(map(_tokens, aligned))
    return _snapshot(n, entries, aligned, missing, matcher, tokens)


def _snapshot(
    n: int,
    stored: Sequence[IndexEntry],
    aligned: list[IndexEntry | None],
    missing: list[int],
    matcher: _Matcher,
    tokens: int,
) -> _Snapshot:
    unmatched = {k: e for k, e in matcher.by_key.items() if k not in matcher.used}
    base, recent = matcher.base, matcher.by_hash
    if not base:  # a full alignment: its matcher is done with its own dict
        base, recent = recent, {}
    elif len(recent) > max(_LAYER, len(base) // 4):  # merged now and then: O(1) a donor
        base, recent = {**base, **recent}, {}  # (disjoint: a hash in base is never added)
    return _Snapshot(
        n=n,
        stored=list(stored),
        aligned=aligned,
        missing=missing,
        unmatched=unmatched,
        base=base,
        by_hash=recent,
        reused_at=frozenset(matcher.reused_at),
        tokens=tokens,
    )


def _extend(
    snap: _Snapshot, view: HistoryView, n: int, entries: Sequence[IndexEntry]
) -> _Snapshot | None:
    """The snapshot extended by new messages and entries, or None to take the full path.

    The view holds the messages' keys and hashes; the snapshot's messages are the view's
    first ``snap.n`` (views only grow), so only the new tail and new entries are read.
    """
    k, s = snap.n, len(snap.stored)
    if k > n or len(entries) < s or not same_prefix(entries, snap.stored, s):
        return None
    keys, hashes, first_at = view.keys, view.hashes, view.first_at
    new_entries = entries[s:]
    missing_keys = {keys[p] for p in snap.missing}
    duplicate_keys = 0 <= view.duplicate_at < k
    rematch: list[int] = []
    for entry in new_entries:
        if first_at.get(entry.message_id, k) >= k or (  # type: ignore[arg-type]
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
            and keys[p] == entry.message_id
            and hashes[p] == entry.content_hash
        ):
            rematch.append(p)
            continue
        # Any other second entry for an aligned message (or for a key several messages
        # share): the full path's rule (the later entry wins) decides, not this shortcut.
        return None
    tail_keys, tail_hashes = keys[k:n], hashes[k:n]
    if any(first_at[key] < k for key in tail_keys):
        return None  # a duplicate message id: the full path handles it
    matcher = _Matcher(
        by_key=dict(snap.unmatched),
        by_hash=dict(snap.by_hash),
        base=snap.base,
        reused_at=set(snap.reused_at),
    )
    matcher.reused_at.difference_update(rematch)  # now stored: matched by key below
    matcher.add(new_entries)
    aligned = list(snap.aligned)
    tokens = snap.tokens
    # Indexed since (e.g. by the node after selection)? Stored since?
    again = sorted({*snap.missing, *rematch})
    for position in again:
        before = aligned[position]
        aligned[position] = matcher.match(position, keys[position], hashes[position])
        tokens += _tokens(aligned[position]) - _tokens(before)
    tail = [
        matcher.match(k + i, key, digest)
        for i, (key, digest) in enumerate(zip(tail_keys, tail_hashes, strict=True))
    ]
    tokens += sum(map(_tokens, tail))
    aligned += tail
    missing = [p for p in again if aligned[p] is None]
    missing += [p for p in range(k, n) if aligned[p] is None]
    return _snapshot(n, entries, aligned, missing, matcher, tokens)


def reconcile_index(messages: Sequence[BaseMessage], entries: Sequence[IndexEntry]) -> Reconciled:
    """Match ``entries`` to ``messages`` by message id and content hash.

    Removed messages (``RemoveMessage``, ``REMOVE_ALL_MESSAGES``) drop out, edited
    messages (same id, new content) need a new summary, and every kept entry gets its
    current position as ``id``. A message whose exact content was already summarized
    under another id (a history sent again without ids) reuses that summary.
    """
    rec = reconciled(messages, entries)
    # The caller's own lists: the turn's shares the snapshot's, which must not change,
    # and the view's, which another thread may extend meanwhile (cut at the messages).
    n = len(messages)
    rec.entries, rec.keys, rec.hashes = list(rec.entries), rec.keys[:n], rec.hashes[:n]
    return rec


def reconciled(messages: Sequence[BaseMessage], entries: Sequence[IndexEntry]) -> Reconciled:
    """:func:`reconcile_index` for the turn's own steps, which only read the result:
    its lists are the kept snapshot's and the history view's (read below
    ``len(messages)``), not copies. Each copy touched every entry and key object: at
    50,000 messages the three of them took about a millisecond of each call, twice a
    turn."""
    if not messages:
        dropped = sum(1 for e in entries if e.status != "pending" and e.message_id)
        return Reconciled(dropped=dropped)
    view, n = view_of(messages)
    previous = view.cache.get(_SNAPSHOT)
    snap = _extend(previous, view, n, entries) if previous is not None else None
    if snap is None:
        snap = _full(view, n, entries)
    view.cache[_SNAPSHOT] = snap  # the latest wins; snapshots are immutable
    return Reconciled(
        entries=snap.aligned,
        keys=_upto(view.keys, n),
        hashes=_upto(view.hashes, n),
        dropped=len(snap.unmatched),
        reused=snap.reused,
        tokens=snap.tokens,
        _missing=snap.missing,
    )


def _upto(items: list[str], n: int) -> list[str]:
    # A view's lists only grow (another thread may append): when they hold exactly the
    # ``n`` messages read, the list itself serves (its readers index below ``n``).
    return items if len(items) == n else items[:n]
