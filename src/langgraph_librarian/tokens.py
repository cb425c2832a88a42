"""Token counting with a pluggable counter that fails open."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately

TokenCounter = Callable[[Sequence[BaseMessage]], int]
"""Counts the tokens of a list of messages (e.g. ``model.get_num_tokens_from_messages``)."""

__all__ = ["TokenCounter", "count_tokens"]

logger = logging.getLogger("langgraph_librarian")
_RETRY_AFTER = 60.0
"""Seconds a failing counter is left alone before it is tried again."""
_failing: dict[int, float] = {}  # id(counter) -> when to try it again
_warned: set[int] = set()
_lock = threading.Lock()


def _approximate(messages: Sequence[BaseMessage], counter: TokenCounter, exc: Exception) -> int:
    # A counter that needs a download (tiktoken fetches its encoding on first use) or a
    # network call must not break every turn: count approximately, say so once, and do
    # not pay for the failing call again for a while.
    with _lock:
        first = id(counter) not in _warned
        _warned.add(id(counter))
        _failing[id(counter)] = time.monotonic() + _RETRY_AFTER
    if first:
        logger.warning(
            "librarian: the token counter %r raised %s: %s; counting approximately instead",
            getattr(counter, "__qualname__", counter),
            type(exc).__name__,
            exc,
        )
    return int(count_tokens_approximately(messages))


def count_tokens(messages: Sequence[BaseMessage], counter: TokenCounter | None = None) -> int:
    """Count tokens of ``messages`` with ``counter`` or LangChain's approximate counter.

    The approximate counter uses about four characters per token, which undercounts
    CJK text by a factor of 2-4; pass your model's counter when that matters. A counter
    that raises (or returns something that is not a number, or a negative one) is logged
    once and replaced by the approximate count for that call.
    """
    if not messages:
        return 0
    if counter is None:
        return int(count_tokens_approximately(messages))
    with _lock:
        resting = _failing.get(id(counter), 0.0) > time.monotonic()
    if resting:
        return int(count_tokens_approximately(messages))
    try:
        count = int(counter(messages))
        if not 0 <= count < 2**63:  # a negative count would free room in every budget
            raise ValueError(f"token count {count} is not a count")
        return count
    except Exception as exc:
        return _approximate(messages, counter, exc)


def count_text_tokens(text: str, counter: TokenCounter | None = None) -> int:
    """Token count of a bare string (for prompt budgets)."""
    if not text:
        return 0
    if counter is None:
        # Same heuristic as count_tokens_approximately, without the per-message overhead.
        return max(1, -(-len(text) // 4))
    return count_tokens([HumanMessage(content=text)], counter)
