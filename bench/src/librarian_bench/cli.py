"""``librarian bench``: compare context strategies on a dataset (see docs/evaluation.md).

The runtime's ``librarian`` command hands ``librarian bench ...`` to :func:`main` here
when this package is installed. Bad input prints one ``librarian: error: ...`` line and
exits with status 2 before any work starts, as every ``librarian`` subcommand does.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from langgraph_librarian.cli import (
    CliError,
    _at_least,
    _embeddings,
    _model,
    _Parser,
    _run,
    _say,
    _version,
)

__all__ = ["build_parser", "main"]

_MIN_MESSAGES = 20  # the synthetic generator's floor: fewer leaves no room for questions
# Ceilings: a typo of a few zeros otherwise generated data for hours before printing a line.
_MAX_MESSAGES = 100_000  # per synthetic conversation, as for librarian demo
_MAX_CONVERSATIONS = 1_000  # per noise level (3 levels)
_MAX_TOOLS = 100_000  # tool catalog size; also the tool benchmark's query count (--limit)
# The default model ships inside the package; embeddings are only missing when turned off.
_EMBEDDINGS_HINT = "drop --no-embeddings / unset LIBRARIAN_EMBEDDINGS to use the packaged model"


def _check_bench_options(args: argparse.Namespace) -> None:
    """Everything that can be wrong with the options, found before any work starts."""
    only = {
        "--data": ("locomo", args.data),
        "--categories": ("locomo", args.categories),
        "--tools": ("tools", args.tools),
        "--phrasings": ("tools", args.phrasings or None),
        "--messages": ("synthetic", args.messages),
        "--conversations": ("synthetic", args.conversations),
        "--split": ("phenomena", args.split),
        "--message-length": ("phenomena", args.message_length),
    }
    for option, (dataset, value) in only.items():
        if value is not None and args.dataset != dataset:
            raise CliError(f"{option} applies to --dataset {dataset} only")
    if args.dataset == "tools":
        for option in ("strategies", "model", "answer_model", "judge_model", "budget"):
            if getattr(args, option):
                flag = "--" + option.replace("_", "-")
                raise CliError(f"{flag} does not apply to --dataset tools")
    _at_least(1, "--limit", args.limit)
    if args.phrasings and args.tools:
        raise CliError("--phrasings and --tools are two different tool benchmarks")
    if args.phrasings and args.limit is not None:
        raise CliError("--limit does not apply to --phrasings (it runs the whole held-out set)")
    if args.dataset != "tools":
        from librarian_bench._budget import parse_budget

        try:
            args.budget = parse_budget(args.budget or "auto")
        except ValueError as exc:
            raise CliError(f"--budget: {exc}") from None
    _at_least(_MIN_MESSAGES, "--messages", args.messages)
    _at_most(_MAX_MESSAGES, "--messages", args.messages)
    _at_least(1, "--conversations", args.conversations)
    _at_most(_MAX_CONVERSATIONS, "--conversations", args.conversations)
    for size in args.tools or []:
        _at_least(1, "--tools", size)
        _at_most(_MAX_TOOLS, "--tools", size)
    if args.dataset == "tools":
        _at_most(_MAX_TOOLS, "--limit", args.limit)
    if args.split is not None and args.split not in ("dev", "heldout"):
        raise CliError(f"--split takes dev or heldout (got {args.split!r})")
    if args.message_length is not None and args.message_length not in ("long", "short"):
        raise CliError(f"--message-length takes long or short (got {args.message_length!r})")
    if args.dataset == "locomo":
        if not args.data:
            raise CliError("--dataset locomo needs --data PATH (e.g. path/to/locomo10.json)")
        data = Path(args.data)
        if data.is_dir():
            raise CliError(f"--data {data} is a directory; give the LoCoMo JSON file inside it")
        if not data.exists():
            raise CliError(f"LoCoMo file not found: {data}")
    if bool(args.answer_model) != bool(args.judge_model):
        raise CliError("answer success needs both --answer-model and --judge-model")
    if args.out == "":  # an unset variable in a script ("--out $DIR"): nothing would be saved
        raise CliError("--out needs a directory")
    if args.out:
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise CliError(f"--out {out} is an existing file; give a directory")
        try:  # made now so that a path we cannot write fails before the run, not after
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"--out {out}: cannot create the directory ({exc.strerror})") from None
        if importlib.util.find_spec("matplotlib") is None:
            _say(
                "note: matplotlib is not installed, so no PNG plot will be written "
                "(pip install matplotlib)"
            )


def _at_most(maximum: int, option: str, value: int | None) -> None:
    if value is not None and value > maximum:
        raise CliError(f"{option} must be at most {maximum:,} (got {value:,})")


def _categories(raw: str | None) -> set[int]:
    if not raw:
        return {1, 2, 3, 4}
    try:
        chosen = {int(c) for c in raw.split(",")}
    except ValueError:
        raise CliError(
            f"--categories takes numbers 1-5 separated by commas (got {raw!r})"
        ) from None
    if not chosen <= {1, 2, 3, 4, 5}:
        raise CliError(f"--categories takes numbers 1-5 (got {raw!r})")
    return chosen


def _dataset_label(args: argparse.Namespace) -> str:
    """The dataset name in reports: a phenomena run names its split, so dev and held-out
    results never land in the same report files."""
    if args.dataset == "phenomena":
        return f"phenomena-{args.split or 'heldout'}"
    return str(args.dataset)


def _load(args: argparse.Namespace, extra: dict[str, Any]) -> list[Any]:
    if args.dataset == "phenomena":
        from librarian_bench.datasets.phenomena import generate_dataset as phenomena

        extra["split"] = args.split or "heldout"
        extra["message_length"] = args.message_length or "long"
        return phenomena(extra["split"], seed=args.seed, message_length=extra["message_length"])
    if args.dataset == "synthetic":
        from librarian_bench.datasets.synthetic import generate_dataset

        return generate_dataset(
            args.seed,
            conversations_per_level=args.conversations or 3,
            n_messages=args.messages or 120,
        )
    from librarian_bench.datasets.locomo import (
        LocomoFormatError,
        LocomoStats,
        load_locomo,
    )

    stats = LocomoStats()
    try:
        conversations = load_locomo(args.data, categories=_categories(args.categories), stats=stats)
    except LocomoFormatError as exc:
        raise CliError(str(exc).splitlines()[0]) from None
    extra["locomo_stats"] = stats.__dict__
    return conversations


def _why_no_embeddings(args: argparse.Namespace) -> str:
    if args.no_embeddings:
        return "--no-embeddings"
    setting = os.environ.get("LIBRARIAN_EMBEDDINGS", "")
    if setting:
        return f"embeddings disabled by LIBRARIAN_EMBEDDINGS={setting}"
    return "no embedding model could be loaded"


def _strategies(args: argparse.Namespace, embeddings: Any, model: Any) -> list[str]:
    from librarian_bench.strategies import STRATEGY_NAMES

    chosen = list(dict.fromkeys(args.strategies or STRATEGY_NAMES))
    if not args.strategies and model is None:
        chosen.remove("librarian-llm")
    if model is not None and "librarian-llm" not in chosen:
        chosen.append("librarian-llm")
    if "librarian-llm" in chosen and model is None:
        raise CliError("strategy librarian-llm needs --model provider:model")
    if embeddings is None:
        reason = _why_no_embeddings(args)
        if "vector" in chosen:
            if args.strategies:
                raise CliError(f"strategy 'vector' needs embeddings ({reason}; {_EMBEDDINGS_HINT})")
            chosen.remove("vector")
            _say(f"note: {reason}: strategy 'vector' is left out")
        if "librarian" in chosen:
            shared = " (they share one index)" if "librarian-lexical" in chosen else ""
            _say(
                f"note: {reason}: 'librarian' runs the lexical engine, the same as "
                f"'librarian-lexical'{shared}"
            )
    return chosen


def _bench_models(spec: str | None) -> tuple[Any, Any]:
    """(indexer, selector) for ``--model``: each with its role's output limit (400
    tokens for summaries, 1,024 for selections); ``scripted:weak`` / ``scripted:oracle``
    are the bench's scripted models (see :mod:`librarian_bench.scripted`)."""
    if spec and spec.startswith("scripted:"):
        from librarian_bench.scripted import SCRIPTED_KINDS, ScriptedBenchModel

        kind = spec.split(":", 1)[1]
        if kind not in SCRIPTED_KINDS:
            raise CliError(f"--model scripted:KIND takes one of {', '.join(SCRIPTED_KINDS)}")
        scripted = ScriptedBenchModel(kind=kind)  # type: ignore[arg-type]  # checked above
        return scripted, scripted
    return _model(spec, role="indexer_model"), _model(spec, role="selector_model")


