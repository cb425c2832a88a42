"""The datasets' text and tables: data files in ``librarian_bench/data``, read once."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["data_json", "data_sections", "data_text"]


@cache
def data_text(name: str) -> str:
    """The text of ``librarian_bench/data/<name>`` (a ``/``-separated path)."""
    path = resources.files("librarian_bench").joinpath("data", *name.split("/"))
    return path.read_text(encoding="utf-8")


def data_json(name: str) -> Any:
    """A JSON data file, parsed (a fresh copy each call: callers may not share it)."""
    return json.loads(data_text(name))


def data_sections(name: str) -> dict[str, list[str]]:
    """A text file of ``## section`` blocks: the non-blank lines of each, stripped.

    Lines before the first header describe the file and are skipped.
    """
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in data_text(name).splitlines():
        line = raw.strip()
        if line.startswith("## "):
            current = sections[line[3:].strip()] = []
        elif line and current is not None:
            current.append(line)
    return sections
