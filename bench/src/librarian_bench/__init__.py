"""Evaluation: datasets, context strategies, metrics and the ``librarian bench`` runner."""
