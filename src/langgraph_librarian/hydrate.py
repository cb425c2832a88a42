"""Hydration: full selected messages plus the recent turns, as a history providers accept."""

from __future__ import annotations

import itertools
import math
import re
from bisect import bisect_left
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.history import repair_positions
from langgraph_librarian._engine.messages import message_text
from langgraph_librarian._engine.text import content_terms, one_line, split_sentences
from langgraph_librarian._engine.view import HistoryView, view_of
from langgraph_librarian.tokens import TokenCounter, count_tokens

__all__ = ["hydrate"]


def recent_turns_start(messages: Sequence[BaseMessage], turns: int) -> int:
    """Position where the last ``turns`` user turns begin.

    A turn starts at a human message and runs to the next one. The current turn
    (from the latest human message on) always counts, so ``turns`` below 1 acts as 1.
    With no human message at all, the last conversational message (with its tool
    exchange) is the current turn.
    """
    view, n = view_of(messages)
    return _recent_start(view, n, turns)


def _recent_start(view: HistoryView, n: int, turns: int) -> int:
    starts = view.humans
    count = bisect_left(starts, n)  # human messages below n (the view may be longer)
    if not count:
        # No human message (an agent's own steps, a query given in state): the last
        # conversational message, with its whole tool exchange, is the current turn, so
        # the context never loses the newest message (nor ends up empty).
        for position in range(n - 1, -1, -1):
            if view.types[position] != "system":
                owner = view.owner[position]
                return owner if 0 <= owner < position else position
        return n
    return starts[count - min(max(turns, 1), count)]


@dataclass
class Hydrated:
    """Curated context and what went into it.

    Attributes:
        messages: The curated messages, in original order.
        positions: Their positions in the full history.
        selected: Selected positions that made it in (rank order).
        dropped_for_budget: Selected positions left out to respect the token budget.
        recent_start: Where the kept recent turns begin.
        compacted: Positions of messages given in short form (their summary) to fit the
            budget: long earlier recent messages, and selected messages longer than the
            whole budget.
    """

    messages: list[BaseMessage] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    selected: list[int] = field(default_factory=list)
    dropped_for_budget: list[int] = field(default_factory=list)
    recent_start: int = 0
    compacted: list[int] = field(default_factory=list)


COMPACT_MARK = "librarian_compact"
"""``additional_kwargs`` flag of a recent message shortened to fit the budget."""

_COMPACT_MIN_TOKENS = 120
"""Recent messages shorter than this are never shortened: nothing to gain."""
_OPENER_CHARS = 400
"""A long turn opener comes as at most this many characters: its summary (an extractive
one is shorter), else its start. It may come on top of the budget, so the matching
passages a recent message's short form carries after its summary are cut from it (a
650-token opener came as 570 tokens)."""
_TOP_UNITS = 5
"""Selected units this high in the ranking are worth shortening earlier recent turns for."""


def matching_excerpt(text: str, query: str, max_chars: int) -> str:
    """The passages of ``text`` that share the most of ``query``'s words, in their order.

    A selected message too long to fit the budget whole (a pasted log, a report) is given
    in short form; its summary alone says what the message is about, not the line the
    question is about. This picks those lines: passages scored by the question's words
    they hold, each weighted by how rare it is within the message, best first up to
    ``max_chars``, then put back in order and joined with ``[...]``. ``""`` when no
    passage shares a word with the question.
    """
    # The question's first words are enough to find its lines (a pasted question of
    # 20,000 words would make every passage's probe slow).
    wanted = set(list(dict.fromkeys(content_terms(query[:_QUERY_CHARS])))[:_QUERY_TERMS])
    if not wanted or max_chars <= 0:
        return ""
    passages = _excerpt_passages(text)
    # A stem's first letters start its words ("mov" of moving / move, "visib" of
    # visibility): a substring test skips stemming the passages that cannot hold one
    # (most lines of a long log).
    probe = re.compile("|".join(sorted({re.escape(t[: max(3, len(t) - 2)]) for t in wanted})))
    held = [
        wanted.intersection(content_terms(p)) if probe.search(p.lower()) else set()
        for p in passages
    ]
    frequency: dict[str, int] = {}
    for terms in held:
        for term in terms:
            frequency[term] = frequency.get(term, 0) + 1
    weight = {t: math.log(1 + len(passages) / n) for t, n in frequency.items()}
    scored = sorted(
        ((sum(weight[t] for t in terms), i) for i, terms in enumerate(held) if terms),
        key=lambda pair: (-pair[0], pair[1]),
    )
    chosen: list[int] = []
    seen: set[str] = set()
    used = 0
    for _, i in scored:
        if passages[i] in seen:
            continue
        seen.add(passages[i])
        size = min(len(passages[i]), max_chars) + 7
        if used + size > max_chars and chosen:
            continue
        chosen.append(i)
        used += size
        if used >= max_chars:
            break
    return " [...] ".join(one_line(passages[i], max_chars) for i in sorted(chosen))


