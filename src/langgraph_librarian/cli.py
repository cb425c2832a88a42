"""The ``librarian`` command: ``demo``, ``bench``, ``ui`` and ``chat``.

Bad input (a value out of range, a file that is missing or a directory, an option that
does not apply to the chosen dataset) prints one ``librarian: error: ...`` line and
exits with status 2 before any work starts; an unknown option also prints the usage of
the subcommand it was given to.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

from langchain_core.language_models import BaseChatModel

__all__ = ["main"]

_MIN_MESSAGES = 20  # the synthetic generator's floor: fewer leaves no room for questions
# The default model ships inside the package; embeddings are only missing when turned off.
_EMBEDDINGS_HINT = "drop --no-embeddings / unset LIBRARIAN_EMBEDDINGS to use the packaged model"


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps help text between words only: strategy names like librarian-lexical stay whole."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class _Parser(argparse.ArgumentParser):
    """argparse with the project's error line and help layout (subparsers inherit both)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"librarian: error: {message}\n")


def _model(
    spec: str | None, option: str = "--model", role: str | None = None
) -> BaseChatModel | None:
    if not spec:
        return None
    from langgraph_librarian._models import build_model, check_model_spec

    try:
        check_model_spec(spec, option)
        return build_model(spec, option, timeout=60.0, role=role)
    except ValueError as exc:
        raise CliError(str(exc).splitlines()[0]) from None


def _embeddings(disabled: bool) -> Any:
    if disabled:
        return None
    from langgraph_librarian.embeddings import default_embeddings

    return default_embeddings()


def _at_least(minimum: int, option: str, value: int | None) -> None:
    if value is not None and value < minimum:
        raise CliError(f"{option} must be at least {minimum} (got {value})")


def _say(text: str) -> None:
    print(f"librarian: {text}", file=sys.stderr)


def _demo(args: argparse.Namespace) -> int:
    from langgraph_librarian.demo import run_demo

    _at_least(_MIN_MESSAGES, "--messages", args.messages)
    run_demo(
        seed=args.seed,
        n_messages=args.messages,
        noise=args.noise,
        model=_model(args.model),
        as_json=args.json,
        verbose=args.verbose,
    )
    return 0


APP_DIR = "langgraph-librarian"
DEFAULT_DB_NAME = "librarian-chat.db"


def user_data_dir() -> Path:
    """Where the chat keeps its database when ``--db`` is not given.

    The platform's per-user data directory, as desktop applications use: not the
    current directory, which may be someone's git checkout. ``$XDG_DATA_HOME`` or
    ``~/.local/share`` on Linux and other Unix systems, ``~/Library/Application
    Support`` on macOS, ``%LOCALAPPDATA%`` on Windows; a ``langgraph-librarian`` folder
    inside. (The few lines of ``platformdirs`` this needs, without the dependency.)
    """
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_DATA_HOME", "")
        # The XDG spec: a relative path in the variable is invalid and is ignored.
        base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share"
    return base / APP_DIR


def _db_path(args: argparse.Namespace) -> Path:
    if args.db:
        return Path(args.db)
    folder = user_data_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(
            f"cannot create the chat's data folder {folder} ({exc.strerror}); "
            "give a file with --db PATH"
        ) from None
    return folder / DEFAULT_DB_NAME


def _chat_service(args: argparse.Namespace) -> Any:
    """The chat behind ``ui`` and ``chat``: bad options and a bad --db fail here."""
    from langgraph_librarian.config import LibrarianConfig
    from langgraph_librarian.ui import ChatDatabaseError, ChatService

    _at_least(16, "--summary-tokens", args.summary_tokens)
    librarian_model = _model(args.librarian_model, "--librarian-model")
    config = LibrarianConfig(
        indexer_model=librarian_model,
        selector_model=librarian_model,
        running_summary_tokens=args.summary_tokens,
    )
    if not args.scope:
        raise CliError("--scope needs a name (use --no-recall to turn recall off)")
    try:
        return ChatService(
            _db_path(args),
            model=_model(args.model),
            model_label=args.model,
            librarian_config=config,
            scope=None if args.no_recall else args.scope,
        )
    except ChatDatabaseError as exc:
        raise CliError(str(exc)) from None


