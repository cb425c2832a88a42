"""Recall for one user turn: scope from the run context, cached, fail-open, logged.

Shared by the middleware and the ``pre_model_hook`` node. A turn is identified by its
latest human message (id, else text), so every model call of a tool loop reuses the
first call's result and the store and selector are asked at most once per turn. The
key includes the scope, so two tenants sending the same prompt never share a recall.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._engine.failures import describe
from langgraph_librarian._engine.messages import current_turn, latest_human_text, turn_key
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

_Prepared = tuple[str, str, tuple[str, str, int], int] | RecallResult


def _failed(exc: BaseException, scope: str | None) -> RecallResult:
    status = failure_status(exc)
    reason = describe(exc)
    if status == "misconfigured":
        logger.error("scope recall skipped: configuration problem: %s", reason)
    else:
        logger.warning("scope recall skipped: memory unavailable: %s", reason)
    return RecallResult(status, scope=scope, reason=reason)


def _prepare(
    memory: ScopeMemory,
    context: Any,
    messages: Sequence[BaseMessage],
    parent: RunnableConfig | None = None,
) -> _Prepared:
    """(scope id, query, cache key, byte bound), or the result when there is nothing to do."""
    try:
        scope_id = resolve_scope(context)
        key = scope_key(scope_id)
        bound = run_max_bytes(context, memory.max_bytes)
    except RecallConfigError as exc:
        return _failed(exc, None)
    if not current_turn(messages):
        return RecallResult("skipped", scope=key, reason="no human message")
    query = latest_human_text(messages)[:MAX_QUERY_CHARS]
    if not query.strip():
        return RecallResult("skipped", scope=key, reason="empty query")
    # The Librarian's turn key (same turn, same key), per thread: two threads of one
    # scope never share a result (it excludes the thread's own messages).
    thread, turn = turn_key(thread_id(parent), messages)
    return scope_id, query, (key, f"{thread}\x00{turn}", bound), bound


def _ids(messages: Sequence[BaseMessage]) -> set[str]:
    # The model already gets these messages: recalling their copies would repeat them.
    return {str(m.id) for m in messages if m.id}


def _done(memory: ScopeMemory, cache_key: tuple[str, str, int], result: RecallResult) -> None:
    if result.status == "empty":
        logger.debug("scope recall: %s", result.reason)
    memory.cache.put(cache_key, result)


def recall_for_turn(
    memory: ScopeMemory,
    context: Any,
    messages: Sequence[BaseMessage],
    parent: RunnableConfig | None = None,
) -> RecallResult:
    """The turn's recall (cached). Never raises: failures come back as a status."""
    prepared = _prepare(memory, context, messages, parent)
    if isinstance(prepared, RecallResult):
        return prepared
    scope_id, query, cache_key, bound = prepared
    cached = memory.cache.get(cache_key)
    if cached is not None:
        return cached
    try:
        result = memory.recall(
            scope_id, query, max_bytes=bound, parent=parent, exclude_message_ids=_ids(messages)
        )
    except Exception as exc:  # fail-open: the turn goes on without scope memory
        result = _failed(exc, cache_key[0])
    _done(memory, cache_key, result)
    return result


async def arecall_for_turn(
    memory: ScopeMemory,
    context: Any,
    messages: Sequence[BaseMessage],
    parent: RunnableConfig | None = None,
) -> RecallResult:
    """Async twin of :func:`recall_for_turn`."""
    prepared = _prepare(memory, context, messages, parent)
    if isinstance(prepared, RecallResult):
        return prepared
    scope_id, query, cache_key, bound = prepared
    cached = memory.cache.get(cache_key)
    if cached is not None:
        return cached
    try:
        result = await memory.arecall(
            scope_id, query, max_bytes=bound, parent=parent, exclude_message_ids=_ids(messages)
        )
    except Exception as exc:
        result = _failed(exc, cache_key[0])
    _done(memory, cache_key, result)
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


def capture_turn(
    memory: ScopeMemory, context: Any, state: Any, thread_id: str | None
) -> int | None:
    """Copy the completed turn(s) into scope memory; ``None`` when skipped or failed."""
    scope_id = _capture_scope(context)
    if scope_id is None:
        return None
    state = state if isinstance(state, dict) else {}
    try:
        return memory.capture(
            scope_id, state.get("messages") or [], thread_id=thread_id, index=state.get("index")
        )
    except Exception as exc:  # the answer is already there: never fail the turn
        _capture_failed(exc)
        return None


async def acapture_turn(
    memory: ScopeMemory, context: Any, state: Any, thread_id: str | None
) -> int | None:
    """Async twin of :func:`capture_turn`."""
    scope_id = _capture_scope(context)
    if scope_id is None:
        return None
    state = state if isinstance(state, dict) else {}
    try:
        return await memory.acapture(
            scope_id, state.get("messages") or [], thread_id=thread_id, index=state.get("index")
        )
    except Exception as exc:
        _capture_failed(exc)
        return None
