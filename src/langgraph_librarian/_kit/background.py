"""Background indexing: ``index_messages`` returns at once, the index lands in the store later."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base.batch import AsyncBatchedBaseStore

from langgraph_librarian._engine.failures import describe
from langgraph_librarian._kit.bounded import slots_for, timeout_for, within
from langgraph_librarian._kit.cache import BoundedCache
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.index.pipeline import update_index

__all__ = ["submit_indexing", "take_failure", "wait_for_background_indexing"]

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

_EXECUTOR = ThreadPoolExecutor(max_workers=2, thread_name_prefix="librarian-background")
_GUARD = threading.Lock()
_PENDING: set[Future[None]] = set()
_ON_A_LOOP: set[Future[None]] = set()
"""Pending jobs whose store answers through an event loop (an ``AsyncBatchedBaseStore``
such as ``AsyncPostgresStore``): waiting for them on that loop never ends."""
_FAILED_SINCE_WAIT = [0]
"""Jobs that failed since ``wait_for_background_indexing`` last reported failures."""
_FAILURES: BoundedCache[tuple[object, str], str] = BoundedCache(1024)
"""The last failure of each session's background indexing, until its next turn reports
it (``background_indexing_error``; see :func:`take_failure`). Keyed by namespace and
session, not by store object: the next turn often runs on a new one (a pool reopened
after the one the job used was closed)."""


def _answers_through_a_loop(store: object) -> bool:
    inner = getattr(store, "store", store)  # LangGraphIndexStore wraps a BaseStore
    return isinstance(inner, AsyncBatchedBaseStore)


def _check_loop(store: object) -> None:
    """Fail with a clear error when the event loop an async store answers through has
    closed (the ``asyncio.run()`` that served the turn ended before its job ran): asking
    the store would only fail the same way, deeper down, and leave a coroutine that was
    never awaited behind."""
    inner = getattr(store, "store", store)
    loop = getattr(inner, "_loop", None)
    if isinstance(inner, AsyncBatchedBaseStore) and loop is not None and loop.is_closed():
        raise RuntimeError(
            "the event loop this async store answers through is closed; keep the loop "
            "running until background indexing is done: "
            "await asyncio.to_thread(wait_for_background_indexing, timeout)"
        )


class _Session:
    """One session's lock and the newest history waiting to be indexed.

    Jobs of one session can start in any order (two workers), so a job does not index
    the history it was submitted with: under the session's lock it takes the newest
    history submitted so far, and a job that finds none waiting has nothing left to do.
    The stored index then only moves forward: an older history never overwrites the
    index of a newer one. Weakly held: an idle session's record goes away.
    """

    __slots__ = ("__weakref__", "latest", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latest: (
            tuple[LibrarianConfig, list[BaseMessage], RunnableConfig | None, str | None] | None
        ) = None


_SESSIONS: weakref.WeakValueDictionary[tuple[int, object, str], _Session] = (
    weakref.WeakValueDictionary()
)
"""Records by (backing store, namespace, session): two graphs of one process that keep
the same thread id in different stores must not share a record, or one's newest
history would be indexed into the other's store and its own jobs found nothing left."""


def _record_key(store: object, session: str) -> tuple[int, object, str]:
    inner = getattr(store, "store", store)  # LangGraphIndexStore wraps a BaseStore
    namespace = getattr(store, "namespace", None)
    return (id(inner), namespace if isinstance(namespace, tuple) else None, session)


def _run(session: str, record: _Session) -> None:
    with record.lock:
        with _GUARD:
            job, record.latest = record.latest, None
        if job is None:  # a job that started earlier indexed the newest history already
            return
        config, messages, run_config, fallback = job
        store = config.index_store
        if store is None:  # guarded by the caller; kept for type narrowing
            return
        timeout, slots = timeout_for(store, config.store_timeout), slots_for(store)

        def ask(call: Callable[[], _T]) -> _T:
            _check_loop(store)
            return within(call, timeout, slots, _STORE)

        try:
            found = ask(lambda: store.load(session))
            if found is None and fallback and fallback != session:
                found = ask(lambda: store.load(fallback))
            entries = found or []
            update = update_index(messages, entries, config, run_config=run_config)
            ask(lambda: store.save(session, update.entries))
        except Exception as exc:
            logger.exception("librarian: background indexing failed for session %r", session)
            with _GUARD:
                _FAILED_SINCE_WAIT[0] += 1
                _FAILURES.put(_record_key(store, session)[1:], describe(exc))


