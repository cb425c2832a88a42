"""An independent check for the tool search: new tools, situational and foreign requests.

Written before any tuning of the search on the phrasing set and never tuned on (the
data is ``librarian_bench/data/tool_situations.json``): 30 tools in domains the phrasing
catalog lacks (car, parking, pets, garden, printer, oven, Wi-Fi, ...), each with two
situational requests (a situation that needs the tool, not the capability: "the
tomatoes are wilting") and two in French, German or Spanish, plus 16 requests no tool
serves. The requests are searched against the phrasing catalog and these tools
together (85 tools), so a gain that only appears on the phrasing set shows here.
"""

from __future__ import annotations

from typing import Any

from librarian_bench.datasets._files import data_json
from librarian_bench.datasets.tool_phrasings import (
    PhrasingCase,
    function_schemas,
    phrasing_catalog,
)

__all__ = ["situation_cases", "situation_catalog"]

_DATA = data_json("tool_situations.json")


def situation_catalog() -> list[dict[str, Any]]:
    """The phrasing catalog plus the 30 new tools, as OpenAI-style function schemas."""
    return phrasing_catalog() + function_schemas(_DATA["tools"])


def situation_cases() -> list[PhrasingCase]:
    """Every request (all held out): ``indirect`` (situational), ``foreign``, ``none``."""
    styles = {"situational": "indirect", "foreign": "foreign"}
    cases = [
        PhrasingCase(query, name, styles[_DATA["styles"][i]], "heldout")  # type: ignore[arg-type]
        for name, requests in _DATA["requests"].items()
        for i, query in enumerate(requests)
    ]
    cases += [PhrasingCase(query, None, "none", "heldout") for query in _DATA["no_tool"]]
    return cases
