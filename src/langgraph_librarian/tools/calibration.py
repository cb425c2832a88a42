"""Search thresholds per embedding model, and how to derive them for another model.

A tool search scores every tool ``semantic_weight * cosine + (1 - semantic_weight) *
lexical`` (see :class:`~langgraph_librarian.tools.ToolIndex`). Cosine scales differ
between embedding models, so the thresholds that decide between a confident answer,
low-confidence candidates and the domain list are stored per model id (the
``model_id`` of :func:`langgraph_librarian.embeddings.embedding_model_id`).

The stored values come from :func:`calibrate_thresholds` on the calibration half of
the phrasing set (``langgraph_librarian.evals.datasets.tool_phrasings``); the held-out
half is only used for reporting. ``benchmarks/bench_tools.py --phrasings --calibrate``
re-derives them, and ``tests/test_tools_search.py`` checks that doing so reproduces
the table below.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    from langgraph_librarian.tools.index import ToolIndex

__all__ = [
    "CALIBRATIONS",
    "DEFAULT_CALIBRATION",
    "LEXICAL_MODEL_ID",
    "CalibrationCase",
    "SearchCalibration",
    "calibrate_thresholds",
    "calibration_for",
]

LEXICAL_MODEL_ID = "lexical"
"""Key of the calibration used when the index has no embedding model."""


@dataclass(frozen=True)
class SearchCalibration:
    """The score cut-offs of one engine.

    Attributes:
        threshold: A best score at or above it is a confident answer.
        domain_threshold: A match at or above it brings its domain siblings.
        candidate_threshold: Below ``threshold`` but at or above it, the best
            candidates are loaded and marked low-confidence; below it the search
            answers with the domain list.
        semantic_weight: Weight of the cosine similarity in the hybrid score (the
            lexical coverage gets the rest).
    """

    threshold: float
    domain_threshold: float
    candidate_threshold: float
    semantic_weight: float


CALIBRATIONS: dict[str, SearchCalibration] = {
    "minilm-static-256-v1": SearchCalibration(0.595, 0.595, 0.058, 0.4),
    "all-MiniLM-L6-v2": SearchCalibration(0.508, 0.508, 0.079, 0.6),
    LEXICAL_MODEL_ID: SearchCalibration(math.inf, math.inf, 0.01, 0.0),
}
"""Calibration per embedding model id (measured values, see docs/tools.md)."""

DEFAULT_CALIBRATION = CALIBRATIONS["all-MiniLM-L6-v2"]
"""For embedding models without a calibration of their own."""


class CalibrationCase(Protocol):
    """A request and the tool that serves it (``gold`` is ``None`` when none does)."""

    @property
    def query(self) -> str: ...

    @property
    def gold(self) -> str | None: ...


def calibration_for(embeddings: Embeddings | None) -> SearchCalibration:
    """The stored calibration for ``embeddings`` (``None``: the lexical engine)."""
    if embeddings is None:
        return CALIBRATIONS[LEXICAL_MODEL_ID]
    from langgraph_librarian.embeddings import embedding_model_id

    return CALIBRATIONS.get(embedding_model_id(embeddings), DEFAULT_CALIBRATION)


def _rank(scores: np.ndarray, row: int) -> int:
    """0-based rank of ``row``; ties count against it, and a score of 0 never ranks."""
    mine = scores[row]
    if not mine > 0:
        return len(scores)
    return int((scores > mine).sum() + (scores == mine).sum() - 1)


def _round(value: float) -> float:
    return value if math.isinf(value) else round(float(value), 3)


def calibrate_thresholds(
    index: ToolIndex,
    cases: Sequence[CalibrationCase],
    *,
    coverage: float = 0.99,
    confidence: float = 0.9,
    budget: int | None = None,
    weights: Sequence[float] | None = None,
    grid: int = 16,
) -> SearchCalibration:
    """Derive a :class:`SearchCalibration` for ``index``'s engine from labelled requests.

    1. ``semantic_weight``: of ``weights`` (default ``grid`` evenly spaced values in
       0..1; only 0 without embeddings), the one that most often puts the right tool
       in the best ``budget`` (default ``index.max_loaded``); ties go to the better
       mean reciprocal rank, then to the smaller weight.
    2. ``candidate_threshold``: the highest floor that still answers with candidates
       (instead of the bare domain list) for at least ``coverage`` of the requests
       whose right tool is in the best ``budget``.
    3. ``threshold`` (and ``domain_threshold``, equal to it): the lowest best score
       from which confident answers, built the way :meth:`ToolIndex.search` builds
       them, contain the right tool at least ``confidence`` of the time with at most
       ``budget`` tools on average; ``inf`` when no cut-off does (every answer is then
       low-confidence candidates).

    Requests without a right tool (``gold=None``) count as wrong whenever they get a
    confident answer. Deterministic for a given index and cases.
    """
    if not cases:
        raise ValueError("calibrate_thresholds needs at least one case")
    budget = budget or index.max_loaded
    semantic = index.embeddings is not None
    if weights is None:
        weights = [float(w) for w in np.linspace(0.0, 1.0, grid)] if semantic else [0.0]
    parts = [index.score_parts(c.query) for c in cases]
    names = index.row_names()
    row_of = {n: i for i, n in enumerate(names) if n}
    best_weight, best_key = 0.0, (-1.0, -1.0, 0.0)
    for w in weights:
        hits, rr = 0, 0.0
        for case, (cos, lex) in zip(cases, parts, strict=True):
            if case.gold is None or case.gold not in row_of:
                continue
            rank = _rank(w * cos + (1 - w) * lex, row_of[case.gold])
            hits += rank < budget
            rr += 1 / (rank + 1)
        key = (float(hits), rr, -w)
        if key > best_key:
            best_weight, best_key = float(w), key
    w = best_weight
    best_scores: list[float] = []
    in_budget: list[bool] = []
    confident_hits: list[tuple[float, bool, int]] = []
    saved = index.semantic_weight, index.threshold, index.domain_threshold
    try:
        index.semantic_weight = w
        for case, (cos, lex) in zip(cases, parts, strict=True):
            combined = w * cos + (1 - w) * lex
            if names and any(not n for n in names):
                combined[[i for i, n in enumerate(names) if not n]] = -np.inf
            top = float(combined.max()) if combined.size else 0.0
            best_scores.append(top)
            gold_row = row_of.get(case.gold) if case.gold else None
            ok = gold_row is not None and _rank(combined, gold_row) < budget
            in_budget.append(ok)
        # Floor: keep candidates for all but (1 - coverage) of the answerable requests.
        answerable = sorted(s for s, ok in zip(best_scores, in_budget, strict=True) if ok)
        if answerable:
            cut = int(math.floor((1 - coverage) * len(answerable)))
            floor = answerable[min(cut, len(answerable) - 1)]
        else:
            floor = 0.0
        # Confident threshold: simulate the confident answer at each candidate cut-off.
        for case, top in zip(cases, best_scores, strict=True):
            index.threshold = index.domain_threshold = top
            loaded = index.search(case.query).names
            confident_hits.append((top, case.gold in loaded, len(loaded)))
    finally:
        index.semantic_weight, index.threshold, index.domain_threshold = saved
    threshold = math.inf
    for cut in sorted({t for t, _, _ in confident_hits}):
        # Answers a cut-off makes confident are those whose best score reaches it;
        # their loaded sets are approximated by the sets built at their own score.
        chosen = [(hit, n) for t, hit, n in confident_hits if t >= cut]
        if not chosen:
            break
        precision = sum(hit for hit, _ in chosen) / len(chosen)
        mean_loaded = sum(n for _, n in chosen) / len(chosen)
        if precision >= confidence and mean_loaded <= budget:
            threshold = cut
            break
    floor = min(floor, threshold)
    return SearchCalibration(_round(threshold), _round(threshold), _round(floor), round(w, 3))


def describe(calibration: SearchCalibration) -> dict[str, Any]:
    """A JSON-friendly view (``inf`` as the string ``"inf"``)."""
    return {
        k: ("inf" if isinstance(v, float) and math.isinf(v) else v)
        for k, v in calibration.__dict__.items()
    }
