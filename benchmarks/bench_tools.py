"""Tool-librarian benchmarks: scale (50 to 50,000 tools) and the phrasing set.

Run: python benchmarks/bench_tools.py [--sizes 50 500 5000 50000] [--embeddings NAME]
                                     [--no-embeddings] [--json]
     python benchmarks/bench_tools.py --phrasings [--models static minilm none]
                                     [--split calibration heldout] [--situations]
                                     [--calibrate] [--json]
     python benchmarks/bench_tools.py --fresh [--models static minilm none] [--json]

Scale: the generated catalog of ``librarian bench --dataset tools``; the index is
semantic with the default embedding model (or the one named by ``--embeddings``, see
``langgraph_librarian.embeddings.EMBEDDING_MODELS``), lexical with ``--no-embeddings``.
Latency is reported for the search itself (scores, thresholds, domain expansion) and,
separately, for embedding the query.

Phrasings: loaded recall and tools loaded per request on the hand-written phrasing set
(``librarian_bench.datasets.tool_phrasings``), for each model of
``--models`` ("none" is the lexical engine), on the held-out half (or the halves of
``--split``) with the stored calibration; ``--situations`` adds the independent check
(``librarian_bench.datasets.tool_situations``: new tools, situational and foreign
requests, never tuned on). ``--calibrate`` first re-derives each model's thresholds from the
calibration half, prints them next to the stored ones, and reports with the fresh
values. Results are recorded in docs/benchmarks.md.

Fresh: ``--fresh`` runs the catalog of ``benchmarks/data/fresh_tools.json`` (170 tools
in 17 domains, 127 requests: situational, paraphrase, typo, non-English and requests no
tool serves), written for issue 18 before any change it measured and never tuned on,
with each model's stored calibration.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from langgraph_librarian.embeddings import EMBEDDING_MODELS, default_embeddings, load_embeddings
from langgraph_librarian.tools.calibration import calibration_for
from langgraph_librarian.tools.index import ToolIndex
from librarian_bench.datasets.tool_phrasings import function_schemas
from librarian_bench.tool_bench import (
    calibrate_engine,
    engine_name,
    format_phrasing_table,
    format_tool_table,
    run_phrasing_bench,
    run_tool_bench,
)


def _phrasings(
    models: list[str], *, calibrate: bool, as_json: bool, splits: list[str], situations: bool
) -> None:
    rows = []
    for name in models:
        embeddings = load_embeddings(name)
        calibration = None
        if calibrate:
            calibration = calibrate_engine(embeddings)
            print(f"{engine_name(embeddings)}: stored {calibration_for(embeddings)}")
            print(f"{engine_name(embeddings)}: derived {calibration}")
        for split in splits:
            rows += run_phrasing_bench(embeddings, split=split, calibration=calibration)  # type: ignore[arg-type]
        if situations:
            rows += run_phrasing_bench(embeddings, calibration=calibration, situations=True)
    print(format_phrasing_table(rows))
    if as_json:
        print(json.dumps(rows, indent=1))


def _fresh_data() -> dict[str, Any]:
    path = Path(__file__).resolve().parent / "data" / "fresh_tools.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def run_fresh_bench(name: str, *, k: int = 8) -> list[dict[str, Any]]:
    """Loaded recall, tools loaded and answer kinds per style on the fresh catalog."""
    data = _fresh_data()
    embeddings = load_embeddings(name)
    tools = {name: (description, args) for name, (description, args) in data["tools"].items()}
    index = ToolIndex(function_schemas(tools), embeddings=embeddings)
    index.search("warm up the index")
    groups: dict[str, list[tuple[str | None, list[str], list[str], str, float]]] = {}
    for query, gold, style in data["requests"]:
        vector = index.embed_query(query)
        start = time.perf_counter()
        result = index.search(query, query_vector=vector)
        elapsed = (time.perf_counter() - start) * 1000
        ranked = [n for n, _ in index.rank(query, limit=k, query_vector=vector)]
        outcome = (gold, ranked, result.names, result.fallback or "confident", elapsed)
        groups.setdefault(style, []).append(outcome)
        if style != "none":
            groups.setdefault("all", []).append(outcome)
    rows = []
    for label in sorted(groups, key=lambda s: (s != "all", s == "none", s)):
        group = groups[label]
        row: dict[str, Any] = {
            "engine": engine_name(embeddings),
            "split": "fresh",
            "style": label,
            "requests": len(group),
            "k": k,
            "mean_loaded_tools": statistics.fmean(len(o[2]) for o in group),
            "max_loaded_tools": max(len(o[2]) for o in group),
            "search_p50_ms": statistics.median(o[4] for o in group),
            **{
                f"share_{kind}": sum(o[3] == kind for o in group) / len(group)
                for kind in ("confident", "name", "candidates", "domain", "domains")
            },
        }
        if label == "none":
            row["nothing_loaded"] = sum(not o[2] for o in group) / len(group)
        else:
            row["recall_at_1"] = sum(o[1][:1] == [o[0]] for o in group) / len(group)
            row["recall_at_k"] = sum(o[0] in o[1] for o in group) / len(group)
            row["loaded_recall"] = sum(o[0] in o[2] for o in group) / len(group)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 5000, 50000])
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--embeddings", choices=EMBEDDING_MODELS, help="default: the default")
    parser.add_argument("--no-embeddings", action="store_true")
    parser.add_argument("--phrasings", action="store_true", help="run the phrasing set")
    parser.add_argument(
        "--models",
        nargs="+",
        choices=EMBEDDING_MODELS,
        default=["static", "minilm", "none"],
        help="phrasings: engines to compare (default: %(default)s)",
    )
    parser.add_argument(
        "--calibrate", action="store_true", help="phrasings: re-derive thresholds first"
    )
    parser.add_argument(
        "--split",
        nargs="+",
        choices=["calibration", "heldout"],
        default=["heldout"],
        help="phrasings: halves to report (default: %(default)s)",
    )
    parser.add_argument(
        "--situations",
        action="store_true",
        help="phrasings: also run the independent check (tool_situations)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="run the fresh catalog (benchmarks/data)"
    )
    parser.add_argument("--json", action="store_true", help="also print the rows as JSON")
    args = parser.parse_args()
    if args.fresh:
        rows = [row for name in args.models for row in run_fresh_bench(name)]
        print(format_phrasing_table(rows))
        if args.json:
            print(json.dumps(rows, indent=1))
        return
    if args.phrasings:
        _phrasings(
            args.models,
            calibrate=args.calibrate,
            as_json=args.json,
            splits=args.split,
            situations=args.situations,
        )
        return
    if args.no_embeddings:
        embeddings = None
    else:
        embeddings = load_embeddings(args.embeddings) if args.embeddings else default_embeddings()
    rows = run_tool_bench(args.sizes, n_queries=args.queries, embeddings=embeddings)
    print(format_tool_table(rows))
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
