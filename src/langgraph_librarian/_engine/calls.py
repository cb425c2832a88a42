"""The library's own model calls: run config, per-attempt timeouts, retries, deadlines.

Every model call the library makes for itself (indexer, selector, summarizer) goes
through :class:`ModelCaller`. Each attempt is bounded in time; tenacity retries only
transient failures (timeouts, dropped connections, rate limits), never authentication
or validation errors; an optional deadline bounds the whole call, retries included.

A sync attempt that passes its time cannot be interrupted, and an abandoned request
keeps a one-request-at-a-time server (llama.cpp, Ollama) busy for the next call. So for
OpenAI-compatible clients each sync attempt runs on a copy of the client whose HTTP
request ends at the attempt's deadline (the server sees the connection close and stops)
and which does not retry by itself (:func:`request_bounded`); async attempts are
cancelled, which closes the request too. A sync attempt whose request cannot be closed
is not retried while it may still be running: retries never overlap.

Why not ``Runnable.with_retry``: its ``exponential_jitter_params`` only accept
tenacity's ``initial``, which tenacity deprecates (a warning on every retry), and
silently drop the replacement ``multiplier``; nor can it stop at a deadline. The loop
below is the same tenacity strategy with a predicate and a deadline.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import tenacity
from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableParallel,
    RunnableSequence,
    RunnableWithFallbacks,
)
from langchain_core.runnables.config import ensure_config
from langgraph.constants import TAG_NOSTREAM

from langgraph_librarian._engine.concurrency import (
    Abandoned,
    await_within,
    is_own_timeout,
    off_loop,
    on_own_thread,
    own_timeouts,
)
from langgraph_librarian._engine.failures import (
    DeadlineExceeded,
    is_retryable,
    mark_final,
)

__all__ = [
    "INTERNAL_TAG",
    "CallPolicy",
    "DeadlineExceeded",
    "ModelCaller",
    "internal_config",
    "request_bounded",
]

_T = TypeVar("_T")

INTERNAL_TAG = "langgraph_librarian"
"""Tag on every model call the library makes for itself (indexer, selector, summarizer)."""


_CLOSE_AFTER = 0.2
"""Seconds after the attempt's timeout at which a bounded client closes its request."""
_GRACE = 1.0
"""Seconds a closable sync attempt gets past its timeout to end (the HTTP client closes
the request at the timeout; this only covers thread and socket teardown)."""


def request_bounded(model: Any, timeout: float) -> Any | None:
    """A copy of an OpenAI-compatible chat model whose requests end after ``timeout``
    seconds and whose client does not retry by itself; ``None`` for other models.

    ``langchain_openai`` clients (``ChatOpenAI``, ``AzureChatOpenAI`` and the
    OpenAI-compatible integrations built on them) keep an ``openai`` client in
    ``root_client``; its ``with_options`` makes a per-call copy that shares the
    connection pool. The copy of the model is shallow and used for one attempt.
    """
    root = getattr(model, "root_client", None)
    if root is None or not callable(getattr(root, "with_options", None)):
        return None
    if not callable(getattr(model, "model_copy", None)):
        return None
    try:
        bounded = root.with_options(timeout=timeout, max_retries=0)
        return model.model_copy(update={"root_client": bounded, "client": bounded.chat.completions})
    except Exception:  # an unexpected client shape: keep the model as it is
        return None


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


