"""langgraph-librarian: decide what a LangGraph / LangChain agent sees of a long conversation.

Select-then-hydrate: every message is summarized into an index after the reply;
before the next reply a selector picks the relevant entries and hydration hands the
agent their full text plus the recent turns.
"""

from langgraph_librarian.config import LOCAL, LibrarianConfig, resolve_config
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.errors import IndexStoreError, LibrarianError
from langgraph_librarian.graph import create_librarian_graph
from langgraph_librarian.hydrate import Hydrated, hydrate
from langgraph_librarian.index.pipeline import IndexUpdate, aupdate_index, update_index
from langgraph_librarian.index.reconcile import Reconciled, reconcile_index
from langgraph_librarian.middleware import (
    LibrarianMiddleware,
    LibrarianMiddlewareState,
    create_librarian_hook,
)
from langgraph_librarian.nodes import (
    LibrarianNode,
    aindex_messages,
    aselect_and_hydrate,
    create_index_node,
    create_librarian_node,
    index_messages,
    select_and_hydrate,
)
from langgraph_librarian.select.llm import LLMSelector
from langgraph_librarian.select.local import LocalSelector
from langgraph_librarian.select.parse import parse_selected_ids
from langgraph_librarian.select.result import Selection
from langgraph_librarian.state import LibrarianState, merge_index, merge_metadata
from langgraph_librarian.stores import BaseIndexStore, FileIndexStore, LangGraphIndexStore
from langgraph_librarian.tokens import TokenCounter

__version__ = "0.2.0.dev0"

__all__ = [
    "LOCAL",
    "BaseIndexStore",
    "FileIndexStore",
    "Hydrated",
    "IndexEntry",
    "IndexStoreError",
    "IndexUpdate",
    "LLMSelector",
    "LangGraphIndexStore",
    "LibrarianConfig",
    "LibrarianError",
    "LibrarianMiddleware",
    "LibrarianMiddlewareState",
    "LibrarianNode",
    "LibrarianState",
    "LocalSelector",
    "Reconciled",
    "Selection",
    "TokenCounter",
    "__version__",
    "aindex_messages",
    "aselect_and_hydrate",
    "aupdate_index",
    "create_index_node",
    "create_librarian_graph",
    "create_librarian_hook",
    "create_librarian_node",
    "hydrate",
    "index_messages",
    "merge_index",
    "merge_metadata",
    "parse_selected_ids",
    "reconcile_index",
    "resolve_config",
    "select_and_hydrate",
    "update_index",
]
