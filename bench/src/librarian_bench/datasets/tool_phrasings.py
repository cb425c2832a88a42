"""A tool catalog with requests phrased the way people speak, split for calibration.

55 tools over 18 domains (email, calendar, phone, smart home, banking, travel, ...),
each with seven hand-written requests: two indirect ones that describe a situation or
goal, one colloquial, one elliptic, one with typos and two in French, Spanish or
German; plus 20 requests that no tool serves. The requests never name the tool.

:func:`phrasing_cases` splits the requests into a ``"calibration"`` half (to choose
thresholds and weights) and a ``"heldout"`` half (to report on), stratified by tool
and by style: each tool has one indirect and one foreign request in each half, and its
three other requests are spread so that both halves hold every style about equally.
The split is deterministic for a given seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

from librarian_bench.datasets._tool_phrasings_data import (
    NO_TOOL,
    REQUESTS,
    STYLES,
    TOOLS,
)

__all__ = ["PhrasingCase", "Split", "phrasing_cases", "phrasing_catalog"]

Split = Literal["all", "calibration", "heldout"]
Style = Literal["indirect", "colloquial", "elliptic", "typo", "foreign", "none"]


@dataclass(frozen=True)
class PhrasingCase:
    """One request.

    Attributes:
        query: The request as written.
        gold: The tool that serves it (``None`` when no tool does).
        style: ``indirect``, ``colloquial``, ``elliptic``, ``typo``, ``foreign`` or
            ``none`` (no tool serves it).
        split: ``calibration`` or ``heldout``.
    """

    query: str
    gold: str | None
    style: Style
    split: Literal["calibration", "heldout"]


def function_schemas(tools: dict[str, Any]) -> list[dict[str, Any]]:
    """``{name: (description, {argument: description})}`` as OpenAI-style function schemas."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {
                    "type": "object",
                    "properties": {
                        arg: {"type": "string", "description": text} for arg, text in args.items()
                    },
                },
            },
        }
        for name, (description, args) in tools.items()
    ]


def phrasing_catalog() -> list[dict[str, Any]]:
    """The catalog as OpenAI-style function schemas (arguments carry descriptions)."""
    return function_schemas(TOOLS)


def _halves(seed: int) -> list[PhrasingCase]:
    cases: list[PhrasingCase] = []
    offset = random.Random(f"{seed}:rotation").randrange(3)
    for i, (name, requests) in enumerate(REQUESTS.items()):
        rng = random.Random(f"{seed}:{name}")
        side: dict[int, str] = {}
        for pair in ((0, 1), (5, 6)):  # the two indirect and the two foreign requests
            first, second = rng.sample(pair, 2)
            side[first], side[second] = "calibration", "heldout"
        # Colloquial, elliptic, typo: rotate which go to calibration (two for even
        # tools, one for odd ones) so both halves get every style about equally often.
        turn = (i + offset) % 3
        singles = [2, 3, 4][turn:] + [2, 3, 4][:turn]
        n_cal = 2 if i % 2 == 0 else 1
        for j, index in enumerate(singles):
            side[index] = "calibration" if j < n_cal else "heldout"
        for index, query in enumerate(requests):
            style: Style = STYLES[index]  # type: ignore[assignment]
            cases.append(PhrasingCase(query, name, style, side[index]))  # type: ignore[arg-type]
    rng = random.Random(f"{seed}:none")
    order = list(range(len(NO_TOOL)))
    rng.shuffle(order)
    for rank, index in enumerate(order):
        half = "calibration" if rank < len(NO_TOOL) // 2 else "heldout"
        cases.append(PhrasingCase(NO_TOOL[index], None, "none", half))  # type: ignore[arg-type]
    return cases


def phrasing_cases(split: Split = "all", *, seed: int = 13) -> list[PhrasingCase]:
    """The requests of one half (``"calibration"``/``"heldout"``) or of both (``"all"``)."""
    if split not in ("all", "calibration", "heldout"):
        raise ValueError(f"split must be 'all', 'calibration' or 'heldout' (got {split!r})")
    cases = _halves(seed)
    return cases if split == "all" else [c for c in cases if c.split == split]