_MAX_ABANDONED = 8
"""Timed-out calls of one model that may still be running. A sync provider call
cannot be interrupted, so a timed-out attempt is abandoned on its thread (models built
from "provider:model" strings also get the provider's own timeout, which ends them),
and an async one that ignores its cancellation is left running (``await_within``);
a model that hangs for good would leave a thread or a task per attempt. Past this many, its next
attempts fail at once. Counted per model: one tenant's hung provider neither blocks nor
delays another's calls (a shared pool of 32 did both: its queue filled with the hung
calls and the wait counted against every other call's timeout)."""
_MAX_ON_THREADS = 32
"""Sync calls of one model whose request cannot be closed that may be on threads at
once, answering or abandoned: the strict bound on the threads a hung model can leave.
Above the default ``max_concurrency`` (16), so indexing never waits for a slot while the
model answers; calls beyond it wait within their own timeout."""
_abandoned: dict[int, int] = {}
_abandoned_tasks: dict[int, set[asyncio.Future[Any]]] = {}
"""Async calls left running after ignoring their cancellation, per model: counted while
their event loop runs (see :func:`_still_running`)."""
_abandoned_lock = threading.Lock()
_on_threads: dict[int, int] = {}
"""Sync attempts of a model whose request cannot be closed, on their threads (answering
or abandoned): a slot each, at most :data:`_MAX_ON_THREADS` a model (see :func:`_take_slot`).
Checking the abandoned count alone before a call let every call started before the
first timeout through: twelve concurrent calls of a model that hangs left twelve threads."""
_slot_freed = threading.Condition(_abandoned_lock)
_MAX_TASKS = 32
"""Async calls of one model (with a timeout) that may run at once, answering or left
running after ignoring their cancellation: the strict bound on the tasks a model that
hangs and ignores cancellation can leave, as :data:`_MAX_ON_THREADS` is on threads.
Checking the abandoned count (:data:`_MAX_ABANDONED`) alone before a call let every
call started before the first timeout through: twelve concurrent calls left twelve
tasks running. Calls beyond it wait within their own timeout (see :func:`_astart`)."""
_tasks: dict[int, set[asyncio.Future[Any]]] = {}
"""The async calls of each model holding a slot, until they end."""
_SLOT_POLL = 0.05
"""Seconds between looks for a free slot while all of a model's are taken (tasks end
on any event loop: a look, not a wake-up, works across loops and threads)."""


def _model_key(runnable: Any) -> int:
    """Identity of the chat model behind ``runnable``: a structured-output wrapper
    (``model.with_structured_output(...)``, built anew for each selection), a binding,
    retry or fallback counts as its (first) model, so the abandoned-call cap holds
    whichever output form was asked for. The model stays alive while calls of it are
    counted (they hold it), so its id is not reused meanwhile.

    Only LangChain's wrapper types are looked into, by type: some objects make their
    attributes on each read (``init_chat_model(..., configurable_fields=...)`` builds a
    model per attribute access), whose ids would mean nothing.
    """
    item = _inner_model(runnable)
    if isinstance(item, BaseLanguageModel):
        return id(item)
    if item is not None:
        # Rebuilt by every wrapper call: keyed by what it is configured to be.
        defaults = getattr(item, "_default_config", None) or {}
        return hash(("configurable", repr(sorted(defaults.items(), key=str))))
    return id(runnable)


def _inner_model(runnable: Any) -> Any | None:
    """The (first) language model behind ``runnable``, or its ``_ConfigurableModel``
    (see :func:`_model_key`), or ``None``."""
    todo = [runnable]
    for _ in range(64):
        if not todo:
            break
        item = todo.pop(0)
        if isinstance(item, BaseLanguageModel) or type(item).__name__ == "_ConfigurableModel":
            return item
        if isinstance(item, RunnableBinding):
            todo.append(item.bound)
        elif isinstance(item, RunnableSequence):
            todo.extend(item.steps)
        elif isinstance(item, RunnableParallel):
            todo.extend(item.steps__.values())
        elif isinstance(item, RunnableWithFallbacks):
            todo.append(item.runnable)
    return None


def _sync_only(runnable: Any) -> bool:
    """Whether the chat model behind ``runnable`` has no async code of its own.

    LangChain then runs its ``ainvoke`` on the event loop's default executor (a few
    threads: 6 on a two-core machine), where a call past its timeout keeps a thread until
    it returns; the loop's other work there (sync callback handlers of every run, sync
    graph nodes, later model calls) waited behind hung calls, past every timeout.
    """
    model = _inner_model(runnable)
    if not isinstance(model, BaseChatModel):
        return False
    cls = type(model)
    return all(
        getattr(cls, name) is getattr(BaseChatModel, name)
        for name in ("_agenerate", "_astream", "agenerate", "ainvoke")
    )


def _abandon(key: int, future: concurrent.futures.Future[Any]) -> None:
    """Count ``future`` (a sync call on its thread) against its model until it ends."""
    with _abandoned_lock:
        _abandoned[key] = _abandoned.get(key, 0) + 1

    def ended(_: concurrent.futures.Future[Any]) -> None:
        with _abandoned_lock:
            left = _abandoned.get(key, 1) - 1
            if left > 0:
                _abandoned[key] = left
            else:
                _abandoned.pop(key, None)

    future.add_done_callback(ended)


