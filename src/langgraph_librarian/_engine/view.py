"""One conversation's history, read once and extended by what each turn adds.

A turn used to re-read the whole history many times: human positions (three times),
tool exchanges, system messages, reconciliation's column snapshot, the selector's
document keys. Most turns append a couple of messages to the history the process saw
last turn, so a :class:`HistoryView` keeps those per-message facts and, on the next
call, checks that the new list still starts with what it saw (cheap C-level list
comparisons; object identity first, so a list the process already holds costs almost
nothing) and reads only the appended suffix.

Every structure here is append-only and prefix-consistent: the facts about the first
``n`` messages never change when more are appended. A caller therefore reads a view
at the length it synced (``view_of`` returns it) and is never disturbed by another
thread appending later. Anything that is not an append (a deletion, an edit, a
reordering, a re-sent or shortened-and-changed history) builds a new view object;
holders of the old one keep a consistent (old) picture. A property test checks that a
view extended turn by turn equals one built fresh from the same messages.

Views are found by the conversation's first message (its id, else its type and
length), a few per anchor, least recently used out first: memory stays bounded and two
threads (tenants) never share a view unless their histories are equal.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import Counter, OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import compress, count, repeat
from operator import attrgetter, is_, itemgetter, ne, not_
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.messages import content_hash, current_turn

__all__ = [
    "HistoryView",
    "clear_views",
    "conversation_key",
    "held_prefix",
    "same_prefix",
    "turn_key",
    "turn_view",
    "view_of",
]

_DICT = attrgetter("__dict__")
_ID, _TYPE, _NAME, _CONTENT = (itemgetter(k) for k in ("id", "type", "name", "content"))
_CONTENT_ATTRIBUTE = attrgetter("content")
_RECHECK = 64
"""Trailing messages whose content is re-read on an identity match (edits in place)."""


def same_prefix(new: Sequence[Any], old: Sequence[Any], k: int) -> bool:
    """The first ``k`` items of ``new`` are ``old``'s first ``k`` (the same objects, or equal).

    What a turn asks of last turn's lists (messages, index entries, stored dicts): one
    list comparison, in which C compares pointers first and calls ``__eq__`` only on a
    different object, so the usual turn (last turn's objects plus a few new ones) costs
    a pass in C, not a Python call per item. The first and last of the ``k`` are checked
    by identity first: a freshly deserialized copy fails at once, before ``__eq__`` runs
    on every item (its callers compare such copies column by column).
    """
    if k == 0:
        return True
    if len(new) < k or len(old) < k or new[0] is not old[0] or new[k - 1] is not old[k - 1]:
        return False
    return _head(new, k) == _head(old, k)


def _head(items: Sequence[Any], k: int) -> list[Any]:
    """The first ``k`` items as a list: the list itself when that is all of it, else one
    slice (``list(items[:k])`` copied twice and freed a list: four times the cost at
    50,000 messages); another sequence is made a list."""
    if isinstance(items, list):
        return items if len(items) == k else items[:k]
    return list(items[:k])


class _Columns:
    """What a message's identity and structure depend on, one list per field.

    Comparing two column sets is a few list comparisons in C (equal strings: a length
    check and a memcmp; the same object: a pointer check).
    """

    __slots__ = ("call_ids", "calls", "contents", "ids", "names", "types")

    def __init__(self, messages: Sequence[BaseMessage] = ()) -> None:
        fields = list(map(_DICT, messages))
        self.ids: list[Any] = list(map(_ID, fields))
        self.types: list[str] = list(map(_TYPE, fields))
        self.names: list[Any] = list(map(_NAME, fields))
        self.contents: list[Any] = list(map(_CONTENT, fields))
        # Fields only some message types have: read from ``__dict__`` (``getattr`` with a
        # default goes through pydantic's slow AttributeError path); ``dict.get`` over
        # ``repeat(key)`` costs half a ``methodcaller`` per item.
        self.calls: list[Any] = list(map(dict.get, fields, repeat("tool_calls")))
        self.call_ids: list[Any] = list(map(dict.get, fields, repeat("tool_call_id")))

    def tail(self, start: int) -> _Columns:
        """The columns of the messages from ``start`` on."""
        tail = _Columns()
        for name in self.__slots__:
            setattr(tail, name, getattr(self, name)[start:])
        return tail


class HistoryView:
    """Per-message facts of one history, extended in place by appended messages.

    Attributes (all append-only; read them at the length ``view_of`` returned):
        messages: The message objects seen (identity is the cheap first check).
        types, hashes: Per message: its ``type``, its :func:`content_hash`.
        keys: Identity key per message, as reconciliation defines it (the message id,
            else ``h:<content hash>:<occurrence>``).
        humans, systems, orphans: Positions of human messages (where turns start),
            of system messages, and of tool results whose call is not before them.
        owner: Per message, the position of the AIMessage whose tool exchange it is in
            (the AIMessage itself included), else -1.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.derived_lock = threading.Lock()
        """Guards ``cache`` entries that are extended in place (the lexical index)."""
        self.messages: list[BaseMessage] = []
        self._columns_ids: list[Any] = []
        self._contents: list[Any] = []
        self._types: list[str] = []
        self._names: list[Any] = []
        self._calls: list[Any] = []
        self._call_ids: list[Any] = []
        self.types = self._types
        self.hashes: list[str] = []
        self.keys: list[str] = []
        self.prefixes: list[int] = []
        """Per position, a digest of the history up to it (keys and content hashes): equal
        for two views only when their histories are equal up to there."""
        self.humans: list[int] = []
        self.systems: list[int] = []
        self.orphans: list[int] = []
        self.owner: list[int] = []
        self._exchanges: dict[int, list[int]] = {}
        self._call_owner: dict[str, int] = {}
        self._seen: dict[str, int] = {}
        self.first_at: dict[str, int] = {}
        """Key -> the first position holding it."""
        self.duplicate_at = -1
        """The first position whose key an earlier message already has (-1: none yet)."""
        self.cache: dict[str, Any] = {}
        """Derived caches of other modules (the selector's lexical index, the last
        reconciliation), by name. A new view of a changed history keeps those whose
        ``valid_below(p)`` says they hold for its unchanged first ``p`` messages."""

    def __len__(self) -> int:
        return len(self.messages)

    # -- building ----------------------------------------------------------------------

    def _append(self, tail: Sequence[BaseMessage], columns: _Columns) -> None:
        """Read appended messages (``columns`` are theirs)."""
        base = len(self.messages)
        self._columns_ids += columns.ids
        self._contents += columns.contents
        self._names += columns.names
        self._calls += columns.calls
        self._call_ids += columns.call_ids
        for offset, message in enumerate(tail):
            position = base + offset
            kind = columns.types[offset]
            digest = content_hash(message)
            key = self._key(message, digest)
            if key in self.first_at:
                if self.duplicate_at < 0:
                    self.duplicate_at = position
            else:
                self.first_at[key] = position
            self.hashes.append(digest)
            self.keys.append(key)
            self.prefixes.append(hash((self.prefixes[-1] if self.prefixes else 0, key, digest)))
            owner = -1
            if kind == "human":
                self.humans.append(position)
            elif kind == "system":
                self.systems.append(position)
            elif kind == "ai" and columns.calls[offset]:
                # tool_groups' rule: an AIMessage with tool calls opens an exchange; a
                # later AIMessage reusing a call id takes the results that follow it.
                owner = position
                self._exchanges[position] = [position]
                for call in columns.calls[offset]:
                    if call.get("id"):
                        self._call_owner[str(call["id"])] = position
            elif kind == "tool":
                found = self._call_owner.get(str(columns.call_ids[offset]))
                if found is None:
                    self.orphans.append(position)
                else:
                    owner = found
                    self._exchanges[found].append(position)
            self.owner.append(owner)
            self._types.append(kind)
            # Last: a reader that sees the message also sees everything derived from it.
            self.messages.append(message)

    def _key(self, message: BaseMessage, digest: str) -> str:
        if message.id:
            return str(message.id)
        n = self._seen.get(digest, 0)
        self._seen[digest] = n + 1
        return f"h:{digest}:{n}"

    def _matches(self, messages: Sequence[BaseMessage], columns: _Columns | None) -> int:
        """How many of ``messages`` this view can serve (-1: they differ from it).

        The same objects as seen before pass on one list comparison (C compares
        pointers first, and a replaced object by value) plus a look at the contents of
        the last ``_RECHECK`` of them (a message edited in place, e.g. a streamed reply
        completed after it was seen); other objects (a checkpointer deserializes a fresh
        copy each turn) are compared field by field. Messages are values, as LangGraph's
        reducer treats them: an older message edited in place instead of replaced
        through ``add_messages`` is not re-read.
        """
        k = min(len(messages), len(self.messages))
        if same_prefix(messages, self.messages, k):
            start = max(0, k - _RECHECK)
            contents = map(_CONTENT_ATTRIBUTE, messages[start:k])
            if all(map(is_, self._contents[start:k], contents)):
                return k
            # Equal copies (other content objects) or an edit in place: by fields.
        if columns is None:
            return -1
        same = all(_head(new, k) == _head(old, k) for new, old in self._paired(columns))
        return k if same else -1

    def _paired(self, columns: _Columns) -> tuple[tuple[list[Any], list[Any]], ...]:
        """Each column of ``columns`` with the view's own column of the same field."""
        return (
            (columns.ids, self._columns_ids),
            (columns.types, self._types),
            (columns.contents, self._contents),
            (columns.names, self._names),
            (columns.call_ids, self._call_ids),
            (columns.calls, self._calls),
        )

    def _common_prefix(self, columns: _Columns) -> int:
        """How many leading messages (of ``columns``) this view holds unchanged.

        Each column's first difference is found in C (``map(ne)`` under ``compress``).
        """
        k = min(len(columns.ids), len(self.messages))
        first = k
        for new, old in self._paired(columns):
            first = min(first, next(compress(count(), map(ne, old[:first], new)), first))
        return first

    def _fork(self, p: int) -> HistoryView:
        """A new view of this view's first ``p`` messages (the lists are copied)."""
        view = HistoryView()
        view.messages = self.messages[:p]
        view._columns_ids = self._columns_ids[:p]
        view._contents = self._contents[:p]
        view._types = view.types = self._types[:p]
        view._names = self._names[:p]
        view._calls = self._calls[:p]
        view._call_ids = self._call_ids[:p]
        view.hashes = self.hashes[:p]
        view.keys = self.keys[:p]
        view.prefixes = self.prefixes[:p]
        view.owner = self.owner[:p]
        view.humans = self.human_positions(p)
        view.systems = self.system_positions(p)
        view.orphans = self.orphan_positions(p)
        view.first_at = {key: i for key, i in self.first_at.items() if i < p}
        view.duplicate_at = self.duplicate_at if self.duplicate_at < p else -1
        # Occurrences of each hash among id-less messages (their keys count them).
        view._seen = dict(Counter(compress(view.hashes, map(not_, view._columns_ids))))
        for owner in sorted(o for o in self._exchanges if o < p):
            view._exchanges[owner] = [q for q in self._exchanges[owner] if q < p]
            for call in view._calls[owner]:
                if call.get("id"):
                    view._call_owner[str(call["id"])] = owner
        return view

    # -- reading -----------------------------------------------------------------------

    def exchange(self, position: int, n: int) -> list[int] | None:
        """Positions (below ``n``) of the tool exchange ``position`` is in, if any."""
        owner = self.owner[position]
        if owner < 0:
            return None
        members = self._exchanges[owner]
        if members[-1] >= n:  # results appended after the reader's length
            return [p for p in members if p < n]
        return list(members)

    def human_positions(self, n: int) -> list[int]:
        """Positions of the human messages below ``n``."""
        return self.humans[: bisect_left(self.humans, n)]

    def system_positions(self, n: int) -> list[int]:
        return self.systems[: bisect_left(self.systems, n)]

    def orphan_positions(self, n: int) -> list[int]:
        return self.orphans[: bisect_left(self.orphans, n)]


_VIEWS: OrderedDict[Any, list[HistoryView]] = OrderedDict()
_ANCHORS = 256
"""Histories (threads) kept: more than a web worker serves at once (at 32, a server with
40 live conversations lost each one's view, and everything cached on it, every turn)."""
_PER_ANCHOR = 3
"""Histories sharing a first message (one thread's branches, forks) kept apart."""
_MAX_MESSAGES = 100_000
"""Messages held by all views together. A view costs about 3 KB a message beyond the
messages themselves (which it keeps alive): counted in histories only, 256 anchors of
three 10,000-message views could hold several GB. The least recently used go first;
the view just used always stays."""
_LOCK = threading.Lock()


def _anchor(messages: Sequence[BaseMessage]) -> Any:
    first = messages[0]
    return first.id or (first.type, len(first.content))


_TURN: ContextVar[tuple[Sequence[BaseMessage], HistoryView, int] | None] = ContextVar(
    "librarian_turn_view", default=None
)


@contextmanager
def turn_view(messages: Sequence[BaseMessage]) -> Iterator[HistoryView]:
    """Sync the view of ``messages`` once for a whole turn.

    Planning, reconciliation, the selector and hydration each ask for the view of the
    same list; inside this block they get it without comparing the list again. The
    list must not change during the block (the pipeline's own list does not).

    A checkpointer's fresh copy is compared field by field and not adopted: with
    ``InMemorySaver`` at 10,000 messages, adopting each turn's copy (so the index node of
    the same run matched by identity) made a turn slower (517-557 against 291-431 ms).
    """
    view, n = view_of(messages)
    token = _TURN.set((messages, view, n))
    try:
        yield view
    finally:
        _TURN.reset(token)


def view_of(messages: Sequence[BaseMessage]) -> tuple[HistoryView, int]:
    """The view of ``messages`` and how many of its messages they are (``len(messages)``).

    Extends a view of an earlier form of this history when ``messages`` starts with
    it; otherwise builds a new one. Callers read the view below the returned length.
    A view matched field by field keeps the objects it holds: taking the new ones
    instead was tried and dropped (holding each new list and dropping the old one turns
    young garbage into old: scoped recall, a new list per question, saw full collections
    push its p95 to six times its p50).
    """
    n = len(messages)
    if n == 0:
        return HistoryView(), 0
    turn = _TURN.get()
    if turn is not None and turn[0] is messages and turn[2] == n:
        return turn[1], n
    anchor = _anchor(messages)
    with _LOCK:
        candidates = list(_VIEWS.get(anchor, ()))
    # First by object identity (the list this process saw last call, plus new messages);
    # then, for a freshly deserialized copy, field by field.
    columns: _Columns | None = None
    for by_fields in (False, True):
        if by_fields:
            if not candidates:
                break
            columns = _Columns(messages)
        for view in candidates:
            with view.lock:
                k = view._matches(messages, columns)
                if k < 0:
                    continue
                if k < n:  # read the appended suffix only
                    tail = messages[k:]
                    view._append(tail, _Columns(tail) if columns is None else columns.tail(k))
                _touch(anchor, view)
                return view, n
    # Not an append: a new view. When the latest view of this conversation shares a
    # prefix (an edited or re-asked last message, a deletion near the end), the new
    # view starts from a copy of that prefix and reads only the rest.
    columns = columns or _Columns(messages)
    view, p = HistoryView(), 0
    if candidates:
        latest = candidates[0]
        with latest.lock:
            p = latest._common_prefix(columns)
            if p:
                view = latest._fork(p)
            # A snapshot first (one C-level copy): other threads add entries to the
            # latest view's cache under its derived_lock, not this lock, and the checks
            # below run Python code, during which such an insert would change the dict.
            view.cache = {
                name: kept
                for name, kept in list(latest.cache.items())
                if getattr(kept, "valid_below", lambda _: False)(p)
            }
    view._append(messages[p:], columns.tail(p) if p else columns)
    _touch(anchor, view)
    return view, n


def _touch(anchor: Any, view: HistoryView) -> None:
    with _LOCK:
        views = [v for v in _VIEWS.pop(anchor, []) if v is not view]
        _VIEWS[anchor] = [view, *views][:_PER_ANCHOR]
        while len(_VIEWS) > _ANCHORS:
            _VIEWS.popitem(last=False)
        held = sum(len(v.messages) for kept in _VIEWS.values() for v in kept)
        while held > _MAX_MESSAGES:
            oldest, kept = next(iter(_VIEWS.items()))
            if oldest == anchor:  # the current history's forks first, never the view itself
                if len(kept) == 1:
                    break
                held -= len(kept.pop().messages)
                continue
            held -= sum(len(v.messages) for v in kept)
            del _VIEWS[oldest]


def held_prefix(items: list[Any]) -> int:
    """How many leading ``items`` are the very message objects a view holds (0: none).

    One C-level pointer comparison with the latest views of the conversation: what a
    turn needs to know about the messages last turn already read (their types) without
    a Python call per message.
    """
    if not items or not isinstance(items[0], BaseMessage):
        return 0
    with _LOCK:
        candidates = list(_VIEWS.get(_anchor(items), ()))
    for view in candidates:
        k = min(len(items), len(view.messages))
        if k and items[k - 1] is view.messages[k - 1] and same_prefix(items, view.messages, k):
            return k
    return 0


def clear_views() -> None:
    """Forget every view (tests compare a view extended turn by turn with a fresh one)."""
    with _LOCK:
        _VIEWS.clear()


def conversation_key(messages: Sequence[BaseMessage]) -> str:
    """This conversation's current turn, told apart from any other conversation's.

    A digest of the history up to the latest human message (every message's key and
    content hash), kept incrementally by the history view: stable through the turn's
    tool loop and after the reply, different for two conversations whose latest human
    messages share an id (front ends that number messages per conversation), and no
    pass over the history per call. For caches of a run without a thread id (in this
    process only: Python's string hashing differs between processes).
    """
    view, n = view_of(messages)
    if not n:
        return "0"
    below = bisect_left(view.humans, n)  # (the view may be longer than ``messages``)
    # Without a human message, the newest message is the turn (hydration's rule).
    end = view.humans[below - 1] if below else n - 1
    return f"{end}:{view.prefixes[end]:x}"


def turn_key(thread: str | None, messages: Sequence[BaseMessage]) -> tuple[str, str]:
    """Cache key of the current user turn: ``(thread, latest human message)``, or without a
    thread id ``("", conversation_key(messages))``, so two conversations never share it."""
    turn = current_turn(messages) if thread else ""
    if turn:
        return (thread or "", turn)
    return (thread or "", conversation_key(messages))
