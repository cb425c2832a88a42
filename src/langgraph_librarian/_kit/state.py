"""Reading graph state, and placing a message in front of the conversation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.history import as_messages

__all__ = ["insert_after_system", "read_messages"]


def read_messages(state: Mapping[str, Any], key: str = "messages") -> list[BaseMessage]:
    """``state[key]`` as message objects (dicts and tuples are converted).

    Raises:
        ValueError: the value is not a list of messages.
    """
    raw = state.get(key) or []
    if not isinstance(raw, list | tuple):
        raise ValueError(f"state[{key!r}] must be a list of messages")
    return as_messages(raw)


def insert_after_system(messages: Sequence[BaseMessage], message: BaseMessage) -> list[BaseMessage]:
    """A copy of ``messages`` with ``message`` right after the leading system messages.

    Providers want the system prompt first; context the library adds (a running summary,
    recalled memory) goes right after it, before the conversation.
    """
    out = list(messages)
    at = 0
    while at < len(out) and out[at].type == "system":
        at += 1
    out.insert(at, message)
    return out
