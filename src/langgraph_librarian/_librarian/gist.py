"""The gist: a running summary of the older conversation, next to the selected messages.

With ``LibrarianConfig(running_summary_tokens=N)`` the curated context starts with a
bounded summary of everything older than the recent turns (the gist), followed by the
selected messages in full and the recent turns: the summary for what the conversation
has been about, the selection for the details this question needs.

Nothing is deleted: the summary lives in state (``librarian_summary``), never in
``messages``, so it is neither indexed nor selectable. After each reply the messages that
have left the recent turns since the last fold are folded into it (offline extractive,
or the indexer model when one is configured), in batches so a model is not called for
every message.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, SystemMessage

from langgraph_librarian.hydrate import recent_turns_start
from langgraph_librarian.memory._prompts import SUMMARY_SOURCE, summary_message
from langgraph_librarian.memory._result import SummaryResult
from langgraph_librarian.memory._summarizer import RunningSummarizer
from langgraph_librarian.tokens import count_tokens

if TYPE_CHECKING:
    from langgraph_librarian.config import LibrarianConfig

__all__ = [
    "GIST_KEY",
    "Fold",
    "apply_fold",
    "check_gist_kept",
    "gist_message",
    "gist_tokens",
    "plan_fold",
    "summarizer_for",
]

logger = logging.getLogger("langgraph_librarian")

GIST_KEY = "librarian_summary"
"""State key of the gist: ``{"text", "upto", "covers"}``."""

_MODEL_BATCH = 4
"""With a model, fold once at least this many messages are waiting (one call per batch)."""


@dataclass
class Fold:
    """Messages to fold into the gist now, and the summary they extend."""

    messages: list[BaseMessage]
    previous: str
    upto: str | None
    covers: int


def _gist(state: dict[str, Any]) -> dict[str, Any]:
    value = state.get(GIST_KEY)
    return value if isinstance(value, dict) else {}


def gist_message(state: dict[str, Any]) -> SystemMessage | None:
    """The gist as the system message the curated context starts with, if there is one."""

    text = _gist(state).get("text")
    return summary_message(text) if isinstance(text, str) and text.strip() else None


def _folded_until(messages: Sequence[BaseMessage], gist: dict[str, Any]) -> int | None:
    """Position after the last folded message; ``None`` when it can no longer be found."""
    upto, covers = gist.get("upto"), gist.get("covers")
    if not upto and not covers:
        return 0
    if upto:
        for position in range(len(messages) - 1, -1, -1):
            if messages[position].id == upto:
                return position + 1
        return None  # deleted: the gist no longer matches the history
    return covers if isinstance(covers, int) and 0 <= covers <= len(messages) else None


_SUMMARY_SOURCES = frozenset({"summarization", SUMMARY_SOURCE})
"""``additional_kwargs["lc_source"]`` of summary messages (LangChain's summarization
middleware, this library's running summary): their facts came from messages that were
folded already, and a summary folded as a message would nest summaries in the gist."""


def _is_summary(message: BaseMessage) -> bool:
    return (message.additional_kwargs or {}).get("lc_source") in _SUMMARY_SOURCES


_LANGCHAIN_SUMMARY_HEAD = "Here is a summary of the conversation to date:"


def _summary_text(message: BaseMessage) -> str:
    """The summary a summary message carries (its ``running_summary``, else its text
    without LangChain's heading)."""
    carried = (message.additional_kwargs or {}).get("running_summary")
    if isinstance(carried, str):
        return carried.strip()
    text = message.text if isinstance(message.text, str) else str(message.content)
    return text.removeprefix(_LANGCHAIN_SUMMARY_HEAD).strip()


def plan_fold(
    messages: Sequence[BaseMessage], state: dict[str, Any], config: LibrarianConfig
) -> Fold | None:
    """What to fold after this turn, or ``None`` when the gist is up to date."""
    gist = _gist(state)
    # Folded after the reply, read at the next question: by then that question opens a
    # new turn, so the oldest recent turn leaves the window. Fold up to the turns the
    # next selection will still keep in full.
    boundary = recent_turns_start(messages, max(1, config.always_include_recent_turns - 1))
    start = _folded_until(messages, gist)
    previous = str(gist.get("text") or "")
    if start is None:
        # The last folded message was deleted (a trim, LangChain's summarization
        # middleware replacing the history): the gist keeps what it holds (facts are
        # never thrown away) and what remains is folded into it; a line seen twice is
        # kept once by the merge.
        start = 0
    span = messages[start:boundary]
    waiting = [m for m in span if m.type != "system" and not _is_summary(m)]
    # A summary message in the span (the summarization middleware's) holds facts of
    # messages it replaced, some perhaps not folded yet: merged as summary text.
    absorbed = [text for m in span if _is_summary(m) and (text := _summary_text(m))]
    if absorbed:
        previous = "\n".join([previous, *absorbed]).strip()
    batch = 1 if config.uses_local_indexer else _MODEL_BATCH
    if len(waiting) < batch:
        return None
    last = messages[boundary - 1]
    return Fold(waiting, previous, str(last.id) if last.id else None, boundary)


def summarizer_for(config: LibrarianConfig) -> RunningSummarizer:
    """The running summarizer the config implies (the indexer model, or offline)."""
    assert config.running_summary_tokens is not None
    model = None if config.uses_local_indexer else config.get_indexer_model()
    return RunningSummarizer(
        model,
        max_summary_tokens=config.running_summary_tokens,
        **config.call_policy.arguments(),
        token_counter=config.token_counter,
    )


def apply_fold(
    fold: Fold,
    result: SummaryResult | None,
    error: Exception | None,
    *,
    uses_model: bool = False,
) -> dict[str, Any]:
    """The state update (gist and metadata) for a fold that succeeded or failed.

    The summarizer's notes (why a model summary was rejected, what was re-compressed)
    go to ``running_summary_notes``; with a model (``uses_model``) an offline summary
    in its place is also logged as a warning.
    """
    if result is None:
        # No fake summary: keep the old one; the messages wait for the next fold.
        logger.warning("librarian: running summary not updated: %s", error)
        return {"librarian_metadata": {"running_summary_error": f"{type(error).__name__}: {error}"}}
    gist = {"text": result.summary, "upto": fold.upto, "covers": fold.covers}
    metadata: dict[str, Any] = {
        "running_summary_folded": len(fold.messages),
        "running_summary_tokens": result.summary_tokens,
        "running_summary_method": result.method,
    }
    if result.notes:
        metadata["running_summary_notes"] = list(result.notes)
    rejected = [n for n in result.notes if n.startswith("model summary rejected")]
    if uses_model and rejected:
        # As an index entry whose summary was rejected is marked "fallback": the gist of
        # this fold is the offline one, and why (the summarizer warns once per cause).
        metadata["running_summary_fallback"] = rejected[0]
    elif uses_model and result.method == "extractive":
        logger.warning(
            "librarian: running summary written offline instead of by the model: %s",
            "; ".join(result.notes) or "no reason given",
        )
    return {GIST_KEY: gist, "librarian_metadata": metadata}


_KEPT_THREADS = 4096
"""Threads remembered as having been given a gist (the oldest forgotten first)."""
_gist_given: OrderedDict[str, None] = OrderedDict()
_gist_lock = threading.Lock()
_gist_warned: list[bool] = []

NO_GIST_KEPT = (
    "librarian: running_summary_tokens is set, but the running summary written at the "
    "last turn of this thread is not in the state: the graph's state schema has no "
    "'librarian_summary' field (or the graph keeps no checkpoint), so the summary is "
    "rebuilt from the start at every turn and never reaches the model. Add "
    "`librarian_summary: dict` to the state schema (LibrarianState and "
    "LibrarianMiddleware's state have it)."
)


def check_gist_kept(state: dict[str, Any], thread: str | None, update: dict[str, Any]) -> None:
    """Warn (once per process) when the gist given to a thread did not come back.

    A state schema without ``librarian_summary`` (a hand-written ``TypedDict``, a
    ``create_react_agent`` ``AgentState``) drops the update without an error: every
    turn then folds the whole history again and the curated context has no gist. The
    thread's previous turn having been given one tells that case apart from a first
    fold. ``thread`` identifies the thread within its checkpointer (two graphs may use
    the same thread id); ``update`` is this turn's state update.
    """
    if thread is None:
        return
    with _gist_lock:
        lost = GIST_KEY not in state and thread in _gist_given
        if GIST_KEY in update:
            _gist_given[thread] = None
            _gist_given.move_to_end(thread)
            while len(_gist_given) > _KEPT_THREADS:
                _gist_given.popitem(last=False)
        if not lost or _gist_warned:
            return
        _gist_warned.append(True)
    logger.warning(NO_GIST_KEPT)


def gist_tokens(message: SystemMessage | None, config: LibrarianConfig) -> int:
    """Tokens the gist takes in the curated context."""
    return count_tokens([message], config.token_counter) if message is not None else 0