_EXCERPT_WORDS = 60
"""Longest passage of an excerpt, in words (a line or sentence longer is cut in windows)."""
_EXCERPT_CHARS = 400
"""... and in characters (minified JSON, Chinese: a line without spaces)."""
_QUERY_CHARS = 2_000
_QUERY_TERMS = 32


def _excerpt_passages(text: str) -> list[str]:
    """Lines (a log, a table, code) and sentences of ``text``, none over _EXCERPT_WORDS
    words nor _EXCERPT_CHARS characters."""
    passages: list[str] = []
    for line in text.splitlines():
        for sentence in split_sentences(line) if len(line) > 200 else [line]:
            words = sentence.split()
            for start in range(0, len(words), _EXCERPT_WORDS):
                window = " ".join(words[start : start + _EXCERPT_WORDS])
                for cut in range(0, len(window), _EXCERPT_CHARS):
                    passages.append(window[cut : cut + _EXCERPT_CHARS])
    return passages


def compact_copy(message: BaseMessage, summary: str) -> BaseMessage:
    """``message`` with its text replaced by ``summary``, marked as shortened.

    Tool linkage (an AIMessage's tool calls, a ToolMessage's call id) is kept, so the
    history stays valid for providers.
    """
    kwargs = {**message.additional_kwargs, COMPACT_MARK: True}
    text = f"[shortened earlier message] {summary}"
    return message.model_copy(update={"content": text, "additional_kwargs": kwargs})


