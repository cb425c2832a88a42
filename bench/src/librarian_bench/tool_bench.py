"""``librarian bench --dataset tools``: recall of tool discovery and schema tokens saved."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from langgraph_librarian.tokens import count_text_tokens
from langgraph_librarian.tools.calibration import SearchCalibration, calibrate_thresholds
from langgraph_librarian.tools.index import ToolIndex
from librarian_bench.datasets.tool_phrasings import (
    Split,
    phrasing_cases,
    phrasing_catalog,
)
from librarian_bench.datasets.tool_situations import situation_cases, situation_catalog
from librarian_bench.datasets.tools import generate_tool_catalog

__all__ = [
    "calibrate_engine",
    "engine_name",
    "format_misses",
    "format_phrasing_table",
    "format_tool_table",
    "outcome_rows",
    "phrasing_misses",
    "run_phrasing_bench",
    "run_tool_bench",
    "search_outcomes",
]


def engine_name(embeddings: Embeddings | None) -> str:
    """A short name for the search engine: the embedding model id, or ``lexical``."""
    if embeddings is None:
        return "lexical"
    from langgraph_librarian.embeddings import embedding_model_id

    return embedding_model_id(embeddings)


def run_tool_bench(
    sizes: list[int],
    *,
    n_queries: int = 150,
    k: int = 5,
    seed: int = 5,
    embeddings: Embeddings | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """For each catalog size: recall@1/@k, loaded-set recall, tokens saved, latency.

    ``progress(label, done, total)`` hears about the catalog build (one step: the
    index embeds the whole catalog at once) and about the queries.
    """
    rows: list[dict[str, Any]] = []
    for n in sizes:
        specs, cases = generate_tool_catalog(n, n_queries, seed)
        index = ToolIndex([s.schema() for s in specs], embeddings=embeddings)
        label = f"{len(specs):,} tools"
        if progress is not None:
            progress(f"{label}: index the catalog", 0, 1)
        start = time.perf_counter()
        index.search("warm up the index")  # builds the vectors (the one-off indexing cost)
        build_s = time.perf_counter() - start
        if progress is not None:
            progress(f"{label}: index the catalog", 1, 1)
        schema_tokens = {s.name: count_text_tokens(json.dumps(s.schema())) for s in specs}
        all_tokens = sum(schema_tokens.values())
        hits1 = hitsk = loaded_hits = 0
        loaded_tokens: list[int] = []
        loaded_counts: list[int] = []
        latencies: list[float] = []
        embed_ms: list[float] = []
        for case in cases:
            start = time.perf_counter()
            vector = index.embed_query(case.query)
            embed_ms.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            result = index.search(case.query, k=k, query_vector=vector)
            latencies.append((time.perf_counter() - start) * 1000)
            ranked = [n for n, _ in index.rank(case.query, limit=k, query_vector=vector)]
            names = result.names
            hits1 += bool(ranked[:1] == [case.gold])
            hitsk += case.gold in ranked[:k]
            loaded_hits += case.gold in names
            loaded_counts.append(len(names))
            loaded_tokens.append(sum(schema_tokens[x] for x in names))
            if progress is not None:
                progress(f"{label}: queries", len(latencies), len(cases))
        rows.append(
            {
                "tools": len(specs),
                "queries": len(cases),
                "k": k,
                "embeddings": engine_name(embeddings),
                "recall_at_1": hits1 / len(cases),
                f"recall_at_{k}": hitsk / len(cases),
                "loaded_recall": loaded_hits / len(cases),
                "mean_loaded_tools": statistics.fmean(loaded_counts),
                "schema_tokens_all": all_tokens,
                "schema_tokens_loaded": statistics.fmean(loaded_tokens),
                "tokens_saved_pct": 100
                * (1 - statistics.fmean(loaded_tokens) / max(all_tokens, 1)),
                "search_p50_ms": statistics.median(latencies),
                "search_p95_ms": sorted(latencies)[int(0.95 * (len(latencies) - 1))],
                "query_embed_p50_ms": statistics.median(embed_ms),
                "build_s": build_s,
                "vector_mb": index.memory_bytes() / 1e6,
            }
        )
    return rows


def format_tool_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table of :func:`run_tool_bench` rows."""
    k = rows[0]["k"] if rows else 5
    lines = [
        f"| tools | engine | recall@1 | recall@{k} | loaded recall | tools loaded | schema tokens "
        "loaded / all | saved | search p50 / p95 ms | query embedding ms | build s | vectors MB |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['tools']:,} | {r['embeddings']} | {r['recall_at_1']:.3f} | "
            f"{r[f'recall_at_{k}']:.3f} | {r['loaded_recall']:.3f} | "
            f"{r['mean_loaded_tools']:.1f} | "
            f"{r['schema_tokens_loaded']:,.0f} / {r['schema_tokens_all']:,} | "
            f"{r['tokens_saved_pct']:.1f}% | {r['search_p50_ms']:.2f} / {r['search_p95_ms']:.2f} | "
            f"{r['query_embed_p50_ms']:.1f} | "
            f"{r['build_s']:.1f} | {r['vector_mb']:.1f} |"
        )
    return "\n".join(lines)


