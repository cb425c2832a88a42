"""The chat behind ``librarian ui`` and ``librarian chat``, with no web framework in it.

:class:`ChatService` owns one Librarian graph (``create_librarian_graph`` with a running
summary, so every thread keeps both its index and its gist), a ``SqliteSaver`` on the
``--db`` file and the thread list. Each turn streams the agent's tokens; the strategy
switch only changes which model input the agent node sends
(:func:`~langgraph_librarian.context.context_for_strategy`), so the same thread can be
answered by every strategy without losing anything.

Scoped recall (on by default, scope ``"default"``) is
:class:`~langgraph_librarian.ui.ScopeRecall`: before each reply the question recalls
from the other threads of the scope, and after each turn the thread's new messages are
copied into it. A thread belongs to the scope it was first answered in (kept in the
thread list), so reopening it under another ``--scope`` does not move it.

Nothing here selects, summarizes or indexes: the graph and ``ScopeMemory`` do.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sqlite3
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.context import (
    CONTEXT_STRATEGIES,
    ContextStrategy,
    context_for_strategy,
    is_running_summary,
)
from langgraph_librarian.graph import create_librarian_graph
from langgraph_librarian.hydrate import recent_turns_start
from langgraph_librarian.index import update_index
from langgraph_librarian.recall import scope_key
from langgraph_librarian.recall._memory import erase_thread
from langgraph_librarian.recall._result import RECALL_MESSAGE_ID
from langgraph_librarian.state import LibrarianState
from langgraph_librarian.tokens import count_tokens
from langgraph_librarian.ui._db import (
    ChatDatabaseError,
    ThreadInfo,
    ThreadLock,
    ThreadLocks,
    ThreadRegistry,
    check_database,
    connect,
)
from langgraph_librarian.ui._recall import DEFAULT_SCOPE, SCOPE_CONFIG_KEY, ScopeRecall
from langgraph_librarian.ui._report import TurnReport, build_report

__all__ = [
    "DEFAULT_MAX_MESSAGE_CHARS",
    "ChatService",
    "DemoLoaded",
    "MessageRejected",
    "RecallSource",
    "ThreadDeleted",
    "TurnEvent",
    "TurnFinished",
    "TurnSaving",
    "TurnToken",
    "TurnWaiting",
]

DEFAULT_MAX_MESSAGE_CHARS = 200_000
"""Longest message accepted (a long paste is fine; a runaway one is refused, not cut)."""

STRATEGY_KEY = "librarian_ui_strategy"
"""``configurable`` key that tells the agent node which context to send."""

_SUMMARY_TOKENS = 400
"""Running-summary budget of the chat when its config sets none (the CLI default)."""
_BUSY_TIMEOUT = 300.0
_GRACE = 0.25
"""How long a turn or a delete waits for its thread before it says another one holds
it: :meth:`ChatService.answering` (a page opening a thread, here or in another process)
holds the lock for an instant to look."""

# Ids the page makes ("chat-" + 12 hex) and any a user passes to `librarian chat
# --thread`: plain characters only, since the id comes from the browser.
DEMO_SCOPE_SUFFIX = ":demo"
"""Demo threads recall from (and are copied into) the chat's scope plus this suffix."""
_THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+=-]{0,127}")
_SURROGATE = re.compile("[\ud800-\udfff]")
"""What SQLite cannot store (UTF-8 has no surrogates): a byte that is not UTF-8 in the
terminal chat's input becomes one."""
_BLANK_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
"""Controls, format characters (zero-width space, BOM, word joiner, bidi and tag
characters), lone surrogates and separators: none of them shows anything."""
_BLANK_CHARACTERS = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)
"""What prints as nothing though Unicode files it with letters, marks or symbols: the
combining grapheme joiner, Hangul and Khmer fillers, Mongolian and other variation
selectors, the braille blank."""
_DEMO_SEED = 11
DELETED_NOTE = (
    "This thread was deleted (in another tab, window or chat on this file); nothing was "
    "sent to it and it stays deleted."
)
_DEMO_TITLE = re.compile(r"Demo conversation \((\d+) messages(?:, seed (\d+))?\)")


def has_visible_text(text: str) -> bool:
    """Whether ``text`` has a character that shows: not only whitespace, controls,
    format characters (U+200B, U+FEFF, U+2060...) and the letters that print as nothing."""
    return any(
        ch not in _BLANK_CHARACTERS and unicodedata.category(ch) not in _BLANK_CATEGORIES
        for ch in text
    )


