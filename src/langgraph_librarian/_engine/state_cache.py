"""Reading the index kept in graph state, without re-parsing it every call.

A checkpointer hands every node a freshly deserialized ``state["index"]``: thousands
of dicts, the same as last call's plus the entries of the newest messages. Turning
them into validated :class:`IndexEntry` objects costs about a microsecond each; reading
four short columns (message id, content hash, status, embedding model) and comparing
them with the last parse's is a few C-level list operations. When the last parse is a
prefix of the new index, its entries are reused and only the new dicts are parsed. The
summary is not compared: an entry's summary is made once from its content (an edit
changes the content hash) and never rewritten in place. The index node registers what
it writes, so the next turn's read finds it even though the checkpointer hands back
new objects.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import compress, count
from operator import attrgetter, itemgetter, methodcaller
from typing import Any

from langgraph_librarian._engine.view import same_prefix
from langgraph_librarian.entry import IndexEntry, entries_from_dicts, entries_to_dicts
from langgraph_librarian.errors import IndexStoreError
from langgraph_librarian.state import cleared_index, is_cleared_index

__all__ = ["entries_to_state", "state_entries"]

_FIELDS = ("message_id", "content_hash", "status", "vector_model")
_KEYS = tuple(itemgetter(name) for name in _FIELDS)
_VECTOR_MODEL = methodcaller("get", "vector_model")  # absent in indexes of old releases
_ATTRIBUTES = tuple(attrgetter(name) for name in _FIELDS)
_CACHE: OrderedDict[Any, tuple[list[Any], list[list[Any]], list[IndexEntry]]] = OrderedDict()
"""Per first message id: (the dicts last seen, their columns, their entries)."""
_CACHE_SIZE = 256
_MAX_ENTRIES = 100_000
"""Entries held by each cache over all its anchors (about 2.4 KB each in both together):
256 indexes of 10,000 entries would hold about 6 GB. The least recently used go first,
never the one just stored."""


def _bound(cache: OrderedDict[Any, Any], size: Callable[[Any], int]) -> None:
    """Drop the least recently used anchors past ``_CACHE_SIZE`` or ``_MAX_ENTRIES``
    (the caller holds ``_LOCK``; the newest anchor is last and always kept)."""
    while len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)
    held = sum(size(value) for value in cache.values())
    while held > _MAX_ENTRIES and len(cache) > 1:
        held -= size(cache.popitem(last=False)[1])


_WRITTEN: OrderedDict[
    Any, tuple[list[dict[str, Any]], list[IndexEntry], list[list[Any]], list[dict[str, Any]]]
] = OrderedDict()
"""Per first message id: the private dicts ``entries_to_state`` last made, their
entries, the entries' columns, and the dicts it handed out (equal to the private ones
when handed out)."""
_LOCK = threading.Lock()
_WRITING = threading.Lock()
"""Held while ``entries_to_state`` extends its lists in place (one writer at a time)."""
_RECHECK = 64
_MIN_CACHED = 64  # small indexes parse faster than they are compared and looked up

Columns = list[list[Any]]


def _columns(raw: Sequence[Any]) -> Columns | None:
    try:
        columns = [list(map(get, raw)) for get in _KEYS[:3]]
        try:
            columns.append(list(map(_KEYS[3], raw)))
        except KeyError:
            columns.append(list(map(_VECTOR_MODEL, raw)))
        return columns
    except (KeyError, TypeError):  # not our format: the strict parser explains
        return None


def _put(anchor: Any, raw: list[Any], columns: Columns, entries: list[IndexEntry]) -> None:
    with _LOCK:
        _CACHE[anchor] = (raw, columns, entries)
        _CACHE.move_to_end(anchor)
        _bound(_CACHE, lambda value: len(value[2]))


def _same_hashes(raw: Sequence[Any], hashes: list[Any], k: int) -> bool:
    """The content hashes of the last of ``raw``'s first ``k`` dicts are ``hashes``'
    (the same objects): a dict edited in place after it was written is noticed among
    the last ``_RECHECK``; the index node replaces entries, it does not edit them.
    """
    start = max(0, k - _RECHECK)
    try:
        return all(map(operator.is_, hashes[start:k], map(_KEYS[1], raw[start:k])))
    except (KeyError, TypeError):  # not our format: the strict parser explains
        return False


def _same_prefix(columns: Columns, cached: Columns, k: int) -> bool:
    return all(new[:k] == old[:k] for new, old in zip(columns, cached, strict=True))


_WAY_OUT = (
    "; the index in this thread's state cannot be read (written by an older release, or "
    f"edited): clear it with graph.update_state(config, {{'index': {cleared_index()!r}}}) "
    "and the next turn indexes the thread's messages again"
)


def state_entries(state: dict[str, Any]) -> list[IndexEntry]:
    """``state["index"]`` as entries (the parsed prefix is shared; entries are read-only).

    Raises:
        IndexStoreError: (a ``ValueError``) when the stored index is not a list of
            valid entries; the message says how to clear it.
    """
    try:
        return _state_entries(state)
    except IndexStoreError:
        raise
    except ValueError as exc:
        # An IndexStoreError (a ValueError) so that every face raises it before the
        # model, as a corrupt stored index: the middleware passes other selection
        # failures through, and the step after the reply then raised with a billed
        # reply checkpointed that the caller never saw, turn after turn.
        raise IndexStoreError(f"{exc}{_WAY_OUT}") from exc


def _state_entries(state: dict[str, Any]) -> list[IndexEntry]:
    raw = state.get("index") or []
    if is_cleared_index(raw):  # a state without the merge_index reducer kept the marker
        return []
    if not isinstance(raw, list | tuple):  # a clash of names, not an unreadable index
        raise IndexStoreError(
            f"state['index'] must be a list of the Librarian's index entries, got "
            f"{type(raw).__name__}: the Librarian reserves the state keys 'index', "
            "'librarian_metadata' and 'librarian_summary' (LibrarianMiddleware adds them to "
            "the agent's state), so a field of your own named 'index' clashes; rename yours "
            "(e.g. 'page_index')"
        )
    if len(raw) < _MIN_CACHED or not isinstance(raw[0], dict):
        return entries_from_dicts(raw)
    anchor = raw[0].get("message_id")
    with _LOCK:
        hit = _CACHE.get(anchor)
    if hit is not None:
        seen, cached, parsed = hit
        k = min(len(parsed), len(raw))
        # The dicts written last turn, still in this process (no checkpointer copy):
        # one list comparison (pointers first, in C), and the content hashes of the
        # last few for a dict edited in place.
        if same_prefix(raw, seen, k) and _same_hashes(raw, cached[1], k):
            if k == len(raw) == len(parsed):  # the index as last read or written
                return list(parsed)
            tail = _columns(raw[k:])
            if tail is not None:
                grown = [old[:k] + new for old, new in zip(cached, tail, strict=True)]
                return _extend(anchor, raw, grown, parsed, k)
    columns = _columns(raw)
    if columns is None:
        return entries_from_dicts(raw)
    if hit is not None:
        seen, cached, parsed = hit
        k = min(len(parsed), len(raw))
        if _same_prefix(columns, cached, k):
            return _extend(anchor, raw, columns, parsed, k)
    entries = entries_from_dicts(raw)
    _put(anchor, list(raw), columns, entries)
    return list(entries)


def _extend(
    anchor: Any, raw: Sequence[Any], columns: Columns, parsed: list[IndexEntry], k: int
) -> list[IndexEntry]:
    """The first ``k`` parsed entries plus the parse of the rest of ``raw``."""
    entries = parsed[:k] + entries_from_dicts(raw[k:])
    if len(raw) != len(parsed):
        _put(anchor, list(raw), columns, entries)
    return entries


def entries_to_state(entries: Sequence[IndexEntry]) -> list[dict[str, Any]]:
    """``entries`` as the dicts to write to ``state["index"]``, registered for the next read.

    The index node writes the whole index every turn, most of it the entries it wrote
    last turn. For those it hands out again the dicts it handed out then, after one
    C-level comparison of each with a private copy made for it (kept here, never handed
    out): a dict a caller edited in place since is replaced by a fresh copy of the
    private one, so what is written always equals a fresh conversion of ``entries``.
    New and changed entries are converted (and copied, so the private dicts are never
    handed out). Only dicts made here are reused, never dicts read from state (an older
    release's format is rewritten in the current one). Like ``add_messages`` for
    messages, two successive states may therefore hold the same (equal) dict objects;
    a checkpointer stores each state as a serialized copy. The dicts are registered, so
    the next turn's :func:`state_entries` finds them even though a checkpointer hands
    back new objects.
    """
    entries = list(entries)
    if len(entries) < _MIN_CACHED:
        return entries_to_dicts(entries)
    anchor = entries[0].message_id
    with _WRITING:
        return _written(anchor, entries)


def _written(anchor: Any, entries: list[IndexEntry]) -> list[dict[str, Any]]:
    with _LOCK:
        last = _WRITTEN.get(anchor)
    p = 0
    made: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    columns: Columns = [[] for _ in _ATTRIBUTES]
    if last is not None:
        made, sources, columns, out = last
        k = min(len(sources), len(entries))
        p = k if same_prefix(entries, sources, k) else _first_other(entries, sources, k)
    rest = entries[p:]
    fresh = entries_to_dicts(rest)  # (equal entries give equal dicts)
    copies = list(map(dict.copy, fresh))  # what goes to state: never the private dicts
    added = [list(map(get, rest)) for get in _ATTRIBUTES]
    # What goes to state: last turn's dicts where they still equal the private ones
    # (compared in C, pointers first), copies of the private dicts elsewhere.
    kept = _head(out, p)
    if kept != _head(made, p):
        kept = list(map(_unedited, kept, made))
    dicts = kept + copies
    if kept is out and len(made) == p and all(len(column) == p for column in columns):
        # An append to exactly last turn's lists: they grow in place (every reader
        # reads a record's lists below the length of its entries, so an older record
        # still sees what it saw), and no list of the whole index is copied.
        handed, private = out, made
        handed += copies
        private += fresh
        for column, new in zip(columns, added, strict=True):
            column += new
    else:
        handed = list(dicts)  # (the caller may change its list; both records only read this)
        private = made[:p] + fresh
        columns = [old[:p] + new for old, new in zip(columns, added, strict=True)]
    with _LOCK:
        _WRITTEN[anchor] = (private, entries, columns, handed)
        _WRITTEN.move_to_end(anchor)
        _bound(_WRITTEN, lambda value: len(value[1]))
    _put(anchor, handed, columns, entries)
    return dicts


def _head(items: list[Any], k: int) -> list[Any]:
    """The first ``k`` items (the list itself when that is all of it: no copy)."""
    return items if len(items) == k else items[:k]


def _unedited(handed: dict[str, Any], private: dict[str, Any]) -> dict[str, Any]:
    """``handed`` if it still equals ``private``, else a fresh copy of ``private``."""
    return handed if handed == private else private.copy()


def _first_other(new: Sequence[Any], old: Sequence[Any], k: int) -> int:
    """The first of the first ``k`` positions where ``new`` and ``old`` hold other objects."""
    return next(compress(count(), map(operator.is_not, new[:k], old[:k])), k)
