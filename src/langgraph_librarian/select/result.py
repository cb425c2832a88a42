"""What a selector returns."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian.entry import IndexEntry

__all__ = ["Selection", "Selector"]

SelectionStrategy = Literal["llm", "local", "local_fallback"]


@dataclass
class Selection:
    """Result of selecting earlier messages for a query.

    Attributes:
        ids: Selected message positions, most relevant first.
        reasoning: The selector's raw answer (LLM) or a short account (local).
        strategy: Which selector produced ``ids``.
        fallback_reason: Why the LLM selector's answer was not used, if it was not.
        candidates: How many index entries the selector considered.
        shortlisted: True when the index was prefiltered to fit the prompt budget.
        prompt_tokens: Estimated size of the selection prompt (0 for local).
        expanded_ids: Ids added by dependency expansion (local selector).
        raw_answer: The selector model's answer as received (truncated), also when it
            was unusable and the local selector was used instead.
        reserve_ids: Next-best positions, used only to fill a context token budget
            that ``ids`` leave unused (never added to an unbounded context). The
            local selector gives ``max_selected`` of them (twice that for a list
            question), more while they average under 40 tokens a message.
        model_ids: The LLM selector's own picks (``strategy="llm"``).
        kept_local_ids: The offline engine's confident picks kept next to the model's
            (those the model did not pick itself).
        linked_ids: What the local selector reached through its best matches (some
            may also rank on their own score): the later changes of a selected
            statement, the earlier statements a selected change refers to, a name's
            other mentions, the statement a match refers to, the date an event is
            relative to, the sitting's dateline and the replies it completes a match
            with. Scoped recall keeps them under its relevance floor.
        exchange_ids: Of ``ids``, the messages kept by structure at their end (local
            selector): the bare answer to a question a selected message asks, the user
            message a selected assistant reply reacts to. Context for the matches, not
            matches: an LLM selector's backed picks and scoped recall do not give way
            to them.
        spare_ids: Candidates ranked after ``reserve_ids`` (local selector), used only
            while the context stays well below its token budget (the Librarian: 40% of
            it); never added to an unbounded context.
        flow_ids: What the best matches' speakers said next (local selector: the
            same speaker's messages among the four after one of the five best matches
            while the others only react, and the one right before), by rank of their
            match, then by distance: used only to fill room the rest of the context
            leaves unused, never added to an unbounded context. The LLM selector and
            scoped recall give none.
    """

    ids: list[int] = field(default_factory=list)
    reasoning: str = ""
    strategy: SelectionStrategy = "local"
    fallback_reason: str | None = None
    candidates: int = 0
    shortlisted: bool = False
    prompt_tokens: int = 0
    expanded_ids: list[int] = field(default_factory=list)
    raw_answer: str = ""
    reserve_ids: list[int] = field(default_factory=list)
    model_ids: list[int] = field(default_factory=list)
    kept_local_ids: list[int] = field(default_factory=list)
    linked_ids: list[int] = field(default_factory=list)
    exchange_ids: list[int] = field(default_factory=list)
    spare_ids: list[int] = field(default_factory=list)
    flow_ids: list[int] = field(default_factory=list)


@runtime_checkable
class Selector(Protocol):
    """What the pipeline needs from a selector (``LibrarianConfig(selector=...)``).

    ``entries`` are the index entries of earlier messages (``entry.id`` is the position
    in ``messages``); positions in ``exclude`` (the always-kept recent turns) must not be
    returned. Return positions most relevant first. ``config`` is the caller's run config,
    to pass to any model call (see ``langgraph_librarian._engine.calls.internal_config``).
    """

    def select(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        config: RunnableConfig | None = None,
    ) -> Selection:
        """Pick entries for ``query``."""
        ...

    async def aselect(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        config: RunnableConfig | None = None,
    ) -> Selection:
        """Async twin of :meth:`select`."""
        ...