def _demo_conversation(seed: int, n_messages: int) -> Any:
    """The ``librarian demo`` conversation (deterministic for a seed and a length)."""
    from langgraph_librarian._apps.demo_conversation import generate_conversation

    return generate_conversation(
        seed, n_messages=n_messages, noise="medium", n_facts=12, conv_id="demo"
    )


@functools.lru_cache(maxsize=4)
def _demo_questions(seed: int, n_messages: int) -> tuple[str, ...]:
    return tuple(q.text for q in _demo_conversation(seed, n_messages).questions)


def _chat_messages(values: dict[str, Any]) -> list[BaseMessage]:
    """The thread's questions (with text) and replies (also empty ones), as the chat shows them."""
    return [
        m
        for m in values.get("messages") or []
        if m.type == "ai" or (m.type == "human" and message_text(m).strip())
    ]


class UiState(LibrarianState, total=False):
    """The Librarian's state plus what the agent sent in the last turn (for the inspector)."""

    ui_turn: dict[str, Any]
    ui_offline: list[str]
    """Ids of the questions asked with no chat model (no reply was due), so that a
    thread reopened in a chat that has one does not read as if answers were lost."""


class RecallSource(Protocol):
    """Cross-thread recall for the chat (:class:`~langgraph_librarian.ui.ScopeRecall`).

    The agent node calls it with the turn's state and run config before building the
    model input. It returns the recalled message to put in front of the input (or
    ``None``; it is never written to the thread) and a JSON-safe record for the
    inspector: ``{"status", "reason", "records": [{"text", "thread_id",
    "message_id"}]}``. A source that raises is reported as ``"unavailable"`` and the
    turn goes on without it. A source with a ``capture(thread_id, state)`` method gets
    the thread's state after each turn (to copy it into its memory); what it returns
    is shown as the turn's capture status.
    """

    def __call__(
        self, state: dict[str, Any], config: RunnableConfig
    ) -> tuple[BaseMessage | None, dict[str, Any]]: ...


class MessageRejected(ValueError):
    """The message was not sent (empty, nothing visible, too long); nothing changed."""


class ThreadDeleted(MessageRejected):
    """The thread was deleted (in another tab, window or process); nothing was sent.

    Its id is not used again: a page or terminal still showing it starts a new thread.
    """


@dataclass
class TurnWaiting:
    """Another tab is answering on this thread; this message goes next."""

    kind: ClassVar[str] = "waiting"
    """What a caller of :meth:`ChatService.send` dispatches on (no import needed)."""

    note: str


@dataclass
class TurnToken:
    """A piece of the reply as the model streams it."""

    kind: ClassVar[str] = "token"
    """What a caller of :meth:`ChatService.send` dispatches on (no import needed)."""

    text: str


@dataclass
class TurnSaving:
    """The reply is complete; the turn is being saved (and copied into the recall scope)."""

    kind: ClassVar[str] = "saving"
    """What a caller of :meth:`ChatService.send` dispatches on (no import needed)."""


@dataclass
class TurnFinished:
    """The turn is over and saved: the reply, or why there is none, and the inspector."""

    kind: ClassVar[str] = "finished"
    """What a caller of :meth:`ChatService.send` dispatches on (no import needed)."""

    reply: str
    report: TurnReport
    error: str | None = None

    @property
    def offline(self) -> bool:
        """No chat model is configured: there is no reply, only the context it would get."""
        return self.report.model is None and self.error is None


TurnEvent = TurnWaiting | TurnToken | TurnSaving | TurnFinished


@dataclass
class DemoLoaded:
    """The demo conversation, saved as a thread of its own."""

    thread_id: str
    messages: int
    tokens: int
    questions: list[str] = field(default_factory=list)


def _model_name(model: BaseChatModel | None, spec: str | None) -> str | None:
    if model is None:
        return None
    return (
        spec
        or getattr(model, "model_name", None)
        or getattr(model, "model", None)
        or (type(model).__name__)
    )


