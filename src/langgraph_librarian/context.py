"""One conversation, four ways to hand it to the model: compare strategies on the same thread.

A Librarian graph built with ``LibrarianConfig(running_summary_tokens=N)`` keeps, for
every thread, both the index (for selection) and the gist (a running summary of the
older messages), and nothing is ever deleted. So one thread can answer each turn with
any of the usual context strategies, and the difference is visible on the same history:

| strategy | the model gets |
|---|---|
| ``"librarian"`` | the selected messages in full plus the recent turns (the gist left out) |
| ``"running_summary"`` | the gist plus the messages not folded into it yet (spec 02's input) |
| ``"both"`` | the curated context as the Librarian built it: gist, selection, recent turns |
| ``"everything"`` | every message (brute force) |

:func:`context_for_strategy` reads a state after ``select_and_hydrate`` has run (in your
agent node) and returns that input. It holds no selection or summary logic of its own:
the selection is the Librarian's ``curated_messages``, the gist its ``librarian_summary``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from langchain_core.messages import BaseMessage

from langgraph_librarian._kit.state import read_messages
from langgraph_librarian._librarian.gist import GIST_KEY, _folded_until
from langgraph_librarian.memory import build_model_input
from langgraph_librarian.memory._prompts import SUMMARY_SOURCE

__all__ = ["context_for_strategy"]

ContextStrategy = Literal["librarian", "running_summary", "both", "everything"]
"""A way to build the model input from one Librarian thread."""

CONTEXT_STRATEGIES: tuple[ContextStrategy, ...] = get_args(ContextStrategy)
"""Every :data:`ContextStrategy`, in the order a UI would offer them."""


def is_running_summary(message: BaseMessage) -> bool:
    """Whether ``message`` is the system message that carries a running summary (the gist).

    Example:
        >>> from langgraph_librarian.memory import summary_message
        >>> is_running_summary(summary_message("- User: allergic to nuts."))
        True
    """
    return message.type == "system" and message.additional_kwargs.get("lc_source") == SUMMARY_SOURCE


def _curated(state: Mapping[str, Any]) -> list[BaseMessage]:
    if "curated_messages" not in state:
        raise ValueError(
            "the state has no curated_messages: call context_for_strategy after "
            "select_and_hydrate (in the agent node of a Librarian graph)"
        )
    return read_messages(state, "curated_messages")


def _running_summary(messages: list[BaseMessage], state: Mapping[str, Any]) -> list[BaseMessage]:
    gist = state.get(GIST_KEY)
    if not isinstance(gist, dict) or not str(gist.get("text") or "").strip():
        # Nothing folded yet: the running-summary chatbot would still hold every message.
        return build_model_input(messages)
    start = _folded_until(messages, gist)
    if start is None:
        # The folded messages were deleted or edited away, so the gist no longer says
        # what precedes the rest; the Librarian rebuilds it after this turn. Until then
        # the honest input is the whole history, not a summary of something else.
        return build_model_input(messages)
    return build_model_input(messages[start:], str(gist["text"]))


def context_for_strategy(state: Mapping[str, Any], strategy: ContextStrategy) -> list[BaseMessage]:
    """The model input ``strategy`` gives for the current turn of a Librarian thread.

    Call it where ``curated_messages`` is set (your agent node, after
    ``select_and_hydrate``). With ``running_summary_tokens`` unset there is no gist:
    ``"librarian"`` and ``"both"`` are then the same, and ``"running_summary"`` is every
    message. ``"running_summary"`` goes through
    :func:`~langgraph_librarian.memory.build_model_input`, so its history is valid for
    chat providers.

    Args:
        state: A Librarian graph state (``messages``, ``curated_messages`` and, with a
            running summary, ``librarian_summary``).
        strategy: One of :data:`CONTEXT_STRATEGIES`.

    Returns:
        The messages to send to the chat model.

    Raises:
        ValueError: An unknown strategy, or a state without ``curated_messages`` for a
            strategy that needs the selection.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> state = {"messages": [HumanMessage("hi", id="1"), AIMessage("hello", id="2"),
        ...                       HumanMessage("bye", id="3")],
        ...          "curated_messages": [HumanMessage("bye", id="3")]}
        >>> [m.id for m in context_for_strategy(state, "librarian")]
        ['3']
        >>> [m.id for m in context_for_strategy(state, "everything")]
        ['1', '2', '3']
    """
    if strategy not in CONTEXT_STRATEGIES:
        raise ValueError(
            f"unknown context strategy {strategy!r}; use one of {', '.join(CONTEXT_STRATEGIES)}"
        )
    if strategy == "everything":
        return read_messages(state, "messages")
    if strategy == "running_summary":
        return _running_summary(read_messages(state, "messages"), state)
    curated = _curated(state)
    if strategy == "both":
        return curated
    return [m for m in curated if not is_running_summary(m)]