def hydrate(
    messages: Sequence[BaseMessage],
    selected: Sequence[int],
    *,
    recent_turns: int = 2,
    token_budget: int | None = None,
    token_counter: TokenCounter | None = None,
    recent_share: float = 0.35,
    summaries: Mapping[int, str] | None = None,
    spare: Collection[int] = (),
    spare_tokens: int = 0,
    keep_whole: Collection[int] = (),
    flow: Collection[int] = (),
    flow_tokens: int = 0,
) -> Hydrated:
    """Build the curated context.

    Always kept: system messages and the last ``recent_turns`` whole user turns
    (the current question included). Selected positions are added in rank order,
    each with its whole tool exchange (an AIMessage's tool calls travel with all of
    their ToolMessages and the other way round); a ToolMessage whose call is not in
    the history is left out everywhere. Out-of-range or duplicate positions are
    ignored. The result always passes
    :func:`~langgraph_librarian.memory.history_problems` (with
    ``require_human_first=False``): system messages first, each tool call directly
    followed by its results; a call whose results are not adjacent in the curated list,
    or that has none, is stripped (its text stays).

    With ``token_budget`` the budget is shared: the current turn and system messages
    are always kept; the earlier recent turns get at most ``recent_share`` of the
    budget (long messages there are first given in short form, from ``summaries``, a
    position -> summary mapping, or their start when the index has not reached them,
    then the oldest turns are left out), so that they
    cannot crowd out the selection, which fills the rest in rank order; budget the
    selection leaves unused goes back to the recent turns. One of the first few
    selected units (``_TOP_UNITS``) that does not fit outranks the full text of the
    earlier recent turns: they are given in short form when that makes room for it. A
    selected message longer than all the room there is (a pasted document) is given in
    short form when ``summaries`` has it and that fits; so is one of the first few that
    lost the race for room, in what the others left unused.

    Positions of ``selected`` also in ``spare`` (ranked last: candidates past the
    next-best ones) are added only while the context stays within ``spare_tokens``
    (with ``token_budget`` only), never shortened and never reported as dropped.

    Positions of ``selected`` also in ``flow`` (what the best matches' speakers said
    next) are added last, after the recent turns got back the room left unused, while
    the whole context (with its turn opener) stays within ``flow_tokens`` (with
    ``token_budget`` only): they never displace or shorten anything else, and the turn
    opener the context had without them stays. One also in ``spare`` may come in
    either way.

    Positions of the earlier recent turns in ``keep_whole`` (what the question asks
    about: notes pasted a turn ago) are never given in short form to make room for the
    selection; their share of the budget grows to hold them whole, within the budget.
    """
    # The history's structure (turns, tool exchanges, system messages) comes from its
    # view, read once per history and extended by each turn's new messages.
    view, n = view_of(messages)
    recent_start = _recent_start(view, n, recent_turns)
    # A tool result whose call is gone (deleted, trimmed) is rejected by providers,
    # wherever it sits, so it never enters the curated context.
    orphans = set(view.orphan_positions(n))
    system = set(view.system_positions(n))
    units: list[tuple[int, list[int]]] = []
    seen: set[int] = system | set(range(recent_start, n)) | orphans
    owner = view.owner
    for raw in selected:  # (~90 a turn: the plain int outside an exchange goes first)
        if raw.__class__ is not int and (isinstance(raw, bool) or not isinstance(raw, int)):
            continue
        if not 0 <= raw < n or raw in seen:
            continue
        if owner[raw] < 0:
            seen.add(raw)
            units.append((raw, [raw]))
            continue
        members = [p for p in view.exchange(raw, n) or [raw] if p not in seen]
        if not members:
            continue
        seen.update(members)
        units.append((raw, members))
    if token_budget is None:
        chosen = (system | set(range(recent_start, n))) - orphans
        units = [unit for unit in units if unit[0] not in spare and unit[0] not in flow]
        for _, members in units:
            chosen.update(members)
        _opener(messages, chosen, view.humans, {}, None)  # (bisected below n: no copy)
        return _result(messages, chosen, units, [], recent_start, {})
    return _within_budget(
        messages,
        units,
        _Budget(token_budget, token_counter, recent_share),
        system - orphans,
        recent_start,
        orphans,
        summaries or {},
        view.humans,  # the view's own list, read below n (a copy cost 0.3 ms at 50k)
        (frozenset(spare), min(spare_tokens, token_budget)),
        frozenset(keep_whole),
        (frozenset(flow), min(flow_tokens, token_budget)),
    )


@dataclass
class _Budget:
    total: int
    counter: TokenCounter | None
    recent_share: float

    def cost(self, messages: Sequence[BaseMessage]) -> int:
        return count_tokens(list(messages), self.counter) if messages else 0


def _short_forms(
    messages: Sequence[BaseMessage],
    positions: Sequence[int],
    summaries: Mapping[int, str],
    budget: _Budget,
    *,
    start_if_unsummarized: bool = False,
) -> dict[int, BaseMessage]:
    """Short forms of the long messages among ``positions``: their index summary.

    With ``start_if_unsummarized`` (the recent turns, which are kept by contract), a
    message the index has not reached (a lagging background indexer, an empty
    ``index``) is given as its start, as a turn opener is: otherwise a long recent turn
    could only be left out whole. A selected message without a summary is not: dropping
    it leaves its room to the next selections, which come whole.
    """
    return {
        p: compact_copy(messages[p], _short_text(messages, p, summaries))
        for p in positions
        if (start_if_unsummarized or p in summaries)
        and budget.cost([messages[p]]) >= _COMPACT_MIN_TOKENS
    }


def _short_text(messages: Sequence[BaseMessage], p: int, summaries: Mapping[int, str]) -> str:
    return summaries.get(p) or one_line(message_text(messages[p]), _OPENER_CHARS)


