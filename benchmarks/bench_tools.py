"""Tool-librarian benchmarks: scale (50 to 50,000 tools) and the phrasing set.

Run: python benchmarks/bench_tools.py [--sizes 50 500 5000 50000] [--embeddings NAME]
                                     [--no-embeddings] [--json]
     python benchmarks/bench_tools.py --phrasings [--models static minilm none]
                                     [--split calibration heldout] [--situations]
                                     [--calibrate] [--misses] [--json]
     python benchmarks/bench_tools.py --fresh [--models static minilm none] [--json]
     python benchmarks/bench_tools.py --persist [--sizes 500 5000] [--models static]

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
values. ``--misses`` then lists each request whose answer did not load the right tool
(its rank, scores, answer kind, and how a foreign request was read): read the
calibration half's, not the held-out half's. Results are recorded in docs/benchmarks.md.

Fresh: ``--fresh`` runs the catalog of ``benchmarks/data/fresh_tools.json`` (170 tools
in 17 domains, 127 requests: situational, paraphrase, typo, non-English and requests no
tool serves), written for issue 18 before any change it measured and never tuned on,
with each model's stored calibration.

Persist: ``--persist`` times building an index over the generated catalog (construction
and the first search, which embeds every tool) against ``ToolIndex.load`` of the file
``save`` wrote (load and the first search), and a load after 1% of the tools changed
their description (those are embedded again), each in a fresh process whose model and
packaged tables are loaded before the clock starts (that warm-up, the same with or without
a saved file, is reported apart); the median of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langgraph_librarian.embeddings import EMBEDDING_MODELS, default_embeddings, load_embeddings
from langgraph_librarian.tools.calibration import calibration_for
from langgraph_librarian.tools.index import ToolIndex
from librarian_bench.datasets.tool_phrasings import function_schemas
from librarian_bench.datasets.tools import generate_tool_catalog
from librarian_bench.tool_bench import (
    calibrate_engine,
    engine_name,
    format_misses,
    format_phrasing_table,
    format_tool_table,
    outcome_rows,
    phrasing_misses,
    run_phrasing_bench,
    run_tool_bench,
    search_outcomes,
)


def _phrasings(
    models: list[str],
    *,
    calibrate: bool,
    as_json: bool,
    splits: list[str],
    situations: bool,
    misses: bool = False,
) -> None:
    rows = []
    missed: list[tuple[str, list[dict[str, Any]]]] = []
    for name in models:
        embeddings = load_embeddings(name)
        calibration = None
        if calibrate:
            calibration = calibrate_engine(embeddings)
            print(f"{engine_name(embeddings)}: stored {calibration_for(embeddings)}")
            print(f"{engine_name(embeddings)}: derived {calibration}")
        for split in splits:
            rows += run_phrasing_bench(embeddings, split=split, calibration=calibration)  # type: ignore[arg-type]
            if misses:
                found = phrasing_misses(embeddings, split=split, calibration=calibration)  # type: ignore[arg-type]
                missed.append((f"{engine_name(embeddings)}, {split}", found))
        if situations:
            rows += run_phrasing_bench(embeddings, calibration=calibration, situations=True)
            if misses:
                found = phrasing_misses(embeddings, calibration=calibration, situations=True)
                missed.append((f"{engine_name(embeddings)}, situations", found))
    print(format_phrasing_table(rows))
    for label, found in missed:
        print(f"\nMisses ({label}: {len(found)}):\n{format_misses(found)}")
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
    requests = [(query, gold) for query, gold, _ in data["requests"]]
    outcomes = search_outcomes(index, requests, k=k)
    styles = [style for _, _, style in data["requests"]]
    return outcome_rows(engine_name(embeddings), "fresh", styles, outcomes, k=k)


def _persist_child(spec: dict[str, Any]) -> dict[str, Any]:
    """One timing of ``--persist`` (run in a fresh process; see :func:`run_persist_bench`)."""
    start = time.perf_counter()
    embeddings = load_embeddings(spec["model"])
    ToolIndex([{"name": "warm_up", "description": "Warm up."}], embeddings=embeddings).search(
        "warm up the process"  # the model, the word tables: loaded once per process
    )
    warm_s = time.perf_counter() - start
    specs, _ = generate_tool_catalog(spec["size"], 1, 5)
    changed = 0
    if spec["step"] == "update":  # every 100th tool (1%) gets a new description
        for tool in specs[::100]:
            tool.description += " (revised)"
            changed += 1
    catalog = [s.schema() for s in specs]
    start = time.perf_counter()
    if spec["step"] == "build":
        index = ToolIndex(catalog, embeddings=embeddings)
        index.search("send an email to the team")
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        index.save(spec["path"])
        return {"seconds": seconds, "save_s": time.perf_counter() - start, "warm_s": warm_s}
    index = ToolIndex.load(spec["path"], catalog, embeddings=embeddings)
    index.search("send an email to the team")
    return {"seconds": time.perf_counter() - start, "changed": changed}


def run_persist_bench(
    sizes: list[int], models: list[str], *, repeat: int = 3
) -> list[dict[str, Any]]:
    """Build vs load seconds (medians of ``repeat`` fresh processes) per model and size."""
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for model in models:
            for size in sizes:
                path = str(Path(directory) / f"{model}-{size}.lgl")
                times: dict[str, list[dict[str, Any]]] = {}
                for _ in range(repeat):
                    for step in ("build", "load", "update"):
                        spec = {"model": model, "size": size, "step": step, "path": path}
                        out = subprocess.run(
                            [sys.executable, __file__, "--persist-child", json.dumps(spec)],
                            check=True,
                            capture_output=True,
                            text=True,
                        ).stdout
                        times.setdefault(step, []).append(json.loads(out.splitlines()[-1]))
                rows.append(
                    {
                        "model": model,
                        "tools": size,
                        "warm_s": statistics.median(t["warm_s"] for t in times["build"]),
                        "build_s": statistics.median(t["seconds"] for t in times["build"]),
                        "save_s": statistics.median(t["save_s"] for t in times["build"]),
                        "load_s": statistics.median(t["seconds"] for t in times["load"]),
                        "update_s": statistics.median(t["seconds"] for t in times["update"]),
                        "changed": times["update"][0]["changed"],
                        "file_mb": Path(path).stat().st_size / 1e6,
                    }
                )
    return rows


def format_persist_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| model | tools | process warm-up s | build + first search s | save s | "
        "load + first search s | load, 1% changed s | file MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['tools']:,} | {r['warm_s']:.2f} | {r['build_s']:.2f} | "
            f"{r['save_s']:.2f} | "
            f"{r['load_s']:.2f} | {r['update_s']:.2f} ({r['changed']} re-embedded) | "
            f"{r['file_mb']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--sizes", type=int, nargs="+", help="default: 50 500 5000 50000 (--persist: 500 5000)"
    )
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--embeddings", choices=EMBEDDING_MODELS, help="default: the default")
    parser.add_argument("--no-embeddings", action="store_true")
    parser.add_argument("--phrasings", action="store_true", help="run the phrasing set")
    parser.add_argument(
        "--models",
        nargs="+",
        choices=EMBEDDING_MODELS,
        help="phrasings, fresh: engines to compare (default: static minilm none); "
        "persist: models (default: static)",
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
    parser.add_argument(
        "--persist", action="store_true", help="time ToolIndex.save/load against a build"
    )
    parser.add_argument("--repeat", type=int, default=3, help="persist: runs per timing")
    parser.add_argument("--persist-child", help=argparse.SUPPRESS)
    parser.add_argument(
        "--misses",
        action="store_true",
        help="phrasings: list the requests whose answer missed the right tool",
    )
    parser.add_argument("--json", action="store_true", help="also print the rows as JSON")
    args = parser.parse_args()
    if args.persist_child:
        print(json.dumps(_persist_child(json.loads(args.persist_child))))
        return
    models = args.models or ["static", "minilm", "none"]
    if args.persist:
        rows = run_persist_bench(
            args.sizes or [500, 5000], args.models or ["static"], repeat=args.repeat
        )
        print(format_persist_table(rows))
        if args.json:
            print(json.dumps(rows, indent=1))
        return
    if args.fresh:
        rows = [row for name in models for row in run_fresh_bench(name)]
        print(format_phrasing_table(rows))
        if args.json:
            print(json.dumps(rows, indent=1))
        return
    if args.phrasings:
        _phrasings(
            models,
            calibrate=args.calibrate,
            as_json=args.json,
            splits=args.split,
            situations=args.situations,
            misses=args.misses,
        )
        return
    if args.no_embeddings:
        embeddings = None
    else:
        embeddings = load_embeddings(args.embeddings) if args.embeddings else default_embeddings()
    sizes = args.sizes or [50, 500, 5000, 50000]
    rows = run_tool_bench(sizes, n_queries=args.queries, embeddings=embeddings)
    print(format_tool_table(rows))
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
