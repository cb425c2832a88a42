"""Where the index lives between turns when it is not kept in graph state."""

from langgraph_librarian.stores.base import BaseIndexStore
from langgraph_librarian.stores.file import FileIndexStore
from langgraph_librarian.stores.langgraph_store import LangGraphIndexStore

__all__ = [
    "BaseIndexStore",
    "FileIndexStore",
    "LangGraphIndexStore",
]
