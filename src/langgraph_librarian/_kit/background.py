"""Background indexing: ``index_messages`` returns at once, the index lands in the store later."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.index.pipeline import update_index

__all__ = ["submit_indexing", "wait_for_background_indexing"]

logger = logging.getLogger(__name__)

_EXECUTOR = ThreadPoolExecutor(max_workers=2, thread_name_prefix="librarian-background")
_SESSION_LOCKS: dict[str, threading.Lock] = {}
_PENDING: set[Future[None]] = set()
_GUARD = threading.Lock()


def _lock_for(session: str) -> threading.Lock:
    with _GUARD:
        return _SESSION_LOCKS.setdefault(session, threading.Lock())


def _run(
    config: LibrarianConfig,
    session: str,
    messages: list[BaseMessage],
    run_config: RunnableConfig | None,
) -> None:
    store = config.store
    if store is None:  # guarded by the caller; kept for type narrowing
        return
    # One job per session at a time: the later job starts from the earlier job's index.
    with _lock_for(session):
        try:
            entries = store.load(session) or []
            update = update_index(messages, entries, config, run_config=run_config)
            store.save(session, update.entries)
        except Exception:
            logger.exception("librarian: background indexing failed for session %r", session)


def submit_indexing(
    config: LibrarianConfig,
    session: str,
    messages: Sequence[BaseMessage],
    run_config: RunnableConfig | None = None,
) -> Future[None]:
    """Index ``messages`` into ``config.store`` in a worker thread.

    ``run_config`` is the turn's run config: the indexer's model calls run as its child
    runs (the user's callbacks and tracing see them, tagged never to stream), as they
    do when indexing in the foreground. The worker thread does not inherit the turn's
    context, so it is passed explicitly.
    """
    future = _EXECUTOR.submit(_run, config, session, list(messages), run_config)
    with _GUARD:
        _PENDING.add(future)
    future.add_done_callback(lambda f: _PENDING.discard(f))
    return future


def wait_for_background_indexing(timeout: float | None = None) -> bool:
    """Block until submitted background indexing finishes; ``False`` on timeout.

    Useful in tests, scripts and at shutdown.
    """
    with _GUARD:
        pending = list(_PENDING)
    for future in pending:
        try:
            future.result(timeout=timeout)
        except TimeoutError:
            return False
    return True
