"""Model calls with a timeout and retries, sync and async."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["acall_with_retries", "call_with_retries"]

T = TypeVar("T")


def _run_with_timeout(fn: Callable[[], T], timeout: float | None) -> T:
    if timeout is None:
        return fn()
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    # A daemon thread: a sync call cannot be cancelled, only abandoned.
    worker = threading.Thread(target=target, daemon=True, name="librarian-model-call")
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError(f"model call exceeded {timeout:g}s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def call_with_retries(
    fn: Callable[[], T], *, timeout: float | None, retries: int, backoff: float
) -> T:
    """Call ``fn`` with a per-attempt timeout; retry failures with doubling backoff."""
    delay = backoff
    for attempt in range(retries + 1):
        try:
            return _run_with_timeout(fn, timeout)
        except Exception:
            if attempt == retries:
                raise
            if delay > 0:
                time.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")  # pragma: no cover


async def acall_with_retries(
    fn: Callable[[], Awaitable[T]], *, timeout: float | None, retries: int, backoff: float
) -> T:
    """Async twin of :func:`call_with_retries` (the timeout cancels the attempt)."""
    delay = backoff
    for attempt in range(retries + 1):
        try:
            return await asyncio.wait_for(fn(), timeout)
        except Exception:
            if attempt == retries:
                raise
            if delay > 0:
                await asyncio.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")  # pragma: no cover
