"""The library's own model calls: run config, timeouts and retries, sync and async."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config
from langgraph.constants import TAG_NOSTREAM

__all__ = ["INTERNAL_TAG", "acall_with_retries", "call_with_retries", "internal_config"]

INTERNAL_TAG = "langgraph_librarian"
"""Tag on every model call the library makes for itself (indexer, selector, summarizer)."""


def internal_config(step: str, parent: RunnableConfig | None = None) -> RunnableConfig:
    """Run config for one of the library's own model calls.

    The call inherits the user's run (callbacks, so tracing such as LangSmith or
    Langfuse shows it as a child run; tags; metadata) from ``parent`` or, when
    ``parent`` is ``None``, from the run active in this context. It is tagged
    ``nostream`` (LangGraph's ``TAG_NOSTREAM``) so ``stream_mode="messages"`` shows
    only the agent's tokens, and :data:`INTERNAL_TAG` plus ``metadata["librarian_step"]``
    so consumers can recognise it. Build it in the calling thread: worker threads do
    not see the caller's context.
    """
    base = ensure_config(parent)
    tags = list(dict.fromkeys([*(base.get("tags") or []), TAG_NOSTREAM, INTERNAL_TAG]))
    metadata = {**(base.get("metadata") or {}), "librarian_step": step}
    config: RunnableConfig = {
        "tags": tags,
        "metadata": metadata,
        "run_name": f"librarian_{step}",
    }
    if base.get("callbacks") is not None:
        config["callbacks"] = base["callbacks"]
    return config

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