def _phrasing_index(
    embeddings: Embeddings | None,
    calibration: SearchCalibration | None,
    catalog: list[dict[str, Any]] | None = None,
) -> ToolIndex:
    catalog = phrasing_catalog() if catalog is None else catalog
    if calibration is None:
        return ToolIndex(catalog, embeddings=embeddings)
    return ToolIndex(
        catalog,
        embeddings=embeddings,
        threshold=calibration.threshold,
        domain_threshold=calibration.domain_threshold,
        candidate_threshold=calibration.candidate_threshold,
        semantic_weight=calibration.semantic_weight,
        neighbor_weight=calibration.neighbor_weight,
    )


def calibrate_engine(
    embeddings: Embeddings | None, *, seed: int = 13, **options: Any
) -> SearchCalibration:
    """Derive thresholds for ``embeddings`` from the calibration half of the phrasing set.

    ``options`` go to :func:`~langgraph_librarian.tools.calibration.calibrate_thresholds`.
    """
    index = ToolIndex(phrasing_catalog(), embeddings=embeddings)
    return calibrate_thresholds(index, phrasing_cases("calibration", seed=seed), **options)


def run_phrasing_bench(
    embeddings: Embeddings | None,
    *,
    split: Split = "heldout",
    seed: int = 13,
    k: int = 8,
    calibration: SearchCalibration | None = None,
    situations: bool = False,
) -> list[dict[str, Any]]:
    """Loaded recall and tools loaded per request on the phrasing set, by style.

    One row per style plus ``all`` (requests with a right tool) and ``none`` (requests
    without one: the share that loaded nothing, and the share answered confidently).
    ``recall_at_1`` / ``recall_at_k`` come from the hybrid ranking; ``loaded_recall``
    is the share of requests whose answer loaded the right tool, whatever its kind.
    Query embeddings are computed before the searches are timed. ``calibration``
    overrides the stored thresholds (for example a fresh :func:`calibrate_engine`).
    ``situations=True`` runs the independent check instead
    (:mod:`librarian_bench.datasets.tool_situations`: its requests against the phrasing
    catalog plus its own tools; ``split`` is then ignored and reported as
    ``"situations"``).
    """
    if situations:
        index = _phrasing_index(embeddings, calibration, situation_catalog())
        cases = situation_cases()
    else:
        index = _phrasing_index(embeddings, calibration)
        cases = phrasing_cases(split, seed=seed)
    outcomes = search_outcomes(index, [(c.query, c.gold) for c in cases], k=k)
    return outcome_rows(
        engine_name(embeddings),
        "situations" if situations else split,
        [c.style for c in cases],
        outcomes,
        k=k,
        order=["all", "indirect", "colloquial", "elliptic", "typo", "foreign", "none"],
    )


def phrasing_misses(
    embeddings: Embeddings | None,
    *,
    split: Split = "calibration",
    seed: int = 13,
    calibration: SearchCalibration | None = None,
    situations: bool = False,
    pool: int = 60,
) -> list[dict[str, Any]]:
    """The requests of :func:`run_phrasing_bench` (same arguments) whose answer did not
    load the right tool, to read for general causes: each with its style, the right
    tool, that tool's 1-based place in the hybrid ranking (``None`` beyond ``pool``), its
    cosine and lexical scores, the answer's kind, the tools it loaded and the text the
    model embedded (the query read in English, when it reads as foreign). Develop on
    the calibration half: reading the held-out half's misses is tuning to it."""
    if situations:
        index = _phrasing_index(embeddings, calibration, situation_catalog())
        cases = situation_cases()
    else:
        index = _phrasing_index(embeddings, calibration)
        cases = phrasing_cases(split, seed=seed)
    rows = index.row_names()
    out: list[dict[str, Any]] = []
    for case in cases:
        if case.gold is None:
            continue
        result = index.search(case.query)
        if case.gold in result.names:
            continue
        ranked = [name for name, _ in index.rank(case.query, limit=pool)]
        cosine, lexical = index.score_parts(case.query)
        row = rows.index(case.gold)
        out.append(
            {
                "style": case.style,
                "query": case.query,
                "gold": case.gold,
                "rank": ranked.index(case.gold) + 1 if case.gold in ranked else None,
                "cosine": float(cosine[row]),
                "lexical": float(lexical[row]),
                "kind": result.fallback or "confident",
                "loaded": result.names,
                "read_as": index.translated(case.query)[0],
            }
        )
    return out


