"""Search thresholds per embedding model, and how to derive them for another model.

A tool search scores every tool ``semantic_weight * cosine + (1 - semantic_weight) *
lexical`` (see :class:`~langgraph_librarian.tools.ToolIndex`). Cosine scales differ
between embedding models, so the thresholds that decide between a confident answer,
low-confidence candidates and the domain list are stored per model id (the
``model_id`` of :func:`langgraph_librarian.embeddings.embedding_model_id`).

The stored values come from :func:`calibrate_thresholds` on the calibration half of
the phrasing set (``librarian_bench.datasets.tool_phrasings``); the held-out
half is only used for reporting. ``benchmarks/bench_tools.py --phrasings --calibrate``
re-derives them, and ``tests/test_tools_search.py`` checks that doing so reproduces
the table below.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from langchain_core.embeddings import Embeddings

__all__ = ["calibrate_thresholds"]

_POOL = 200
NEIGHBOR_WEIGHTS = (0.0, 0.35, 0.7)
"""Neighbor weights :func:`calibrate_thresholds` tries by default."""
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
        neighbor_weight: How much a query word's near-synonyms in the catalog count
            in the lexical score (0: exact, stemmed and typo matches only).
    """

    threshold: float
    domain_threshold: float
    candidate_threshold: float
    semantic_weight: float
    neighbor_weight: float = 0.0


CALIBRATIONS: dict[str, SearchCalibration] = {
    # Re-derived 2026-12-05 with the hand-written glossary over the cross-lingual table
    # (was 0.593, 0.593, 0.092): the calibration half's foreign requests now rank their
    # tool high enough that confident answers are right 90% of the time from the lowest
    # best score up, so nearly every answer is confident (docs/tools.md).
    "minilm-static-256-v2": SearchCalibration(0.055, 0.055, 0.055, 0.667, 0.7),
    # Re-derived 2026-12-05 with the glossary (was 0.274, 0.274, 0.098, 0.6, 0.7; before
    # the extended table 0.281, 0.281, 0.101, 0.533: still the default below, for
    # models without a calibration).
    "all-MiniLM-L6-v2": SearchCalibration(0.13, 0.13, 0.112, 0.6, 0.7),
    # e5-small (default settings). Its cosines are compressed (about 0.7-0.9), hence the
    # high, close thresholds; 7 of the 10 held-out no-tool requests still get a confident
    # answer (docs/tools.md).
    "multilingual-e5-small-q4-w128": SearchCalibration(0.701, 0.701, 0.666, 0.867, 0.7),
    LEXICAL_MODEL_ID: SearchCalibration(0.597, 0.597, 0.105, 0.0, 0.0),  # 0.584 before the glossary
}
"""Calibration per embedding model id (measured values, see docs/tools.md)."""

DEFAULT_CALIBRATION = SearchCalibration(0.281, 0.281, 0.101, 0.533, 0.7)
"""For embedding models without a calibration of their own: MiniLM's of 2026-12-04,
derived before the cross-lingual table grew (which other models do not read by default)."""


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


