"""Where a running summary cuts the history: which messages are folded in and removed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.messages import tool_groups
from langgraph_librarian.memory._result import checked_count

__all__ = ["SummaryCut", "plan_summary_cut"]


@dataclass(frozen=True)
class SummaryCut:
    """The outcome of :func:`plan_summary_cut`.

    Attributes:
        summarize: Positions folded into the summary and then removed, in order.
        keep: Positions that stay in the history, in order.
        turn_aligned: True when the cut falls on a user-turn boundary; False when a
            single long turn had to be cut between tool exchanges (its question stays).
    """

    summarize: list[int] = field(default_factory=list)
    keep: list[int] = field(default_factory=list)
    turn_aligned: bool = True


def _exchange_safe(messages: Sequence[BaseMessage], cut: int) -> int:
    """Move ``cut`` back until no tool exchange straddles it."""
    groups = tool_groups(messages)
    moved = True
    while moved:
        moved = False
        for members in {tuple(g) for g in groups.values()}:
            if min(members) < cut <= max(members):
                cut, moved = min(members), True
    return cut


def _turn_aligned(
    messages: Sequence[BaseMessage], target: int, humans: list[int]
) -> tuple[int, bool]:
    """The latest turn start at or before ``target`` that no tool exchange straddles.

    Returns ``(cut, False)`` when there is none with conversation before it.
    """
    if target >= len(messages):
        return len(messages), True
    cut = target
    while True:
        start = max((h for h in humans if h <= cut), default=None)
        if start is None or all(m.type == "system" for m in messages[:start]):
            return target, False
        safe = _exchange_safe(messages, start)
        if safe == start:
            return start, True
        cut = safe  # an exchange spans the turn start (a malformed history): go further back


def plan_summary_cut(messages: Sequence[BaseMessage], keep_last: int = 2) -> SummaryCut:
    """Decide which messages a running summary absorbs so that the rest stays valid.

    At least the last ``keep_last`` messages stay. The cut then moves back to the start
    of the user turn it falls in, so the kept history starts with a human message and
    never splits an AIMessage's tool calls from their ToolMessages. When the history
    before that point holds nothing to summarize (one long agentic turn), the cut falls
    between tool exchanges instead and the turn's human message is kept, still giving
    a history that starts with the question. System messages are never summarized
    or removed: they are instructions, not conversation. Tool results whose call is
    not in the history (a history that starts with a tool message) are summarized
    with the old part rather than left at the head of the kept part.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> history = [HumanMessage("a"), AIMessage("b"), HumanMessage("c"), AIMessage("d")]
        >>> plan_summary_cut(history, keep_last=2).summarize
        [0, 1]
    """
    keep_last = checked_count("keep_last", keep_last, 0)
    n = len(messages)
    if n <= keep_last:
        return SummaryCut(keep=list(range(n)))
    target = n - keep_last
    humans = [i for i, m in enumerate(messages) if m.type == "human"]
    cut, aligned = _turn_aligned(messages, target, humans)
    if not aligned:
        cut = _exchange_safe(messages, target)
    groups = tool_groups(messages)
    # A kept part must not begin with tool results whose call is gone: fold them in
    # (looking past system messages, which stay wherever the cut falls).
    while cut < n and (
        messages[cut].type == "system" or (messages[cut].type == "tool" and cut not in groups)
    ):
        cut += 1
    protected = {i for i, m in enumerate(messages) if m.type == "system"}
    if not aligned:
        question = max((h for h in humans if h < cut), default=None)
        if question is not None:
            protected.add(question)
    summarize = [i for i in range(cut) if i not in protected]
    keep = sorted(protected | set(range(cut, n)))
    return SummaryCut(summarize=summarize, keep=keep, turn_aligned=aligned)
