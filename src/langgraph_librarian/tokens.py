"""Token counting with a pluggable counter."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately

TokenCounter = Callable[[Sequence[BaseMessage]], int]
"""Counts the tokens of a list of messages (e.g. ``model.get_num_tokens_from_messages``)."""

__all__ = ["TokenCounter", "count_text_tokens", "count_tokens"]


def count_tokens(messages: Sequence[BaseMessage], counter: TokenCounter | None = None) -> int:
    """Count tokens of ``messages`` with ``counter`` or LangChain's approximate counter.

    The approximate counter uses about four characters per token, which undercounts
    CJK text by a factor of 2-4; pass your model's counter when that matters.
    """
    if not messages:
        return 0
    if counter is None:
        return int(count_tokens_approximately(messages))
    return int(counter(messages))


def count_text_tokens(text: str, counter: TokenCounter | None = None) -> int:
    """Token count of a bare string (for prompt budgets)."""
    from langchain_core.messages import HumanMessage

    if not text:
        return 0
    if counter is None:
        # Same heuristic as count_tokens_approximately, without the per-message overhead.
        return max(1, -(-len(text) // 4))
    return int(counter([HumanMessage(content=text)]))
