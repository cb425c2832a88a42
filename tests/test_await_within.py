"""``await_within``: a deadline for async model and store calls that never waits on a call
that ignores its cancellation, and never loses track of one it leaves running."""

from __future__ import annotations

import asyncio
import gc

import pytest

from langgraph_librarian._engine import concurrency
from langgraph_librarian._engine.concurrency import Abandoned, await_within


async def test_a_result_or_error_before_the_deadline_is_the_calls_own():
    async def answer() -> int:
        await asyncio.sleep(0.01)
        return 4

    async def fail() -> None:
        raise KeyError("its own")

    assert await await_within(answer(), 1.0) == 4
    with pytest.raises(KeyError):
        await await_within(fail(), 1.0)
    assert await await_within(answer(), None) == 4


async def test_a_call_that_honours_cancellation_times_out_at_the_deadline():
    cancelled = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError) as raised:
        await await_within(slow(), 0.05)
    assert not isinstance(raised.value, Abandoned) and cancelled.is_set()


async def test_a_call_ignoring_its_cancellation_is_left_running_and_kept_referenced(
    monkeypatch,
):
    monkeypatch.setattr(concurrency, "CANCEL_GRACE", 0.05)
    release = asyncio.Event()
    finished = asyncio.Event()

    async def deaf() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await release.wait()  # goes on after its cancellation
        finished.set()

    with pytest.raises(Abandoned):
        await await_within(deaf(), 0.05)
    gc.collect()  # the loop holds tasks weakly: the abandoned call must survive this
    assert len(concurrency._ABANDONED) == 1
    release.set()
    await asyncio.wait_for(finished.wait(), 1)
    await asyncio.sleep(0)
    assert not concurrency._ABANDONED


async def test_a_cancelled_caller_cancels_the_call_and_retrieves_its_error():
    errors: list[dict] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: errors.append(ctx))
    started = asyncio.Event()

    async def closing() -> None:
        started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            raise ConnectionError("connection closed") from None

    caller = asyncio.ensure_future(await_within(closing(), 5.0))
    await started.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.sleep(0.01)
    gc.collect()
    await asyncio.sleep(0)
    assert not [e for e in errors if "never retrieved" in e.get("message", "")]
    assert not concurrency._ABANDONED
