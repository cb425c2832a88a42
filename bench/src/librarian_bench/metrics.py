"""Per-question outcomes and their aggregation."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian.hydrate import COMPACT_MARK

__all__ = ["Outcome", "answer_contained", "evidence_recall", "percentile", "summarize_outcomes"]

_NORMALIZE = re.compile(r"[^\w$.,:%-]+")


def missed_evidence(evidence: Sequence[str], context: Sequence[BaseMessage]) -> list[str]:
    """The gold evidence ids not given whole in ``context`` (see :func:`evidence_recall`)."""
    present = {m.id for m in context if not m.additional_kwargs.get(COMPACT_MARK)}
    return [e for e in evidence if e not in present]


def evidence_recall(evidence: Sequence[str], context: Sequence[BaseMessage]) -> float:
    """Share of gold evidence message ids present in ``context`` (1.0 when there is none).

    A message given in short form (a recent message shortened to fit the budget) does
    not count: its full text is what the evidence is.
    """
    if not evidence:
        return 1.0
    present = {m.id for m in context if not m.additional_kwargs.get(COMPACT_MARK)}
    return sum(1 for e in evidence if e in present) / len(evidence)


def _norm(text: str) -> str:
    return _NORMALIZE.sub(" ", text.lower()).strip()


def answer_contained(answer: str, context: Sequence[BaseMessage]) -> bool:
    """Offline proxy for answer success: every part of the gold answer occurs in the context.

    Multi-part gold answers (``"a -> b"``, ``"x; y"``) need all parts.
    """
    haystack = _norm(" ".join(message_text(m) for m in context))
    parts = [p for p in re.split(r"\s*(?:->|;)\s*", str(answer)) if p.strip()]
    return bool(parts) and all(_norm(p) in haystack for p in parts)


@dataclass
class Outcome:
    """One strategy's result on one question."""

    strategy: str
    dataset: str
    conversation: str
    question: str
    category: str
    recall: float
    success: bool
    contained: bool
    context_tokens: int
    selection_tokens: int
    indexing_tokens: float
    latency_ms: float
    fallback: bool = False
    answer_correct: bool | None = None
    answer: str | None = None
    selection: str = ""
    fallback_reason: str | None = None
    kept_local: int = 0  # offline picks kept next to the model's (LLM selections)
    missed: list[str] = field(default_factory=list)  # evidence ids not given whole

    @property
    def total_tokens(self) -> float:
        return self.indexing_tokens + self.selection_tokens + self.context_tokens

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["total_tokens"] = self.total_tokens
        return data


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank; 0.0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def summarize_outcomes(outcomes: Iterable[Outcome]) -> dict[str, Any]:
    """Aggregate metrics for a group of outcomes."""
    items = list(outcomes)
    if not items:
        return {"questions": 0}
    latencies = [o.latency_ms for o in items]
    return {
        "questions": len(items),
        "context_success": sum(o.success for o in items) / len(items),
        "evidence_recall": statistics.fmean(o.recall for o in items),
        "answer_containment": sum(o.contained for o in items) / len(items),
        "context_tokens": statistics.fmean(o.context_tokens for o in items),
        "total_tokens": statistics.fmean(o.total_tokens for o in items),
        "latency_p50_ms": percentile(latencies, 0.5),
        "latency_p95_ms": percentile(latencies, 0.95),
        "fallbacks": sum(o.fallback for o in items),
        **_selection_breakdown(items),
        **_answer_success(items),
    }


def _selection_breakdown(items: Sequence[Outcome]) -> dict[str, Any]:
    """For LLM selection: how often the model's choice was used, and how each path fared.

    Success through the local fallback is the offline engine's success, not the
    model's; reporting them apart keeps a failing selector from hiding behind it.
    """
    llm = [o for o in items if o.selection == "llm"]
    fell_back = [o for o in items if o.fallback]
    if not llm and not fell_back:
        return {}
    reasons: dict[str, int] = {}
    for o in fell_back:
        key = (o.fallback_reason or "unknown")[:80]
        reasons[key] = reasons.get(key, 0) + 1
    return {
        "llm_selection_rate": len(llm) / len(items),
        "fallback_rate": len(fell_back) / len(items),
        "context_success_llm": sum(o.success for o in llm) / len(llm) if llm else None,
        "context_success_fallback": (
            sum(o.success for o in fell_back) / len(fell_back) if fell_back else None
        ),
        "fallback_reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])[:5]),
        "kept_local_mean": statistics.fmean(o.kept_local for o in llm) if llm else None,
    }


def _answer_success(items: Sequence[Outcome]) -> dict[str, Any]:
    judged = [o for o in items if o.answer_correct is not None]
    if not judged:
        return {}
    return {"answer_success": sum(bool(o.answer_correct) for o in judged) / len(judged)}
