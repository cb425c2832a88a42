"""The one cache policy of the turn: bounded, least-recently-used, thread-safe.

A ``create_agent`` turn calls the model several times (tool loops) and a web server runs
many threads at once; what a feature prepares once per user turn (a selection, a recall)
is kept here, keyed by thread (or scope) and turn, so later model calls of the same turn
reuse it and two threads never share an entry.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """At most ``size`` items; the least recently used goes first. ``size <= 0`` keeps none."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: K, value: V) -> None:
        if self._size <= 0:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def pop(self, key: K) -> V | None:
        with self._lock:
            return self._items.pop(key, None)

    def drop(self, where: Callable[[K], bool]) -> None:
        """Forget every item whose key matches ``where``."""
        with self._lock:
            for key in [k for k in self._items if where(k)]:
                del self._items[key]

    def __len__(self) -> int:
        return len(self._items)
