"""What a selector returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Selection", "SelectionStrategy"]

SelectionStrategy = Literal["llm", "local", "local_fallback"]


@dataclass
class Selection:
    """Result of selecting earlier messages for a query.

    Attributes:
        ids: Selected message positions, most relevant first.
        reasoning: The selector's raw answer (LLM) or a short account (local).
        strategy: Which selector produced ``ids``.
        fallback_reason: Why the LLM selector's answer was not used, if it was not.
        candidates: How many index entries the selector considered.
        shortlisted: True when the index was prefiltered to fit the prompt budget.
        prompt_tokens: Estimated size of the selection prompt (0 for local).
        expanded_ids: Ids added by dependency expansion (local selector).
    """

    ids: list[int] = field(default_factory=list)
    reasoning: str = ""
    strategy: SelectionStrategy = "local"
    fallback_reason: str | None = None
    candidates: int = 0
    shortlisted: bool = False
    prompt_tokens: int = 0
    expanded_ids: list[int] = field(default_factory=list)
