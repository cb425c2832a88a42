"""langgraph-librarian: decide what a LangGraph / LangChain agent sees of a long conversation.

Select-then-hydrate: every message is summarized into an index after the reply;
before the next reply a selector picks the relevant entries and hydration hands the
agent their full text plus the recent turns.

The top level holds what an application needs. Building blocks live in documented
submodules: :mod:`langgraph_librarian.select` (selectors), :mod:`langgraph_librarian.index`
(indexing and reconciliation), :mod:`langgraph_librarian.hydrate`,
:mod:`langgraph_librarian.stores`, :mod:`langgraph_librarian.tools` (the tool librarian),
:mod:`langgraph_librarian.memory` (running summary and trimming),
:mod:`langgraph_librarian.recall` (scoped recall across threads) and
:mod:`langgraph_librarian.ui` (the web chat). docs/api.md lists every public name;
docs/architecture.md maps the code's layers (engine, kit, features, faces, apps).
The evaluation (``librarian bench``) is a separate distribution, langgraph-librarian-bench.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph_librarian._engine.calls import INTERNAL_TAG as LIBRARIAN_TAG
    from langgraph_librarian._kit.background import wait_for_background_indexing
    from langgraph_librarian._librarian.turn import SKIP_REASONS
    from langgraph_librarian.config import LOCAL, LibrarianConfig
    from langgraph_librarian.entry import IndexEntry
    from langgraph_librarian.errors import IndexStoreError, LibrarianError, MissingThreadError
    from langgraph_librarian.graph import create_librarian_graph
    from langgraph_librarian.middleware import LibrarianMiddleware, create_librarian_hook
    from langgraph_librarian.nodes import (
        aindex_messages,
        aselect_and_hydrate,
        create_index_node,
        create_librarian_node,
        index_messages,
        select_and_hydrate,
    )
    from langgraph_librarian.state import LibrarianState, merge_index, merge_metadata
    from langgraph_librarian.stores import BaseIndexStore, FileIndexStore, LangGraphIndexStore

# Imported when first used (PEP 562), not with the package: its dependencies (langchain,
# langgraph) take a second or more to import, and the ``librarian`` command, whose
# module is inside this package, handles Ctrl-C only once it runs (a Ctrl-C before then
# printed a traceback). ``from langgraph_librarian import X`` works as before.
_EXPORTS: dict[str, tuple[str, str]] = {
    "LIBRARIAN_TAG": ("langgraph_librarian._engine.calls", "INTERNAL_TAG"),
    "wait_for_background_indexing": (
        "langgraph_librarian._kit.background",
        "wait_for_background_indexing",
    ),
    "SKIP_REASONS": ("langgraph_librarian._librarian.turn", "SKIP_REASONS"),
    "LOCAL": ("langgraph_librarian.config", "LOCAL"),
    "LibrarianConfig": ("langgraph_librarian.config", "LibrarianConfig"),
    "IndexEntry": ("langgraph_librarian.entry", "IndexEntry"),
    "IndexStoreError": ("langgraph_librarian.errors", "IndexStoreError"),
    "LibrarianError": ("langgraph_librarian.errors", "LibrarianError"),
    "MissingThreadError": ("langgraph_librarian.errors", "MissingThreadError"),
    "create_librarian_graph": ("langgraph_librarian.graph", "create_librarian_graph"),
    "LibrarianMiddleware": ("langgraph_librarian.middleware", "LibrarianMiddleware"),
    "create_librarian_hook": ("langgraph_librarian.middleware", "create_librarian_hook"),
    "aindex_messages": ("langgraph_librarian.nodes", "aindex_messages"),
    "aselect_and_hydrate": ("langgraph_librarian.nodes", "aselect_and_hydrate"),
    "create_index_node": ("langgraph_librarian.nodes", "create_index_node"),
    "create_librarian_node": ("langgraph_librarian.nodes", "create_librarian_node"),
    "index_messages": ("langgraph_librarian.nodes", "index_messages"),
    "select_and_hydrate": ("langgraph_librarian.nodes", "select_and_hydrate"),
    "LibrarianState": ("langgraph_librarian.state", "LibrarianState"),
    "merge_index": ("langgraph_librarian.state", "merge_index"),
    "merge_metadata": ("langgraph_librarian.state", "merge_metadata"),
    "BaseIndexStore": ("langgraph_librarian.stores", "BaseIndexStore"),
    "FileIndexStore": ("langgraph_librarian.stores", "FileIndexStore"),
    "LangGraphIndexStore": ("langgraph_librarian.stores", "LangGraphIndexStore"),
}


def __getattr__(name: str) -> Any:
    """A public name, imported on first use; or a submodule not imported yet
    (``langgraph_librarian.memory`` after ``import langgraph_librarian``)."""
    found = _EXPORTS.get(name)
    if found is not None:
        value = getattr(importlib.import_module(found[0]), found[1])
        globals()[name] = value  # once: later reads do not come here
        return value
    if name.isidentifier() and not name.startswith("_"):
        # hasattr(pkg, "x.y") and getattr(pkg, "..", None) must see an AttributeError.
        try:
            spec = importlib.util.find_spec(f"{__name__}.{name}")
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and the submodules imported so far (not the helpers this module
    imports for itself: ``Any``, ``importlib``)."""
    own = {"__version__", "__all__", "__doc__", "__name__", "__path__", "__file__"}
    loaded = {n for n, v in globals().items() if isinstance(v, ModuleType) and n != "importlib"}
    return sorted({*__all__, *own, *(n for n in loaded if not n.startswith("_"))})


__version__ = "0.2.0.dev0"

__all__ = [
    "LIBRARIAN_TAG",
    "LOCAL",
    "SKIP_REASONS",
    "BaseIndexStore",
    "FileIndexStore",
    "IndexEntry",
    "IndexStoreError",
    "LangGraphIndexStore",
    "LibrarianConfig",
    "LibrarianError",
    "LibrarianMiddleware",
    "LibrarianState",
    "MissingThreadError",
    "__version__",
    "aindex_messages",
    "aselect_and_hydrate",
    "create_index_node",
    "create_librarian_graph",
    "create_librarian_hook",
    "create_librarian_node",
    "index_messages",
    "merge_index",
    "merge_metadata",
    "select_and_hydrate",
    "wait_for_background_indexing",
]