def _within_budget(
    messages: Sequence[BaseMessage],
    units: list[tuple[int, list[int]]],
    budget: _Budget,
    system: set[int],
    recent_start: int,
    orphans: set[int],
    summaries: Mapping[int, str],
    starts: list[int],
    spare: tuple[frozenset[int], int] = (frozenset(), 0),
    keep_whole: frozenset[int] = frozenset(),
    flow: tuple[frozenset[int], int] = (frozenset(), 0),
) -> Hydrated:
    n = len(messages)
    # ``starts``: human positions, perhaps past ``n`` (a view's list, only read below n)
    below = bisect_left(starts, n)
    last = starts[below - 1] if below else -1
    current = last if last >= recent_start else recent_start
    core = system | ({p for p in range(current, n)} - orphans)
    # The current turn is sent whole, but for a tool result longer than the whole budget
    # (a fetched log: no model takes it) when a short form was given for it.
    huge = {
        p: compact_copy(messages[p], summaries[p])
        for p in core
        if p in summaries
        and p >= current
        and messages[p].type == "tool"
        and budget.cost([messages[p]]) > budget.total
    }
    # Earlier recent turns, oldest first, each a list of positions.
    turn_starts = starts[bisect_left(starts, recent_start) : bisect_left(starts, current)]
    bounds = [*turn_starts, current]
    turns = [
        [p for p in range(a, b) if p not in system and p not in orphans]
        for a, b in itertools.pairwise(bounds)
    ]
    used = budget.cost([huge.get(p, messages[p]) for p in sorted(core)])
    room = budget.total - used  # the most any selection could ever get
    cap = max(0, min(budget.total - used, int(budget.total * budget.recent_share)))
    shown: dict[int, BaseMessage] = {}  # earlier recent message -> full or short form
    recent = [p for turn in turns for p in turn]
    whole: set[int] = set()

    def short_forms(
        positions: Sequence[int], pinned: Collection[int] | None = None
    ) -> dict[int, BaseMessage]:
        """Short forms of ``positions`` but the ``pinned`` ones (default: those kept whole)."""
        kept = [p for p in positions if p not in (whole if pinned is None else pinned)]
        return _short_forms(messages, kept, summaries, budget, start_if_unsummarized=True)

    def held_for(pinned: set[int]) -> int:
        """The recent turns' cost with ``pinned`` whole, the others short, and the turns
        older than the oldest pinned one left out (as :func:`fit_recent` leaves them)."""
        oldest = next(k for k, turn in enumerate(turns) if pinned.intersection(turn))
        kept = [p for turn in turns[oldest:] for p in turn]
        shorts = short_forms(kept, pinned)
        return budget.cost([shorts.get(p, messages[p]) for p in kept])

    asked = sorted(keep_whole.intersection(recent), reverse=True)
    if asked:
        # What the question asks about keeps its full text, newest first: the recent
        # turns' share grows to hold it (the others short, the oldest left out), as long
        # as the best selected match still fits whole beside it. A paste longer than
        # that room is shortened as before.
        room_left = budget.total - used
        first = budget.cost([messages[p] for p in units[0][1]]) if units else 0
        best_cost = first if first <= room_left else 0
        held = 0
        for position in asked:
            cost = held_for(whole | {position})
            if cost + best_cost <= room_left:
                whole.add(position)
                held = cost
        if whole:
            cap = max(cap, held)

    def fit_recent(room: int) -> None:
        shown.clear()
        full = {p: messages[p] for turn in turns for p in turn}
        if budget.cost(list(full.values())) <= room:
            shown.update(full)
            return
        short = {**full, **short_forms(list(full))}
        for k in range(len(turns)):  # drop the oldest turns until the rest fits
            kept = {p: short[p] for turn in turns[k:] for p in turn}
            if budget.cost(list(kept.values())) <= room:
                shown.update(kept)
                return

    fit_recent(cap)
    used += budget.cost(list(shown.values()))
    kept_units: list[tuple[int, list[int]]] = []
    dropped: list[int] = []
    shortened: dict[int, BaseMessage] = {}  # selected messages given in short form
    spare_positions, spare_room = spare
    top = {rank_pos for rank_pos, _ in units[:_TOP_UNITS]}
    best = units[0][0] if units else None
    # Room held for the short form of the best match when it did not fit whole: the
    # units below it may not take it (it is given back below, where the best match
    # comes whole if shortening the recent turns makes room, else as its summary).
    # The other top units only lost a race for room: smaller units below them come
    # whole first.
    best_brief = 0
    flow_positions, flow_room = flow
    for rank_pos, members in units:
        if rank_pos in flow_positions and rank_pos not in spare_positions:
            continue  # after everything else (below)
        if rank_pos in spare_positions:
            if used + best_brief < spare_room:  # else spent: not even costed
                extra = budget.cost([messages[p] for p in members])
                if used + best_brief + extra <= spare_room:
                    kept_units.append((rank_pos, members))
                    used += extra
            continue
        extra = budget.cost([messages[p] for p in members])
        if used + best_brief + extra <= budget.total:
            kept_units.append((rank_pos, members))
            used += extra
            continue
        # Too long to ever fit whole (a pasted report...): its summary, if that fits.
        # A message that merely lost the race for room is dropped instead, so smaller
        # selections below it can still come in full.
        short = _short_forms(messages, members, summaries, budget) if extra > room else {}
        extra = budget.cost([short.get(p, messages[p]) for p in members])
        if short and used + best_brief + extra <= budget.total:
            kept_units.append((rank_pos, members))
            shortened.update(short)
            used += extra
            continue
        dropped.append(rank_pos)
        if rank_pos == best:  # the first unit: nothing is held yet
            short = _short_forms(messages, members, summaries, budget)
            brief = budget.cost([short.get(p, messages[p]) for p in members])
            if short and used + brief <= budget.total:
                best_brief = brief
    # A top-ranked selected message that did not fit outranks the full text of the
    # earlier recent turns: they are given in short form when that makes room for it
    # (and the room left then takes the next selections that fit).
    freed = False
    for rank_pos, members in [u for u in units if u[0] in top and u[0] in dropped]:
        if not shown:
            break
        short_shown = {**shown, **short_forms(list(shown))}
        saved = budget.cost(list(shown.values())) - budget.cost(list(short_shown.values()))
        extra = budget.cost([messages[p] for p in members])
        if saved > 0 and used - saved + extra <= budget.total:
            shown.clear()
            shown.update(short_shown)
            used += extra - saved
            kept_units.append((rank_pos, members))
            dropped.remove(rank_pos)
            freed = True
    if freed:
        for rank_pos, members in [u for u in units if u[0] in dropped]:
            extra = budget.cost([messages[p] for p in members])
            # Still the best match's summary room, while it is left out.
            keep = best_brief if best in dropped and rank_pos != best else 0
            if used + keep + extra <= budget.total:
                kept_units.append((rank_pos, members))
                dropped.remove(rank_pos)
                used += extra
        order_of = {rank_pos: k for k, (rank_pos, _) in enumerate(units)}
        kept_units.sort(key=lambda unit: order_of[unit[0]])
    # A top unit still left out (it lost the race for room, and shortening the recent
    # turns did not make enough) is better given short than not at all: its summary
    # takes room nothing above left unused. Every unit that came whole still does.
    for rank_pos, members in [u for u in units if u[0] in top and u[0] in dropped]:
        short = _short_forms(messages, members, summaries, budget)
        extra = budget.cost([short.get(p, messages[p]) for p in members])
        if short and used + extra <= budget.total:
            kept_units.append((rank_pos, members))
            dropped.remove(rank_pos)
            shortened.update(short)
            used += extra
            freed = True
    if freed:
        order_of = {rank_pos: k for k, (rank_pos, _) in enumerate(units)}
        kept_units.sort(key=lambda unit: order_of[unit[0]])
    # What the selection left unused goes back to the recent turns, less the room the
    # user message opening the earliest selected turn takes (see _opener), so that
    # this one does not pass the budget.
    left = budget.total - used + budget.cost(list(shown.values()))
    if left > cap:
        kept = core.union(*(members for _, members in kept_units))
        selected = set(kept)  # _opener adds the opener to it
        opening = _opener(messages, selected, starts, summaries, budget)
        added = selected - kept
        if added:
            left -= budget.cost([opening.get(p, messages[p]) for p in added])
        fit_recent(max(left, cap))
    chosen = core | set(shown)
    for _, members in kept_units:
        chosen.update(members)
    replaced = {p: m for p, m in shown.items() if m is not messages[p]} | shortened | huge
    if flow_positions:
        # Last, into the room everything else left (the recent turns have had theirs
        # back): they never take a selected match's or a recent turn's place or form.
        # The turn opener the context has without them stays (an answer kept with its
        # question), though an earlier message they bring may open the context instead.
        replaced |= _opener(messages, chosen, starts, summaries, budget)
        used = budget.cost([replaced.get(p, messages[p]) for p in sorted(chosen)])
        earliest = min((p for p in chosen if messages[p].type != "system"), default=n)
        # A message inside a kept exchange's span (a tool call, other messages, its
        # results) would part the call from its results, and both would be stripped.
        spans = [(min(m), max(m)) for _, m in kept_units if len(m) > 1]
        for rank_pos, members in units:
            if rank_pos not in flow_positions or used >= flow_room or members[0] in chosen:
                continue
            low, high = min(members), max(members)
            if any(a < p < b for p in members for a, b in spans) or any(
                p not in members for p in chosen if low < p < high
            ):
                continue
            cost = used + budget.cost([messages[p] for p in members])
            if low < earliest:  # it needs its own turn opener, if it is an answer
                with_opener = {low}
                its_opener = _opener(messages, with_opener, starts, summaries, budget)
                cost += budget.cost(
                    [its_opener.get(p, messages[p]) for p in with_opener - {low} - chosen]
                )
            if cost <= flow_room:
                kept_units.append((rank_pos, members))
                chosen.update(members)
                earliest = min(earliest, low)
                used = cost
                if len(members) > 1:
                    spans.append((low, high))
    kept_start = min((p for turn in turns for p in turn if p in shown), default=current)
    replaced |= _opener(messages, chosen, starts, summaries, budget)
    return _result(messages, chosen, kept_units, dropped, min(kept_start, current), replaced)


