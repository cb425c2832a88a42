"""Keep the index aligned with the real conversation, by identity rather than position."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

from langgraph_librarian._messages import content_hash, message_keys
from langgraph_librarian.entry import IndexEntry

__all__ = ["Reconciled", "reconcile_index"]

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

    @property
    def missing(self) -> list[int]:
        """Positions of messages without an entry."""
        return [i for i, e in enumerate(self.entries) if e is None]

    def complete(self) -> list[IndexEntry]:
        """The entries that exist, in message order."""
        return [e for e in self.entries if e is not None]


def _key_of(message_key: str) -> str:
    return message_key[3:] if message_key.startswith("id:") else message_key


def reconcile_index(messages: Sequence[BaseMessage], entries: Sequence[IndexEntry]) -> Reconciled:
    """Match ``entries`` to ``messages`` by message id and content hash.

    Removed messages (``RemoveMessage``, ``REMOVE_ALL_MESSAGES``) drop out, edited
    messages (same id, new content) need a new summary, and every kept entry gets its
    current position as ``id``. A message whose exact content was already summarized
    under another id (a history sent again without ids) reuses that summary.
    """
    hashes = [content_hash(m) for m in messages]
    keys = [_key_of(k) for k in message_keys(messages, hashes)]
    by_key: dict[str, IndexEntry] = {}
    by_hash: dict[str, IndexEntry] = {}
    for entry in entries:
        if entry.status == "pending":
            continue
        if entry.message_id:
            by_key[entry.message_id] = entry
        if entry.status in _REUSABLE:
            by_hash.setdefault(entry.content_hash, entry)
    result = Reconciled(keys=keys, hashes=hashes)
    used: set[str] = set()
    for position, (key, digest) in enumerate(zip(keys, hashes, strict=True)):
        found = by_key.get(key)
        if found is not None and found.content_hash == digest:
            entry = found
            used.add(key)
            # Unchanged position (the usual append-only case): no copy needed.
            moved = entry if entry.id == position else dataclasses.replace(entry, id=position)
            result.entries.append(moved)
            continue
        donor = by_hash.get(digest)
        if donor is not None:
            result.reused += 1
            result.entries.append(dataclasses.replace(donor, id=position, message_id=key))
            continue
        result.entries.append(None)
    result.dropped = sum(1 for k in by_key if k not in used)
    return result
