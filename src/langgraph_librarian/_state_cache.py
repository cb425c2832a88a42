"""Reading the index kept in graph state, without re-parsing it every call.

A checkpointer hands every node a freshly deserialized ``state["index"]``: thousands
of dicts that are the same as last call's. Turning them into validated
:class:`IndexEntry` objects costs about a microsecond each; a fingerprint (message id,
content hash, status and embedding model per entry) costs a small fraction of that, so a hit returns
the entries parsed before. The summary is not part of the fingerprint: an entry's
summary is made once from its content (an edit changes the content hash) and never
rewritten in place. The index node registers what it writes, so the next turn's read
hits even though the checkpointer hands back new objects.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from operator import itemgetter, methodcaller
from typing import Any

from langgraph_librarian.entry import IndexEntry, entries_from_dicts

__all__ = ["remember_state_entries", "state_entries"]

_FINGERPRINT = itemgetter("message_id", "content_hash", "status")
_VECTOR_MODEL = methodcaller("get", "vector_model")
_CACHE: OrderedDict[int, tuple[tuple[Any, ...], list[IndexEntry]]] = OrderedDict()
_CACHE_SIZE = 16
_LOCK = threading.Lock()
_MIN_CACHED = 64  # small indexes parse faster than they fingerprint and look up


def _fingerprint(raw: Sequence[Any]) -> tuple[tuple[Any, ...], int] | None:
    try:
        # The embedding model too: the same messages indexed with and without vectors
        # (or by two models) are different indexes.
        fingerprint = (tuple(map(_FINGERPRINT, raw)), tuple(map(_VECTOR_MODEL, raw)))
        return fingerprint, hash(fingerprint)
    except (KeyError, TypeError):  # not our format: the strict parser explains
        return None


def _put(fingerprint: tuple[Any, ...], key: int, entries: list[IndexEntry]) -> None:
    with _LOCK:
        _CACHE[key] = (fingerprint, entries)
        _CACHE.move_to_end(key)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)


def state_entries(state: dict[str, Any]) -> list[IndexEntry]:
    """``state["index"]`` as entries (cached by fingerprint; entries are shared, read-only).

    Raises:
        ValueError: when the stored index is not a list of valid entries.
    """
    raw = state.get("index") or []
    if not isinstance(raw, list | tuple):
        raise ValueError(f"state['index'] must be a list, got {type(raw).__name__}")
    if len(raw) < _MIN_CACHED or not isinstance(raw[0], dict):
        return entries_from_dicts(raw)
    found = _fingerprint(raw)
    if found is None:
        return entries_from_dicts(raw)
    fingerprint, key = found
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] == fingerprint:
            _CACHE.move_to_end(key)
            return list(hit[1])
    entries = entries_from_dicts(raw)
    _put(fingerprint, key, entries)
    return list(entries)


def remember_state_entries(raw: Sequence[dict[str, Any]], entries: list[IndexEntry]) -> None:
    """Register dicts about to be written to state as the serialized form of ``entries``."""
    if len(raw) < _MIN_CACHED:
        return
    found = _fingerprint(raw)
    if found is not None:
        _put(found[0], found[1], list(entries))
