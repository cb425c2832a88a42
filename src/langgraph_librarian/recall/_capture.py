"""Copying completed turns into scope memory: what is new since the thread's cursor.

Each thread of a scope has a cursor (the last message copied, a sequence number and a
fingerprint of the history up to it), so a capture after every turn copies only that
turn, and a capture that failed is made up for by the next one. When the fingerprint
no longer matches (a message was deleted or edited in the thread) the capture
reconciles: the thread's records are read back and made to match its history again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian._engine.view import view_of
from langgraph_librarian.entry import IndexEntry, entries_from_dicts
from langgraph_librarian.hydrate import recent_turns_start
from langgraph_librarian.recall._records import (
    MemoryRecord,
    clean_text,
    exact_fields,
    now_iso,
    read_id,
    stable_key,
)

__all__ = ["CapturePlan", "capture_records", "known_entries", "plan_capture", "reconcile"]


@dataclass
class CapturePlan:
    """The messages one capture copies, their identity keys, and the new cursor.

    Attributes:
        messages: The messages to write (new ones, and edited ones when reconciling).
        keys: Their identity keys (:func:`message_keys`).
        seq: The thread's next sequence number before this capture.
        last: Identity key of the history's last message (the new cursor's).
        fingerprint: Fingerprint of the whole history (the new cursor's).
        reconcile: The history no longer extends what was captured (a message was
            deleted or edited, or the cursor predates fingerprints): ``messages`` is
            every capturable message, to be compared with the thread's records.
        hashes: Content hashes of ``messages``.
        seqs: Sequence number of each of ``messages`` (``None``: the next free one).
        created: When each of ``messages`` was first written (``None``: now).
        deletes: Keys of the thread's records whose messages are gone.
    """

    messages: list[BaseMessage]
    keys: list[str]
    seq: int
    last: str
    fingerprint: str = ""
    reconcile: bool = False
    hashes: list[str] = field(default_factory=list)
    seqs: list[int | None] = field(default_factory=list)
    created: list[str | None] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    verify_at: int = 0

    def _seq_numbers(self) -> list[int]:
        given = self.seqs or [None] * len(self.messages)
        numbers, nxt = [], self.seq
        for seq in given:
            if seq is None:
                seq, nxt = nxt, nxt + 1
            numbers.append(seq)
        return numbers

    def next_seq(self) -> int:
        """The thread's next free sequence number after this capture."""
        return max([self.seq - 1, *self._seq_numbers()]) + 1

    def cursor(self) -> dict[str, Any]:
        """The thread's cursor after this capture."""
        nxt = self.next_seq()
        # After a reconciliation the next check is due once a quarter more (at least 16)
        # records were captured: one read of the thread's records per that many, so the
        # checks cost a bounded share of the captures whatever the thread's length.
        # A thread captured whole for the first time (``verify_at < 0``) starts the same way.
        scheduled = self.reconcile or self.verify_at < 0
        verify = nxt + max(_VERIFY_MIN, nxt // 4) if scheduled else self.verify_at
        # The last message's key as stores hold it, and exactly (a message id with NUL
        # or a lone surrogate) beside it: cleaned, the history never held it again.
        return {
            "last": clean_text(self.last),
            "seq": nxt,
            "fp": self.fingerprint,
            "verify": verify,
            **exact_fields(last=self.last),
        }


_VERIFY_MIN = 16


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
    last, seq, fp = cursor.get("last"), cursor.get("seq", 0), cursor.get("fp")
    if not isinstance(last, str) or isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        return {}
    last = read_id(cursor, "last") or last
    verify = cursor.get("verify")
    if isinstance(verify, bool) or not isinstance(verify, int):
        verify = 0  # a cursor from before periodic checks: check at this capture
    return {"last": last, "seq": seq, "fp": fp if isinstance(fp, str) else None, "verify": verify}


def _fingerprints(keys: Sequence[str], hashes: Sequence[str], cut: int) -> tuple[str, str]:
    """Fingerprints of the history's first ``cut`` messages and of all of it: SHA-256
    over identity keys and content hashes (already computed for the plan)."""
    if len(keys) != len(hashes):
        raise ValueError("one content hash per key")
    digest = hashlib.sha256(_joined(keys[:cut], hashes[:cut]))
    if cut >= len(keys):
        whole = digest.hexdigest()[:32]
        return whole, whole
    prefix = digest.hexdigest()[:32]
    digest.update(_joined(keys[cut:], hashes[cut:]))
    return prefix, digest.hexdigest()[:32]


def _joined(keys: Sequence[str], hashes: Sequence[str]) -> bytes:
    # The records joined in C (a map over str.format, one encode): a digest update per
    # message cost 15 ms a capture at 10,000 messages.
    return "".join(map(_RECORD.format, keys, hashes)).encode("utf-8", "surrogatepass")


_RECORD = "{}\x1e{}\x1f"
"""One message in a fingerprint: its identity key and content hash."""


class _Captured:
    """This module's keys and fingerprint of a history view, extended with the view.

    Kept in the view's derived caches (a new view of a changed history starts anew:
    this has no ``valid_below``), so a capture after each turn reads only the turn's
    messages: the keys are extended, the running digest takes the new records, and the
    fingerprint at each length captured so far is remembered for the next capture's
    cursor (which stands where this one ended).
    """

    _MARKS = 8

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.digest = hashlib.sha256()
        self.marks: dict[int, str] = {0: self.digest.hexdigest()[:32]}

    def extend(self, view: Any, n: int) -> None:
        done = len(self.keys)
        ids = map(_ID, view.messages[done:n])
        fresh = [f"id:{i}" if i else k for i, k in zip(ids, view.keys[done:n], strict=True)]
        self.keys += fresh
        self.digest.update(_joined(fresh, view.hashes[done:n]))
        self.marks[n] = self.digest.hexdigest()[:32]
        while len(self.marks) > self._MARKS:
            del self.marks[min(self.marks)]


_CAPTURED = "recall.capture"


def _identities(
    messages: Sequence[BaseMessage], cut: Callable[[list[str]], int]
) -> tuple[list[str], list[str], int, str, str]:
    """(content hashes, identity keys, ``cut(keys)``, fingerprint of the first ``cut``
    messages, fingerprint of all of them), as :func:`message_keys` and
    :func:`_fingerprints` make them.

    Read from the history's view, which holds hashes and keys per message and is
    extended by each turn's new messages: computed here, they cost a Python call per
    message of the whole history at every capture. The view keys a message with an id
    by the id alone; this module's keys (in cursors and records) say ``id:`` first.
    """
    view, n = view_of(messages)
    hashes = view.hashes[:n]
    with view.derived_lock:
        captured = view.cache.get(_CAPTURED)
        if not isinstance(captured, _Captured) or len(captured.keys) > n:
            captured = _Captured()
            if len(view) == n:  # (a longer view is another reader's: not kept)
                view.cache[_CAPTURED] = captured
        if len(captured.keys) < n:
            captured.extend(view, n)
        keys = captured.keys[:n]
        marks = dict(captured.marks)
    at = cut(keys)
    whole, before = marks.get(n), marks.get(min(at, n))
    if whole is None or before is None:
        before, whole = _fingerprints(keys, hashes, at)
    return hashes, keys, at, before, whole


_ID = attrgetter("id")


def _capturable(message: BaseMessage, roles: Collection[str]) -> bool:
    return message.type in roles and message.type != "system" and _has_text(message)


def plan_capture(
    messages: Sequence[BaseMessage],
    cursor: object,
    roles: Collection[str],
    *,
    mirror: bool = True,
) -> CapturePlan:
    """The messages after the thread's cursor (where the previous capture stopped).

    A thread seen for the first time is copied whole. When the history up to the
    cursor's message is no longer what was captured (its fingerprint differs: a
    message was deleted or edited, or the cursor's message is gone) the plan
    reconciles (``mirror``): it holds every capturable message, for :func:`reconcile`
    to compare with the thread's records. Without ``mirror`` only what follows the
    cursor is copied (the latest turn when the cursor's message is gone) and records
    are never removed. System messages, roles outside ``roles`` and messages without
    text are skipped.
    """
    cursor = _readable(cursor)
    last, seq = cursor.get("last"), cursor.get("seq", 0)

    def cut(keys: list[str]) -> int:
        if not cursor:
            return 0
        if last in keys:
            return len(keys) - keys[::-1].index(last)  # just after its last occurrence
        return 0 if mirror else recent_turns_start(messages, 1)

    hashes, keys, start, before, whole = _identities(messages, cut)
    reconciling = bool(cursor) and last not in keys and mirror
    if mirror and cursor and before != cursor.get("fp"):
        start, reconciling = 0, True
    # The fingerprint tells what changed in this thread's history, not what another
    # writer did to its records meanwhile: two workers capturing two forks of one turn
    # (the loser's records stay behind the winner's cursor), forget_thread racing a
    # capture (the cursor says captured, the records are gone). Store writes have no
    # compare-and-set, so the records are checked against the history now and then.
    if mirror and cursor and seq >= cursor.get("verify", 0):
        start, reconciling = 0, True
    chosen = [
        (m, k, h)
        for m, k, h in zip(messages[start:], keys[start:], hashes[start:], strict=True)
        if _capturable(m, roles)
    ]
    return CapturePlan(
        [m for m, _, _ in chosen],
        [k for _, k, _ in chosen],
        seq,
        keys[-1] if keys else "",
        fingerprint=whole,
        reconcile=reconciling,
        hashes=[h for _, _, h in chosen],
        verify_at=int(cursor.get("verify", 0)) if cursor else -1,
    )


def reconcile(
    plan: CapturePlan, thread_id: str | None, held: Sequence[MemoryRecord]
) -> CapturePlan:
    """``plan`` (a reconciling one) cut down to what differs from ``held``, the thread's
    captured records: messages not captured yet, messages edited since (same identity,
    other content: rewritten in place, keeping their order and time), and the records
    whose messages are no longer in the history (``deletes``)."""
    records = {r.key: r for r in held if r.kind == "turn"}
    wanted: set[str] = set()
    out = CapturePlan([], [], plan.seq, plan.last, plan.fingerprint, reconcile=True)
    for message, key, digest in zip(plan.messages, plan.keys, plan.hashes, strict=True):
        record_key = stable_key("turn", thread_id, key)
        wanted.add(record_key)
        old = records.get(record_key)
        if old is not None and old.content_hash == digest:
            continue
        out.messages.append(message)
        out.keys.append(key)
        out.hashes.append(digest)
        out.seqs.append(None if old is None else old.seq)
        out.created.append(None if old is None else old.created_at)
    out.deletes = [key for key in records if key not in wanted]
    return out


def capture_records(
    plan: CapturePlan, thread_id: str | None, entries: Sequence[IndexEntry]
) -> list[MemoryRecord]:
    """One record per planned message, with its index entry and provenance.

    Keys derive from the thread and the message identity, so copying a message twice
    rewrites one record instead of adding a second.
    """
    created = now_iso()
    when = plan.created or [None] * len(plan.messages)
    return [
        MemoryRecord.from_entry(
            entry,
            message_text(message),
            key=stable_key("turn", thread_id, key),
            kind="turn",
            role=message.type,
            # Who said it (a group chat's speakers share the role "human"); taken from
            # the message, since an entry reused from the thread's index may predate it.
            name=message.name if isinstance(message.name, str) else None,
            thread_id=thread_id,
            message_id=message.id,
            created_at=first or created,
            seq=seq,
        )
        for message, key, entry, seq, first in zip(
            plan.messages, plan.keys, entries, plan._seq_numbers(), when, strict=True
        )
    ]


def known_entries(index: Any) -> list[IndexEntry]:
    """A thread's index (e.g. the Librarian's ``state["index"]``), or ``[]`` when unreadable."""
    try:
        return entries_from_dicts(index) if index else []
    except ValueError:
        return []  # an unreadable thread index only costs re-summarizing
