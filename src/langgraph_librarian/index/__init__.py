"""Indexing: reconcile the index with the messages (by identity), summarize what is new."""

from langgraph_librarian.index.pipeline import aupdate_index, update_index
from langgraph_librarian.index.reconcile import reconcile_index

__all__ = ["aupdate_index", "reconcile_index", "update_index"]