def format_misses(misses: Sequence[dict[str, Any]], *, shown: int = 3) -> str:
    """One line per miss of :func:`phrasing_misses` (at most ``shown`` loaded tools)."""
    lines = []
    for m in misses:
        rank = "-" if m["rank"] is None else str(m["rank"])
        read = f" (read as {m['read_as']!r})" if m["read_as"] != m["query"] else ""
        lines.append(
            f"[{m['style']}] {m['query']!r}{read} -> {m['gold']} at rank {rank} "
            f"(cosine {m['cosine']:.3f}, lexical {m['lexical']:.3f}); "
            f"{m['kind']}: {', '.join(m['loaded'][:shown]) or 'nothing'}"
        )
    return "\n".join(lines)


Outcome = tuple[str | None, list[str], list[str], str, float]
"""One request searched: (right tool or ``None``, the best ``k`` by hybrid score, the
tools the answer loaded, the answer's kind, search milliseconds)."""


def search_outcomes(
    index: ToolIndex, requests: Sequence[tuple[str, str | None]], *, k: int = 8
) -> list[Outcome]:
    """Search each (request, right tool) pair; query embeddings are computed before the
    searches are timed, after one warm-up search builds the index."""
    vectors = [index.embed_query(query) for query, _ in requests]
    index.search("warm up the index")
    outcomes: list[Outcome] = []
    for (query, gold), vector in zip(requests, vectors, strict=True):
        start = time.perf_counter()
        result = index.search(query, query_vector=vector)
        elapsed = (time.perf_counter() - start) * 1000
        ranked = [n for n, _ in index.rank(query, limit=k, query_vector=vector)]
        outcomes.append((gold, ranked, result.names, result.fallback or "confident", elapsed))
    return outcomes


def outcome_rows(
    engine: str,
    split: str,
    styles: Sequence[str],
    outcomes: Sequence[Outcome],
    *,
    k: int = 8,
    order: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per style of :func:`search_outcomes` (``styles``: each request's), plus
    ``all`` (requests with a right tool) and ``none`` (requests without one: the share
    that loaded nothing). Rows follow ``order`` (styles it lacks are left out); without
    it ``all`` comes first, ``none`` last and the others alphabetically."""
    groups: dict[str, list[Outcome]] = {}
    for style, outcome in zip(styles, outcomes, strict=True):
        groups.setdefault(style, []).append(outcome)
        if style != "none":
            groups.setdefault("all", []).append(outcome)
    if order is None:
        labels = sorted(groups, key=lambda s: (s != "all", s == "none", s))
    else:
        labels = [s for s in order if s in groups]
    rows: list[dict[str, Any]] = []
    for label in labels:
        group = groups[label]
        row: dict[str, Any] = {
            "engine": engine,
            "split": split,
            "style": label,
            "requests": len(group),
            "k": k,
            "mean_loaded_tools": statistics.fmean(len(o[2]) for o in group),
            "max_loaded_tools": max(len(o[2]) for o in group),
            "search_p50_ms": statistics.median(o[4] for o in group),
            **{f"share_{kind}": sum(o[3] == kind for o in group) / len(group) for kind in _KINDS},
        }
        if label == "none":
            row["nothing_loaded"] = sum(not o[2] for o in group) / len(group)
        else:
            row["recall_at_1"] = sum(o[1][:1] == [o[0]] for o in group) / len(group)
            row["recall_at_k"] = sum(o[0] in o[1] for o in group) / len(group)
            row["loaded_recall"] = sum(o[0] in o[2] for o in group) / len(group)
        rows.append(row)
    return rows


_KINDS = ("confident", "name", "candidates", "domain", "domains")


def format_phrasing_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table of :func:`run_phrasing_bench` rows."""
    k = rows[0]["k"] if rows else 8
    lines = [
        f"| engine | split | style | requests | recall@1 | recall@{k} | loaded recall | "
        "tools loaded (mean / max) | confident / candidates / domain(s) | search p50 ms |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r["style"] == "none":
            recall = f"— | — | nothing loaded {r['nothing_loaded']:.2f}"
        else:
            recall = f"{r['recall_at_1']:.3f} | {r['recall_at_k']:.3f} | {r['loaded_recall']:.3f}"
        shares = (
            f"{r['share_confident']:.2f} / {r['share_candidates']:.2f} / "
            f"{r['share_domain'] + r['share_domains']:.2f}"
        )
        lines.append(
            f"| {r['engine']} | {r['split']} | {r['style']} | {r['requests']} | {recall} | "
            f"{r['mean_loaded_tools']:.1f} / {r['max_loaded_tools']} | {shares} | "
            f"{r['search_p50_ms']:.2f} |"
        )
    return "\n".join(lines)
