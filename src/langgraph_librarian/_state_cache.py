"""Reading the index kept in graph state, without re-parsing it every call.

A checkpointer hands every node a freshly deserialized ``state["index"]``: thousands
of dicts that are the same as last call's. Turning them into validated
:class:`IndexEntry` objects costs about a microsecond each; comparing a cheap
fingerprint (id, message id, content hash, status, summary per entry) against the last
parses costs far less, so a hit returns the entries parsed before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from operator import itemgetter
from typing import Any

from langgraph_librarian.entry import IndexEntry, entries_from_dicts

__all__ = ["state_entries"]

_FINGERPRINT = itemgetter("id", "message_id", "content_hash", "status", "summary")
_CACHE: OrderedDict[int, tuple[tuple[Any, ...], list[IndexEntry]]] = OrderedDict()
_CACHE_SIZE = 8
_LOCK = threading.Lock()
_MIN_CACHED = 64  # small indexes parse faster than they fingerprint and look up


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
    try:
        fingerprint = tuple(map(_FINGERPRINT, raw))
        key = hash(fingerprint)
    except (KeyError, TypeError):  # not our format: the strict parser explains
        return entries_from_dicts(raw)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] == fingerprint:
            _CACHE.move_to_end(key)
            return list(hit[1])
    entries = entries_from_dicts(raw)
    with _LOCK:
        _CACHE[key] = (fingerprint, entries)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return list(entries)
