"""Calls to a store that may stop answering: each waits a bounded time, then gives up.

A store behind a network partition (TCP open, no replies) or a stuck database blocks
its caller until it answers again: minutes, or for ever. Scoped recall and the
Librarian's index store both bound their calls here, with one mechanism:

- a sync call runs on a daemon thread of its own (``on_own_thread``) and the caller
  waits at most ``timeout`` seconds; a hung call is abandoned there (a sync call cannot
  be interrupted), and neither the turn nor the process's exit waits for it;
- at most ``IN_FLIGHT`` calls of one store (one set of ``slots``) wait at once: past
  that the store is not answering, and the next call fails at once instead of leaving
  one more thread behind;
- an async call is cancelled after ``timeout`` seconds.

Either way the caller gets a ``TimeoutError`` (transient: the turn fails open).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from langgraph_librarian._engine.concurrency import (
    await_within,
    is_own_timeout,
    on_own_thread,
    own_timeouts,
)

__all__ = ["IN_FLIGHT", "awithin", "is_timeout", "slots_for", "within"]

_T = TypeVar("_T")

IN_FLIGHT = 32
"""Calls of one store that may wait on their own threads at once. A store that hangs
leaves each turn's call waiting; beyond this many, calls fail at once instead of starting
another thread (they piled up without bound: two a turn, 1,000 threads after 500 turns)."""


def within(
    call: Callable[[], _T],
    timeout: float | None,
    slots: threading.Semaphore,
    what: str,
    thread_name: str = "librarian-store",
) -> _T:
    """``call()``, or ``TimeoutError`` after ``timeout`` seconds (``None``: no limit).

    ``slots`` bounds the calls left running (see :func:`slots_for`); ``what`` names the
    service in the error (``"scope memory"``, ``"the index store"``).
    """
    if timeout is None:
        return call()
    if not slots.acquire(blocking=False):
        raise TimeoutError(f"{what} has not answered {IN_FLIGHT} earlier calls; not waiting again")
    future = on_own_thread(call, thread_name, finished=slots.release)
    try:
        return future.result(timeout=timeout)
    except FutureTimeout:
        # (the same class as the builtin TimeoutError since Python 3.11)
        if future.done():  # the call's own result or error, not our timer
            return future.result()
        raise TimeoutError(f"{what} did not answer within {timeout:g} s") from None


async def awithin(call: Awaitable[_T], timeout: float | None, what: str) -> _T:
    """Async :func:`within`: ``call`` is cancelled after ``timeout`` seconds."""
    if timeout is None:
        return await call
    started = time.monotonic()
    try:
        return await await_within(own_timeouts(call), timeout)
    except TimeoutError as exc:
        # The call's own error, not our timer (a client that turns our cancellation
        # into a TimeoutError of its own does so at the deadline).
        if is_own_timeout(exc) and time.monotonic() - started < timeout:
            raise
        raise TimeoutError(f"{what} did not answer within {timeout:g} s") from None


_SLOTS: weakref.WeakKeyDictionary[object, threading.Semaphore] = weakref.WeakKeyDictionary()
_SHARED = threading.Semaphore(IN_FLIGHT)
_GUARD = threading.Lock()


def slots_for(store: object) -> threading.Semaphore:
    """The in-flight slots of ``store`` (the backing ``BaseStore`` of a wrapper that has
    one, so every wrapper of one store shares them). A store that cannot be weakly
    referenced shares one set with the other such stores."""
    inner = getattr(store, "store", store)  # LangGraphIndexStore wraps a BaseStore
    with _GUARD:
        try:
            found = _SLOTS.get(inner)
            if found is None:
                found = _SLOTS[inner] = threading.Semaphore(IN_FLIGHT)
        except TypeError:  # not weakly referenceable (or unhashable)
            return _SHARED
        return found


def timeout_for(store: object, timeout: float | None) -> float | None:
    """The time limit of calls to ``store``: none for a store held in this process
    (``InMemoryStore``, bare or behind a ``LangGraphIndexStore``), which cannot stop
    answering; bounding a call costs a thread."""
    inner = getattr(store, "store", store)
    if type(inner).__name__ == "InMemoryStore" and type(inner).__module__.startswith(
        "langgraph.store.memory"
    ):
        return None
    return timeout


_TIMEOUT_NAMES = frozenset({"PoolTimeout", "ConnectionTimeout", "ReadTimeout", "ConnectTimeout"})


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` says the store did not answer in time (ours, or a connection pool's
    ``PoolTimeout``), rather than that it answered with an error."""
    if isinstance(exc, TimeoutError):
        return True
    return any(cls.__name__ in _TIMEOUT_NAMES for cls in type(exc).__mro__)
