"""The ``request_tools`` meta-tool: the agent states a need, the index answers."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, NotRequired

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_librarian._engine.messages import current_turn
from langgraph_librarian.tools.index import ToolIndex, ToolRecord, ToolSearchResult

__all__ = ["ToolLibrarianStateFields", "create_request_tools", "format_search_result"]

REQUEST_TOOLS_DESCRIPTION = (
    "Find and load tools for what you need to do next. After you have understood the "
    "user's request, describe the capability in plain English (for example 'send an "
    "email', 'list open pull requests'), even when the user wrote in another language; "
    "optionally name a domain. If you already know exact tool names, pass them as the "
    "query to load exactly those. The tools found are available from your next step "
    "until the end of this turn. When the answer says there was no confident match, its "
    "best guesses are loaded anyway: use one if it fits, or ask again in other words."
)


class LoadedTools(TypedDict):
    """Tools loaded during one user turn (``turn`` is that turn's latest human message)."""

    turn: str
    names: list[str]


def merge_loaded_tools(left: LoadedTools | None, right: LoadedTools | None) -> LoadedTools:
    """Union within a turn, least recently requested first; a new turn starts a new set.

    Parallel ``request_tools`` calls in one step merge instead of conflicting, and a
    set from an earlier turn is replaced as soon as the new turn loads anything.
    """
    if not right:
        return left or {"turn": "", "names": []}
    if not left or left.get("turn") != right.get("turn"):
        return {"turn": right["turn"], "names": list(dict.fromkeys(right["names"]))}
    # A name requested again moves to the end: the list runs from least to most
    # recently requested (the middleware keeps the latest ones live).
    again = set(right["names"])
    kept = [name for name in left["names"] if name not in again]
    return {"turn": left["turn"], "names": list(dict.fromkeys([*kept, *right["names"]]))}


class ToolLibrarianStateFields(TypedDict):
    """Add this field to a hand-built graph's state to use :func:`create_request_tools`."""

    loaded_tools: NotRequired[Annotated[LoadedTools, merge_loaded_tools]]


def state_value(state: Any, key: str) -> Any:
    """``state[key]`` of a dict state, or the attribute of a pydantic / dataclass one."""
    if isinstance(state, dict):
        return state.get(key)
    return getattr(state, key, None)


def state_messages(state: Any) -> list[Any]:
    """The state's messages (``[]`` when it has none)."""
    messages = state_value(state, "messages")
    return list(messages) if isinstance(messages, list | tuple) else []


_SUMMARY_SOURCE = "summarization"
"""``additional_kwargs["lc_source"]`` of the summary message LangChain's
``SummarizationMiddleware`` puts in place of the messages it folds."""


def in_turn(loaded_turn: object, messages: list[Any]) -> bool:
    """Whether tools loaded in ``loaded_turn`` are still this turn's.

    The turn is the latest human message. A summary that replaced the history in the
    middle of the turn (``SummarizationMiddleware``) is not a new user message: while
    it is the latest human message, the turn's tools stay loaded.
    """
    if not isinstance(loaded_turn, str) or not loaded_turn:
        return False
    if loaded_turn == current_turn(messages):
        return True
    for message in reversed(messages):
        if getattr(message, "type", None) == "human":
            kwargs = getattr(message, "additional_kwargs", None) or {}
            return kwargs.get("lc_source") == _SUMMARY_SOURCE
    return False


_OWN_PHRASES = (
    "tools loaded by name",
    "tools now available",
    "no confident match",
    "best guesses, loaded",
    "call request_tools again",
    "no single tool matched",
    "no tools matched",
    "request_tools is unavailable",
    "there is no domain named",
    "is not loaded in this turn",
)
"""Phrases of the librarian's own answers: a tool description holding one is withheld
(it could pass itself off as the librarian's answer to the model)."""
_PLAIN_NAME = re.compile(r"[\w.\-:/]{1,128}")
_SUMMARY_CHARS = 160
_DOMAIN_CHARS = 80
"""A ``domain=`` naming no domain is quoted back up to this many characters."""


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _shown_name(name: str) -> str:
    """A tool or domain name as written to the model: as is when plain, else quoted."""
    return name if _PLAIN_NAME.fullmatch(name) else _quoted(name)


def _description(record: ToolRecord | None) -> str:
    """A tool's description as the model sees it: its first line, at most 160
    characters, JSON-quoted (data, never a line of the answer itself); withheld when it
    imitates the librarian's own answers."""
    if record is None:
        return _quoted("")
    summary = record.summary[:_SUMMARY_CHARS]
    folded = " ".join(summary.lower().split())
    if any(phrase in folded for phrase in _OWN_PHRASES):
        return "(description withheld: it imitates the librarian's own messages)"
    return _quoted(summary)


def _tool_lines(result: ToolSearchResult, index: ToolIndex) -> list[str]:
    out = []
    for match in result.matches:
        record = index.get(match.name)
        name = _shown_name(match.name)
        extra = " (related)" if match.reason == "sibling" else ""
        if record is not None and record.tool is None:
            # A schema-only catalog entry: described, but nothing here can run it.
            extra += " (described only: it cannot be called here)"
        out.append(f"- {name}{extra}: {_description(record)}")
    return out


def _domain_listing(result: ToolSearchResult, index: ToolIndex) -> str:
    listing = ", ".join(f"{_shown_name(name)} ({count})" for name, count in result.domains.items())
    more = len(index.domains()) - len(result.domains)
    return listing + (f", and {more} more" if more > 0 else "")


def _domain_note(result: ToolSearchResult) -> str:
    """What became of a ``domain=`` that names no known domain ("" when it did)."""
    if result.domain_requested is None:
        return ""
    requested = result.domain_requested
    if len(requested) > _DOMAIN_CHARS:  # a pasted text as domain: not echoed whole
        requested = requested[:_DOMAIN_CHARS] + "…"
    asked = json.dumps(requested, ensure_ascii=False)
    if result.domain_used is not None:
        return (
            f"There is no domain named {asked}; searched the closest one, "
            f"{json.dumps(result.domain_used, ensure_ascii=False)}, instead."
        )
    return f"There is no domain named {asked}; searched all tools instead."


def format_search_result(result: ToolSearchResult, index: ToolIndex) -> str:
    """The text the agent reads after ``request_tools`` (one wording per kind of answer)."""
    text = _format_answer(result, index)
    note = _domain_note(result)
    return f"{note}\n{text}" if note else text


def _format_answer(result: ToolSearchResult, index: ToolIndex) -> str:
    if result.fallback == "name" and result.matches:
        rest = result.rest
        named = [m for m in result.matches if m.reason == "name"]
        lines = ["Tools loaded by name:", *_tool_lines(ToolSearchResult(matches=named), index)]
        if rest is not None and rest.matches:
            lines.append(f"For the rest of the request ({_quoted(result.rest_query)}):")
            lines.append(_format_answer(rest, index))
        return "\n".join(lines)
    if result.fallback == "candidates" and result.matches:
        lines = [
            "No confident match for that request. Best guesses, loaded so you can call one "
            "now if it fits:",
            *_tool_lines(result, index),
            "If none fits, call request_tools again describing the capability in other "
            "plain-English words, or pass one of these domains: "
            f"{_domain_listing(result, index)}.",
        ]
        return "\n".join(lines)
    if result.fallback == "domain" and result.matches:
        lines = ["No single tool matched; tools of the domain you named, now loaded:"]
        return "\n".join([*lines, *_tool_lines(result, index)])
    if result.matches:
        return "\n".join(["Tools now available:", *_tool_lines(result, index)])
    if not result.domains:
        return "No tools matched, and the tool catalog is empty."
    return (
        "No tools matched that request. Describe the capability differently, or pass one of "
        f"these domains: {_domain_listing(result, index)}."
    )


def create_request_tools(index: ToolIndex, *, k: int = 5, name: str = "request_tools") -> BaseTool:
    """Build the ``request_tools(query, domain=None)`` tool over ``index``.

    The tool returns a ``Command`` that records the loaded names in the state field
    ``loaded_tools`` (see :class:`ToolLibrarianStateFields`) together with the
    model-visible result. A failing search answers with a short "unavailable" message
    instead of raising, so the model can retry or continue; "no match" is a different,
    explicit message listing the domains.

    Raises:
        ValueError: ``k`` is not a positive int.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")

    def _command(
        result: ToolSearchResult | None, runtime: ToolRuntime[Any, Any], error: str = ""
    ) -> Any:
        call_id = runtime.tool_call_id or ""
        if result is None:
            text = (
                f"request_tools is unavailable right now ({error}). Continue with the tools "
                "you have, or try again."
            )
            return Command(
                update={
                    "messages": [ToolMessage(text, tool_call_id=call_id, name=name, status="error")]
                }
            )
        loaded = [
            m.name
            for m in result.matches
            if (record := index.get(m.name)) is not None and record.tool is not None
        ]
        turn = current_turn(state_messages(runtime.state))
        text = format_search_result(result, index)
        return Command(
            update={
                "loaded_tools": {"turn": turn, "names": loaded},
                "messages": [ToolMessage(text, tool_call_id=call_id, name=name)],
            }
        )

    # ToolRuntime[Any, Any], not the bare generic: pydantic builds the tool's argument
    # schema from the annotation, and a bare ToolRuntime warned twice a call when the
    # agent had a context_schema (serializing a dataclass context as the TypeVar).
    def request_tools(query: str, runtime: ToolRuntime[Any, Any], domain: str | None = None) -> Any:
        try:
            return _command(index.search(query, k=k, domain=domain), runtime)
        except Exception as exc:  # the model gets a message, the graph keeps running
            return _command(None, runtime, type(exc).__name__)

    async def arequest_tools(
        query: str, runtime: ToolRuntime[Any, Any], domain: str | None = None
    ) -> Any:
        try:
            return _command(await index.asearch(query, k=k, domain=domain), runtime)
        except Exception as exc:
            return _command(None, runtime, type(exc).__name__)

    return StructuredTool.from_function(
        func=request_tools,
        coroutine=arequest_tools,
        name=name,
        description=REQUEST_TOOLS_DESCRIPTION,
    )
