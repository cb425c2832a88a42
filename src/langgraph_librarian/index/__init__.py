"""Indexing: reconcile the index with the messages (by identity), summarize what is new."""

from langgraph_librarian.index.pipeline import IndexUpdate, aupdate_index, update_index
from langgraph_librarian.index.reconcile import Reconciled, reconcile_index

__all__ = ["IndexUpdate", "Reconciled", "aupdate_index", "reconcile_index", "update_index"]
