"""The ``librarian`` command: ``demo``, ``bench``, ``ui`` and ``chat``.

Bad input (a value out of range, a file that is missing or a directory, an option that
does not apply to the chosen dataset) prints one ``librarian: error: ...`` line and
exits with status 2 before any work starts; an unknown option also prints the usage of
the subcommand it was given to.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib.util
import io
import os
import sys
import textwrap
from collections.abc import Callable
from importlib import metadata
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__: list[str] = []

_MIN_MESSAGES = 20  # the demo generator's floor: fewer leaves no room for questions
_MAX_MESSAGES = 100_000  # a demo, not a load test: a typo of a few zeros ran for hours
_BENCH_MISSING = (
    "librarian bench needs the evaluation package, which ships in this repository's "
    "bench/ folder: from a checkout, pip install ./bench (or pip install -e ./bench); "
    'once this release is on PyPI, pip install "langgraph-librarian[bench]"'
)


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
    from langgraph_librarian._engine.models import build_model, check_model_spec

    try:
        check_model_spec(spec, option)
        return build_model(spec, option, timeout=60.0, role=role)
    except ValueError as exc:
        raise CliError(str(exc).splitlines()[0]) from None


def _embeddings(disabled: bool) -> Any:
    if disabled:
        return None
    from langgraph_librarian.embeddings import default_embeddings

    try:  # loaded once per process: a later "auto" gets the same instance
        return default_embeddings()
    except (ValueError, ImportError) as exc:  # LIBRARIAN_EMBEDDINGS names a bad model
        setting = os.environ.get("LIBRARIAN_EMBEDDINGS", "")
        raise CliError(f"LIBRARIAN_EMBEDDINGS={setting}: {str(exc).splitlines()[0]}") from None


def _at_least(minimum: int, option: str, value: int | None) -> None:
    if value is not None and value < minimum:
        raise CliError(f"{option} must be at least {minimum} (got {value})")


def _say(text: str) -> None:
    print(f"librarian: {text}", file=sys.stderr)


def _demo(args: argparse.Namespace) -> int:
    from langgraph_librarian.demo import run_demo

    _at_least(_MIN_MESSAGES, "--messages", args.messages)
    if args.messages is not None and args.messages > _MAX_MESSAGES:
        raise CliError(f"--messages must be at most {_MAX_MESSAGES:,} (got {args.messages:,})")
    _embeddings(disabled=False)  # a bad LIBRARIAN_EMBEDDINGS fails here, in one line
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
    from langgraph_librarian.ui import ChatService
    from langgraph_librarian.ui._db import ChatDatabaseError

    _embeddings(disabled=False)  # a bad LIBRARIAN_EMBEDDINGS fails here, not mid-chat
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
        raise CliError(
            "the web UI needs Gradio: pip install 'langgraph-librarian[ui]' "
            "(from a checkout: pip install -e '.[ui]')"
        )
    _check_port(args.host, args.port)
    service = _chat_service(args)
    from langgraph_librarian.ui import launch

    _announce(service)
    # Gradio's own banner ends with "set share=True in launch()", which this command
    # cannot do (and a public link would expose the chat database): say the address here.
    _say(f"starting the web chat on http://{args.host}:{args.port} (Ctrl-C to stop)")
    try:
        launch(service, host=args.host, port=args.port, quiet=True)
    except OSError as exc:  # the port is taken, or the host cannot be bound
        # Gradio's own text suggests an environment variable and a launch() argument;
        # this command's way is --port / --host.
        raise _cannot_serve(args.host, args.port) from exc
    finally:
        service.close()
    return 0


def _cannot_serve(host: str, port: int) -> CliError:
    return CliError(
        f"cannot serve on {host}:{port} (the port is in use, or the host cannot be "
        "bound): choose another with --port (or --host)"
    )


def _check_port(host: str, port: int) -> None:
    """Fail before announcing the address when it cannot be bound (the port is taken):
    Gradio finds out only after this command has printed that it is starting there."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise _cannot_serve(host, port) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError:
            raise _cannot_serve(host, port) from None


