"""Provider-valid histories: the library's one definition, checked and repaired.

Chat providers reject histories that break a few structural rules (spec 05 warns
about them): system messages must come first, many providers want the first
conversational message to be from the user, every tool call needs its result right
after it, and a tool result needs its call. The Librarian's curated
context (:func:`~langgraph_librarian.hydrate.hydrate`) and the memory package's
trimming and filtering helpers are all held to these rules.

The rules, checked by :func:`history_problems` and enforced by :func:`repair_history`:

1. System messages form a prefix (none after a conversational message).
2. With ``require_human_first``, the first non-system message is a human message.
3. An AIMessage's tool calls each have an id and exactly one ToolMessage answering
   them, in the run of ToolMessages that directly follows the AIMessage. "Tool calls"
   means every call a provider converter sends: ``tool_calls``, ``invalid_tool_calls``
   (a call whose arguments did not parse; ``ToolNode`` never answers it) and raw
   ``additional_kwargs["tool_calls"]`` (older integrations).
4. Every ToolMessage sits in such a run and answers a call of that AIMessage.

This is the library's one definition of a valid history: ``hydrate`` (the Librarian's
curated context) is held to it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    BaseMessageChunk,
    ChatMessage,
    convert_to_messages,
)

from langgraph_librarian._engine.messages import typed_message
from langgraph_librarian._engine.view import held_prefix

__all__ = ["as_messages", "history_problems", "repair_history", "repair_positions"]

_RETYPED = (ChatMessage, BaseMessageChunk)
"""Message classes read as their role's class (see :func:`as_messages`)."""


def as_messages(messages: Sequence[Any]) -> list[BaseMessage]:
    """Message objects from messages, dicts or tuples (``convert_to_messages``); a
    ``ChatMessage`` of a known role or a streamed chunk as its role's message
    (:func:`~langgraph_librarian._engine.messages.typed_message`)."""
    items = list(messages)
    # The few distinct classes are checked, not every message (this runs every turn),
    # and only past the messages a history view already holds (the same objects).
    known = held_prefix(items)
    kinds = set(map(type, items[known:]))
    if all(issubclass(kind, BaseMessage) for kind in kinds):
        if not any(issubclass(kind, _RETYPED) for kind in kinds):
            return items
        return [typed_message(m) for m in items]
    return [typed_message(m) for m in convert_to_messages(items)]