class _Calibrated(Protocol):
    """What :func:`calibrate_thresholds` needs of a tool index (a ``ToolIndex``).

    A protocol, not an import: the index reads its calibration from this module."""

    max_loaded: int
    neighbor_weight: float
    domain_threshold: float

    @property
    def embeddings(self) -> Embeddings | None: ...

    def row_names(self) -> list[str]: ...

    def embed_query(self, query: str) -> list[float] | None: ...

    def score_parts(
        self, query: str, query_vector: Sequence[float] | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def confident_matches(
        self, ranked: Sequence[tuple[str, float]], *, k: int = 5, threshold: float | None = None
    ) -> Sequence[Any]: ...


def calibrate_thresholds(
    index: _Calibrated,
    cases: Sequence[CalibrationCase],
    *,
    coverage: float = 0.99,
    confidence: float = 0.9,
    budget: int | None = None,
    weights: Sequence[float] | None = None,
    grid: int = 16,
    neighbor_weights: Sequence[float] | None = None,
    k: int = 5,
) -> SearchCalibration:
    """Derive a :class:`SearchCalibration` for ``index``'s engine from labelled requests.

    1. ``semantic_weight`` and ``neighbor_weight``: of ``weights`` (default ``grid``
       evenly spaced values in 0..1; only 0 without embeddings) and
       ``neighbor_weights`` (default :data:`NEIGHBOR_WEIGHTS`; only 0 without
       embeddings), the pair that most often puts the right tool in the best
       ``budget`` (default ``index.max_loaded``); ties go to the better mean
       reciprocal rank, then to the smaller neighbor weight, then to the semantic
       weight nearer 0.5 (an even mix).
    2. ``candidate_threshold``: the highest floor that still answers with candidates
       (instead of the bare domain list) for at least ``coverage`` of the requests
       whose right tool is in the best ``budget``.
    3. ``threshold`` (and ``domain_threshold``, equal to it): the lowest best score
       from which confident answers, built the way :meth:`ToolIndex.search` builds
       them (``k`` direct matches plus siblings), contain the right tool at least
       ``confidence`` of the time with at most ``budget`` tools on average; ``inf``
       when no cut-off does (every answer is then low-confidence candidates).

    Requests without a right tool (``gold=None``) count as wrong whenever they get a
    confident answer. Deterministic for a given index and cases.
    """
    if not cases:
        raise ValueError("calibrate_thresholds needs at least one case")
    budget = budget or index.max_loaded
    semantic = index.embeddings is not None
    if weights is None:
        weights = [float(w) for w in np.linspace(0.0, 1.0, grid)] if semantic else [0.0]
    if neighbor_weights is None:
        neighbor_weights = NEIGHBOR_WEIGHTS if semantic else (0.0,)
    names = index.row_names()
    row_of = {n: i for i, n in enumerate(names) if n}
    unknown = sorted({c.gold for c in cases if c.gold is not None and c.gold not in row_of})
    if unknown:  # a misspelled gold name would silently count as a miss
        shown = ", ".join(repr(name) for name in unknown[:5])
        raise ValueError(f"calibrate_thresholds: gold tools not in the index: {shown}")
    saved_neighbors = index.neighbor_weight
    best: tuple[float, float] = (0.0, 0.0)
    best_key: tuple[float, ...] = (-1.0,)
    best_parts: list[tuple[np.ndarray, np.ndarray]] = []
    vectors = [index.embed_query(c.query) for c in cases]
    try:
        for nw in neighbor_weights:
            index.neighbor_weight = nw
            parts = [index.score_parts(c.query, v) for c, v in zip(cases, vectors, strict=True)]
            for w in weights:
                hits, rr = 0, 0.0
                for case, (cos, lex) in zip(cases, parts, strict=True):
                    if case.gold is None or case.gold not in row_of:
                        continue
                    rank = _rank(w * cos + (1 - w) * lex, row_of[case.gold])
                    hits += rank < budget
                    rr += 1 / (rank + 1)
                key = (float(hits), rr, -nw, -abs(w - 0.5))
                if key > best_key:
                    best, best_key, best_parts = (float(w), float(nw)), key, parts
    finally:
        index.neighbor_weight = saved_neighbors
    w, nw = best
    parts = best_parts
    best_scores: list[float] = []
    in_budget: list[bool] = []
    rankings: list[list[tuple[str, float]]] = []
    for case, (cos, lex) in zip(cases, parts, strict=True):
        combined = w * cos + (1 - w) * lex
        dead = [i for i, n in enumerate(names) if not n]
        if dead:
            combined[dead] = -np.inf
        order = np.argsort(-combined, kind="stable")[: _POOL + k]
        rankings.append([(names[i], float(combined[i])) for i in order if names[i]])
        best_scores.append(rankings[-1][0][1] if rankings[-1] else 0.0)
        gold_row = row_of.get(case.gold) if case.gold else None
        in_budget.append(gold_row is not None and _rank(combined, gold_row) < budget)
    # Floor: keep candidates for all but (1 - coverage) of the answerable requests.
    answerable = sorted(s for s, ok in zip(best_scores, in_budget, strict=True) if ok)
    floor = 0.0
    if answerable:
        floor = answerable[min(math.floor((1 - coverage) * len(answerable)), len(answerable) - 1)]
    # Confident threshold: the lowest cut-off whose confident answers are right often enough.
    threshold = math.inf
    saved = index.domain_threshold
    index.domain_threshold = -math.inf  # the domain threshold follows the cut-off
    try:
        for cut in sorted(set(best_scores)):
            chosen = [
                (case.gold, ranking)
                for case, ranking, top in zip(cases, rankings, best_scores, strict=True)
                if top >= cut
            ]
            loaded = [
                [m.name for m in index.confident_matches(ranking, k=k, threshold=cut)]
                for _, ranking in chosen
            ]
            precision = sum(g in n for (g, _), n in zip(chosen, loaded, strict=True)) / len(chosen)
            if precision >= confidence and sum(map(len, loaded)) / len(chosen) <= budget:
                threshold = cut
                break
    finally:
        index.domain_threshold = saved
    floor = min(floor, threshold)
    return SearchCalibration(
        _round(threshold), _round(threshold), _round(floor), round(w, 3), round(nw, 3)
    )


def describe(calibration: SearchCalibration) -> dict[str, Any]:
    """A JSON-friendly view (``inf`` as the string ``"inf"``)."""
    return {
        k: ("inf" if isinstance(v, float) and math.isinf(v) else v)
        for k, v in calibration.__dict__.items()
    }