def _bench(args: argparse.Namespace) -> int:
    _check_bench_options(args)
    embeddings = _embeddings(args.no_embeddings)
    if args.dataset == "tools":
        return _tool_bench(args, embeddings)
    from librarian_bench._budget import budget_label
    from librarian_bench.runner import (
        ProgressPrinter,
        describe_plan,
        format_by_category,
        format_llm_health,
        format_table,
        plan_questions,
        run_bench,
        summary_rows,
        write_report,
    )
    from librarian_bench.strategies import SharedIndexing

    model, selector = _bench_models(args.model)
    strategies = _strategies(args, embeddings, model)
    judge = None
    if args.answer_model:
        from librarian_bench.judge import AnswerJudge

        answer_model = _model(args.answer_model, "--answer-model")
        judge_model = _model(args.judge_model, "--judge-model")
        assert answer_model is not None and judge_model is not None
        judge = AnswerJudge(answer_model, judge_model)
    extra: dict[str, Any] = {}
    conversations = _load(args, extra)
    if hasattr(model, "use"):  # a scripted bench model learns the questions' evidence
        model.use(conversations)
    dataset = _dataset_label(args)
    plan = plan_questions(conversations, args.limit)
    if not plan:
        raise CliError(f"the {args.dataset} data has no question to ask (check --categories)")
    engine = type(embeddings).__name__ if embeddings is not None else "none (lexical only)"
    _say(f"bench {describe_plan(dataset, conversations, plan, strategies)}")
    _say(f"embeddings: {engine}; context budget {budget_label(args.budget)}")
    shared = SharedIndexing(embeddings)
    reports: dict[str, dict[str, Any]] = {}
    outcomes, index_seconds = run_bench(
        dataset,
        conversations,
        strategies,
        budget=args.budget,
        embeddings=embeddings,
        model=model,
        selector_model=selector,
        limit=args.limit,
        progress=None if args.quiet else ProgressPrinter(),
        judge=judge,
        shared=shared,
        indexing_reports=reports,
    )
    rows = summary_rows(outcomes)
    versions = {p: _version(p) for p in ("langgraph-librarian", "langgraph", "langchain-core")}
    meta = {
        "dataset": dataset,
        "strategies": strategies,
        "budget": args.budget,
        "seed": args.seed,
        "limit": args.limit,
        "date": datetime.date.today().isoformat(),
        "command": "librarian " + " ".join(sys.argv[1:]),
        "versions": versions,
        "embeddings": type(embeddings).__name__ if embeddings is not None else None,
        "indexing_seconds": index_seconds,
        "indexing_seconds_spent": shared.spent_seconds,
        "indexing": reports,
        **extra,
    }
    slow = {k: v for k, v in index_seconds.items() if v >= 0.05}
    if slow:
        each = ", ".join(f"{k} {v:.1f} s" for k, v in slow.items())
        _say(f"indexing: {each} (each as if run alone); {shared.spent_seconds:.1f} s spent")
    print(format_table(rows))
    health = format_llm_health(rows, reports)
    if health:
        print()
        print("Model path (selection by the model vs the local fallback; failed summaries):")
        print(health)
    print()
    print("Per category (evidence recall / context success):")
    print(format_by_category(rows))
    if args.out:
        try:
            written = write_report(Path(args.out), dataset, outcomes, meta)
        except OSError as exc:
            raise _not_written(exc) from None
        for path in written:
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps({"meta": meta, "summary": rows}, indent=1))
    return 0


