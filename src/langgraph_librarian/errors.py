"""Exceptions raised by langgraph-librarian."""

from __future__ import annotations

__all__ = ["IndexStoreError", "LibrarianError"]


class LibrarianError(Exception):
    """Base class of the library's errors."""


class IndexStoreError(LibrarianError, ValueError):
    """An index store could not read or write an index (corrupt file, bad data)."""
