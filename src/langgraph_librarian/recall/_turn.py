"""Recall for one user turn: scope from the run context, cached, fail-open, logged.

Shared by the middleware and the ``pre_model_hook`` node. A turn is identified by its
latest human message (id, else text), so every model call of a tool loop reuses the
first call's result and the store and selector are asked at most once per turn. The
key includes the scope, so two tenants sending the same prompt never share a recall.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._engine.failures import describe
from langgraph_librarian._engine.messages import content_hash, current_turn, latest_human_text
from langgraph_librarian._engine.view import turn_key
from langgraph_librarian._kit.bounded import awithin, is_timeout, within
from langgraph_librarian._kit.cache import BoundedCache
from langgraph_librarian._kit.run import thread_id
from langgraph_librarian.recall._memory import ScopeMemory
from langgraph_librarian.recall._result import RecallResult, failure_status
from langgraph_librarian.recall._scope import (
    MAX_QUERY_CHARS,
    RecallConfigError,
    context_flag,
    resolve_scope,
    run_max_bytes,
    scope_key,
)

__all__ = ["acapture_turn", "arecall_for_turn", "capture_turn", "recall_for_turn"]

logger = logging.getLogger("langgraph_librarian.recall")

_T = TypeVar("_T")
_Prepared = tuple[str, str, tuple[str, str, int], int, str] | RecallResult


def _failed(exc: BaseException, scope: str | None, log: bool = True) -> RecallResult:
    status = failure_status(exc)
    reason = describe(exc)
    if log and status == "misconfigured":
        logger.error("scope recall skipped: configuration problem: %s", reason)
    elif log:
        logger.warning("scope recall skipped: memory unavailable: %s", reason)
    return RecallResult(status, scope=scope, reason=reason)


def _prepare(
    memory: ScopeMemory,
    context: Any,
    messages: Sequence[BaseMessage],
    parent: RunnableConfig | None = None,
    log: bool = True,
) -> _Prepared:
    """(scope id, query, cache key, byte bound), or the result when there is nothing to do."""
    try:
        scope_id = resolve_scope(context)
        key = scope_key(scope_id)
        bound = run_max_bytes(context, memory.max_bytes)
    except RecallConfigError as exc:
        return _failed(exc, None, log)
    if not current_turn(messages):
        return RecallResult("skipped", scope=key, reason="no human message")
    query = latest_human_text(messages)[:MAX_QUERY_CHARS]
    if not query.strip():
        return RecallResult("skipped", scope=key, reason="empty query")
    # The Librarian's turn key (same turn, same key), per thread: two threads of one
    # scope never share a result (it excludes the thread's own messages). The question's
    # digest too: a question edited in place (same id, new text: edit and regenerate)
    # is a new question, not the old one's recall again.
    thread, turn = turn_key(thread_id(parent), messages)
    asked = hashlib.blake2b(query.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    # (JSON, not joined: thread "a\x00b" asking "c" and thread "a" asking "b\x00c" were
    # one key, and the one thread got the other's recall, its own turns in it.)
    turn_id = json.dumps([thread, turn, asked])
    return scope_id, query, (key, turn_id, bound), bound, thread


def _asked(messages: Sequence[BaseMessage]) -> BaseMessage | None:
    """The turn's question: the latest human message."""
    return next((m for m in reversed(messages) if m.type == "human"), None)


