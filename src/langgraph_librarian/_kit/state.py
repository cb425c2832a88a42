"""Reading graph state, and placing a message in front of the conversation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.history import as_messages

__all__ = ["insert_after_system", "missing_state_keys", "read_messages"]

_READ = "__pregel_read"
"""Where LangGraph puts, in a running node's config, its function that reads a state
channel by name (``CONFIG_KEY_READ``; ``ToolNode`` reads the state through it too). It
raises ``KeyError`` for a channel the graph does not have."""


def read_messages(state: Mapping[str, Any], key: str = "messages") -> list[BaseMessage]:
    """``state[key]`` as message objects (dicts and tuples are converted).

    Raises:
        ValueError: the value is not a list of messages.
    """
    raw = state.get(key) or []
    if not isinstance(raw, list | tuple):
        raise ValueError(f"state[{key!r}] must be a list of messages")
    return as_messages(raw)


def missing_state_keys(config: Mapping[str, Any] | None, keys: Sequence[str]) -> list[str]:
    """Which of ``keys`` the running graph's state has no field for.

    LangGraph drops, without a word, a node's update to a key its state schema lacks: a
    node that deletes messages and writes what it kept of them elsewhere (the running
    summary) would lose them. Empty when the node is not running in a graph (called
    directly) or when the graph cannot tell.
    """
    read = ((config or {}).get("configurable") or {}).get(_READ)
    if not callable(read):
        return []
    missing = []
    for key in keys:
        try:
            read(key)
        except KeyError:
            missing.append(key)
        except Exception:  # another LangGraph's reader: no answer, no error
            return []
    return missing


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
