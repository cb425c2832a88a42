"""The tool librarian: intent-stated tool discovery with hot-loading."""

from langgraph_librarian.tools.calibration import calibrate_thresholds
from langgraph_librarian.tools.index import ToolIndex, ToolSearchResult
from langgraph_librarian.tools.middleware import ToolLibrarianMiddleware
from langgraph_librarian.tools.request_tools import (
    ToolLibrarianStateFields,
    create_request_tools,
    format_search_result,
)

__all__ = [
    "ToolIndex",
    "ToolLibrarianMiddleware",
    "ToolLibrarianStateFields",
    "ToolSearchResult",
    "calibrate_thresholds",
    "create_request_tools",
    "format_search_result",
]
