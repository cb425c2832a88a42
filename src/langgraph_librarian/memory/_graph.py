"""Running-summary memory for ``StateGraph``: state, model input, router.

The pattern of spec 02, done carefully: after the agent answers, a router checks the
history against a threshold; the summarize node (:mod:`._nodes`) folds the old
messages into ``summary`` and deletes them; the chat node hands the model its system
prompt, the summary as system context and the recent messages.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langgraph.graph import END, MessagesState
from typing_extensions import TypedDict

from langgraph_librarian._kit.state import read_messages
from langgraph_librarian.memory._history import repair_history
from langgraph_librarian.memory._prompts import summary_message
from langgraph_librarian.memory._result import checked_count
from langgraph_librarian.memory._summarizer import RunningSummarizer
from langgraph_librarian.tokens import TokenCounter, count_tokens

__all__ = [
    "SummarizerLike",
    "SummaryFields",
    "SummaryState",
    "build_model_input",
    "create_summary_router",
    "resolve_summarizer",
    "should_summarize",
]

logger = logging.getLogger(__name__)

SummarizerLike = RunningSummarizer | BaseChatModel | str | None
SystemPrompt = str | SystemMessage | Sequence[str | SystemMessage] | None


class SummaryFields(TypedDict, total=False):
    """The running-summary fields, to mix into any state that has ``messages``.

    Attributes:
        summary: The running summary (last value wins; the summarize node writes it).
        summary_metadata: What the latest summarize step did (counts, method, errors).
            It is not reset on turns that do not summarize.
    """

    summary: str
    summary_metadata: dict[str, Any]


class SummaryState(MessagesState, SummaryFields):
    """``MessagesState`` plus :class:`SummaryFields` (spec 02's state)."""


def resolve_summarizer(
    summarizer: SummarizerLike, token_counter: TokenCounter | None = None
) -> RunningSummarizer:
    """A :class:`RunningSummarizer` from one, from a chat model or string, or offline.

    ``token_counter`` becomes the summarizer's budget counter unless a summarizer you
    pass already has one (then yours is used; it is copied, never changed).
    """
    if isinstance(summarizer, RunningSummarizer):
        if token_counter is None or summarizer.token_counter is not None:
            return summarizer
        counted = copy.copy(summarizer)
        counted.token_counter = token_counter
        return counted
    if summarizer is None or isinstance(summarizer, str | BaseChatModel):
        return RunningSummarizer(summarizer, token_counter=token_counter)
    raise TypeError(
        "summarizer must be a RunningSummarizer, a chat model, a 'provider:model' string "
        f"or None, not {type(summarizer).__name__}"
    )


# -- model input ---------------------------------------------------------------------------


def _system_prompts(system_prompt: SystemPrompt) -> list[BaseMessage]:
    if system_prompt is None:
        return []
    items = [system_prompt] if isinstance(system_prompt, str | SystemMessage) else system_prompt
    return [m if isinstance(m, SystemMessage) else SystemMessage(m) for m in items]


def _log_repair(before: Sequence[BaseMessage], after: Sequence[BaseMessage]) -> None:
    if len(before) == len(after) and all(a is b for a, b in zip(before, after, strict=True)):
        return
    kept = {id(m) for m in after}
    dropped = [f"{i}:{m.type}" for i, m in enumerate(before) if id(m) not in kept]
    start = next((i for i, m in enumerate(before) if m.type != "system"), len(before))
    moved = [f"{i}:system" for i, m in enumerate(before[start:], start) if m.type == "system"]
    repairs = [
        *([f"dropped or changed {', '.join(dropped[:10])}"] if dropped else []),
        *([f"moved to the front {', '.join(moved[:10])}"] if moved else []),
    ]
    greeting = start < len(before) and before[start].type == "ai" and id(before[start]) not in kept
    logger.warning(
        "running summary: the history was repaired for the model (%s)%s",
        "; ".join(repairs) or "reordered",
        "; an assistant greeting first needs require_human_first=False" if greeting else "",
    )


def build_model_input(
    messages: Sequence[BaseMessage],
    summary: str = "",
    *,
    system_prompt: SystemPrompt = None,
    repair: bool = True,
    require_human_first: bool = True,
) -> list[BaseMessage]:
    """System prompt(s), then the summary as system context, then the recent messages.

    With ``repair`` (default) the messages go through
    :func:`~langgraph_librarian.memory.repair_history` first, so the input stays valid
    for providers whatever the state holds (system messages first, a human message
    first unless ``require_human_first=False``, no orphan tool results, no tool call
    without its result); a repair that changes anything is logged as a warning.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> model_input = build_model_input([HumanMessage("Dessert ideas?")],
        ...                                 "- User: allergic to nuts.",
        ...                                 system_prompt="You are Chef Aria.")
        >>> [m.type for m in model_input]
        ['system', 'system', 'human']
    """
    items = list(messages)
    if repair:
        repaired = repair_history(items, require_human_first=require_human_first)
        _log_repair(items, repaired)
        items = repaired
    split = next((i for i, m in enumerate(items) if m.type != "system"), len(items))
    carried = summary_message(summary)
    return [
        *_system_prompts(system_prompt),
        *items[:split],
        *([carried] if carried is not None else []),
        *items[split:],
    ]


# -- router ---------------------------------------------------------------------------------


def create_summary_router(
    *,
    max_messages: int | None = 6,
    max_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
    summarize_node: str = "summarize_conversation",
) -> Callable[[Mapping[str, Any]], str]:
    """A conditional-edge function: ``summarize_node`` past a threshold, else ``END``.

    Summarization is due when the conversational (non-system) messages number more
    than ``max_messages``, or when they count more than ``max_tokens`` tokens.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> router = create_summary_router(max_messages=2)
        >>> router({"messages": [HumanMessage("a"), HumanMessage("b")]})
        '__end__'
        >>> router({"messages": [HumanMessage(str(i)) for i in range(3)]})
        'summarize_conversation'
    """
    if max_messages is None and max_tokens is None:
        raise ValueError("give max_messages and/or max_tokens")
    if max_messages is not None:
        max_messages = checked_count("max_messages", max_messages, 0)
    if max_tokens is not None:
        max_tokens = checked_count("max_tokens", max_tokens, 0)

    def route(state: Mapping[str, Any]) -> str:
        """``summarize_node`` when summarization is due for ``state``, else ``END``."""
        conversation = [m for m in read_messages(state) if m.type != "system"]
        if max_messages is not None and len(conversation) > max_messages:
            return summarize_node
        if max_tokens is not None and count_tokens(conversation, token_counter) > max_tokens:
            return summarize_node
        return str(END)

    return route


should_summarize: Callable[[Mapping[str, Any]], str] = create_summary_router(
    summarize_node="summarize"
)
"""Spec 02's router: ``"summarize"`` (its summarize node's name) when more than 6 messages
are in state, else ``END``. :func:`create_summary_graph` names its node
``summarize_conversation`` (spec 05's name) and routes with
:func:`create_summary_router`."""
