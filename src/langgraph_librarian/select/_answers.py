"""Interpreting a selector model's answer, whatever form it came in."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from langgraph_librarian._engine.messages import output_text, stopped_at_length
from langgraph_librarian.select.parse import parse_selected_ids
from langgraph_librarian.select.prompts import echoes_example, echoes_template

__all__ = [
    "LENGTH_PROBLEM",
    "Answer",
    "SelectionOutput",
    "cut_off_text",
    "interpret",
    "stopped_at_length",
]

LENGTH_PROBLEM = "selector answer cut off at the output-token limit (finish_reason=length)"


def cut_off_text(exc: BaseException) -> str | None:
    """The text of an answer the client refused because it hit the length limit.

    ``openai`` raises ``LengthFinishReasonError`` (carrying the completion) when a
    structured (json_schema) answer stops at ``max_tokens``; ``None`` for other errors.
    """
    if type(exc).__name__ != "LengthFinishReasonError":
        return None
    try:
        content = exc.completion.choices[0].message.content  # type: ignore[attr-defined]
    except (AttributeError, IndexError):
        content = None
    return str(content or "")


class SelectionOutput(BaseModel):
    """Structured selector answer (tool calling, json_schema or JSON mode)."""

    reasoning: str = Field(description="Brief reasoning about which messages are needed.")
    ids: list[int] = Field(description="Ids of the index entries the assistant must read.")
    none_needed: bool = Field(
        default=False,
        description="True only when no earlier message is needed at all (ids is then empty).",
    )


@dataclass
class Answer:
    """A selector answer read: usable ids, an explicit "none", or a problem."""

    ids: list[int] = field(default_factory=list)
    none: bool = False
    reasoning: str = ""
    raw: str = ""
    problem: str | None = None

    @property
    def usable(self) -> bool:
        return self.problem is None


def _from_structured(parsed: SelectionOutput, valid: set[int], raw: str) -> Answer:
    ids = [i for i in dict.fromkeys(parsed.ids) if i in valid]
    if ids:
        return Answer(ids=ids, reasoning=parsed.reasoning, raw=raw)
    if parsed.none_needed and not parsed.ids:
        return Answer(none=True, reasoning=parsed.reasoning, raw=raw)
    problem = (
        "selector returned only unknown ids"
        if parsed.ids
        else "empty id list without none_needed (ambiguous)"
    )
    return Answer(reasoning=parsed.reasoning, raw=raw, problem=problem)


def _tool_args(message: object) -> dict[str, Any] | None:
    """The arguments of the first tool call of ``message`` that has a dict of them."""
    for call in getattr(message, "tool_calls", None) or []:
        args = call.get("args") if isinstance(call, dict) else None
        if isinstance(args, dict):
            return args
    return None


def _lenient(parsed: dict[str, Any]) -> tuple[SelectionOutput | None, str | None]:
    """``parsed`` as a :class:`SelectionOutput`, or ``None`` and why it is not one.

    Only the ids matter: a missing or null ``reasoning`` (small models skip it) is
    read as ``""`` and a null ``none_needed`` as ``False``. The ids are still checked
    (integers only), so nothing unknown or malformed is ever selected.
    """
    data = dict(parsed)
    reasoning = data.get("reasoning")
    data["reasoning"] = "" if reasoning is None else str(reasoning)
    if data.get("none_needed") is None:
        data.pop("none_needed", None)
    ids = data.get("ids")
    if isinstance(ids, list) and any(isinstance(i, bool) for i in ids):
        return None, "structured answer invalid (ids)"  # pydantic would read true as 1
    try:
        return SelectionOutput.model_validate(data), None
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"][:1]) or "answer" for e in exc.errors()})
        return None, f"structured answer invalid ({', '.join(fields)})"


def _as_text(args: dict[str, Any]) -> str:
    try:
        return json.dumps(args, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(args)


def interpret(result: Any, valid_ids: Collection[int], template: str) -> Answer:
    """Read ``result`` (a message, or ``{"raw", "parsed"}`` from structured output).

    Usable: a non-empty list of known ids, or an explicit "none needed". Unusable, with
    the reason: an echo of the prompt, an empty or non-integer list, unknown ids only,
    or no list at all. An answer given as a tool call is read from the call's arguments
    (also when the client's parser failed on them); with no text beside it, those
    arguments as JSON are the raw answer.
    """
    valid = set(valid_ids)
    invalid: str | None = None
    if isinstance(result, dict) and "raw" in result:
        message = result.get("raw")
        raw = output_text(message)
        parsed = result.get("parsed")
        args = _tool_args(message)
        if parsed is None and args is not None:
            parsed = args  # the client's parser gave up: read the call ourselves
        if not raw.strip() and isinstance(parsed, dict):
            raw = _as_text(parsed)
        if isinstance(parsed, dict):
            parsed, invalid = _lenient(parsed)
        if isinstance(parsed, SelectionOutput):
            return _from_structured(parsed, valid, raw)
        text = raw  # the structured parser failed: read the raw text ourselves
    else:
        text = output_text(result)
        args = _tool_args(result)
        if not text.strip() and args is not None:
            text = _as_text(args)
    if echoes_template(text, template):
        return Answer(raw=text, problem="selector echoed the prompt instead of answering")
    if echoes_example(text, template):
        return Answer(raw=text, problem="selector repeated an example line of the prompt")
    read = parse_selected_ids(text, valid)
    if not read.found:
        problem = read.problem or "no usable answer"
        if invalid:
            problem = f"{invalid}; {problem}"
        return Answer(raw=text, problem=problem)
    return Answer(ids=read.ids, none=read.none, reasoning=text, raw=text)
