"""Argument checks of the memory API: a ``TypeError`` naming the parameter for a wrong
type (``"6"`` from JSON or an environment variable, ``2.5``, ``True``), a ``ValueError``
for a number out of range, as :class:`~langgraph_librarian.LibrarianConfig` does."""

from __future__ import annotations

import numbers

__all__ = ["checked_count", "checked_seconds"]


def checked_count(name: str, value: object, minimum: int) -> int:
    """``value`` as an ``int`` of at least ``minimum``, or a clear error naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def checked_seconds(name: str, value: object, *, positive: bool) -> float:
    """``value`` as a number (``> 0`` when ``positive``, else ``>= 0``), or a clear error."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value}")
    return float(value)