def _ui(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise CliError(f"--port must be between 1 and 65535 (got {args.port})")
    if importlib.util.find_spec("gradio") is None:
        raise CliError("the web UI needs Gradio: pip install 'langgraph-librarian[ui]'")
    service = _chat_service(args)
    from langgraph_librarian.ui import launch

    _announce(service)
    try:
        launch(service, host=args.host, port=args.port)
    except OSError as exc:  # the port is taken, or the host cannot be bound
        raise CliError(f"cannot serve on {args.host}:{args.port}: {exc}") from None
    finally:
        service.close()
    return 0


def _announce(service: Any) -> None:
    _say(f"chat database: {service.db_path} (--db PATH to use another file)")
    if service.scope_id:
        _say(f"recall scope of new threads: {service.scope_id}")
    else:
        _say("recall: off")


def _chat(args: argparse.Namespace) -> int:
    from langgraph_librarian.ui._terminal import run_terminal_chat

    service = _chat_service(args)
    _announce(service)
    try:
        return run_terminal_chat(service, thread_id=args.thread, strategy=args.strategy)
    finally:
        service.close()


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
        for option in ("strategies", "model", "answer_model", "judge_model"):
            if getattr(args, option):
                flag = "--" + option.replace("_", "-")
                raise CliError(f"{flag} does not apply to --dataset tools")
    _at_least(1, "--limit", args.limit)
    if args.dataset != "tools":
        from librarian_bench._budget import parse_budget

        try:
            args.budget = parse_budget(args.budget)
        except ValueError as exc:
            raise CliError(f"--budget: {exc}") from None
    _at_least(_MIN_MESSAGES, "--messages", args.messages)
    _at_least(1, "--conversations", args.conversations)
    for size in args.tools or []:
        _at_least(1, "--tools", size)
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
                "(pip install 'langgraph-librarian[bench]')"
            )


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
    extra: dict[str, Any] = {}
    conversations = _load(args, extra)
    if hasattr(model, "use"):  # a scripted bench model learns the questions' evidence
        model.use(conversations)
    dataset = _dataset_label(args)
    plan = plan_questions(conversations, args.limit)
    if not plan:
        raise CliError(f"the {args.dataset} data has no question to ask (check --categories)")
    judge = None
    if args.answer_model:
        from librarian_bench.judge import AnswerJudge

        answer_model, judge_model = _model(args.answer_model), _model(args.judge_model)
        assert answer_model is not None and judge_model is not None
        judge = AnswerJudge(answer_model, judge_model)
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
        for path in write_report(Path(args.out), dataset, outcomes, meta):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps({"meta": meta, "summary": rows}, indent=1))
    return 0


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
        target.write_text(json.dumps(rows, indent=1))
        print(f"wrote {target}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


def _tool_bench(args: argparse.Namespace, embeddings: Any) -> int:
    from librarian_bench.tool_bench import format_tool_table, run_tool_bench

    if args.phrasings:
        if args.tools:
            raise CliError("--phrasings and --tools are two different tool benchmarks")
        return _phrasing_bench(args, embeddings)

    sizes = args.tools or [500, 5000]
    engine = type(embeddings).__name__ if embeddings is not None else "lexical search only"
    _say(
        f"bench tools: catalogs of {', '.join(f'{n:,}' for n in sizes)} tools, "
        f"{args.limit or 150} queries each; {engine}"
    )
    from librarian_bench.runner import ProgressPrinter

    rows = run_tool_bench(
        sizes,
        n_queries=args.limit or 150,
        seed=args.seed,
        embeddings=embeddings,
        progress=None if args.quiet else ProgressPrinter(),
    )
    print(format_tool_table(rows))
    return _emit_rows(args, rows, "tools-summary.json")


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def _add_demo(sub: Any) -> _Parser:
    demo: _Parser = sub.add_parser(
        "demo",
        help="index and query a long synthetic conversation",
        description="Index a long synthetic conversation and ask its questions through the "
        "real graph; shows, per question, the messages chosen, the passage that matched and "
        "whether the needed messages were found.",
    )
    demo.add_argument(
        "--model",
        metavar="PROVIDER:MODEL",
        help="provider:model for indexing, selection and answers",
    )
    demo.add_argument(
        "--messages",
        type=int,
        metavar="N",
        default=240,
        help="conversation length (default: %(default)s)",
    )
    demo.add_argument(
        "--noise",
        default="medium",
        choices=["low", "medium", "high"],
        help="message length and distractors (default: %(default)s)",
    )
    demo.add_argument(
        "--seed", type=int, metavar="N", default=11, help="data seed (default: %(default)s)"
    )
    demo.add_argument(
        "--verbose",
        action="store_true",
        help="every question with every message picked (default: one question of each "
        "kind, then the table over all of them)",
    )
    demo.add_argument("--json", action="store_true", help="machine-readable output")
    demo.set_defaults(func=_demo, parser=demo)
    return demo


def _add_bench(sub: Any) -> _Parser:
    from librarian_bench.strategies import STRATEGY_NAMES

    bench: _Parser = sub.add_parser(
        "bench",
        help="compare context strategies on a dataset",
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
        help="ask only the first N questions (tools: N queries, default 150) (default: all)",
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
        default="auto",
        help="context budget of every strategy but brute-force: tokens, 'auto' (the "
        "Librarian's default: 7%% of each history, 2,000-8,000 tokens), 'none' (unbounded) "
        "or a share of each history such as 6%% (default: %(default)s)",
    )
    bench.add_argument(
        "--seed", type=int, metavar="N", default=7, help="seed of the generated data (default: 7)"
    )
    bench.add_argument(
        "--messages",
        type=int,
        metavar="N",
        help="synthetic: messages per conversation (default: 120)",
    )
    bench.add_argument(
        "--conversations",
        type=int,
        metavar="N",
        help="synthetic: conversations per noise level (default: 3)",
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
        "--tools", type=int, metavar="N", nargs="+", help="tools: catalog sizes (default: 500 5000)"
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
    bench.set_defaults(func=_bench, parser=bench)
    return bench


def _chat_options(parser: _Parser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="SQLite file for the conversations (default: librarian-chat.db in the user "
        "data directory, e.g. ~/.local/share/langgraph-librarian; the path is printed)",
    )
    parser.add_argument(
        "--model",
        metavar="PROVIDER:MODEL",
        help="chat model that answers (default: none: offline, shows the context instead)",
    )
    parser.add_argument(
        "--librarian-model",
        metavar="PROVIDER:MODEL",
        help="model for indexing and selection (default: the offline engine)",
    )
    parser.add_argument(
        "--summary-tokens",
        type=int,
        metavar="N",
        default=400,
        help="size of the running summary (the gist) (default: %(default)s)",
    )
    recall = parser.add_mutually_exclusive_group()
    recall.add_argument(
        "--scope",
        metavar="NAME",
        default="default",
        help="recall scope of new threads: a new thread recalls what the other threads of "
        "its scope said; a thread keeps the scope it started in (default: %(default)s)",
    )
    recall.add_argument(
        "--no-recall",
        action="store_true",
        help="no recall across threads, and nothing copied into a scope",
    )


def _add_ui(sub: Any) -> _Parser:
    ui: _Parser = sub.add_parser(
        "ui",
        help="web chat with an inspector of each turn",
        description="Serve a web chat (Gradio) whose inspector shows, for each answer, the "
        "messages the Librarian selected, the tokens saved and the running summary; switch "
        "between Librarian, running summary, both and everything on the same thread. "
        "Needs: pip install 'langgraph-librarian[ui]'.",
    )
    ui.add_argument(
        "--host", default="127.0.0.1", help="address to serve on (default: %(default)s)"
    )
    ui.add_argument("--port", type=int, default=7860, help="port (default: %(default)s)")
    _chat_options(ui)
    ui.set_defaults(func=_ui, parser=ui)
    return ui


def _add_chat(sub: Any) -> _Parser:
    from langgraph_librarian.context import CONTEXT_STRATEGIES

    chat: _Parser = sub.add_parser(
        "chat",
        help="the same chat in the terminal",
        description="Chat in the terminal with the web UI's threads (same --db): replies "
        "stream; /new starts a new thread, /help lists the commands.",
    )
    chat.add_argument("--thread", metavar="ID", help="reopen this thread (default: a new one)")
    chat.add_argument(
        "--strategy",
        choices=CONTEXT_STRATEGIES,
        default="librarian",
        help="context sent to the model (default: %(default)s)",
    )
    _chat_options(chat)
    chat.set_defaults(func=_chat, parser=chat)
    return chat


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="librarian", description="langgraph-librarian tools")
    parser.add_argument(
        "--version", action="version", version=f"librarian {_version('langgraph-librarian')}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{demo,bench,ui,chat}")
    _add_demo(sub)
    _add_bench(sub)
    _add_ui(sub)
    _add_chat(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # argparse would blame the top-level parser; the subcommand's usage is the useful one.
        args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return int(args.func(args))
    except CliError as exc:
        print(f"librarian: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
