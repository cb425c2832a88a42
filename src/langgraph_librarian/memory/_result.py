"""What a running summary step returns, how it fails, and the checks of its settings.

The checks raise a ``TypeError`` naming the parameter for a wrong type (``"6"`` from
JSON or an environment variable, ``2.5``, ``True``) and a ``ValueError`` for a number
out of range, as :class:`~langgraph_librarian.LibrarianConfig` does."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph_librarian.errors import LibrarianError

__all__ = ["SummarizationError", "SummaryResult"]


class SummarizationError(LibrarianError):
    """The summary model failed or timed out (callers keep their messages and summary)."""


@dataclass
class SummaryResult:
    """A new running summary and how it was made.

    Attributes:
        summary: The summary text, within the summarizer's ``max_summary_tokens``.
        method: ``"extractive"`` (offline, also when a model's answer was rejected)
            or ``"llm"``.
        summarized_count: Messages folded in by this call.
        summary_tokens: Token count of ``summary``.
        recompressed: True when the result had to be shortened to fit the budget.
        latency_ms: Wall time of the call.
        notes: Non-fatal events (a rejected answer, a failed re-compression call...).
    """

    summary: str
    method: Literal["extractive", "llm"]
    summarized_count: int
    summary_tokens: int
    recompressed: bool = False
    latency_ms: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_metadata(self) -> dict[str, Any]:
        """JSON-safe description for graph state (``summary_metadata``)."""
        return {
            "summary_method": self.method,
            "summarized_count": self.summarized_count,
            "summary_tokens": self.summary_tokens,
            "summary_recompressed": self.recompressed,
            "summary_latency_ms": round(self.latency_ms, 3),
            **({"summary_notes": list(self.notes)} if self.notes else {}),
        }


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