def _opener(
    messages: Sequence[BaseMessage],
    chosen: set[int],
    humans: Sequence[int],
    summaries: Mapping[int, str],
    budget: _Budget | None,
) -> dict[int, BaseMessage]:
    """Adds to ``chosen`` the user message that opened the turn of the earliest kept
    message, when that one is not a user message; returns its short form, if it needs one.

    Anthropic's and Gemini's APIs reject a conversation that starts with an assistant
    message (Gemini also one that starts with a function call), and an answer read
    without its question is half a fact. A long opener (a pasted document) comes in
    short form when the index has its summary; the budget may be passed by that much.
    """
    first = min((p for p in chosen if messages[p].type != "system"), default=None)
    if first is None or messages[first].type == "human":
        return {}
    k = bisect_left(humans, first)
    if not k:
        return {}  # nothing before it to open the turn: the history starts so
    opener = humans[k - 1]
    chosen.add(opener)
    if budget is None or budget.cost([messages[opener]]) < _COMPACT_MIN_TOKENS:
        return {}
    # Long: its index summary, else (an index that has not caught up) its start.
    text = _short_text(messages, opener, summaries)
    if len(text) > _OPENER_CHARS:
        text = one_line(text, _OPENER_CHARS)
    return {opener: compact_copy(messages[opener], text)}


def _result(
    messages: Sequence[BaseMessage],
    chosen: set[int],
    units: list[tuple[int, list[int]]],
    dropped: list[int],
    recent_start: int,
    replaced: dict[int, BaseMessage],
) -> Hydrated:
    positions = sorted(chosen)
    # tool_groups pairs a call with its results wherever they sit; providers want them
    # adjacent (and a call may have no result at all): repair to the one definition of
    # a valid history. A valid selection comes back as the same objects.
    curated = [replaced.get(p, messages[p]) for p in positions]
    repaired = repair_positions(curated, require_human_first=False)
    kept = [positions[i] for i, _ in repaired]
    kept_set = set(kept)
    return Hydrated(
        messages=[m for _, m in repaired],
        positions=kept,
        selected=[rank_pos for rank_pos, _ in units if rank_pos in kept_set],
        dropped_for_budget=dropped,
        recent_start=recent_start,
        compacted=[p for p in sorted(replaced) if p in kept_set],
    )