def _abandon_task(key: int, task: asyncio.Future[Any]) -> None:
    """Count ``task`` (an async call that ignored its cancellation) against its model
    until it ends, as :func:`_abandon` counts a sync one."""
    with _abandoned_lock:
        _track(_abandoned_tasks, key, task)


def _track(
    registry: dict[int, set[asyncio.Future[Any]]], key: int, task: asyncio.Future[Any]
) -> None:
    """Hold ``task`` in ``registry`` under its model's ``key`` until it ends (the entry
    goes when its last task does). Call with ``_abandoned_lock`` held."""
    registry.setdefault(key, set()).add(task)

    def ended(_: asyncio.Future[Any]) -> None:
        with _abandoned_lock:
            tasks = registry.get(key)
            if tasks is not None:
                tasks.discard(task)
                if not tasks:
                    del registry[key]

    task.add_done_callback(ended)


def _still_running(key: int) -> int:
    """Calls of the model ``key`` abandoned and not yet returned, sync and async.

    An async call counts while its event loop runs: on a loop that is closed, or
    dropped by a sync wrapper that made one for a request, it never runs again, and
    counting it would refuse the model for good.
    """
    with _abandoned_lock:
        tasks = _abandoned_tasks.get(key)
        running = 0
        if tasks:
            tasks.difference_update([t for t in tasks if t.done() or t.get_loop().is_closed()])
            if not tasks:
                del _abandoned_tasks[key]
            running = sum(t.get_loop().is_running() for t in tasks)
        return _abandoned.get(key, 0) + running


def _take_slot(key: int, timeout: float) -> bool:
    """Take one of the model's :data:`_MAX_ON_THREADS` thread slots (freed by
    :func:`_free_slot` when the call's thread ends), waiting at most ``timeout`` seconds
    while all are taken; ``False`` when none was freed in time.

    Only a call holding a slot starts a thread, so however many start at once, at most
    the cap can be left running: calls beyond it wait in line (healthy calls of a busy
    model end and free theirs) and time out without calling the model when it hangs.
    """
    with _slot_freed:
        if not _slot_freed.wait_for(lambda: _on_threads.get(key, 0) < _MAX_ON_THREADS, timeout):
            return False
        _on_threads[key] = _on_threads.get(key, 0) + 1
        return True


def _free_slot(key: int) -> None:
    with _slot_freed:
        left = _on_threads.get(key, 1) - 1
        if left > 0:
            _on_threads[key] = left
        else:
            _on_threads.pop(key, None)
        _slot_freed.notify_all()


def _live_tasks(key: int) -> int:
    """Async calls of the model ``key`` holding a slot: not done, on an event loop that
    runs (one closed or dropped never runs them again; see :func:`_still_running`).
    Call with ``_abandoned_lock`` held."""
    tasks = _tasks.get(key)
    if not tasks:
        return 0
    tasks.difference_update([t for t in tasks if t.done() or t.get_loop().is_closed()])
    if not tasks:
        del _tasks[key]
        return 0
    return sum(t.get_loop().is_running() for t in tasks)


def _hold(key: int, task: asyncio.Future[Any]) -> None:
    """Count ``task`` in its model's slots until it ends. Call with the lock held."""
    _track(_tasks, key, task)


async def _astart(
    key: int, timeout: float, call: Callable[[], Awaitable[_T]]
) -> asyncio.Future[_T] | None:
    """``call()`` started as a task holding one of the model's :data:`_MAX_TASKS` slots
    (until it ends, answered or left running), waiting at most ``timeout`` seconds while
    all are taken; ``None`` when none was freed in time (the model is not called)."""
    deadline = time.monotonic() + timeout
    while True:
        with _abandoned_lock:
            if _live_tasks(key) < _MAX_TASKS:
                task = asyncio.ensure_future(call())
                _hold(key, task)
                return task
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        await asyncio.sleep(min(left, _SLOT_POLL))


def _refuse_if_stuck(key: int) -> None:
    """Fail at once (not retried) when :data:`_MAX_ABANDONED` calls of the model hang."""
    stuck = _still_running(key)
    if stuck >= _MAX_ABANDONED:
        hung = TimeoutError(
            f"{stuck} earlier calls of this model exceeded their timeout and "
            "have not returned; not calling it again until they do"
        )
        mark_final(hung)
        raise hung