def _arguments(
    query: str,
    bound: int,
    thread: str,
    parent: RunnableConfig | None,
    held: Sequence[BaseMessage],
    asked: BaseMessage | None,
) -> dict[str, Any]:
    """``ScopeMemory.recall``'s keyword arguments for a turn. The messages the thread
    holds (``held``) are left out by id and by content hash (a client that re-sends its
    history without ids gets new ids every request), and so is the thread itself: their
    copies in scope memory are this thread's own turns, never "earlier conversations".

    The question being asked (``asked``) is left out by id only: the same words asked
    in another thread are that thread's question, and its answer is reached through it
    (the selector hands an earlier copy of the question's score to the reply after it).
    """
    asked_id = None if asked is None else asked.id

    def is_asked(message: BaseMessage) -> bool:
        return message is asked or (asked_id is not None and message.id == asked_id)

    # (Asked before in this very thread, an earlier copy's hash still counts: the thread
    # holds that exchange itself.)
    hashes = {content_hash(m) for m in held if not is_asked(m)}
    return {
        "query": query,
        "max_bytes": bound,
        "parent": parent,
        "exclude_message_ids": {str(m.id) for m in held if m.id},
        "exclude_content_hashes": hashes,
        "exclude_thread_id": thread or None,
    }


_SILENT_TURNS: BoundedCache[tuple[int, str, tuple[str, str]], bool] = BoundedCache(256)
"""Turns, by (memory, scope, turn key), whose recall found the store not answering in
time: the same turn's capture skips the store instead of waiting as long a second time
(the next turn's capture copies what this one could not)."""


def _turn_id(memory: ScopeMemory, scope_id: str, thread: str | None, messages: Any) -> Any:
    return (id(memory), scope_id, turn_key(thread, messages))


_FAILED = frozenset({"unavailable", "misconfigured"})
FAILURE_REUSE = 300.0
"""Seconds at most a failed recall stands for its turn (see :func:`_cached`)."""


def _cached(
    memory: ScopeMemory, cache_key: tuple[str, str, int], length: int, log: bool
) -> RecallResult | None:
    """The turn's cached recall. A failure stands for the model calls of the turn's tool
    loop, which come with more messages than the call that failed (they do not wait for
    the store again); a call with no more messages is another run of the turn (a retry,
    a regenerate once the store is back): it asks again, as does any call once the
    failure is ``FAILURE_REUSE`` seconds old. A report of the turn (``log=False``) gets
    what the model got."""
    cached = memory.cache.get(cache_key)
    if cached is None or cached.status not in _FAILED or not log:
        return cached
    failed = memory._failed_at.get(cache_key)
    if failed is None:
        return None
    at, then = failed
    return cached if length > then and time.monotonic() - at < FAILURE_REUSE else None


def _done(
    memory: ScopeMemory, cache_key: tuple[str, str, int], result: RecallResult, length: int
) -> None:
    if result.status == "empty":
        logger.debug("scope recall: %s", result.reason)
    if result.status in _FAILED:
        memory._failed_at.put(cache_key, (time.monotonic(), length))
    memory.cache.put(cache_key, result)


def _within(memory: ScopeMemory, call: Callable[[], _T]) -> _T:
    """``call()``, or ``TimeoutError`` after ``memory.timeout`` seconds (``None``: no limit).

    The call runs on a daemon thread of its own: a hung store (a network partition, no
    statement timeout) hangs neither the turn nor the process's exit. At most
    ``IN_FLIGHT`` such calls per memory (see :mod:`langgraph_librarian._kit.bounded`).
    """
    return within(call, memory.timeout, memory._in_flight, "scope memory", "librarian-recall")


async def _awithin(timeout: float | None, call: Awaitable[_T]) -> _T:
    return await awithin(call, timeout, "scope memory")


def recall_for_turn(
    memory: ScopeMemory,
    context: Any,
    messages: Sequence[BaseMessage],
    parent: RunnableConfig | None = None,
    history: Sequence[BaseMessage] = (),
    *,
    log: bool = True,
) -> RecallResult:
    """The turn's recall (cached). Never raises: failures come back as a status.

    ``messages`` are what the model gets (they carry the question); ``history`` the
    thread's whole conversation when that is more (a curated context): nothing of the
    thread itself is recalled. A store that does not answer within ``memory.timeout``
    gives ``unavailable``. ``log=False`` (a report of the turn's result, asked for a
    second time) does not log a configuration problem again.
    """
    prepared = _prepare(memory, context, messages, parent, log)
    if isinstance(prepared, RecallResult):
        return prepared
    scope_id, query, cache_key, bound, thread = prepared
    length = max(len(messages), len(history))  # (the thread's, when the model gets a part)
    cached = _cached(memory, cache_key, length, log)
    if cached is not None:
        return cached
    arguments = _arguments(query, bound, thread, parent, [*messages, *history], _asked(messages))
    try:
        result = _within(memory, lambda: memory.recall(scope_id, **arguments))
    except Exception as exc:
        if is_timeout(exc):
            _SILENT_TURNS.put(_turn_id(memory, scope_id, thread, messages), True)
        result = _failed(exc, cache_key[0])
    _done(memory, cache_key, result, length)
    return result


