"""Reading a selector model's answer into message ids, strictly.

A usable answer is a non-empty list of integers that are known ids, or an explicit
"no earlier message is needed" (``IDs: none``), in one of the forms the prompts ask for:
an ``IDs: [...]`` line (the label a word of its own: "Paid: 5" is not one), a JSON object
with an ``ids`` list, or an answer that is nothing but a JSON list. Lists inside prose
are not read. Everything else is unusable and the caller falls back to the local
selector: a bare ``[]`` (the prompt's own example echoed back, or a lazy answer), an
array of strings (``"tags": ["x"]``), a list of unknown ids, prose without a list.
Reading ``[]`` as "select nothing" would silently hand the agent only the recent turns;
a fallback costs a few hundred tokens at most.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field

__all__ = ["parse_selected_ids"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_LABELLED = re.compile(
    r"(?<![\w-])(?:selected[_ ]|message[_ ])?ids?(?![\w-])\s*[:=]\s*(\[[^\]\n]*\]|[^\n]*)",
    re.IGNORECASE,
)
_ARRAY = re.compile(r"\[[^\[\]]*\]")
_OBJECT = re.compile(r"\{[^{}]*\}")
_INT = re.compile(r"\s*-?\d{1,12}\s*")
_RANGE = re.compile(r"\s*(\d{1,12})\s*(?:-|–|\.\.|to)\s*(\d{1,12})\s*")
_NONE = re.compile(r"\s*\[?\s*(?:none|nothing|no messages?|n/a)\s*\]?\s*\.?\s*", re.IGNORECASE)
_ID_KEYS = ("ids", "selected_ids", "message_ids", "IDs", "selected")
_MAX_RANGE = 500


@dataclass
class ParsedSelection:
    """What could be read from a selector answer.

    Attributes:
        ids: Known ids in the order given, without duplicates.
        found: True when the answer is usable: ``ids`` is non-empty, or ``none`` is set.
        none: The answer says explicitly that no earlier message is needed.
        invalid: Ids that were given but are not in the index.
        problem: Why the answer is unusable (``found`` is false).
    """

    ids: list[int] = field(default_factory=list)
    found: bool = False
    none: bool = False
    invalid: list[str] = field(default_factory=list)
    problem: str | None = None


def _as_ids(items: object, *, text_form: bool) -> list[int] | None:
    """Integers of an id list; ``None`` when it is not one (strings, objects, empty)."""
    if isinstance(items, str):
        # A sentence's full stop ("IDs: 3, 5.") ends the list; it is not part of an id.
        body = items.strip().rstrip(".").strip("[]")
        parts: list[object] = [p for p in re.split(r"[,\s]+", body) if p]
    elif isinstance(items, list):
        parts = list(items)
    else:
        return None
    values: list[int] = []
    for part in parts:
        if isinstance(part, bool):
            return None
        if isinstance(part, int):
            values.append(part)
        elif (isinstance(part, float) and part.is_integer()) or (
            isinstance(part, str) and _INT.fullmatch(part)
        ):
            values.append(int(part))
        elif isinstance(part, str) and text_form and (span := _RANGE.fullmatch(part)):
            start, end = int(span.group(1)), int(span.group(2))
            # An absurd range is read as its two ends, not expanded.
            values.extend(range(start, end + 1) if 0 <= end - start <= _MAX_RANGE else [start, end])
        else:
            return None
    return values or None


Reading = tuple[list[int] | None, bool]  # (ids, explicit none)


def _from_object(value: object) -> Reading | None:
    """(ids, explicit none) from ``{"ids": [...]}``-like objects; ``None`` if not one."""
    if not isinstance(value, dict):
        return None
    none = value.get("none_needed") is True or value.get("none") is True
    for key in _ID_KEYS:
        if key in value:
            ids = _as_ids(value[key], text_form=False)
            return ids, none and not ids
    return (None, True) if none else None


def _candidates(text: str) -> list[tuple[int, Reading]]:
    """Every usable reading in ``text`` with its position; the last one is the answer."""
    found: list[tuple[int, Reading]] = []
    covered: list[tuple[int, int]] = []  # spans of JSON objects and fences: read as a whole
    stripped = text.strip()
    try:
        whole: object = json.loads(stripped)
    except (ValueError, TypeError):
        whole = None
    if whole is not None:
        covered.append((0, len(text)))
        reading = _from_object(whole)
        if reading is None and isinstance(whole, list):
            reading = (_as_ids(whole, text_form=False), False)
        if reading is not None and (reading[0] is not None or reading[1]):
            found.append((0, reading))
    for pattern in (_FENCE, _OBJECT):
        for match in pattern.finditer(text):
            blob = match.group(1) if pattern is _FENCE else match.group(0)
            try:
                value = json.loads(blob)
            except (ValueError, TypeError):
                continue
            covered.append(match.span())
            reading = _from_object(value)
            if reading is None and isinstance(value, list):
                reading = (_as_ids(value, text_form=False), False)
            if reading is not None and (reading[0] is not None or reading[1]):
                found.append((match.start(), reading))
    for match in _LABELLED.finditer(text):
        value_text = match.group(1)
        if _NONE.fullmatch(value_text):
            found.append((match.start(), (None, True)))
        else:
            try:
                labelled: object = json.loads(value_text)
            except ValueError:
                labelled = value_text
            if not isinstance(labelled, list):
                labelled = value_text  # "IDs: 3" is JSON for one integer: read it as text
            ids = _as_ids(labelled, text_form=not isinstance(labelled, list))
            if ids is not None:
                found.append((match.start(), (ids, False)))
    return found


def _read(text: str) -> tuple[list[int] | None, bool, str]:
    """(ids or None, explicit none, problem) from the last usable reading in ``text``."""
    found = _candidates(text)
    if found:
        ids, none = max(found, key=lambda item: item[0])[1]
        return ids, none, ""
    if re.search(r"\[\s*\]", text):
        return None, False, "empty id list (an explicit answer is 'IDs: none')"
    for match in _ARRAY.finditer(text):
        with contextlib.suppress(ValueError):
            if _as_ids(json.loads(match.group(0)), text_form=False):
                return None, False, "numbers in prose, not an 'IDs: [...]' line"
    if _ARRAY.search(text):
        return None, False, "a list that is not of integer message ids"
    return None, False, "no list of message ids in the answer"


def parse_selected_ids(text: str, valid_ids: Collection[int]) -> ParsedSelection:
    """Read message ids from a selector answer.

    Accepts ``IDs: [1, 2]``, ``IDs: 3, 5``, ranges in text (``IDs: 4-6``), JSON objects
    (``{"ids": [...]}``), code fences, and an answer that is only an integer array
    (``[4, 5]``, ``["3"]``); the last labelled ``IDs:`` line wins. Lists in prose
    ("I looked at [1, 2]") and labels inside words ("Paid: 5") are not id lists.
    ``IDs: none`` (or ``{"ids": [], "none_needed": true}``) means no earlier message is
    needed. An empty list, a list of non-integers or only unknown ids is not usable
    (``found`` is false and ``problem`` says why).

    Example:
        >>> parse_selected_ids("Message 4 changes 2.\\nIDs: [2, 4]", {2, 4}).ids
        [2, 4]
        >>> parse_selected_ids("IDs: []", {2, 4}).found
        False
    """
    if text is not None and not isinstance(text, str):
        raise TypeError(f"parse_selected_ids: answer must be a str, not {type(text).__name__}")
    result = ParsedSelection()
    try:
        ids, none, problem = _read(text or "")
    except (ValueError, RecursionError, OverflowError) as exc:
        # A hostile or broken answer (an integer of thousands of digits, arrays nested
        # thousands deep) is an unusable answer, never an exception.
        result.problem = f"unreadable answer ({type(exc).__name__})"
        return result
    if none:
        result.found = result.none = True
        return result
    if ids is None:
        result.problem = problem
        return result
    valid = set(valid_ids)
    for value in ids:
        if value in valid:
            if value not in result.ids:
                result.ids.append(value)
        else:
            result.invalid.append(str(value))
    result.found = bool(result.ids)
    if not result.found:
        result.problem = "selector returned only unknown ids"
    return result
