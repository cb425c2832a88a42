"""Data of the tool phrasing set: a 55-tool catalog and requests written for it.

Every tool has seven requests, in this order of styles: two indirect (a situation or
goal that needs the tool without naming what it does), one colloquial, one elliptic
(a terse fragment), one with typos, and two in another language (French, Spanish or
German). ``NO_TOOL`` holds requests that no tool of the catalog serves. The data is
``librarian_bench/data/tool_phrasings.json``.
"""

from __future__ import annotations

from librarian_bench.datasets._files import data_json

_DATA = data_json("tool_phrasings.json")

STYLES: tuple[str, ...] = tuple(_DATA["styles"])

# name: (description, {argument: description})
TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    name: (description, args) for name, (description, args) in _DATA["tools"].items()
}

# name: (indirect, indirect, colloquial, elliptic, typo, foreign, foreign)
REQUESTS: dict[str, tuple[str, ...]] = {
    name: tuple(requests) for name, requests in _DATA["requests"].items()
}

NO_TOOL: tuple[str, ...] = tuple(_DATA["no_tool"])
