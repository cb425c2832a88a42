"""What a bench strategy hands the answering model: shared by every strategy module."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import BaseMessage

__all__ = ["ContextResult"]


@dataclass
class ContextResult:
    """What a strategy put in front of the answering model for one question."""

    messages: list[BaseMessage]
    context_tokens: int
    selection_tokens: int = 0
    latency_ms: float = 0.0
    fallback: bool = False
    selection: str = ""
    fallback_reason: str | None = None
    kept_local: int = 0
