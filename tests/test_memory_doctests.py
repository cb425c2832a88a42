"""The examples in the memory package's docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "langgraph_librarian.memory._assistant",
    "langgraph_librarian.memory._cut",
    "langgraph_librarian.memory._graph",
    "langgraph_librarian.memory._history",
    "langgraph_librarian.memory._middleware",
    "langgraph_librarian.memory._nodes",
    "langgraph_librarian.memory._prompts",
    "langgraph_librarian.memory._summarizer",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
