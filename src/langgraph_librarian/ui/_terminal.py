"""``librarian chat``: the web UI's chat in a terminal, over the same service and database.

Replies stream as they come; after each turn one short inspector block says what the
Librarian selected, what was sent and what was recalled from other threads. Commands
start with ``/`` (``/help``).
"""

from __future__ import annotations

import contextlib
import re
import select
import sys
from collections.abc import Iterator
from typing import TextIO

from langgraph_librarian.context import CONTEXT_STRATEGIES, ContextStrategy
from langgraph_librarian.ui._render import NO_MODEL, inspector_text
from langgraph_librarian.ui._service import (
    ChatService,
    MessageRejected,
    ThreadDeleted,
    TurnFinished,
    TurnToken,
    TurnWaiting,
    has_visible_text,
)

__all__ = ["run_terminal_chat"]

HELP = """commands:
  /new              start a new thread (the old one stays saved)
  /threads          list saved threads
  /open ID          reopen a thread
  /strategy NAME    context sent to the model: {strategies}
  /demo             load the demo conversation into a new thread
  /quit             leave (Ctrl-D works too)
  /help             this list
A lone /word that is no command is taken for a mistyped one; other lines starting
with / ("/etc/hosts is broken") are sent as messages; start a line with // to send a
message that begins with a command's name. Ctrl-C stops an answer."""

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters but newline and tab: a saved message (typed in any tab of the web
chat) or a reply with an escape sequence must not clear the screen, retitle the window
or write the clipboard of whoever reads the thread here."""

_COMMANDS = frozenset({"new", "threads", "open", "strategy", "demo", "quit", "exit", "q", "help"})


class _Chat:
    def __init__(
        self, service: ChatService, thread_id: str, strategy: ContextStrategy, out: TextIO
    ) -> None:
        self.service, self.thread_id, self.strategy, self.out = service, thread_id, strategy, out

    def say(self, text: str = "", end: str = "\n") -> None:
        print(_CONTROLS.sub("", text), end=end, file=self.out, flush=True)

    def command(self, line: str) -> bool:
        """Run a ``/command``; ``False`` means leave."""
        name, _, arg = line[1:].strip().partition(" ")
        arg = arg.strip()
        if name in {"quit", "exit", "q"}:
            return False
        if name == "new":
            self.thread_id = self.service.new_thread_id()
            self.say(f"new thread {self.thread_id}")
        elif name == "threads":
            listed = self.service.list_threads()
            for info in listed:
                self.say(f"  {info.thread_id}  {info.label()}")
            if not listed:
                self.say("no saved threads yet (a thread is saved with its first message)")
        elif name == "open" and not arg:
            self.say("usage: /open ID (see /threads)")
        elif name == "open":
            if self.service.is_deleted(arg):
                self.say(f"thread {arg!r} was deleted (see /threads)")
            elif self.service.threads.get(arg) is None:
                self.say(f"no saved thread {arg!r} (see /threads)")
            else:
                self.thread_id = arg
                history = self.service.history(arg)
                scope = self.service.scope_for(arg)
                where = f"; recall scope {scope}" if scope else ""
                self.say(f"thread {arg}: {len(history)} messages{where}")
                for entry in history[-4:]:
                    self.say(f"  {entry['role']}: {' '.join(entry['content'].split())[:200]}")
                if (error := self.service.failed_question(arg)) is not None:
                    self.say(f"  (the model failed: {error}; no reply saved, send again to retry)")
        elif name == "strategy" and arg in CONTEXT_STRATEGIES:
            self.strategy = arg
            self.say(f"strategy: {arg}")
        elif name == "strategy":
            self.say(
                f"unknown strategy {arg!r}: choose one of {', '.join(CONTEXT_STRATEGIES)}"
                if arg
                else f"strategy: {self.strategy} (choose one of {', '.join(CONTEXT_STRATEGIES)})"
            )
        elif name == "demo":
            try:
                demo = self.service.load_demo()
            except Exception as exc:  # the chat goes on in its thread, as the page does
                error = f"{type(exc).__name__}: {exc}"[:500]
                self.say(f"(the demo could not be loaded: {error})")
                return True
            self.thread_id = demo.thread_id
            self.say(
                f"demo loaded into thread {demo.thread_id}: {demo.messages} messages; "
                f"try: {demo.questions[0]}"
            )
        else:
            if name != "help":
                self.say(f"unknown command /{name}")
            self.say(HELP.format(strategies=", ".join(CONTEXT_STRATEGIES)))
        return True

    @staticmethod
    def is_command(line: str) -> bool:
        """A ``/name`` whose name is a command, or a lone ``/word`` (a mistyped command);
        other lines starting with ``/`` ("/etc/hosts is broken") are messages."""
        if not line.startswith("/") or line.startswith("//"):
            return False
        name, _, rest = line[1:].strip().partition(" ")
        return name in _COMMANDS or (not rest.strip() and "/" not in name)

    def turn(self, text: str) -> None:
        started = False  # "assistant: " once the message is taken, not before its check
        try:
            for event in self.service.send(self.thread_id, text, self.strategy):
                if not started:
                    self.say("assistant: ", end="")
                    started = True
                if isinstance(event, TurnWaiting):
                    self.say(f"({event.note}) ", end="")
                elif isinstance(event, TurnToken):
                    self.say(event.text, end="")
                elif isinstance(event, TurnFinished):
                    if event.offline:
                        self.say(f"({NO_MODEL}: here is what it would have received.)")
                    elif event.error:
                        saved = "your message is saved: send it again to retry"
                        self.say(f"\n(the model failed: {event.error}; {saved})")
                    elif not has_visible_text(event.reply):
                        self.say("(the model sent an empty reply)")
                    else:
                        self.say()
                    self.say(inspector_text(event.report))
        except ThreadDeleted:  # in the web chat or another terminal: it stays deleted
            gone, self.thread_id = self.thread_id, self.service.new_thread_id()
            self.say(
                f"{chr(10) if started else ''}(not sent: thread {gone} was deleted, in the web "
                f"chat or another window; now in the new thread {self.thread_id}: send it again)"
            )
        except MessageRejected as exc:
            self.say(f"{chr(10) if started else ''}(not sent: {exc})")
        except KeyboardInterrupt:  # Ctrl-C stops the answer; Ctrl-D or /quit leaves
            history = self.service.history(self.thread_id)
            kept = bool(history) and history[-1] == {"role": "user", "content": text}
            saved = "your message is saved: send it again to retry" if kept else "nothing was saved"
            self.say(f"{chr(10) if started else ''}(interrupted: no answer; {saved})")
        except Exception as exc:  # the graph or the database: say so and go on, as the page does
            error = f"{type(exc).__name__}: {exc}"[:500]
            self.say(f"{chr(10) if started else ''}(the turn failed: {error})")


PROMPT = "> "


def _typed_lines() -> Iterator[str]:
    """Lines typed at a terminal: a prompt, line editing and history (readline).

    Read raw, the arrow keys pressed to fix a typo went into the message as escape
    sequences.
    """
    with contextlib.suppress(ImportError):  # not on Windows; input() edits lines there
        import readline  # noqa: F401  (imported, it makes input() edit lines)
    while True:
        try:
            line = input(PROMPT)
            # Lines pasted together are already waiting when the first one is read (a
            # typed line is not followed so fast): one message, not one per line.
            while _waiting(sys.stdin):
                line += "\n" + input("")
        except EOFError:  # Ctrl-D
            print()
            return
        yield line


def _waiting(stream: TextIO) -> bool:
    """Whether more input is there to read right now (never on a platform where
    ``select`` cannot watch a terminal)."""
    try:
        return bool(select.select([stream], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def run_terminal_chat(
    service: ChatService,
    *,
    thread_id: str | None = None,
    strategy: ContextStrategy = "librarian",
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    """Read lines until end of input or ``/quit``; return the exit status."""
    source = stdin if stdin is not None else sys.stdin
    deleted = thread_id is not None and service.is_deleted(thread_id)
    chat = _Chat(
        service,
        service.new_thread_id() if deleted or not thread_id else thread_id,
        strategy,
        out if out is not None else sys.stdout,
    )
    model = service.model_label or "no chat model (offline: shows the context instead)"
    scope = service.scope_for(chat.thread_id)
    recall = f"recall scope {scope}" if scope else "recall off"
    chat.say(f"thread {chat.thread_id} · {model} · {recall} · /help for commands")
    if deleted:  # its id is not used again
        chat.say(f"thread {thread_id!r} was deleted: this is a new thread (see /threads)")
    elif thread_id is not None and service.threads.get(thread_id) is None:
        # A mistyped id would otherwise open an empty conversation without a word.
        chat.say(f"no saved thread {thread_id!r}: this is a new thread (see /threads)")
    at_terminal = stdin is None and out is None and sys.stdin.isatty() and sys.stdout.isatty()
    lines = _typed_lines() if at_terminal else (raw.rstrip("\n") for raw in source)
    for line in lines:
        if chat.is_command(line):
            if not chat.command(line):
                break
        elif line.strip():
            chat.turn(line[1:] if line.startswith("//") else line)
    return 0