# tenacity renamed wait_exponential_jitter's ``initial`` to ``multiplier`` (and warns on
# the old name); older releases only know ``initial``.
_MULTIPLIER = (
    "multiplier"
    if "multiplier" in inspect.signature(tenacity.wait_exponential_jitter).parameters
    else "initial"
)


@dataclass(frozen=True)
class CallPolicy:
    """How the library calls a model for itself, in one value.

    Each attempt is bounded by ``timeout`` seconds; transient failures
    (:func:`~langgraph_librarian._engine.failures.is_retryable`) get ``retries`` more
    attempts, ``backoff`` seconds apart at first (doubling, with jitter). The Librarian's
    config gives one (:attr:`LibrarianConfig.call_policy`) to every model step it builds
    (indexer, selector, running summary), so a timeout is set in one place.
    """

    timeout: float | None = 60.0
    retries: int = 2
    backoff: float = 0.5

    def arguments(self) -> dict[str, Any]:
        """The policy as the ``timeout`` / ``max_retries`` / ``retry_backoff`` keyword
        arguments the library's model steps (``LLMSelector``, ``RunningSummarizer``...) take."""
        return {"timeout": self.timeout, "max_retries": self.retries, "retry_backoff": self.backoff}

    def caller(
        self,
        runnable: Runnable[Any, Any],
        step: str,
        build: Callable[[float], Runnable[Any, Any] | None] | None = None,
    ) -> ModelCaller:
        """A :class:`ModelCaller` for ``runnable`` under this policy."""
        return ModelCaller(
            runnable,
            step=step,
            timeout=self.timeout,
            retries=self.retries,
            backoff=self.backoff,
            build=build,
        )


def _reached(started: float, timeout: float | None) -> bool:
    """Whether ``timeout`` seconds have passed since ``started`` (``time.monotonic``)."""
    return timeout is not None and time.monotonic() - started >= timeout


