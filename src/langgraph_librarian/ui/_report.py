"""What the inspector shows about a turn, read from the thread's saved state.

:func:`build_report` joins three records the graph already keeps: the Librarian's
``librarian_metadata`` (selection, latency, fallbacks), its index (each message's
summary) and the agent node's ``ui_turn`` (which strategy was used and what exactly
was sent). It computes nothing about selection or summaries itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.tokens import count_tokens

__all__ = ["STRATEGY_LABELS", "MessageRow", "SentRow", "TurnReport", "build_report"]

STRATEGY_LABELS: dict[str, str] = {
    "librarian": "Librarian",
    "running_summary": "Running summary",
    "both": "Both",
    "everything": "Everything",
}
"""How the UI names each context strategy."""


@dataclass
class MessageRow:
    """A message of the history as the inspector lists it."""

    position: int
    message_id: str
    role: str
    summary: str
    status: str
    text: str
    tokens: int
    sent: bool
    linked: bool = False
    shortened: bool = False
    """Sent as its summary: too long for the context budget."""


@dataclass
class SentRow:
    """One message of the model input (the gist has no position)."""

    position: int | None
    role: str
    gist: bool
    tokens: int
    excerpt: str
    recalled: bool = False
    """The block recalled from other threads of the scope (never saved in the thread)."""


@dataclass
class TurnReport:
    """The last turn of a thread: what the Librarian chose and what the model got."""

    thread_id: str
    strategy: str
    model: str | None
    question: str
    selected: list[MessageRow]
    recent: list[MessageRow]
    sent: list[SentRow]
    sent_tokens: int
    history_count: int
    history_tokens: int
    strategy_tokens: dict[str, int]
    selection_skipped: bool
    skip_reason: str | None
    selection_strategy: str | None
    selection_latency_ms: float | None
    fallback_reason: str | None
    dropped_for_budget: list[int]
    unindexed_count: int
    index_size: int
    gist_text: str | None
    gist_tokens: int
    recall: dict[str, Any] | None
    error: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    capture: dict[str, Any] | None = None
    """What copying this turn into the recall scope did (live turns only, not saved)."""

    @property
    def strategy_label(self) -> str:
        """The strategy as the UI names it."""
        return STRATEGY_LABELS.get(self.strategy, self.strategy)

    @property
    def recalled(self) -> list[dict[str, Any]]:
        """The records recalled from other threads and sent with this turn."""
        if not self.recall:
            return []
        return [r for r in self.recall.get("records") or [] if isinstance(r, dict)]

    @property
    def gist_sent(self) -> bool:
        """Whether the gist was part of the model input."""
        return any(row.gist for row in self.sent)

    @property
    def recalled_tokens(self) -> int:
        """Tokens of the block recalled from other threads (not part of this thread)."""
        return sum(row.tokens for row in self.sent if row.recalled)

    @property
    def thread_tokens_sent(self) -> int:
        """Tokens sent from this thread (its messages and its gist): what ``history_tokens``
        is compared with. The recalled block is counted apart."""
        return max(0, self.sent_tokens - self.recalled_tokens)

    @property
    def messages_sent(self) -> int:
        """Messages of this thread that were sent (the gist and the recalled block are not
        messages of the thread)."""
        return sum(1 for row in self.sent if row.position is not None)

    def extras_sent(self) -> list[str]:
        """What was sent besides the thread's messages: ``"the gist"``, ``"the recalled block"``."""
        extras = []
        if self.gist_sent:
            extras.append("the gist")
        if any(row.recalled for row in self.sent):
            extras.append("the recalled block")
        return extras

    @property
    def saved_pct(self) -> float:
        """Share of the thread's tokens that was not sent (the recalled block aside)."""
        if not self.history_tokens:
            return 0.0
        return max(0.0, 100.0 * (1 - self.thread_tokens_sent / self.history_tokens))


def _entries(thread_id: str, values: dict[str, Any], config: LibrarianConfig) -> dict[int, Any]:
    raw = values.get("index") or []
    store = config.index_store
    if not raw and store is not None:
        raw = [e.to_dict() for e in store.load(thread_id) or []]
    return {int(e["id"]): e for e in raw if isinstance(e, dict) and "id" in e}


def _row(
    position: int,
    messages: list[BaseMessage],
    entries: dict[int, Any],
    sent: set[int],
    config: LibrarianConfig,
    linked: bool = False,
    shortened: frozenset[int] = frozenset(),
) -> MessageRow:
    message = messages[position]
    entry = entries.get(position) or {}
    return MessageRow(
        position=position,
        message_id=str(message.id or ""),
        role=message.type,
        summary=str(entry.get("summary") or ""),
        status=str(entry.get("status") or "not indexed yet"),
        text=message_text(message),
        tokens=int(entry.get("original_tokens") or count_tokens([message], config.token_counter)),
        sent=position in sent,
        linked=linked,
        shortened=position in shortened,
    )


def build_report(thread_id: str, values: dict[str, Any], config: LibrarianConfig) -> TurnReport:
    """The inspector's view of the last turn saved in ``values`` (a thread's state).

    Raises:
        ValueError: the state holds no turn record (``ui_turn``).
    """
    turn = values.get("ui_turn")
    if not isinstance(turn, dict):
        raise ValueError(f"thread {thread_id!r} has no turn to inspect yet")
    meta: dict[str, Any] = dict(values.get("librarian_metadata") or {})
    messages: list[BaseMessage] = list(values.get("messages") or [])
    entries = _entries(thread_id, values, config)
    sent_rows = [SentRow(**row) for row in turn.get("sent") or []]
    sent = {r.position for r in sent_rows if r.position is not None}
    question_at = int(turn.get("question_position", len(messages) - 1))
    in_range = [p for p in meta.get("selected_ids") or [] if 0 <= p < len(messages)]
    expanded = set(meta.get("expanded_ids") or [])
    short = frozenset(
        [*(meta.get("shortened_selected_ids") or []), *(meta.get("shortened_recent_ids") or [])]
    )
    recent_start = int(turn.get("recent_start", question_at))
    recent = range(max(0, recent_start), min(question_at + 1, len(messages)))
    question = message_text(messages[question_at]) if 0 <= question_at < len(messages) else ""
    return TurnReport(
        thread_id=thread_id,
        strategy=str(turn.get("strategy")),
        model=turn.get("model"),
        question=question,
        selected=[_row(p, messages, entries, sent, config, p in expanded, short) for p in in_range],
        recent=[_row(p, messages, entries, sent, config, shortened=short) for p in recent],
        sent=sent_rows,
        sent_tokens=int(turn.get("sent_tokens") or 0),
        history_count=int(turn.get("history_count") or 0),
        history_tokens=int(turn.get("history_tokens") or 0),
        strategy_tokens=dict(turn.get("strategy_tokens") or {}),
        selection_skipped=bool(meta.get("selection_skipped")),
        skip_reason=meta.get("reason"),
        selection_strategy=meta.get("selection_strategy"),
        selection_latency_ms=meta.get("selection_latency_ms"),
        fallback_reason=meta.get("fallback_reason"),
        dropped_for_budget=list(meta.get("dropped_for_budget") or []),
        unindexed_count=int(meta.get("unindexed_count") or 0),
        index_size=len(entries),
        gist_text=turn.get("gist_text"),
        gist_tokens=int(turn.get("gist_tokens") or 0),
        recall=turn.get("recall"),
        error=turn.get("error"),
        metadata=meta,
    )