_STORE = "the index store"


def take_failure(store: object, session: str) -> str | None:
    """The last unreported failure of ``session``'s background indexing (and forget it)."""
    with _GUARD:
        return _FAILURES.pop(_record_key(store, session)[1:])


def _finished(future: Future[None]) -> None:
    with _GUARD:
        _PENDING.discard(future)
        _ON_A_LOOP.discard(future)


def submit_indexing(
    config: LibrarianConfig,
    session: str,
    messages: Sequence[BaseMessage],
    run_config: RunnableConfig | None = None,
    fallback: str | None = None,
) -> Future[None]:
    """Index ``messages`` into ``config.store`` in a worker thread.

    ``fallback`` is a key read when ``session`` has no index yet (a subgraph's key falls
    back to its thread's, as the foreground turn does).

    ``run_config`` is the turn's run config: the indexer's model calls run as its child
    runs (the user's callbacks and tracing see them, tagged never to stream), as they
    do when indexing in the foreground. The worker thread does not inherit the turn's
    context, so it is passed explicitly. When turns come faster than indexing, the
    newest history wins (see :class:`_Session`).
    """
    with _GUARD:
        key = _record_key(config.store, session)
        record = _SESSIONS.get(key)
        if record is None:
            record = _SESSIONS[key] = _Session()
        record.latest = (config, list(messages), run_config, fallback)
        # The job holds the record (and so keeps it alive) until it has run.
        future = _EXECUTOR.submit(_run, session, record)
        _PENDING.add(future)
        if _answers_through_a_loop(config.store):
            _ON_A_LOOP.add(future)
    future.add_done_callback(_finished)
    return future


def wait_for_background_indexing(timeout: float | None = None) -> bool:
    """Block until submitted background indexing finishes; ``True`` when all of it
    succeeded.

    ``timeout`` bounds the whole wait (seconds; ``None``: no limit). Returns ``False``
    when it ran out with jobs still pending, or when a job failed since the previous
    call that returned (the failure is logged at ERROR on the ``langgraph_librarian``
    logger with its traceback, and the session's next turn reports it as
    ``librarian_metadata["background_indexing_error"]``). A failed job's turns are
    indexed again by that session's next job.

    Useful in tests, scripts and at shutdown. In async code, wait in a thread:
    ``await asyncio.to_thread(wait_for_background_indexing, 30)``.

    Raises:
        RuntimeError: called on a thread running an event loop while a job's store
            answers through an event loop (``AsyncPostgresStore``): blocking the loop
            would stop that store, and the wait would never end. With other stores a
            wait on a loop (a notebook cell) blocks it, with a warning.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop on this thread: blocking is fine
    else:
        with _GUARD:
            stuck = bool(_ON_A_LOOP)
        if stuck:
            raise RuntimeError(
                "wait_for_background_indexing() blocks, and this thread runs the event loop "
                "an async store answers through; in async code use: "
                "await asyncio.to_thread(wait_for_background_indexing, timeout)"
            )
        logger.warning(
            "wait_for_background_indexing() blocks this thread's event loop; in async code "
            "use: await asyncio.to_thread(wait_for_background_indexing, timeout)"
        )
    with _GUARD:
        pending = list(_PENDING)
    deadline = None if timeout is None else time.monotonic() + timeout
    for future in pending:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            future.result(timeout=left)
        except TimeoutError:
            return False
    with _GUARD:
        failed, _FAILED_SINCE_WAIT[0] = _FAILED_SINCE_WAIT[0], 0
    return failed == 0