class ModelCaller:
    """Calls a runnable (usually a chat model) the way the library's own steps need.

    Each attempt is bounded by ``timeout`` seconds (async attempts are cancelled, sync
    ones abandoned); transient failures (:func:`is_retryable`) are retried up to
    ``retries`` times with exponential backoff and jitter. A ``deadline`` (a
    ``time.monotonic()`` value) passed to a call bounds all its attempts and waits.

    Args:
        runnable: The model (or a structured-output runnable built from it).
        step: Name of the step (``"index"``, ``"select"``...), used in run names,
            tags and metadata (see :func:`internal_config`).
        timeout: Seconds per attempt; ``None`` waits as long as the model takes.
        retries: Extra attempts after a transient failure.
        backoff: Seconds before the first retry (doubles, with up to as much jitter).
    """

    def __init__(
        self,
        runnable: Runnable[Any, Any],
        *,
        step: str,
        timeout: float | None = 60.0,
        retries: int = 2,
        backoff: float = 0.5,
        retry_if: Callable[[BaseException], bool] = is_retryable,
        build: Callable[[float], Runnable[Any, Any] | None] | None = None,
    ) -> None:
        self.runnable = runnable
        # For a sync attempt of ``timeout`` seconds: a runnable whose request ends then
        # (None: not possible). By default, the model itself bounded when it can be.
        self.build = build if build is not None else (lambda t: request_bounded(runnable, t))
        self.step = step
        self.timeout = timeout
        self.retries = retries
        self.wait = tenacity.wait_exponential_jitter(
            **{_MULTIPLIER: backoff, "jitter": backoff, "max": 30.0}
        )
        self.retry_if = retry_if

    def _attempt_timeout(self, deadline: float | None) -> float | None:
        if deadline is None:
            return self.timeout
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded(f"{self.step}: time budget used up")
        return remaining if self.timeout is None else min(self.timeout, remaining)

    def _retrying(self, deadline: float | None) -> dict[str, Any]:
        stop: Any = tenacity.stop_after_attempt(self.retries + 1)
        if deadline is not None:

            def past_deadline(state: tenacity.RetryCallState) -> bool:
                # Do not start a wait that would end past the deadline.
                upcoming = getattr(state, "upcoming_sleep", 0) or 0
                return time.monotonic() + upcoming >= deadline

            stop = stop | past_deadline
        return {
            "stop": stop,
            "wait": self.wait,
            "retry": tenacity.retry_if_exception(self.retry_if),
            "reraise": True,
        }

    def invoke(
        self, value: Any, parent: RunnableConfig | None = None, *, deadline: float | None = None
    ) -> Any:
        """Call synchronously with the user's run as parent (see :func:`internal_config`)."""
        config = internal_config(self.step, parent)
        for attempt in tenacity.Retrying(**self._retrying(deadline)):
            with attempt:
                timeout = self._attempt_timeout(deadline)
                if timeout is None:
                    return self.runnable.invoke(value, config)
                # The client's own limit a little later than ours: our timer speaks first
                # (one kind of timeout for retries and the concurrency gate), then the
                # client closes the request within the grace period.
                key = _model_key(self.runnable)
                _refuse_if_stuck(key)
                bounded = self.build(timeout + _CLOSE_AFTER)
                finished, remaining = None, timeout
                if bounded is None:
                    # A request that cannot be closed may hang for good: it starts only
                    # with one of the model's slots (those that can be closed end at
                    # their timeout, and a busy model keeps its concurrency).
                    waited = time.monotonic()
                    if not _take_slot(key, timeout):
                        raise TimeoutError(
                            f"model call exceeded {timeout:g}s waiting for one of the "
                            f"{_MAX_ON_THREADS} calls of this model in flight to end"
                        )
                    remaining = max(0.0, timeout - (time.monotonic() - waited))
                    finished = partial(_free_slot, key)
                runnable = bounded if bounded is not None else self.runnable
                future = on_own_thread(
                    partial(runnable.invoke, value, config), "librarian-call", finished
                )
                try:
                    return future.result(remaining)
                except concurrent.futures.TimeoutError:
                    # (the same class as the builtin TimeoutError since Python 3.11)
                    if future.done():  # the call's own result or error, not our timer
                        return future.result()
                if bounded is not None:
                    # The request ends at the timeout; let the attempt finish so that a
                    # retry never overlaps it.
                    with contextlib.suppress(Exception):
                        future.result(_GRACE)
                if not future.done():
                    _abandon(key, future)
                    still = TimeoutError(
                        f"model call exceeded {timeout:g}s (its request could not be "
                        "closed, so it is not retried)"
                    )
                    mark_final(still)
                    raise still
                raise TimeoutError(f"model call exceeded {timeout:g}s")
        raise AssertionError("unreachable")  # pragma: no cover - reraise=True

    async def ainvoke(
        self, value: Any, parent: RunnableConfig | None = None, *, deadline: float | None = None
    ) -> Any:
        """Async twin of :meth:`invoke` (a timed-out attempt is cancelled)."""
        if _sync_only(self.runnable):
            # The sync path on threads of our own: a hung call is abandoned there,
            # counted, and not retried, and the loop's default executor stays free.
            return await off_loop(partial(self.invoke, value, parent, deadline=deadline))
        config = internal_config(self.step, parent)
        async for attempt in tenacity.AsyncRetrying(**self._retrying(deadline)):
            with attempt:
                timeout = self._attempt_timeout(deadline)
                key = _model_key(self.runnable)
                if timeout is None:
                    return await own_timeouts(self.runnable.ainvoke(value, config))
                _refuse_if_stuck(key)
                started = time.monotonic()
                task = await _astart(
                    key, timeout, lambda: own_timeouts(self.runnable.ainvoke(value, config))
                )
                if task is None:
                    raise TimeoutError(
                        f"model call exceeded {timeout:g}s waiting for one of the "
                        f"{_MAX_TASKS} calls of this model in flight to end"
                    )
                remaining = max(0.0, timeout - (time.monotonic() - started))
                try:
                    return await await_within(
                        task, remaining, on_abandon=partial(_abandon_task, key)
                    )
                except Abandoned:
                    still = TimeoutError(
                        f"model call exceeded {timeout:g}s (it ignored its cancellation, "
                        "so it is left running and not retried)"
                    )
                    mark_final(still)
                    raise still from None
                except TimeoutError as exc:
                    # The model's own error, not our timer (a client that turns our
                    # cancellation into a TimeoutError of its own does so at the deadline).
                    if is_own_timeout(exc) and not _reached(started, timeout):
                        raise
                    raise TimeoutError(f"model call exceeded {timeout:g}s") from None
        raise AssertionError("unreachable")  # pragma: no cover - reraise=True
