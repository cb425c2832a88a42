"""How to ask a model for a structured selection: a small capability ladder.

Rungs, most to least structured: ``structured`` (the model's own
``with_structured_output``: json_schema for OpenAI-compatible clients, tool calling
elsewhere), ``json_mode`` (``response_format={"type": "json_object"}``) and ``text``
(the ``IDs: [...]`` line). Local servers often reject json_schema (llama.cpp answers
HTTP 500) while JSON mode works. When a rung fails with a capability error (the request
itself is refused, not a timeout), the next rung is tried in the same turn. Both are
remembered for that model object: a refused form is never asked again (even when no
later form gave a usable answer), and later turns start at the form that worked.
``text`` is never written off: it is the last resort.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from langgraph_librarian._engine.failures import is_retryable, status_code
from langgraph_librarian.select._answers import SelectionOutput

__all__ = [
    "OUTPUT_MODES",
    "OutputMode",
    "Rung",
    "build",
    "is_capability_error",
    "refused",
    "remember",
    "rungs",
]

Rung = Literal["structured", "json_mode", "text"]
OutputMode = Literal["auto", "structured", "json_mode", "text"]
OUTPUT_MODES: tuple[str, ...] = get_args(OutputMode)
_ORDER: tuple[Rung, ...] = ("structured", "json_mode", "text")
_CAPABILITY_STATUS = frozenset({400, 404, 405, 415, 422, 500, 501})

# A JSON schema rather than the pydantic class: clients then parse into plain dicts,
# which serialize cleanly in traces (a pydantic object in the raw message's
# ``parsed`` field makes pydantic warn whenever the message is dumped).
_SCHEMA: dict[str, Any] = SelectionOutput.model_json_schema()


class _Known:
    """What one model's server accepted and refused."""

    def __init__(self, model: BaseChatModel) -> None:
        self.ref = weakref.ref(model)
        self.working: Rung | None = None
        self.refused: set[Rung] = set()


_known: dict[int, _Known] = {}
_lock = threading.Lock()


def _entry(model: BaseChatModel, create: bool) -> _Known | None:
    """Call with ``_lock`` held."""
    known = _known.get(id(model))
    if known is not None and known.ref() is model:
        return known
    if not create:
        return None
    for key in [k for k, v in _known.items() if v.ref() is None]:
        del _known[key]  # models that no longer exist
    known = _known[id(model)] = _Known(model)
    return known


def _overrides(model: BaseChatModel, name: str) -> bool:
    return getattr(type(model), name) is not getattr(BaseChatModel, name)


def build(model: BaseChatModel, rung: Rung) -> Runnable[Any, Any] | None:
    """The runnable for ``rung``, or ``None`` when this model cannot offer it."""
    if rung == "text":
        return model
    try:
        if rung == "structured":
            if not (_overrides(model, "bind_tools") or _overrides(model, "with_structured_output")):
                return None  # the base class would raise NotImplementedError at call time
            return model.with_structured_output(_SCHEMA, include_raw=True)
        return model.with_structured_output(_SCHEMA, method="json_mode", include_raw=True)
    except (NotImplementedError, TypeError, ValueError):
        return None


def rungs(model: BaseChatModel, mode: OutputMode) -> list[Rung]:
    """Rungs to try, in order, for ``mode`` (``"auto"`` starts where this model last worked)."""
    if mode != "auto":
        return [mode]
    with _lock:
        known = _entry(model, create=False)
        working = known.working if known else None
        refused = set(known.refused) if known else set()
    start = _ORDER.index(working) if working is not None else 0
    return [r for r in _ORDER[start:] if r not in refused or r == "text"]


def remember(model: BaseChatModel, rung: Rung) -> None:
    """``rung`` gave a usable answer: later turns with this model start there."""
    with _lock:
        known = _entry(model, create=True)
        assert known is not None
        known.working = rung
        known.refused.discard(rung)


def refused(model: BaseChatModel, rung: Rung) -> None:
    """The server refused ``rung`` for this model: later turns do not ask it again."""
    with _lock:
        known = _entry(model, create=True)
        assert known is not None
        known.refused.add(rung)
        if known.working == rung:
            known.working = None


def is_capability_error(exc: BaseException) -> bool:
    """The request form was refused (worth trying a simpler one), not a transient failure."""
    if isinstance(exc, NotImplementedError):
        return True
    if is_retryable(exc):
        return False
    status = status_code(exc)
    return status in _CAPABILITY_STATUS if status is not None else False
