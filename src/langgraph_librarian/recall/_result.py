"""The outcome of one recall, and what a failure means for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.messages import BaseMessage, SystemMessage

from langgraph_librarian._engine.failures import is_configuration_error
from langgraph_librarian._kit.state import insert_after_system
from langgraph_librarian.recall._records import MemoryRecord

__all__ = [
    "RECALL_MESSAGE_ID",
    "RecallResult",
    "RecallStatus",
    "failure_status",
]

RecallStatus = Literal["recalled", "empty", "skipped", "unavailable", "misconfigured"]
RECALL_MESSAGE_ID = "librarian-scope-recall"
"""``id`` of the recalled ``SystemMessage`` (it is never written to ``messages``)."""


@dataclass
class RecallResult:
    """What one recall produced.

    Attributes:
        status: ``"recalled"`` (evidence found), ``"empty"`` (nothing relevant or no
            memory in the scope), ``"skipped"`` (no human message or query),
            ``"unavailable"`` (the store or selector failed) or ``"misconfigured"``
            (missing scope, bad bound, store not set up, authentication...).
        text: The fenced evidence block (empty unless ``status == "recalled"``).
        records: The records included in ``text``, in time order.
        scope: The scope's namespace label (``None`` when no scope was resolved).
        reason: Why the result is not ``"recalled"`` (for logs and metadata); for a
            recall whose selector model answered that nothing applies, why records
            were recalled anyway (``kept_local``).
        strategy: The selector that chose the records (``"local"``, ``"llm"``...).
        relevance: How far the scope's best record stands above chance for the
            question (standard deviations; a shared rare word counts as 2.0). With the
            offline selector recall is ``"empty"`` when this stays under the floor for
            the scope's size (1.5 for a few records, about 3.75 for 400) and no record
            shares a rare word of the question with another of its words (see
            ``docs/recall.md``). ``None`` when no ranking ran (an empty scope, a
            failure).
        model_picks: How many of ``records`` the selector model picked itself; ``0``
            when it answered that nothing applies. ``None`` when no model selected
            (the offline selector, or its fallback after the model failed).
        kept_local: How many of ``records`` are the offline engine's picks kept next
            to the model's (``LibrarianConfig.selector_keeps_local``, on by default):
            each bears on the question by itself (the relevance floor). ``0`` without
            a model selection.
        embedding_error: The embedding model's failure (``"Type: message"``) when it
            failed during this recall: the records were then ranked by their words
            alone. ``None`` otherwise.
    """

    status: RecallStatus
    text: str = ""
    records: list[MemoryRecord] = field(default_factory=list)
    scope: str | None = None
    reason: str = ""
    strategy: str = ""
    relevance: float | None = None
    model_picks: int | None = None
    kept_local: int = 0
    embedding_error: str | None = None

    def message(self) -> SystemMessage | None:
        """The ``SystemMessage`` to hand the model, or ``None`` when nothing was recalled."""
        if self.status != "recalled" or not self.text:
            return None
        return SystemMessage(content=self.text, id=RECALL_MESSAGE_ID)

    def apply(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """``messages`` with the recalled message in front (after leading system messages).

        Your own leading system messages stay first so instructions precede evidence;
        everything else keeps its order. Without a recall, a copy of ``messages``.
        """
        recalled = self.message()
        if recalled is None:
            return list(messages)
        return insert_after_system(messages, recalled)


def failure_status(exc: BaseException) -> RecallStatus:
    """``"misconfigured"`` for configuration and authentication problems, else ``"unavailable"``."""
    return "misconfigured" if is_configuration_error(exc) else "unavailable"
