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
