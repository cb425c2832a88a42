"""Reading messages: plain text of any content shape, identity keys, turns, tool groups."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    BaseMessageChunk,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    message_chunk_to_message,
)
from pydantic import BaseModel

__all__ = [
    "content_hash",
    "current_turn",
    "human_positions",
    "latest_human_text",
    "message_keys",
    "message_role",
    "message_text",
    "output_text",
    "stopped_at_length",
    "tool_calls_of",
    "tool_groups",
    "typed_message",
]


def message_text(message: BaseMessage) -> str:
    """Plain text of a message, whatever its content shape.

    String content is returned as is. List content (multimodal blocks) keeps text
    blocks and replaces other blocks by a short marker such as ``[image]`` so that a
    summary can still say an image was sent. Tool calls of an AIMessage are appended
    as ``[tool call name(args)]`` because they often carry the message's meaning.
    """
    content: Any = message.content
    if content.__class__ is str and not (isinstance(message, AIMessage) and message.tool_calls):
        # The common case, read ~100 times a turn by the selector: the text is the content.
        return content
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                kind = str(block.get("type", "block"))
                if kind == "text" and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif kind in {"tool_use", "function_call"}:
                    continue  # duplicated in message.tool_calls
                else:
                    parts.append(f"[{kind}]")
    elif content is not None:
        parts.append(str(content))
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            parts.append(f"[tool call {call.get('name', '?')}({_args_text(call.get('args', {}))})]")
    return "\n".join(p for p in parts if p)


def _args_text(args: object) -> str:
    """Tool-call arguments as stable text, whatever they hold.

    Providers give JSON; code that builds ``AIMessage`` tool calls by hand may put dates,
    bytes or mixed-type keys in them. Those are written with ``str`` (and, when keys of
    different types cannot be sorted, in their own order) rather than failing the
    indexing of the whole conversation.
    """
    try:
        return json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        try:
            return json.dumps(args, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            return repr(args)
    except RecursionError:
        return repr(args)


_REASONING_TAGS = re.compile(
    r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE
)
_REASONING_END = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
"""A closing tag left once the sections are gone: the chat template opened the section
in the prompt (DeepSeek-R1 behind some OpenAI-compatible servers), so the answer is
reasoning, ``</think>``, then what the model answered."""


def output_text(result: object) -> str:
    """Text of a model's answer: its text blocks only (or ``str(result)`` for non-messages).

    Unlike :func:`message_text`, which describes a message for a summary, this reads
    what a model *answered*: thinking and reasoning blocks, tool calls and other
    non-text blocks are left out (``BaseMessage.text``), and so are the
    ``<think>...</think>`` sections reasoning models served behind OpenAI-compatible
    endpoints put inline (and what comes before a closing ``</think>`` whose opening
    tag was in the prompt). Their reasoning must never be taken for the answer.

    Text blocks are joined with a line break (``BaseMessage.text`` glues them: "...in
    message 6" + "IDs: [6]" read as "message 6IDs: [6]"), except where one continues
    the other's sentence (a block with citations, or a space at the seam).
    """
    if not isinstance(result, BaseMessage):
        return str(result)
    content: Any = result.content
    if isinstance(content, str):
        text = content
    else:
        text = ""
        after_cited = False
        for block in content or []:
            if isinstance(block, dict) and block.get("type") == "text":
                part = block.get("text")
                cited = bool(block.get("citations"))
            else:
                part, cited = block, False
            if not isinstance(part, str) or not part:
                continue
            # A block next to a cited span continues its sentence ("budget at " +
            # "$5,000" + " for ...", "the sky is blue" + ". Information from ..."), and
            # so does one across a space or before punctuation; separate blocks of text
            # get a line break.
            new_sentence = text[-1:] in {".", "!", "?"} and part[0].isupper()
            glued = not text or (
                not new_sentence
                and (
                    cited
                    or after_cited
                    or text[-1].isspace()
                    or part[0].isspace()
                    or part[0] in ".,;:!?)]}"
                )
            )
            text += part if glued else "\n" + part
            after_cited = cited
    text = _REASONING_TAGS.sub("", text)
    *_, answer = _REASONING_END.split(text)
    return answer


def finish_reason(result: object) -> str | None:
    """Why the model stopped, as its provider reported it (``finish_reason`` /
    ``stop_reason`` / ``done_reason``), lower-cased; ``None`` when it did not say."""
    message = result.get("raw") if isinstance(result, dict) else result
    meta = getattr(message, "response_metadata", None) or {}
    reason = meta.get("finish_reason") or meta.get("stop_reason") or meta.get("done_reason")
    return str(reason).lower() if reason else None


def stopped_at_length(result: object) -> bool:
    """The model stopped because of the output limit (``finish_reason`` / ``stop_reason``)."""
    return finish_reason(result) in {"length", "max_tokens", "max_output_tokens"}


_CHAT_ROLES: dict[str, type[HumanMessage | AIMessage | SystemMessage]] = {
    "user": HumanMessage,
    "human": HumanMessage,
    "assistant": AIMessage,
    "ai": AIMessage,
    "system": SystemMessage,
}


def typed_message(message: BaseMessage) -> BaseMessage:
    """``message`` as the class its role has: a chunk of a stream (``HumanMessageChunk``,
    ``AIMessageChunk``) as its message, a ``ChatMessage`` of a known role as that
    role's message; any other message as it is. The library tells roles by the
    message's type ("human", "ai"...): a ``ChatMessage(role="user")`` is "chat", and a
    history of them had no human message (repaired to nothing, trimmed to nothing)."""
    if isinstance(message, BaseMessageChunk):
        message = message_chunk_to_message(message)
    if isinstance(message, ChatMessage):
        cls = _CHAT_ROLES.get(message.role.strip().lower())
        if cls is not None:
            return cls(
                content=message.content,
                id=message.id,
                name=message.name,
                additional_kwargs=message.additional_kwargs,
                response_metadata=message.response_metadata,
            )
    return message


def message_role(message: BaseMessage) -> str:
    """The message ``type`` (``human``, ``ai``, ``tool``, ``system``...)."""
    return str(message.type)


_HASH_MEMO: dict[tuple[object, ...], str] = {}
_HASH_MEMO_LIMIT = 200_000


def _tool_call_id(message: BaseMessage) -> str | None:
    # Only tool messages have the field; getattr with a default on other pydantic
    # messages goes through a slow AttributeError path.
    return message.tool_call_id if message.type == "tool" else None  # type: ignore[attr-defined]


def _stable_hash(message: BaseMessage) -> str:
    payload = json.dumps(
        [message.type, message.name, message_text(message), _tool_call_id(message)],
        ensure_ascii=False,
        # lone surrogates (hostile or broken text) must hash, not raise
    ).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(payload, digest_size=10).hexdigest()


def content_hash(message: BaseMessage) -> str:
    """Stable hash of what a summary depends on: role, name, text and tool linkage.

    The hash is the same in every process (it is stored with the index). Computing it
    means encoding the whole text, so results for plain-text messages are memoized
    per process under Python's fast built-in string hash; a later turn over the same
    10,000-message history then pays one dictionary lookup per message.
    """
    content = message.content
    kind = message.type
    if not isinstance(content, str) or (kind == "ai" and message.tool_calls):  # type: ignore[attr-defined]
        return _stable_hash(message)
    memo_key = (kind, message.name, _tool_call_id(message), len(content), hash(content))
    cached = _HASH_MEMO.get(memo_key)
    if cached is None:
        if len(_HASH_MEMO) >= _HASH_MEMO_LIMIT:
            _HASH_MEMO.clear()
        cached = _HASH_MEMO[memo_key] = _stable_hash(message)
    return cached


def message_keys(messages: Sequence[BaseMessage], hashes: Sequence[str]) -> list[str]:
    """Identity key per message: its id, else its content hash plus occurrence number.

    Messages inside a graph always have ids (``add_messages`` assigns them). Lists
    passed by hand may not; for those the key is stable as long as the same history is
    sent again, and two identical messages still get distinct keys.
    """
    seen: dict[str, int] = {}
    keys: list[str] = []
    for message, digest in zip(messages, hashes, strict=True):
        if message.id:
            keys.append(f"id:{message.id}")
            continue
        n = seen.get(digest, 0)
        seen[digest] = n + 1
        keys.append(f"h:{digest}:{n}")
    return keys


def human_positions(messages: Sequence[BaseMessage]) -> list[int]:
    """Positions of human messages, i.e. where user turns start."""
    return [i for i, m in enumerate(messages) if m.type == "human"]


def current_turn(messages: Sequence[BaseMessage]) -> str:
    """Identity of the current user turn: its latest human message's id (or content hash)."""
    for message in reversed(messages):
        if message.type == "human":
            return str(message.id or content_hash(message))
    return ""


def latest_human_text(messages: Sequence[BaseMessage]) -> str:
    """Text of the latest human message, or ``""``."""
    for message in reversed(messages):
        if message.type == "human":
            return message_text(message)
    return ""


_PLAIN_TYPES: dict[type, bool] = {}


def _plain_type(cls: type) -> bool:
    """Whether a ``cls`` instance's ``tool_calls`` is found as pydantic finds it: its
    field, else its extra field, the class defining no attribute of that name."""
    plain = _PLAIN_TYPES.get(cls)
    if plain is None:
        plain = _PLAIN_TYPES[cls] = (
            issubclass(cls, BaseModel)
            and cls.__getattribute__ is object.__getattribute__
            and cls.__getattr__ is BaseModel.__getattr__  # type: ignore[attr-defined]
            and not hasattr(cls, "tool_calls")
            and "tool_calls" not in (getattr(cls, "__private_attributes__", None) or {})
        )
    return plain


def tool_calls_of(message: BaseMessage) -> Any:
    """``getattr(message, "tool_calls", None)``, fast for messages without the field.

    Reading a missing attribute of a pydantic model raises and catches an
    ``AttributeError`` (1.8 µs against 0.05 for a field): the selector's rules ask a
    human message for its tool calls dozens of times a turn. The same value: the field,
    else an extra field of that name (``HumanMessage(..., tool_calls=...)``), else
    ``None``; any other class (its own ``__getattr__``, a property) is read with
    ``getattr``.
    """
    if not _plain_type(type(message)):
        return getattr(message, "tool_calls", None)
    fields = message.__dict__
    if "tool_calls" in fields:
        return fields["tool_calls"]
    extra = message.__pydantic_extra__
    return extra.get("tool_calls") if extra else None


def tool_groups(messages: Sequence[BaseMessage]) -> dict[int, list[int]]:
    """Map every position in a tool exchange to all positions of that exchange.

    An exchange is an AIMessage with tool calls plus every ToolMessage answering one
    of its calls. Providers reject a tool call without its results or a result without
    its call, so hydration always moves whole exchanges.
    """
    call_owner: dict[str, int] = {}
    groups: dict[int, list[int]] = {}
    for i, message in enumerate(messages):
        kind = message.type
        if kind == "ai" and getattr(message, "tool_calls", None):
            groups[i] = [i]
            for call in message.tool_calls:  # type: ignore[attr-defined]
                if call.get("id"):
                    call_owner[str(call["id"])] = i
        elif kind == "tool":
            owner = call_owner.get(str(getattr(message, "tool_call_id", "")))
            if owner is not None:
                groups[owner].append(i)
    result: dict[int, list[int]] = {}
    for members in groups.values():
        for position in members:
            result[position] = members
    return result
