"""Exceptions raised by langgraph-librarian."""

from __future__ import annotations

__all__ = ["IndexStoreError", "LibrarianError", "MissingThreadError"]


class LibrarianError(Exception):
    """Base class of the library's errors."""


class IndexStoreError(LibrarianError, ValueError):
    """An index store could not read or write an index (corrupt file, bad data)."""


class MissingThreadError(LibrarianError, ValueError):
    """A shared index store needs a thread id to key the index by, and the run has none.

    Pass ``config={"configurable": {"thread_id": "..."}}`` (non-empty). Without a
    thread id two conversations would read and overwrite one index.
    """