def _raw_calls(message: AIMessage) -> list[dict[str, Any]]:
    raw = (message.additional_kwargs or {}).get("tool_calls")
    return [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []


def _call_ids(message: BaseMessage) -> list[str | None]:
    """Ids of every call a provider would send for ``message`` (once each)."""
    if not isinstance(message, AIMessage):
        return []
    calls: list[Any] = [*message.tool_calls, *message.invalid_tool_calls, *_raw_calls(message)]
    return list(dict.fromkeys(str(c["id"]) if c.get("id") else None for c in calls))


def history_problems(
    messages: Sequence[BaseMessage], *, require_human_first: bool = True
) -> list[str]:
    """What makes ``messages`` a history a chat provider may reject (empty: valid).

    Checks the rules in this module's docstring; each problem names a position.

    Example:
        >>> from langchain_core.messages import HumanMessage, ToolMessage
        >>> history_problems([ToolMessage("42", tool_call_id="c1"), HumanMessage("hi")])
        ['0: first conversational message is tool, not human', '0: orphan tool result c1']
    """
    problems: list[str] = []
    seen_conversation = False
    open_calls: set[str] = set()  # calls of the current AIMessage still awaiting a result
    answered: set[str] = set()
    owner: int | None = None  # position of the AIMessage whose tool run we are in
    for i, message in enumerate(messages):
        kind = message.type
        if kind != "tool" and owner is not None:
            problems.extend(f"{owner}: tool call {c} has no result" for c in sorted(open_calls))
            open_calls, owner = set(), None
        if kind == "system":
            if seen_conversation:
                problems.append(f"{i}: system message after the conversation started")
            continue
        if not seen_conversation and require_human_first and kind != "human":
            problems.append(f"{i}: first conversational message is {kind}, not human")
        seen_conversation = True
        if kind == "tool":
            call = str(getattr(message, "tool_call_id", ""))
            if owner is None or call not in open_calls:
                label = "duplicate" if call in answered else "orphan"
                problems.append(f"{i}: {label} tool result {call}")
            else:
                open_calls.discard(call)
                answered.add(call)
            continue
        ids = _call_ids(message)
        if ids:
            if any(c is None or c == "" for c in ids):
                problems.append(f"{i}: tool call without an id")
            owner, open_calls = i, {c for c in ids if c}
    if owner is not None:
        problems.extend(f"{owner}: tool call {c} has no result" for c in sorted(open_calls))
    return problems


def _strip_calls(message: AIMessage, keep: set[str]) -> AIMessage | None:
    """The message with only the tool calls in ``keep``; ``None`` if nothing is left.

    Valid, invalid and raw (``additional_kwargs``) calls are all filtered: a provider
    converter sends each of them. ``filter_messages(exclude_tool_calls=...)`` drops the
    whole AIMessage once all its calls are excluded, even when it also carries text;
    here the text survives.
    """
    calls = [c for c in message.tool_calls if c.get("id") in keep]
    invalid = [c for c in message.invalid_tool_calls if c.get("id") in keep]
    raw = _raw_calls(message)
    raw_kept = [c for c in raw if c.get("id") in keep]
    content: Any = message.content
    if isinstance(content, list):  # Anthropic-style tool_use blocks mirror tool_calls
        kept_blocks = [
            block
            for block in content
            if not (
                isinstance(block, dict)
                and block.get("type") in {"tool_use", "function_call"}
                and block.get("id") not in keep
            )
        ]
        if len(kept_blocks) != len(content):
            content = kept_blocks
    unchanged = (
        len(calls) == len(message.tool_calls)
        and len(invalid) == len(message.invalid_tool_calls)
        and len(raw_kept) == len(raw)
        and content is message.content
    )
    if unchanged:
        return message
    has_text = bool(content.strip()) if isinstance(content, str) else bool(content)
    if not (calls or invalid or raw_kept or has_text):
        return None
    extra = dict(message.additional_kwargs)
    if raw_kept:
        extra["tool_calls"] = raw_kept
    else:
        extra.pop("tool_calls", None)
    update = {
        "tool_calls": calls,
        "invalid_tool_calls": invalid,
        "content": content,
        "additional_kwargs": extra,
    }
    return message.model_copy(update=update)


Placed = tuple[int, BaseMessage]
"""A message and its position in the list it came from."""


def _whole_exchanges(conversation: list[Placed]) -> list[Placed]:
    """Keep each AIMessage's answered calls with their results; drop orphan results."""
    out: list[Placed] = []
    i, n = 0, len(conversation)
    while i < n:
        position, message = conversation[i]
        i += 1
        if message.type == "tool":
            continue  # not in the run right after its call: an orphan
        if not _call_ids(message):
            out.append((position, message))
            continue
        wanted = {c for c in _call_ids(message) if c}
        results: list[Placed] = []
        while i < n and conversation[i][1].type == "tool":
            call = str(getattr(conversation[i][1], "tool_call_id", ""))
            if call in wanted:
                wanted.discard(call)
                results.append(conversation[i])
            i += 1
        answered = {str(getattr(r, "tool_call_id", "")) for _, r in results}
        kept = _strip_calls(cast(AIMessage, message), answered)
        if kept is not None:
            out.append((position, kept))
            out.extend(results)
    return out


def repair_positions(
    messages: Sequence[BaseMessage], *, require_human_first: bool = True
) -> list[Placed]:
    """:func:`repair_history`, with each kept message's position in ``messages``.

    A message whose unanswered calls were stripped is a copy; its position is the
    original's. Used by ``hydrate``, which reports positions in the full history.
    """
    items = as_messages(messages)
    system = [(i, m) for i, m in enumerate(items) if m.type == "system"]
    conversation = _whole_exchanges([(i, m) for i, m in enumerate(items) if m.type != "system"])
    if require_human_first:
        first_human = next((k for k, (_, m) in enumerate(conversation) if m.type == "human"), None)
        conversation = [] if first_human is None else conversation[first_human:]
    return system + conversation


def repair_history(
    messages: Sequence[BaseMessage], *, require_human_first: bool = True
) -> list[BaseMessage]:
    """The smallest edit of ``messages`` that passes :func:`history_problems`.

    System messages move to the front (in order; their content is kept), tool results
    outside the run right after their call are dropped, tool calls without a result
    are removed from their AIMessage (the message itself stays if it has text), and
    with ``require_human_first`` conversational messages before the first human
    message are dropped. A valid history comes back unchanged (same objects).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
        >>> fixed = repair_history([AIMessage("Hello!"), SystemMessage("Be brief."),
        ...                         HumanMessage("hi")])
        >>> [m.type for m in fixed]
        ['system', 'human']
    """
    return [m for _, m in repair_positions(messages, require_human_first=require_human_first)]
