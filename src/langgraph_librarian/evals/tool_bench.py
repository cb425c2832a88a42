"""``librarian bench --dataset tools``: recall of tool discovery and schema tokens saved."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from langchain_core.embeddings import Embeddings

from langgraph_librarian.evals.datasets.tools import generate_tool_catalog
from langgraph_librarian.tokens import count_text_tokens
from langgraph_librarian.tools.index import ToolIndex

__all__ = ["format_tool_table", "run_tool_bench"]


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
            direct = [m.name for m in result.matches if m.reason != "sibling"]
            names = result.names
            hits1 += bool(direct[:1] == [case.gold])
            hitsk += case.gold in direct[:k]
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
                "embeddings": type(embeddings).__name__ if embeddings is not None else "lexical",
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