class ChatService:
    """Threads, turns and the demo, persisted in one SQLite file.

    Args:
        db_path: The SQLite file (created if missing; refused if not a usable database).
        model: The chat model that answers; ``None`` runs offline (no answers, the
            context the model would get is shown instead).
        model_label: How to name the model in the UI (``"provider:model"``).
        librarian_config: The Librarian's settings; default: the offline engine with a
            400-token running summary. A config without ``running_summary_tokens`` gets
            400 (the chat compares strategies that include the running summary).
        max_message_chars: Longest message accepted.
        scope: The recall scope of new threads (default ``"default"``):
            :class:`ScopeRecall` with its memory in ``db_path``. A thread keeps the scope
            it was first answered in, also when the chat is reopened with another one.
            ``None`` turns recall off.
        recall: Your own recall source instead (see :class:`RecallSource`); it wins
            over ``scope``.

    Example:
        >>> import tempfile, pathlib
        >>> service = ChatService(pathlib.Path(tempfile.mkdtemp()) / "chat.db")
        >>> thread = service.new_thread_id()
        >>> events = list(service.send(thread, "The venue is Porto.", "librarian"))
        >>> events[-1].offline
        True
        >>> service.close()
    """

    def __init__(
        self,
        db_path: str | Path,
        *,
        model: BaseChatModel | None = None,
        model_label: str | None = None,
        librarian_config: LibrarianConfig | None = None,
        max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS,
        scope: str | None = DEFAULT_SCOPE,
        recall: RecallSource | None = None,
    ) -> None:
        path = Path(db_path)
        check_database(path)
        if recall is None and scope is not None:
            scope_key(scope)  # a bad scope fails before anything is opened
        config = librarian_config or LibrarianConfig()
        if config.running_summary_tokens is None:
            config = replace(config, running_summary_tokens=_SUMMARY_TOKENS)
        self.config = config
        self.db_path = path
        self.model = model
        self.model_label = _model_name(model, model_label)
        self.max_message_chars = max_message_chars
        self._own_recall: ScopeRecall | None = None
        self._closed = False
        try:
            # Turns on a thread wait for each other also across processes on this file.
            self._thread_locks = ThreadLocks.for_path(path)
        except OSError as exc:  # a read-only folder or file system
            raise ChatDatabaseError(f"--db {path} cannot be opened for writing ({exc})") from None
        try:
            with self._thread_locks.setting_up():  # one process at a time creates tables
                self._conn = connect(path)
                self._saver = SqliteSaver(self._conn)
                self._saver.setup()
                self.threads = ThreadRegistry(path)
                if recall is None and scope is not None:
                    self._own_recall = ScopeRecall.open(path, scope, self.config)
                    recall = self._own_recall
        except sqlite3.Error as exc:  # a read-only folder or file system, a device...
            with contextlib.suppress(Exception):
                self._conn.close()
            self._thread_locks.close()
            raise ChatDatabaseError(f"--db {path} cannot be opened for writing ({exc})") from None
        except BaseException:
            self._thread_locks.close()
            raise
        self.recall = recall
        self.scope_id: str | None = getattr(recall, "scope_id", None) if recall else None
        self.graph = create_librarian_graph(
            self._agent, self.config, checkpointer=self._saver, state_schema=UiState
        )

    # -- the agent node -----------------------------------------------------------------

    def _agent(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        strategy = (config.get("configurable") or {}).get(STRATEGY_KEY, "librarian")
        context = context_for_strategy(state, strategy)
        recalled: dict[str, Any] | None = None
        if self.recall is not None:
            try:
                message, recalled = self.recall(state, config)
            except Exception as exc:  # fail-open: the turn goes on without recall
                message = None
                reason = f"{type(exc).__name__}: {exc}"[:300]
                recalled = {"status": "unavailable", "reason": reason, "records": []}
            if message is not None:
                context = [message, *context]
        turn = self._turn_record(state, strategy, context, recalled)
        offline = list(state.get("ui_offline") or [])
        if self.model is None:
            # No fake answer: the turn ends without a reply; the UI shows the context.
            question = state["messages"][-1] if state["messages"] else None
            if question is not None and question.id:
                offline.append(question.id)
            return {"ui_turn": turn, "ui_offline": offline}
        try:
            reply = self.model.invoke(context, config)
        except Exception as exc:  # shown to the user; the conversation stays as it was
            turn["error"] = f"{type(exc).__name__}: {exc}"[:500]
            return {"ui_turn": turn, "ui_offline": offline}
        return {"messages": [reply], "ui_turn": turn, "ui_offline": offline}

    def _turn_record(
        self,
        state: dict[str, Any],
        strategy: ContextStrategy,
        context: list[BaseMessage],
        recalled: dict[str, Any] | None,
    ) -> dict[str, Any]:
        messages: list[BaseMessage] = list(state["messages"])
        positions = {m.id: p for p, m in enumerate(messages) if m.id}
        counter = self.config.token_counter
        gist = next((m for m in state.get("curated_messages") or [] if is_running_summary(m)), None)
        sizes = {
            s: count_tokens(context_for_strategy(state, s), counter) for s in CONTEXT_STRATEGIES
        }
        return {
            "strategy": strategy,
            "model": self.model_label,
            "sent": [
                {
                    "position": positions.get(m.id) if m.id else None,
                    "role": m.type,
                    "gist": is_running_summary(m),
                    "recalled": m.id == RECALL_MESSAGE_ID,
                    "tokens": count_tokens([m], counter),
                    "excerpt": message_text(m)[:400],
                }
                for m in context
            ],
            "sent_tokens": count_tokens(context, counter),
            "history_count": len(messages),
            "history_tokens": sizes["everything"],
            "strategy_tokens": sizes,
            "gist_text": message_text(gist) if gist is not None else None,
            "gist_tokens": count_tokens([gist], counter) if gist is not None else 0,
            "recent_start": recent_turns_start(messages, self.config.always_include_recent_turns),
            "question_position": len(messages) - 1,
            "recall": recalled,
            "error": None,
        }

    # -- threads ----------------------------------------------------------------------------

    @staticmethod
    def new_thread_id() -> str:
        """A fresh thread id (nothing is saved until the first message)."""
        return f"chat-{uuid.uuid4().hex[:12]}"

    def list_threads(self) -> list[ThreadInfo]:
        """Saved threads, most recently used first."""
        return self.threads.list()

    def _config(
        self, thread_id: str, strategy: str = "librarian", scope: str | None = None
    ) -> RunnableConfig:
        configurable: dict[str, Any] = {"thread_id": thread_id, STRATEGY_KEY: strategy}
        if scope:
            configurable[SCOPE_CONFIG_KEY] = scope
        return {"configurable": configurable}

    def check_thread_id(self, thread_id: str) -> str:
        """``thread_id`` if it can name a thread, else :class:`MessageRejected`."""
        if not thread_id:
            raise MessageRejected("The page has no thread yet: wait a moment or reload it.")
        if not _THREAD_ID.fullmatch(thread_id):
            raise MessageRejected(
                "A thread id is 1-128 letters, digits and _ . : @ + = - (starting with a "
                "letter or digit)."
            )
        return thread_id

    @property
    def demo_scope(self) -> str:
        """The recall scope of demo threads (apart from the chat's own)."""
        return f"{self.scope_id or 'default'}{DEMO_SCOPE_SUFFIX}"

    def scope_for(self, thread_id: str) -> str | None:
        """The recall scope of ``thread_id``: the one it started in, else the chat's.

        ``None`` when recall is off. A recall source passed as ``recall=`` decides its
        own scope; this is then its ``scope_id``.
        """
        if self.recall is None:
            return None
        if self._own_recall is None:
            return self.scope_id
        info = self.threads.get(thread_id)
        return info.scope if info is not None and info.scope else self.scope_id

    def _values(self, thread_id: str) -> dict[str, Any]:
        return dict(self.graph.get_state(self._config(thread_id)).values or {})

    def history(self, thread_id: str) -> list[dict[str, str]]:
        """The thread as chat lines ``{"role": "user"|"assistant", "content": text}``.

        A reply the model gave without text is a line with empty ``content`` (it was
        saved: the question is answered, if emptily).
        """
        return [
            {"role": "user" if m.type == "human" else "assistant", "content": message_text(m)}
            for m in _chat_messages(self._values(thread_id))
        ]

    def asked_offline(self, thread_id: str) -> list[bool] | None:
        """For each line of :meth:`history`: whether it is a question asked while the
        chat had no model (no reply was due). ``None`` for a thread whose turns were all
        saved before this was recorded."""
        values = self._values(thread_id)
        if "ui_offline" not in values:
            return None
        offline = set(values["ui_offline"] or [])
        return [m.type == "human" and m.id in offline for m in _chat_messages(values)]

    def failed_question(self, thread_id: str) -> str | None:
        """The model's error when the thread ends with the question it failed to answer.

        A failed turn keeps its question but saves no reply; this is what the chat shows
        in the reply's place when the thread is reopened (``None`` otherwise).
        """
        failed = self._failed_turn(thread_id)
        return failed[1] if failed is not None else None

    def report(self, thread_id: str) -> TurnReport | None:
        """The inspector's view of the thread's last turn (``None`` before the first)."""
        values = self._values(thread_id)
        return build_report(thread_id, values, self.config) if values.get("ui_turn") else None

    def overview(self, thread_id: str) -> dict[str, Any]:
        """Size of the thread, its index and its gist (for a thread with no turn yet)."""
        values = self._values(thread_id)
        messages = values.get("messages") or []
        gist = values.get("librarian_summary") or {}
        return {
            "messages": len(messages),
            "tokens": count_tokens(messages, self.config.token_counter),
            "indexed": len(values.get("index") or []),
            "gist": gist.get("text") or "",
            "scope": self.scope_for(thread_id),
            "recall": self.recall is not None,
        }

    # -- turns ------------------------------------------------------------------------------

    def check_message(self, text: str) -> str:
        """The message to send, or :class:`MessageRejected` saying why not."""
        if not text or not text.strip():
            raise MessageRejected("The message is empty: type something first.")
        if len(text) > self.max_message_chars:
            raise MessageRejected(
                f"The message has {len(text):,} characters; the limit is "
                f"{self.max_message_chars:,}. Nothing was sent; your text is still in the box."
            )
        if (bad := _SURROGATE.search(text)) is not None:
            raise MessageRejected(
                f"The message is not valid Unicode at character {bad.start() + 1:,} (a lone "
                "surrogate, e.g. from text that is not UTF-8). Nothing was sent."
            )
        if not has_visible_text(text):
            raise MessageRejected(
                "The message has nothing visible in it (only spaces, zero-width or control "
                "characters): type something first."
            )
        return text

    def _lock(self, thread_id: str) -> ThreadLock:
        return self._thread_locks.get(thread_id)

    def is_deleted(self, thread_id: str) -> bool:
        """Whether ``thread_id`` was deleted (:meth:`delete_thread`, here or in another
        process on the file): :meth:`send` refuses it with :class:`ThreadDeleted`."""
        return self.threads.deleted(thread_id)

    def is_saved(self, thread_id: str) -> bool:
        """Whether ``thread_id`` has anything stored: listed, or with a checkpoint."""
        return self.threads.get(thread_id) is not None or bool(self._values(thread_id))

    def delete_thread(self, thread_id: str) -> int:
        """Delete ``thread_id``: its messages, index and gist (every checkpoint), its line
        in the thread list and what recall copied from it into its scope.

        A thread with nothing saved yet (a new one, or one already deleted) is left as it
        is: nothing to delete, 0 is returned. A deleted thread's id is not used again:
        :meth:`send` refuses it (:class:`ThreadDeleted`), also in another process.

        Returns the number of recall records deleted. With the chat's own recall this is
        :meth:`ScopeMemory.delete_thread <langgraph_librarian.recall.ScopeMemory.delete_thread>`
        (every scope the thread was copied into, the index store, the checkpoints); a
        recall source passed as ``recall=`` is asked to forget only if it has a
        ``forget(thread_id, scope_id)``.

        Raises:
            MessageRejected: an answer is being written in the thread (nothing deleted).
        """
        self.check_thread_id(thread_id)
        lock = self._lock(thread_id)
        if not lock.acquire(timeout=_GRACE):
            raise MessageRejected("An answer is being written in this thread; delete it after.")
        try:
            if not self.is_saved(thread_id):
                return 0
            forgotten = 0
            if self._own_recall is None:
                scope = self.scope_for(thread_id)
                forget = getattr(self.recall, "forget", None)
                forgotten = int(forget(thread_id, scope)) if forget is not None and scope else 0
            forgotten += erase_thread(
                thread_id,
                memory=None if self._own_recall is None else self._own_recall.memory,
                checkpointer=self._saver,
                index_store=self.config.store,
            )
            self.threads.delete(thread_id)
            return forgotten
        finally:
            lock.release()

    def answering(self, thread_id: str) -> bool:
        """Whether a turn runs on ``thread_id`` now, in this process or another one on
        the file (its question is not saved until the answer is: a page opened meanwhile
        shows the thread without them)."""
        return self._lock(thread_id).locked()

    def wait_until_answered(self, thread_id: str, timeout: float = _BUSY_TIMEOUT) -> bool:
        """Wait for the turn running on ``thread_id`` to be saved; ``False`` on timeout."""
        lock = self._lock(thread_id)
        if not lock.acquire(timeout=timeout):
            return False
        lock.release()
        return True

    def send(self, thread_id: str, text: str, strategy: ContextStrategy) -> Iterator[TurnEvent]:
        """Run one turn: stream the reply's tokens, then the saved result.

        Turns on one thread run one at a time (two tabs on a thread wait for each
        other instead of forking it). A model that fails, even mid-stream, ends the turn
        with ``error`` set; the user's message stays in the thread, and the same text
        sent again while the thread ends with it unanswered (the model failed, or the
        answer was stopped) retries it instead of adding it twice. The thread is listed
        (:meth:`list_threads`) once its turn is stored: a turn that fails before its
        message is saved leaves no thread behind.

        Raises:
            MessageRejected: ``text`` is empty, has nothing visible or is too long
                (nothing was saved).
            ThreadDeleted: the thread was deleted (in another tab or process): nothing
                was saved, and the thread stays deleted.
            ValueError: an unknown strategy.
        """
        self.check_thread_id(thread_id)
        self.check_message(text)
        if strategy not in CONTEXT_STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}")
        lock = self._lock(thread_id)
        if not lock.acquire(timeout=_GRACE):
            yield TurnWaiting("Another tab is answering on this thread; this message goes next.")
            if not lock.acquire(timeout=_BUSY_TIMEOUT):
                raise MessageRejected("This thread stayed busy in another tab; try again.")
        if self.is_deleted(thread_id):  # checked holding the lock: no delete runs now
            lock.release()
            raise ThreadDeleted(DELETED_NOTE)
        # The thread list learns of the turn once the turn is stored, not before: a
        # turn that fails before its question is saved leaves no thread titled with it.
        question = HumanMessage(text, id=str(uuid.uuid4()))
        listed = False
        scope: str | None = None
        try:
            scope = self.scope_for(thread_id)
            # The question the thread ends with, unanswered (the model failed, or Ctrl-C
            # stopped it), sent again: a retry of it, not a second copy.
            retry = self.model is not None and self._unanswered(thread_id) == text
            parts: list[str] = []
            stream = self.graph.stream(
                {"messages": [] if retry else [question]},
                self._config(thread_id, strategy, scope),
                stream_mode="messages",
                durability="exit",  # one checkpoint per turn, not one per node
            )
            for chunk, meta in stream:
                if not isinstance(meta, dict) or meta.get("langgraph_node") != "agent":
                    continue  # the Librarian's own output (the gist message, nostream calls)
                if isinstance(chunk, AIMessageChunk | AIMessage) and (piece := message_text(chunk)):
                    parts.append(piece)
                    try:
                        yield TurnToken(piece)
                    except GeneratorExit:
                        # The reader went away (a tab closed mid-reply): finish the turn
                        # anyway, so the question and its answer are saved, not lost.
                        for _ in stream:
                            pass
                        listed = self._list_turn(thread_id, text, scope, retry)
                        self._capture(thread_id, self._values(thread_id), scope)
                        raise
            listed = self._list_turn(thread_id, text, scope, retry)
            try:
                yield TurnSaving()
            except GeneratorExit:  # the reply is saved; copy it into the scope, then go
                self._capture(thread_id, self._values(thread_id), scope)
                raise
            values = self._values(thread_id)
            report = build_report(thread_id, values, self.config)
            report.capture = self._capture(thread_id, values, scope)
            if report.error or report.model is None:
                reply = "".join(parts)  # a failed model's partial text; offline: nothing
            else:
                final = values["messages"][-1]
                reply = message_text(final) if final.type == "ai" else "".join(parts)
            yield TurnFinished(reply, report, report.error)
        except BaseException:
            # The graph failed (or was interrupted): LangGraph may still have saved the
            # question; then the thread is listed with it, else nothing is.
            if not listed:
                with contextlib.suppress(Exception):
                    stored = self._values(thread_id).get("messages") or []
                    if any(m.id == question.id for m in stored):
                        self._list_turn(thread_id, text, scope)
            raise
        finally:
            lock.release()

    def _list_turn(self, thread_id: str, text: str, scope: str | None, retry: bool = False) -> bool:
        """Put the stored turn in the thread list (a new thread gets ``text`` as title);
        a retry is no new turn."""
        self.threads.touch(thread_id, text, turns=0 if retry else 1, scope=scope)
        return True

    def _unanswered(self, thread_id: str) -> str | None:
        """The text of the question the thread ends with (``None``: it ends otherwise)."""
        messages = self._values(thread_id).get("messages") or []
        return message_text(messages[-1]) if messages and messages[-1].type == "human" else None

    def _failed_turn(self, thread_id: str) -> tuple[str, str] | None:
        """The question the thread's last turn failed to answer (the thread ends with
        it) and the model's error; ``None`` if the last turn did not fail."""
        values = self._values(thread_id)
        turn = values.get("ui_turn") or {}
        messages = values.get("messages") or []
        last = len(messages) - 1
        if not turn.get("error") or last < 0 or turn.get("question_position") != last:
            return None
        if messages[last].type != "human":
            return None
        return message_text(messages[last]), str(turn["error"])

    def _capture(
        self, thread_id: str, values: dict[str, Any], scope: str | None
    ) -> dict[str, Any] | None:
        """Hand the finished turn to the recall source's ``capture`` (if it has one)."""
        capture = getattr(self.recall, "capture", None)
        if not callable(capture):
            return None
        try:
            if self._own_recall is not None:
                result = self._own_recall.capture(thread_id, values, scope)
            else:
                result = capture(thread_id, values)
        except Exception as exc:  # the answer is saved; the next turn captures again
            return {"status": "unavailable", "reason": f"{type(exc).__name__}: {exc}"[:300]}
        return dict(result) if isinstance(result, dict) else None

    # -- the demo ---------------------------------------------------------------------------

    def demo_questions(self, thread_id: str) -> list[str]:
        """The questions of the demo conversation if ``thread_id`` is one, else ``[]``.

        A demo thread is known by the title :meth:`load_demo` gives it (and, when recall
        is on, by its demo scope), so a reopened demo offers its questions again.
        """
        info = self.threads.get(thread_id)
        if info is None or (info.scope and not info.scope.endswith(DEMO_SCOPE_SUFFIX)):
            return []
        match = _DEMO_TITLE.fullmatch(info.title)
        if match is None or not 0 < int(match.group(1)) <= 10_000:
            return []
        seed = int(match.group(2)) if match.group(2) else _DEMO_SEED
        return list(_demo_questions(seed, int(match.group(1))))

    def load_demo(
        self,
        *,
        seed: int = _DEMO_SEED,
        n_messages: int = 240,
        progress: Callable[[int, int], None] | None = None,
    ) -> DemoLoaded:
        """Save the ``librarian demo`` conversation as a new thread, indexed, with its gist.

        The history is indexed once (``progress(done, total)`` as it goes), written as if
        the agent had just answered, and the graph's own ``index_messages`` step then
        takes the index and folds the older messages into the gist.
        """
        conv = _demo_conversation(seed, n_messages)
        thread_id = self.new_thread_id()
        entries = update_index(conv.messages, [], self.config, progress=progress).entries
        cfg = self._config(thread_id)
        with self._lock(thread_id):
            self.graph.update_state(
                cfg,
                {"messages": conv.messages, "index": [e.to_dict() for e in entries]},
                as_node="agent",
            )
            for _ in self.graph.stream(None, cfg, stream_mode="updates"):
                pass  # index_messages: reuses the entries, builds the gist
            self.threads.touch(
                thread_id,
                f"Demo conversation ({len(conv.messages)} messages"
                + (f", seed {seed})" if seed != _DEMO_SEED else ")"),
                # Its user messages are its turns: the list said "0 turns" of a thread
                # of 240 messages.
                turns=sum(m.type == "human" for m in conv.messages),
                # A scope of its own: its 240 synthetic messages must not be recalled
                # into your real threads (nor raise the relevance bar there).
                scope=self.demo_scope if self.recall is not None else None,
            )
        return DemoLoaded(
            thread_id,
            len(conv.messages),
            count_tokens(conv.messages, self.config.token_counter),
            [q.text for q in conv.questions],
        )

    def close(self) -> None:
        """Close the database connections (a recall source passed in is left open)."""
        self.threads.close()
        if self._own_recall is not None:
            self._own_recall.close()
        self._conn.close()
        if not self._closed:
            self._closed = True
            self._thread_locks.close()
