"""How many model calls to keep in flight: adapts when a server cannot keep up.

A local server (llama.cpp, Ollama) often answers one request at a time; sixteen
concurrent summaries then wait in its queue until they time out, and every retry
makes the queue longer. The gate halves its capacity when a call times out and adds
one back after as many successes in a row as it has slots (additive increase,
multiplicative decrease). What a model's server sustains is remembered for that model
object, so the next turn starts there instead of at ``max_concurrency`` again.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import os
import queue
import threading
import weakref
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")

__all__ = [
    "Abandoned",
    "AsyncGate",
    "Gate",
    "await_within",
    "is_own_timeout",
    "learned_capacity",
    "off_loop",
    "on_own_thread",
    "own_timeouts",
]

_learned: dict[int, tuple[weakref.ref[Any], int]] = {}
_learned_lock = threading.Lock()


def learned_capacity(model: Any, maximum: int) -> int:
    """The capacity last learned for ``model`` (at most ``maximum``), else ``maximum``."""
    with _learned_lock:
        known = _learned.get(id(model))
    if known is None or known[0]() is not model:
        return maximum
    return max(1, min(maximum, known[1]))


def _learn(model: Any, capacity: int) -> None:
    try:
        ref = weakref.ref(model)
    except TypeError:  # not weak-referenceable: nothing to remember it by
        return
    with _learned_lock:
        for key in [k for k, (r, _) in _learned.items() if r() is None]:
            del _learned[key]
        _learned[id(model)] = (ref, capacity)


class _Capacity:
    """The AIMD arithmetic shared by the sync and async gates."""

    def __init__(self, model: Any, maximum: int) -> None:
        self.model = model
        self.maximum = max(1, maximum)
        self.capacity = learned_capacity(model, self.maximum)
        self.in_flight = 0
        self._streak = 0

    def record(self, timed_out: bool) -> None:
        if timed_out:
            self.capacity = max(1, self.capacity // 2)
            self._streak = 0
        else:
            self._streak += 1
            if self._streak >= self.capacity and self.capacity < self.maximum:
                self.capacity += 1
                self._streak = 0
        _learn(self.model, self.capacity)


class Gate(_Capacity):
    """A thread gate whose capacity adapts to timeouts (see the module docstring)."""

    def __init__(self, model: Any, maximum: int) -> None:
        super().__init__(model, maximum)
        self._cond = threading.Condition()

    def __enter__(self) -> Gate:
        with self._cond:
            self._cond.wait_for(lambda: self.in_flight < self.capacity)
            self.in_flight += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def done(self, timed_out: bool) -> None:
        """Report how a call ended."""
        with self._cond:
            self.record(timed_out)
            self._cond.notify_all()


class AsyncGate(_Capacity):
    """Async twin of :class:`Gate` (one per event loop run)."""

    def __init__(self, model: Any, maximum: int) -> None:
        super().__init__(model, maximum)
        self._cond = asyncio.Condition()

    async def __aenter__(self) -> AsyncGate:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.capacity)
            self.in_flight += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    async def done(self, timed_out: bool) -> None:
        """Report how a call ended."""
        async with self._cond:
            self.record(timed_out)
            self._cond.notify_all()


_IDLE_NAME = "librarian-idle"
_IDLE_SECONDS = 30.0
"""How long a finished worker waits for the next call before it exits."""
_MAX_IDLE = 8
"""Idle workers kept at most: beyond, a worker exits when its call returns."""


class _Worker:
    """A daemon thread that runs calls handed to it, then waits idle for the next one.

    Starting a thread per call cost 60-80 µs, and 0.4 ms at p90 on a loaded two-core
    machine (the new thread must be created and scheduled), twice a turn for the index
    store alone; handing a call to a waiting worker costs 20-40 µs. A call that hangs
    keeps its worker: it is not idle, so no later call queues behind it.
    """

    __slots__ = ("jobs", "thread")

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, daemon=True, name=_IDLE_NAME)

    def _loop(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with _idle_lock:
                    if self in _idle:  # nobody took it meanwhile: retire
                        _idle.remove(self)
                        return
                continue  # taken just now: its call is on the way
            job()
            del job  # idle workers hold nothing of their last call (its result, context)
            threading.current_thread().name = _IDLE_NAME
            with _idle_lock:
                if len(_idle) >= _MAX_IDLE:
                    return
                _idle.append(self)


_idle: list[_Worker] = []
_idle_lock = threading.Lock()


def _forget_workers() -> None:
    # A forked child has none of its parent's threads: a call handed to an inherited
    # worker would never run.
    global _idle_lock
    _idle.clear()
    _idle_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def on_own_thread(
    call: Callable[[], _T], name: str, finished: Callable[[], None] | None = None
) -> Future[_T]:
    """``call()`` on a daemon thread of its own, in the caller's context (callbacks and
    tracing live in context variables); ``finished`` runs when it ends. The thread is an
    idle worker of an earlier call when one is waiting (see :class:`_Worker`), else a
    new one.

    For calls that may hang for good (a provider or a store that never answers): the
    caller waits on the future with a timeout and may abandon it. A daemon thread
    neither delays the process's exit (``concurrent.futures`` workers are joined at
    exit) nor makes healthy calls queue behind hung ones (a shared pool would, the wait
    counted against their timeout). Callers bound how many they leave running.
    """
    future: Future[_T] = Future()
    context = contextvars.copy_context()

    def work() -> None:
        threading.current_thread().name = name  # what is running, for thread dumps
        try:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(context.run(call))
                except BaseException as exc:  # handed to the waiting caller
                    future.set_exception(exc)
        finally:
            if finished is not None:
                finished()

    with _idle_lock:
        worker = _idle.pop() if _idle else None
    if worker is not None:
        worker.jobs.put(work)
        return future
    worker = _Worker()
    worker.jobs.put(work)
    try:
        worker.thread.start()
    except BaseException:
        if finished is not None:
            finished()
        raise
    return future


async def off_loop(func: Callable[..., _T], /, *args: Any, name: str = "librarian-work") -> _T:
    """``asyncio.to_thread(func, *args)`` on the library's own threads (:func:`on_own_thread`).

    Not on the event loop's default executor: LangChain runs a sync-only chat model's
    calls there, and calls that passed their timeout keep its few threads (6 on a
    two-core machine) until they return; work queued behind them waited as long as the
    model hung, past every timeout of the turn.
    """
    return await asyncio.wrap_future(on_own_thread(functools.partial(func, *args), name))


class Abandoned(TimeoutError):
    """An awaited call ran past its deadline and ignored its cancellation: it was left
    running (never awaited again), so a retry could overlap it (``await_within``'s
    ``on_abandon`` is told of the call)."""


CANCEL_GRACE = 1.0
"""Seconds a cancelled call gets to end before it is abandoned."""


_ABANDONED: set[asyncio.Future[Any]] = set()
"""Calls left running: the event loop holds tasks weakly, and one waiting on something
only it references would be destroyed while pending."""


def _let_go(
    task: asyncio.Future[Any], on_abandon: Callable[[asyncio.Future[Any]], None] | None
) -> None:
    """Leave ``task`` to itself: referenced until it ends, its error then retrieved (or
    until its event loop is closed: it never ends then); ``on_abandon`` is told."""
    for left in [t for t in _ABANDONED if t.get_loop().is_closed()]:
        _ABANDONED.discard(left)
    _ABANDONED.add(task)
    task.add_done_callback(_ended)
    if on_abandon is not None:
        on_abandon(task)


def _ended(task: asyncio.Future[Any]) -> None:
    _ABANDONED.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" at exit


async def await_within(
    call: Awaitable[_T],
    timeout: float | None,
    on_abandon: Callable[[asyncio.Future[Any]], None] | None = None,
) -> _T:
    """``await call``, at most ``timeout`` seconds (``None``: no limit).

    At the deadline the call is cancelled and ``TimeoutError`` raised, as
    ``asyncio.wait_for`` does; but ``wait_for`` then waits for the cancelled call to
    end, for ever when it catches its ``CancelledError`` and goes on (a client that
    retries internally, a model adapter that swallows cancellation), so a turn hung
    past every timeout. Here a call still running :data:`CANCEL_GRACE` seconds after its
    cancellation is left to itself and :class:`Abandoned` (a ``TimeoutError``) raised.
    The call's own result, error or ``TimeoutError`` before the deadline is returned or
    raised as it is, and so is a result it returns while being cancelled.
    ``on_abandon(task)`` runs for a call left running, at its deadline or when our
    caller is cancelled while waiting (its task is then cancelled and not awaited).
    """
    if timeout is None:
        return await call
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:  # our caller was cancelled: so is the call
        task.cancel()
        _let_go(task, on_abandon)
        raise
    if done:
        return task.result()
    task.cancel()
    try:
        done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE)
    except asyncio.CancelledError:
        _let_go(task, on_abandon)
        raise
    if not done:
        _let_go(task, on_abandon)
        raise Abandoned(f"still running {CANCEL_GRACE:g} s after its cancellation")
    if not task.cancelled():
        exc = task.exception()
        if exc is None:
            return task.result()  # it finished as the deadline passed
        if not isinstance(exc, TimeoutError | asyncio.CancelledError):
            raise exc  # its own error while it ended
    raise TimeoutError


_OWN_TIMEOUT = "_librarian_own_timeout"


async def own_timeouts(call: Awaitable[_T]) -> _T:
    """``await call``, marking a ``TimeoutError`` it raises as its own.

    ``asyncio.wait_for`` raises ``TimeoutError`` when its time is up, and so may the
    awaited call (a client's own timeout): the same class, so an error message saying
    "exceeded our timeout" would be wrong for the call's own. :func:`is_own_timeout`
    tells them apart.
    """
    try:
        return await call
    except TimeoutError as exc:
        with contextlib.suppress(AttributeError):  # an exception class with __slots__
            setattr(exc, _OWN_TIMEOUT, True)
        raise


def is_own_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by the call :func:`own_timeouts` wrapped."""
    return getattr(exc, _OWN_TIMEOUT, False) is True