async def arecall_for_turn(
    memory: ScopeMemory,
    context: Any,
    messages: Sequence[BaseMessage],
    parent: RunnableConfig | None = None,
    history: Sequence[BaseMessage] = (),
    *,
    log: bool = True,
) -> RecallResult:
    """Async twin of :func:`recall_for_turn`."""
    prepared = _prepare(memory, context, messages, parent, log)
    if isinstance(prepared, RecallResult):
        return prepared
    scope_id, query, cache_key, bound, thread = prepared
    length = max(len(messages), len(history))  # (the thread's, when the model gets a part)
    cached = _cached(memory, cache_key, length, log)
    if cached is not None:
        return cached
    arguments = _arguments(query, bound, thread, parent, [*messages, *history], _asked(messages))
    try:
        result = await _awithin(memory.timeout, memory.arecall(scope_id, **arguments))
    except Exception as exc:
        if is_timeout(exc):
            _SILENT_TURNS.put(_turn_id(memory, scope_id, thread, messages), True)
        result = _failed(exc, cache_key[0])
    _done(memory, cache_key, result, length)
    return result


def _capture_scope(context: Any) -> str | None:
    try:
        scope_id = resolve_scope(context)
    except RecallConfigError as exc:
        logger.error("scope capture skipped: configuration problem: %s", exc)
        return None
    if not context_flag(context, "allow_capture"):
        return None
    return scope_id


def _capture_failed(exc: BaseException) -> None:
    reason = describe(exc)
    if failure_status(exc) == "misconfigured":
        logger.error("scope capture failed: configuration problem: %s", reason)
    else:
        logger.warning("scope capture failed: memory unavailable: %s", reason)


def _skipped(memory: ScopeMemory, scope_id: str, thread_id: str | None, state: Any) -> bool:
    messages = state.get("messages") or [] if isinstance(state, dict) else []
    if not _SILENT_TURNS.pop(_turn_id(memory, scope_id, thread_id, messages)):
        return False
    logger.warning(
        "scope capture skipped: scope memory did not answer this turn's recall; "
        "the next turn's capture copies this one"
    )
    return True


def capture_turn(
    memory: ScopeMemory, context: Any, state: Any, thread_id: str | None
) -> int | None:
    """Copy the completed turn(s) into scope memory; ``None`` when skipped or failed."""
    scope_id = _capture_scope(context)
    if scope_id is None or _skipped(memory, scope_id, thread_id, state):
        return None
    state = state if isinstance(state, dict) else {}
    try:
        return _within(
            memory,
            lambda: memory.capture(
                scope_id, state.get("messages") or [], thread_id=thread_id, index=state.get("index")
            ),
        )
    except Exception as exc:  # the answer is already there: never fail the turn
        _capture_failed(exc)
        return None


async def acapture_turn(
    memory: ScopeMemory, context: Any, state: Any, thread_id: str | None
) -> int | None:
    """Async twin of :func:`capture_turn`."""
    scope_id = _capture_scope(context)
    if scope_id is None or _skipped(memory, scope_id, thread_id, state):
        return None
    state = state if isinstance(state, dict) else {}
    try:
        return await _awithin(
            memory.timeout,
            memory.acapture(
                scope_id, state.get("messages") or [], thread_id=thread_id, index=state.get("index")
            ),
        )
    except Exception as exc:
        _capture_failed(exc)
        return None
