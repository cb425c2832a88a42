"""Datasets for ``librarian bench`` and the demo."""

from librarian_bench.datasets.base import Conversation, Question

__all__ = ["Conversation", "Question"]
