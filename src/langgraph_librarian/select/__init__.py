"""Selectors: which earlier messages the agent needs for the current query.

``LocalSelector`` is the offline engine (hybrid lexical + embedding ranking with
dependency expansion); ``LLMSelector`` asks a chat model over a bounded, fenced index
and falls back to the local one. Both return a :class:`Selection`.
"""

from langgraph_librarian.select.llm import LLMSelector
from langgraph_librarian.select.local import LocalSelector
from langgraph_librarian.select.parse import parse_selected_ids
from langgraph_librarian.select.result import Selection, Selector

__all__ = ["LLMSelector", "LocalSelector", "Selection", "Selector", "parse_selected_ids"]
