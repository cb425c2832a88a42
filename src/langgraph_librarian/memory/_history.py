"""Trimming and filtering that always return provider-valid histories.

``trim_messages`` and ``filter_messages`` from ``langchain_core`` do the trimming and
filtering; the functions here make sure what they return still follows the rules of
:mod:`langgraph_librarian._engine.history` (the library's one definition of a valid history),
whatever history came in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, filter_messages, trim_messages
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_librarian._engine.history import (
    as_messages,
    history_problems,
    repair_history,
    repair_positions,
)
from langgraph_librarian.memory._prompts import summary_message
from langgraph_librarian.memory._result import checked_count
from langgraph_librarian.tokens import TokenCounter, count_tokens

__all__ = [
    "filter_history",
    "history_problems",
    "repair_history",
    "repair_positions",
    "trim_history",
]


def trim_history(
    messages: Sequence[BaseMessage],
    *,
    max_tokens: int,
    token_counter: TokenCounter | None = None,
    require_human_first: bool = True,
    summary: str = "",
) -> list[BaseMessage]:
    """The most recent messages that fit ``max_tokens``, as a valid history.

    Runs :func:`repair_history`, keeps the system messages (and, with ``summary``, the
    running summary as system context after them), then lets
    ``trim_messages(strategy="last")`` keep the newest whole messages that fit the
    rest of the budget, starting on a human message (or, without
    ``require_human_first``, on a human or AI message, never inside a tool exchange).
    The current turn (the latest human message and everything after it) is always
    kept, even when it alone is over budget: a model call without the question is
    never useful, and an oversized request fails loudly at the provider instead of
    silently answering something else.

    Args:
        messages: The history.
        max_tokens: Token budget for the result, summary included.
        token_counter: Counts a list of messages; default LangChain's approximate one.
        require_human_first: Start the conversation on a human message.
        summary: A running summary to send along (as
            :func:`~langgraph_librarian.memory.build_model_input` would); its tokens
            count against ``max_tokens``. The result is then the whole model input.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
        >>> history = [SystemMessage("Be brief."), HumanMessage("a " * 200),
        ...            AIMessage("b " * 200), HumanMessage("And now?")]
        >>> [m.type for m in trim_history(history, max_tokens=60)]
        ['system', 'human']
    """
    max_tokens = checked_count("max_tokens", max_tokens, 0)
    repaired = repair_history(messages, require_human_first=require_human_first)
    split = next((i for i, m in enumerate(repaired) if m.type != "system"), len(repaired))
    carried = summary_message(summary)
    system = [*repaired[:split], *([carried] if carried is not None else [])]
    conversation = repaired[split:]
    if not conversation:
        return system
    counter = token_counter or count_tokens_approximately
    remaining = max(0, max_tokens - count_tokens(system, counter))
    start_on = "human" if require_human_first else ["human", "ai"]
    kept = trim_messages(
        conversation,
        max_tokens=remaining,
        token_counter=counter,
        strategy="last",
        start_on=start_on,
        allow_partial=False,
    )
    last_human = max((i for i, m in enumerate(conversation) if m.type == "human"), default=None)
    if last_human is not None and not any(m.type == "human" for m in kept):
        kept = conversation[last_human:]
    return system + list(kept)


def filter_history(
    messages: Sequence[BaseMessage],
    *,
    require_human_first: bool = True,
    **criteria: Any,
) -> list[BaseMessage]:
    """``filter_messages(messages, **criteria)``, then :func:`repair_history`.

    Filtering by type, name or id can cut a tool exchange in half (drop the results
    of a call, or the AIMessage that made it); the repair removes the dangling half.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        >>> call = {"name": "search", "args": {}, "id": "c1", "type": "tool_call"}
        >>> history = [HumanMessage("hi"), AIMessage("Looking.", tool_calls=[call]),
        ...            ToolMessage("found", tool_call_id="c1"), AIMessage("Done.")]
        >>> [m.type for m in filter_history(history, exclude_types=["tool"])]
        ['human', 'ai', 'ai']
    """
    filtered = filter_messages(as_messages(messages), **criteria)
    return repair_history(filtered, require_human_first=require_human_first)
