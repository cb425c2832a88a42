"""The tool librarian: intent-stated tool discovery with hot-loading."""

from langgraph_librarian.tools.index import (
    ToolIndex,
    ToolMatch,
    ToolRecord,
    ToolSearchResult,
    infer_domain,
)
from langgraph_librarian.tools.middleware import ToolLibrarianMiddleware, ToolLibrarianState
from langgraph_librarian.tools.request_tools import (
    LoadedTools,
    ToolLibrarianStateFields,
    create_request_tools,
    current_turn,
    format_search_result,
    merge_loaded_tools,
)

__all__ = [
    "LoadedTools",
    "ToolIndex",
    "ToolLibrarianMiddleware",
    "ToolLibrarianState",
    "ToolLibrarianStateFields",
    "ToolMatch",
    "ToolRecord",
    "ToolSearchResult",
    "create_request_tools",
    "current_turn",
    "format_search_result",
    "infer_domain",
    "merge_loaded_tools",
]
