"""Datasets for ``librarian bench`` and the demo."""

from langgraph_librarian.evals.datasets.base import Conversation, Question

__all__ = ["Conversation", "Question"]
