"""Hydration: full selected messages plus the recent turns, as a history providers accept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

from langgraph_librarian._messages import human_positions, tool_groups
from langgraph_librarian.tokens import TokenCounter, count_tokens

__all__ = ["Hydrated", "hydrate", "recent_turns_start"]


def recent_turns_start(messages: Sequence[BaseMessage], turns: int) -> int:
    """Position where the last ``turns`` user turns begin.

    A turn starts at a human message and runs to the next one. The current turn
    (from the latest human message on) always counts, so ``turns`` below 1 acts as 1.
    With no human message at all, nothing is "recent" and the start is ``len(messages)``.
    """
    starts = human_positions(messages)
    if not starts:
        return len(messages)
    return starts[-min(max(turns, 1), len(starts))]


@dataclass
class Hydrated:
    """Curated context and what went into it.

    Attributes:
        messages: The curated messages, in original order.
        positions: Their positions in the full history.
        selected: Selected positions that made it in (rank order).
        dropped_for_budget: Selected positions left out to respect the token budget.
        recent_start: Where the kept recent turns begin.
    """

    messages: list[BaseMessage] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    selected: list[int] = field(default_factory=list)
    dropped_for_budget: list[int] = field(default_factory=list)
    recent_start: int = 0


def hydrate(
    messages: Sequence[BaseMessage],
    selected: Sequence[int],
    *,
    recent_turns: int = 2,
    token_budget: int | None = None,
    token_counter: TokenCounter | None = None,
) -> Hydrated:
    """Build the curated context.

    Always kept: system messages and the last ``recent_turns`` whole user turns
    (the current question included). Selected positions are added in rank order,
    each with its whole tool exchange (an AIMessage's tool calls travel with all of
    their ToolMessages and the other way round); a ToolMessage whose call is not in
    the history is left out everywhere. Out-of-range or duplicate positions are
    ignored. With ``token_budget``, lowest-ranked selections are dropped first, then
    older recent turns, never the current turn or system messages.

    The result always passes ``memory.history_problems(..., require_human_first=False)``
    (the library's one definition of a valid history): system messages first, each
    tool call directly followed by its results. A call whose results are not adjacent
    in the curated list, or that has none, is stripped (its text stays); a valid
    selection comes back unchanged.
    """
    n = len(messages)
    groups = tool_groups(messages)
    recent_start = recent_turns_start(messages, recent_turns)
    system = {i for i, m in enumerate(messages) if m.type == "system"}
    # A tool result whose call is gone (deleted, trimmed) is rejected by providers,
    # wherever it sits, so it never enters the curated context.
    orphans = {i for i, m in enumerate(messages) if m.type == "tool" and i not in groups}
    must = (system | set(range(recent_start, n))) - orphans

    units: list[tuple[int, list[int]]] = []
    seen: set[int] = must | orphans
    for raw in selected:
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < n or raw in seen:
            continue
        members = [p for p in groups.get(raw, [raw]) if p not in seen]
        if not members:
            continue
        seen.update(members)
        units.append((raw, members))

    chosen = set(must)
    kept_units: list[tuple[int, list[int]]] = list(units)
    dropped: list[int] = []
    if token_budget is not None:

        def cost(positions: Sequence[int]) -> int:
            return count_tokens([messages[p] for p in sorted(positions)], token_counter)

        used = cost(sorted(must))
        # Trim older recent turns while even the mandatory part is over budget.
        turn_starts = [p for p in human_positions(messages) if p >= recent_start]
        while used > token_budget and len(turn_starts) > 1:
            first, nxt = turn_starts[0], turn_starts[1]
            for p in range(first, nxt):
                if p not in system and p in chosen:
                    chosen.discard(p)
            turn_starts.pop(0)
            recent_start = nxt
            used = cost(sorted(chosen))
        kept_units = []
        for rank_pos, members in units:
            extra = cost(members)
            if used + extra <= token_budget:
                kept_units.append((rank_pos, members))
                used += extra
            else:
                dropped.append(rank_pos)
    for _, members in kept_units:
        chosen.update(members)
    positions = sorted(chosen)
    # tool_groups pairs a call with its results wherever they sit; providers want them
    # adjacent (and a call may have no result at all): repair to the one definition.
    # Imported here because the memory package imports the pipeline, which imports us.
    from langgraph_librarian.memory._history import repair_positions

    repaired = repair_positions([messages[p] for p in positions], require_human_first=False)
    kept = {positions[i] for i, _ in repaired}
    return Hydrated(
        messages=[m for _, m in repaired],
        positions=[positions[i] for i, _ in repaired],
        selected=[rank_pos for rank_pos, _ in kept_units if rank_pos in kept],
        dropped_for_budget=dropped,
        recent_start=recent_start,
    )
