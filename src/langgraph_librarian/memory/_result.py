"""What a running summary step returns, and how it fails."""

from __future__ import annotations

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
