"""Tolerant parsing of a selector model's answer into message ids."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field

__all__ = ["ParsedSelection", "parse_selected_ids"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_LABELLED = re.compile(
    r"(?:selected[_ ]?)?(?:message[_ ]?)?ids?\s*[:=]\s*(\[[^\]]*\]|[^\n]*)", re.IGNORECASE
)
_ARRAY = re.compile(r"\[[^\[\]]*\]")
_NUMBER_OR_RANGE = re.compile(r"(-?\d+)\s*(?:-|–|\.\.|to)\s*(\d+)|(-?\d+)")
_MAX_RANGE = 500


@dataclass
class ParsedSelection:
    """What could be read from a selector answer.

    Attributes:
        ids: Valid ids in the order given, without duplicates.
        found: True when the answer contained an id list at all (``IDs: []`` counts).
        invalid: Ids that were mentioned but are not in the index.
    """

    ids: list[int] = field(default_factory=list)
    found: bool = False
    invalid: list[str] = field(default_factory=list)


def _numbers(fragment: str) -> list[int]:
    values: list[int] = []
    for match in _NUMBER_OR_RANGE.finditer(fragment):
        if match.group(3) is not None:
            values.append(int(match.group(3)))
            continue
        start, end = int(match.group(1)), int(match.group(2))
        if 0 <= end - start <= _MAX_RANGE:
            values.extend(range(start, end + 1))
        else:
            values.extend([start, end])
    return values


def _from_json(value: object) -> list[object] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("ids", "selected_ids", "message_ids", "IDs", "selected", "messages"):
            if key in value and isinstance(value[key], list):
                return list(value[key])
    return None


def _candidates(text: str) -> list[object] | None:
    """The last id list in ``text``: the final answer wins over ids in the reasoning."""
    stripped = text.strip()
    for blob in [stripped, *reversed(_FENCE.findall(text))]:
        try:
            parsed = _from_json(json.loads(blob))
        except (ValueError, TypeError):
            continue
        if parsed is not None:
            return parsed
    # A JSON object anywhere in the text ({"ids": [...]}).
    for match in reversed(list(re.finditer(r"\{[^{}]*\}", text))):
        try:
            parsed = _from_json(json.loads(match.group(0)))
        except ValueError:
            continue
        if parsed is not None:
            return parsed
    labelled = list(_LABELLED.finditer(text))
    if labelled:
        fragment = labelled[-1].group(1)
        return list(_numbers(fragment)) if fragment.strip() else []
    arrays = _ARRAY.findall(text)
    if arrays:
        return list(_numbers(arrays[-1]))
    return None


def parse_selected_ids(text: str, valid_ids: Collection[int]) -> ParsedSelection:
    """Read message ids from a selector answer.

    Accepts ``IDs: [1, 2]``, bare arrays, JSON objects (``{"ids": [...]}``), code
    fences, ``IDs: 3, 5``, ranges (``4-6``) and string ids (``["3"]``). When the
    answer mentions several lists, the last one wins. Ids not in ``valid_ids`` are
    reported in ``invalid`` and dropped.
    """
    result = ParsedSelection()
    raw = _candidates(text or "")
    if raw is None:
        return result
    result.found = True
    valid = set(valid_ids)
    for item in raw:
        values: list[int]
        if isinstance(item, bool):
            result.invalid.append(str(item))
            continue
        if isinstance(item, int):
            values = [item]
        elif isinstance(item, float) and item.is_integer():
            values = [int(item)]
        elif isinstance(item, str):
            values = _numbers(item)
            if not values:
                result.invalid.append(item)
                continue
        elif isinstance(item, dict) and "id" in item:
            values = _numbers(str(item["id"]))
        else:
            result.invalid.append(str(item))
            continue
        for value in values:
            if value in valid:
                if value not in result.ids:
                    result.ids.append(value)
            else:
                result.invalid.append(str(value))
    return result