def _not_written(exc: OSError) -> CliError:
    """A result file that cannot be written after the run (a directory in its place, a
    full disk): one line, not a traceback; the tables were printed already."""
    return CliError(f"--out: cannot write {exc.filename} ({exc.strerror})")


def _phrasing_bench(args: argparse.Namespace, embeddings: Any) -> int:
    from librarian_bench.tool_bench import (
        engine_name,
        format_phrasing_table,
        run_phrasing_bench,
    )

    _say(f"bench tools --phrasings: held-out half of the phrasing set; {engine_name(embeddings)}")
    rows = run_phrasing_bench(embeddings, split="heldout")
    print(format_phrasing_table(rows))
    return _emit_rows(args, rows, "tools-phrasings.json")


def _emit_rows(args: argparse.Namespace, rows: list[dict[str, Any]], name: str) -> int:
    """Write a tool benchmark's rows to ``--out`` and print them with ``--json``."""
    if args.out:
        target = Path(args.out) / name
        try:
            target.write_text(json.dumps(rows, indent=1))
        except OSError as exc:
            raise _not_written(exc) from None
        print(f"wrote {target}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


def _tool_bench(args: argparse.Namespace, embeddings: Any) -> int:
    from librarian_bench.tool_bench import format_tool_table, run_tool_bench

    if args.phrasings:
        return _phrasing_bench(args, embeddings)

    sizes = args.tools or [500, 5000]
    engine = type(embeddings).__name__ if embeddings is not None else "lexical search only"
    _say(
        f"bench tools: catalogs of {', '.join(f'{n:,}' for n in sizes)} tools, "
        f"{args.limit or 150} queries each; {engine}"
    )
    from langgraph_librarian._apps.progress import ProgressPrinter

    rows = run_tool_bench(
        sizes,
        n_queries=args.limit or 150,
        seed=args.seed,
        embeddings=embeddings,
        progress=None if args.quiet else ProgressPrinter(),
    )
    print(format_tool_table(rows))
    return _emit_rows(args, rows, "tools-summary.json")


def build_parser(prog: str = "librarian bench") -> argparse.ArgumentParser:
    """The options of ``librarian bench`` (building it runs nothing)."""
    from librarian_bench.strategies import STRATEGY_NAMES

    bench = _Parser(
        prog=prog,
        description="Compare context strategies on a dataset: context success, evidence "
        "recall, tokens and latency per strategy (see docs/evaluation.md).",
    )
    bench.add_argument(
        "--dataset",
        default="synthetic",
        choices=["synthetic", "phenomena", "locomo", "tools"],
        help="(default: %(default)s)",
    )
    bench.add_argument("--data", metavar="PATH", help="locomo: the LoCoMo-format JSON file")
    bench.add_argument(
        "--strategies",
        nargs="+",
        choices=STRATEGY_NAMES,
        metavar="NAME",
        help=f"any of: {', '.join(STRATEGY_NAMES)} (default: every one but librarian-llm, "
        "which --model adds)",
    )
    bench.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="ask only the first N questions (tools: N queries, at most 100,000, default 150) "
        "(default: all)",
    )
    bench.add_argument(
        "--model",
        metavar="PROVIDER:MODEL",
        help="provider:model for the librarian-llm strategy (summaries capped at 400 output "
        "tokens, selections at 1,024), or scripted:weak / scripted:oracle",
    )
    bench.add_argument(
        "--answer-model",
        metavar="PROVIDER:MODEL",
        help="provider:model answering from each context",
    )
    bench.add_argument(
        "--judge-model",
        metavar="PROVIDER:MODEL",
        help="provider:model grading answers (fixed rubric)",
    )
    bench.add_argument(
        "--budget",
        metavar="TOKENS|auto|none|N%",
        help="context budget of every strategy but brute-force: tokens, 'auto' (the "
        "Librarian's default: 7%% of each history, 2,000-8,000 tokens), 'none' (unbounded) "
        "or a share of each history such as 6%% (default: auto)",
    )
    bench.add_argument(
        "--seed", type=int, metavar="N", default=7, help="seed of the generated data (default: 7)"
    )
    bench.add_argument(
        "--messages",
        type=int,
        metavar="N",
        help="synthetic: messages per conversation, 20-100,000 (default: 120)",
    )
    bench.add_argument(
        "--conversations",
        type=int,
        metavar="N",
        help="synthetic: conversations per noise level, at most 1,000 (default: 3)",
    )
    bench.add_argument(
        "--split",
        metavar="{dev,heldout}",
        help="phenomena: develop on dev, report heldout (default: heldout)",
    )
    bench.add_argument(
        "--message-length",
        metavar="{long,short}",
        help="phenomena: 150-600 or 20-80 words per message (default: long)",
    )
    bench.add_argument(
        "--categories", metavar="LIST", help="locomo: comma-separated categories (default: 1,2,3,4)"
    )
    bench.add_argument(
        "--tools",
        type=int,
        metavar="N",
        nargs="+",
        help="tools: catalog sizes, at most 100,000 (default: 500 5000)",
    )
    bench.add_argument(
        "--phrasings",
        action="store_true",
        help="tools: loaded recall on the held-out half of the phrasing set (indirect, "
        "colloquial, elliptic, typo and other-language requests) instead of catalog sizes",
    )
    bench.add_argument("--no-embeddings", action="store_true", help="lexical-only local engine")
    bench.add_argument("--out", metavar="DIR", help="directory for JSON, CSV and PNG results")
    bench.add_argument("--json", action="store_true", help="also print the summary as JSON")
    bench.add_argument("--quiet", action="store_true", help="no progress bars")
    return bench


def main(argv: list[str] | None = None, prog: str = "librarian bench") -> int:
    """Run ``librarian bench`` with ``argv`` (the options after ``bench``)."""
    argv = sys.argv[1:] if argv is None else argv
    return _run(lambda: _bench(build_parser(prog).parse_args(argv)))
