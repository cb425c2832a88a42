"""Exceptions raised by langgraph-librarian."""

from __future__ import annotations

__all__ = ["IndexStoreError", "LibrarianError", "MissingThreadError"]


class LibrarianError(Exception):
    """Base class of the library's errors."""


class IndexStoreError(LibrarianError, ValueError):
    """An index store could not read or write an index (corrupt file, bad data)."""


class ConfigurationError(LibrarianError, ValueError):
    """A problem only the application's settings can fix; retrying will not help.

    The library never fails open on these (nor on LangGraph interrupts): everything else
    that goes wrong in a step of its own is absorbed, logged, and the turn goes on.
    """


class ModelConfigError(ConfigurationError):
    """A model string that cannot become a model (unknown provider, missing credentials)."""


class MissingThreadError(ConfigurationError):
    """A shared index store needs a thread id to key the index by, and the run has none.

    Pass ``config={"configurable": {"thread_id": "..."}}`` (non-empty). Without a
    thread id two conversations would read and overwrite one index.
    """