def _announce(service: Any) -> None:
    _say(f"chat database: {service.db_path} (--db PATH to use another file)")
    if service.scope_id:
        _say(f"recall scope of new threads: {service.scope_id}")
    else:
        _say("recall: off")


def _chat(args: argparse.Namespace) -> int:
    from langgraph_librarian.ui._terminal import run_terminal_chat

    service = _chat_service(args)
    if args.thread is not None:
        from langgraph_librarian.ui._service import MessageRejected

        if not args.thread:
            service.close()
            raise CliError("--thread needs an id (leave it out to start a new thread)")
        try:  # refused up front, not on every message typed
            service.check_thread_id(args.thread)
        except MessageRejected as exc:
            service.close()
            raise CliError(f"--thread {args.thread!r}: {exc}") from None
    _announce(service)
    try:
        return run_terminal_chat(service, thread_id=args.thread, strategy=args.strategy)
    finally:
        service.close()


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
        help="conversation length, 20-100,000 messages (default: %(default)s)",
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
        "Needs the ui extra: pip install -e '.[ui]' from a checkout "
        "(pip install 'langgraph-librarian[ui]' once this release is on PyPI).",
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
    # Only named here: the evaluation is a separate distribution, imported when run.
    sub.add_parser(
        "bench",
        add_help=False,
        help="compare context strategies on a dataset (needs the bench package, ./bench)",
    )
    _add_ui(sub)
    _add_chat(sub)
    return parser


_COMMANDS = "langgraph_librarian.commands"
"""Entry-point group of commands other distributions add to ``librarian`` (the
evaluation's ``bench``). The runtime never imports them by name: it depends on none."""


def _bench(argv: list[str]) -> int:
    """``librarian bench ...``: handed to the evaluation package, when it is installed."""
    found = entry_points(group=_COMMANDS, name="bench")
    if not found:
        print(f"librarian: error: {_BENCH_MISSING}", file=sys.stderr)
        return 2
    bench_main = next(iter(found)).load()
    return int(bench_main(argv, prog="librarian bench"))


def _run(command: Callable[[], int]) -> int:
    """Run a command as the ``librarian`` command line does (``bench`` too).

    A :class:`CliError` is one line and status 2; Ctrl-C says so and gives 130; a reader
    of stdout that went away (``librarian demo | head``) ends the run quietly with 141,
    as a program killed by SIGPIPE; text a terminal's encoding cannot show (an ellipsis
    on an ASCII terminal) is replaced, not a UnicodeEncodeError traceback; so is input
    that is not in its encoding (``librarian chat`` reads stdin), which would otherwise
    fail to decode, or reach the database as lone surrogates that SQLite refuses.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="replace")
    stdin = sys.stdin
    if isinstance(stdin, io.TextIOWrapper) and stdin.errors in ("strict", "surrogateescape"):
        stdin.reconfigure(errors="replace")
    try:
        return int(command())
    except CliError as exc:
        print(f"librarian: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        _drop_stdout()
        return 141
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        _drop_stdout()  # stdout (or a file) on a full disk: say so in one line
        print(f"librarian: error: cannot write the output ({exc.strerror})", file=sys.stderr)
        return 1


def _drop_stdout() -> None:
    # What is still buffered for stdout would fail again when Python exits; a stdout
    # that is not a real file (captured in-process) raises OSError or ValueError.
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: list[str] | None = None) -> int:
    # This module imports only the standard library (nor does the package import more):
    # langchain and langgraph, a second or more to import, come in from here on, where a
    # Ctrl-C ends the command as it does while the command runs.
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return _interrupted()


def _interrupted() -> int:
    print("\nlibrarian: interrupted", file=sys.stderr)
    return 130


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if args.command == "bench":
        return _run(lambda: _bench(argv[argv.index("bench") + 1 :]))
    if unknown:
        # argparse would blame the top-level parser; the subcommand's usage is the useful one.
        args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return _run(lambda: args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
