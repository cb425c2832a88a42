"""One turn of the Librarian, the only place it is orchestrated.

Selection: load the index -> plan (skip or prepare candidates) -> select -> finish
(hydrate, metadata). Indexing: load -> update -> save (or hand it to a background
worker). Each has a sync and an async twin. The graph nodes, the ``create_agent``
middleware and the ``pre_model_hook`` are thin faces that resolve a :class:`Run` and
call these functions, so a behaviour exists once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._engine.concurrency import off_loop
from langgraph_librarian._engine.failures import (
    classify,
    current_embedding_failures,
    describe,
    embedding_failures,
    fails_open,
    log_failure,
)
from langgraph_librarian._engine.history import repair_history
from langgraph_librarian._engine.messages import (
    content_hash,
    current_turn,
    latest_human_text,
    message_text,
)
from langgraph_librarian._engine.state_cache import entries_to_state, state_entries
from langgraph_librarian._engine.text import (
    content_terms,
    one_line,
    without_foreign_function_words,
)
from langgraph_librarian._engine.view import conversation_key, turn_key, turn_view, view_of
from langgraph_librarian._kit.background import submit_indexing, take_failure
from langgraph_librarian._kit.bounded import (
    awithin,
    is_timeout,
    slots_for,
    timeout_for,
    within,
)
from langgraph_librarian._kit.cache import BoundedCache
from langgraph_librarian._kit.state import insert_after_system, read_messages
from langgraph_librarian._librarian.gist import (
    Fold,
    apply_fold,
    check_gist_kept,
    gist_message,
    gist_tokens,
    plan_fold,
    summarizer_for,
)
from langgraph_librarian.config import (
    LibrarianConfig,
    index_session,
    resolve_config,
    session_id_from_config,
)
from langgraph_librarian.embeddings import resolve_embeddings
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.errors import MissingThreadError
from langgraph_librarian.hydrate import hydrate, matching_excerpt, recent_turns_start
from langgraph_librarian.index.pipeline import (
    IndexUpdate,
    aupdate_index,
    provisional_entries,
    update_index,
)
from langgraph_librarian.index.reconcile import reconciled
from langgraph_librarian.select.llm import LLMSelector
from langgraph_librarian.select.local import LocalSelector
from langgraph_librarian.select.result import Selection, Selector
from langgraph_librarian.state import cleared_index
from langgraph_librarian.stores.base import BaseIndexStore, aload_index, asave_index
from langgraph_librarian.tokens import count_tokens

__all__ = [
    "SKIP_REASONS",
    "Run",
    "SelectionCache",
    "StateUpdate",
    "aindex_turn",
    "aselect_turn",
    "index_turn",
    "make_selector",
    "record_pass_through",
    "select_turn",
]

logger = logging.getLogger("langgraph_librarian")
_ENTRY_ID = attrgetter("id")
_SPARE_SHARE = 0.4
"""The selector's spare candidates fill the context up to this share of its budget (a
small context, about the ~800 tokens the spec's table gives for a short conversation)."""
_FLOW_SHARE = 0.8
"""What the best matches' speakers said next (``Selection.flow_ids``) fills room the rest
of the context left unused, up to this share of its budget: a context at the budget's
edge stays there (LoCoMo's contexts of about 1,960 tokens under 2,000)."""

StateUpdate = dict[str, Any]

SKIP_REASONS: dict[str, str] = {
    "no_messages": "the state has no messages",
    "no_query": "neither state['query'] nor a human message gives a query",
    "no_earlier_messages": "every message belongs to the always-kept recent turns",
    "no_index": "nothing is indexed yet (first turn) and the history fits the budget",
    "selection_failed": "selection raised; every message passed through (selection_error)",
}
"""Values of ``librarian_metadata["reason"]`` when ``selection_skipped`` is true.

``no_index`` and ``no_query`` are the reference package's values."""


@dataclass(frozen=True)
class Run:
    """What one call of the pipeline works with.

    Attributes:
        config: The Librarian config in force (run-time override applied).
        session: Key of the index in ``config.store``; ``None`` when the index lives
            in graph state.
        run_config: The caller's run config, parent of the library's model calls.
        thread: The thread id, if any (the selection cache is keyed by it).
    """

    config: LibrarianConfig
    session: str | None
    run_config: RunnableConfig | None
    thread: str | None

    @classmethod
    def open(
        cls,
        default: LibrarianConfig | None,
        run_config: RunnableConfig | None,
        *,
        thread: str | None = None,
        store: BaseIndexStore | None = None,
    ) -> Run:
        """Resolve the config and the session for one call.

        ``store`` is the index store bound to the graph (``create_librarian_graph(...,
        store=...)``): used when the config in force names none, so a run-time config
        override does not silently move the index back into graph state.

        Raises:
            MissingThreadError: the index lives in a shared store and the run has no
                (or an empty) thread id to key it by.
        """
        config = resolve_config(default, run_config)
        if config.store is None and store is not None:
            config = dataclasses.replace(config, store=store)
        thread = thread or session_id_from_config(run_config)
        if config.store is not None and not thread:
            raise MissingThreadError(
                "the Librarian's index store is shared between threads, so each run needs "
                "a non-empty thread id: invoke with "
                'config={"configurable": {"thread_id": "..."}}'
            )
        session = index_session(thread, run_config) if config.store is not None and thread else None
        return cls(config, session, run_config, thread)

    # -- the index ------------------------------------------------------------------

    # A subgraph's index is keyed by thread and subgraph (``index_session``); releases
    # before 0.2 keyed it by the thread alone. Until a subgraph's own key exists, the
    # thread's is read (_UPGRADED below): entries are matched to messages by id and
    # content hash, so an index written by another agent of the thread only misses, and
    # the next save writes the subgraph's own key (no second summary of the whole
    # history after an upgrade).

    # Store calls wait at most ``config.store_timeout`` seconds (_kit.bounded): a store
    # that stopped answering fails the call with a TimeoutError, which the turn absorbs.

    @property
    def stored(self) -> bool:
        """Whether the index lives in a store (else in graph state, which a failed read
        after the reply cannot hide: the state is the caller's own)."""
        return self.config.index_store is not None and self.session is not None

    def load(self, state: dict[str, Any]) -> list[IndexEntry]:
        """The stored index: from the store, else from graph state."""
        store, session = self.config.index_store, self.session
        if store is not None and session is not None:

            def read() -> list[IndexEntry]:
                found = store.load(session)
                if found is None and self.thread and session != self.thread:
                    found = store.load(self.thread)  # _UPGRADED
                return found or []

            return within(
                read, timeout_for(store, self.config.store_timeout), slots_for(store), _STORE
            )
        return state_entries(state)

    async def aload(self, state: dict[str, Any]) -> list[IndexEntry]:
        """Async twin of :meth:`load`."""
        store, session = self.config.index_store, self.session
        if store is not None and session is not None:
            if getattr(store, "aload", None) is None:
                # The sync path on threads of our own (bounded, abandoned at the
                # timeout), not the event loop's default executor: a hung store's
                # calls kept its few threads, and every later turn waited for them.
                return await off_loop(self.load, state)

            async def read() -> list[IndexEntry]:
                found = await aload_index(store, session)
                if found is None and self.thread and session != self.thread:
                    found = await aload_index(store, self.thread)  # _UPGRADED
                return found or []

            return await awithin(read(), self.config.store_timeout, _STORE)
        return state_entries(state)

    def save(self, entries: list[IndexEntry]) -> None:
        """Write the index to the store (graph state is written by the returned update)."""
        store, session = self.config.index_store, self.session
        if store is not None and session is not None:
            within(
                lambda: store.save(session, entries),
                timeout_for(store, self.config.store_timeout),
                slots_for(store),
                _STORE,
            )

    async def asave(self, entries: list[IndexEntry]) -> None:
        """Async twin of :meth:`save`."""
        store, session = self.config.index_store, self.session
        if store is not None and session is not None:
            if getattr(store, "asave", None) is None:  # see aload
                await off_loop(self.save, entries)
                return
            await awithin(asave_index(store, session, entries), self.config.store_timeout, _STORE)

    @property
    def index_in_state(self) -> bool:
        return self.config.store is None

    # -- one store read per turn -------------------------------------------------------

    def _turn_key(self, messages: Sequence[BaseMessage]) -> tuple[int, str, str] | None:
        if self.config.store is None or self.session is None:
            return None  # graph state: reading it costs nothing
        turn = current_turn(messages)
        return (id(self.config.store), self.session, turn) if turn else None

    def remember_read(self, messages: Sequence[BaseMessage], entries: list[IndexEntry]) -> None:
        """Keep what selection read from the store for this turn's indexing step.

        Not with background indexing: the worker reads the store itself (under the
        session's lock), so nothing would ever take the entry back.
        """
        if self.config.background_indexing:
            return
        key = self._turn_key(messages)
        if key is not None:
            _READ_THIS_TURN.put(key, (self.config.store, entries))

    def read_this_turn(self, messages: Sequence[BaseMessage]) -> list[IndexEntry] | None:
        """The index an earlier selection of this turn read (a tool loop calls the model,
        and so selection, several times a turn), if this process ran it (else ``None``)."""
        found = self._turns_read(messages, take=False)
        return list(found) if found is not None else None

    def read_for_indexing(self, messages: Sequence[BaseMessage]) -> list[IndexEntry] | None:
        """The index this turn's selection read, if this process ran it (else ``None``);
        the indexing step ends the turn, so it takes the entry out."""
        return self._turns_read(messages, take=True)

    def _turns_read(
        self, messages: Sequence[BaseMessage], *, take: bool
    ) -> list[IndexEntry] | None:
        key = self._turn_key(messages)
        if key is None:
            return None
        hit = _READ_THIS_TURN.pop(key) if take else _READ_THIS_TURN.get(key)
        return hit[1] if hit is not None and hit[0] is self.config.store else None

    def store_failed(self, messages: Sequence[BaseMessage], exc: Exception) -> None:
        """Note that a store call of this turn got no answer in time (a timeout, a
        connection pool that found no connection), so the turn's later calls skip it."""
        key = self._turn_key(messages)
        if key is not None and is_timeout(exc):
            _DOWN_THIS_TURN.put(key, (self.config.store, describe(exc), _clock()))

    def store_down(self, messages: Sequence[BaseMessage]) -> str | None:
        """Why a store call of this turn got no answer in time already, or ``None``."""
        key = self._turn_key(messages)
        hit = _DOWN_THIS_TURN.get(key) if key is not None else None
        if hit is None or hit[0] is not self.config.store:
            return None
        # A retry or regenerate of the turn (same latest user message) once the store is
        # back asks it again: the failure holds for the turn's own later calls only.
        return hit[1] if _clock() - hit[2] < _DOWN_HOLDS else None


_READ_THIS_TURN: BoundedCache[tuple[int, str, str], tuple[object, list[IndexEntry]]] = BoundedCache(
    256
)
"""The index a turn's selection read from a store, by (store, session, turn), for the
same turn's indexing step: one store read per turn instead of two. Between the two steps
only the agent ran; a write by another process in that window is a concurrent turn on
the same thread, which the indexing step's save overwrote before as well (load, then save:
stores have no compare-and-set). Reconciliation by message id and content hash keeps the
index right either way. Bounded (64 turns in flight): a turn with no indexing step in this
process (a ``pre_model_hook`` graph that indexes elsewhere) only holds its slot until newer
turns push it out, and a turn whose read was pushed out reads the store again."""

_DOWN_THIS_TURN: BoundedCache[tuple[int, str, str], tuple[object, str, float]] = BoundedCache(256)
"""Turns (as in ``_READ_THIS_TURN``) whose store call got no answer in time, with their
store, the failure and when it failed: the turn's later store calls (indexing after
selection, the selections of a tool loop) fail at once instead of waiting once more (an
unreachable store cost a turn two full waits for a pool connection). The next turn tries
again, and so does the same turn after :data:`_DOWN_HOLDS` seconds (a retry of it)."""

_DOWN_HOLDS = 60.0
_clock = time.monotonic
"""Seconds a turn's store failure holds for the turn's later calls. It held until 256
newer turns pushed it out, so a retry or regenerate of the turn once the store was back
(the same latest user message) still skipped the store."""

_STORE = "the index store"


def make_selector(config: LibrarianConfig, step: str = "select") -> Selector:
    """The selector the config asks for (an LLM selector always wraps a local fallback).

    ``step`` names its model calls in ``metadata["librarian_step"]``.
    """
    if config.selector is not None:
        return config.selector
    local = LocalSelector(max_selected=config.max_selected, embeddings=resolve_embeddings(config))
    if config.uses_local_selector:
        return local
    return LLMSelector(
        config.get_selector_model(),
        local=local,
        prompt_template=config.selection_prompt,
        token_budget=config.selector_token_budget,
        **config.call_policy.arguments(),
        token_counter=config.token_counter,
        output=config.selector_output,
        time_budget=config.selection_timeout,
        keep_local=config.selector_keeps_local,
        step=step,
    )


# -- planning and finishing --------------------------------------------------------------


@dataclass
class _Plan:
    """Everything selection needs, or the update to return when it is skipped."""

    config: LibrarianConfig
    messages: list[BaseMessage]
    query: str
    started: float
    index_size: int = 0
    candidates: list[IndexEntry] = field(default_factory=list)
    exclude: set[int] = field(default_factory=set)
    unindexed: int = 0
    original_tokens: int = 0
    skip: StateUpdate | None = None
    gist: SystemMessage | None = None
    recent_summaries: dict[int, str] = field(default_factory=dict)


def _skipped(plan: _Plan, reason: str, tokens: int | None = None) -> StateUpdate:
    """Everything passed through; ``tokens`` is the history's count when already known.

    As a history providers accept: a tool call whose result was deleted (or a result
    whose call was) is repaired as hydration would (a valid history comes back as the
    same objects).
    """
    config = plan.config
    messages = repair_history(plan.messages, require_human_first=False)
    if tokens is None or len(messages) != len(plan.messages):
        tokens = count_tokens(messages, config.token_counter)
    metadata = _passed_through(reason, len(messages), tokens, config)
    metadata["selection_latency_ms"] = round((time.perf_counter() - plan.started) * 1000, 3)
    return {"curated_messages": list(messages), "selected_ids": [], "librarian_metadata": metadata}


def _passed_through(
    reason: str, count: int, tokens: int, config: LibrarianConfig
) -> dict[str, Any]:
    """The metadata of a turn whose model got the whole history (a skip, a failure)."""
    return {
        "selection_skipped": True,
        "reason": reason,
        "selected_ids": [],
        "selection_reasoning": "",
        "original_count": count,
        "original_tokens": tokens,
        "curated_count": count,
        "curated_tokens": tokens,
        "token_reduction_pct": 0.0,
        "context_budget": config.budget_for(tokens),
    }


def _plan(
    state: dict[str, Any],
    config: LibrarianConfig,
    entries: list[IndexEntry],
    messages: list[BaseMessage],
    started: float,
) -> _Plan:
    explicit = state.get("query")
    query = (
        explicit if isinstance(explicit, str) and explicit.strip() else latest_human_text(messages)
    )
    plan = _Plan(config, messages, query, started, index_size=len(entries))
    if not messages:
        plan.skip = _skipped(plan, "no_messages")
        return plan
    if not query.strip():
        plan.skip = _skipped(plan, "no_query")
        return plan
    view, n = view_of(messages)
    recent_start = recent_turns_start(messages, config.always_include_recent_turns)
    systems = view.system_positions(recent_start)
    if recent_start == 0 or len(systems) == recent_start:
        # Nothing to select from, but the recent turns alone may be over the budget (a
        # large paste in the first turn): then they are curated, the long ones shortened.
        tokens = count_tokens(messages, config.token_counter)
        budget = config.budget_for(tokens)
        if budget is None or tokens <= budget:
            plan.skip = _skipped(plan, "no_earlier_messages", tokens)
            return plan
    if not entries:
        tokens = count_tokens(messages, config.token_counter)
        budget = config.budget_for(tokens)
        if budget is None or tokens <= budget:
            plan.skip = _skipped(plan, "no_index", tokens)
            return plan
    rec = reconciled(messages, entries)
    provisional = [p for p in rec.missing if p < recent_start]
    plan.unindexed = len(provisional)
    complete = (
        provisional_entries(messages, rec, config, recent_start) if rec.missing else rec.complete()
    )
    # Token counts were taken at index time: only recent unindexed messages are counted now.
    unindexed_recent = [messages[p] for p in rec.missing if p >= recent_start]
    # (summed as the index was reconciled, turn by turn: here only provisional entries)
    filled = (complete[bisect_left(complete, p, key=_ENTRY_ID)] for p in provisional)
    plan.original_tokens = (
        rec.tokens
        + sum(e.original_tokens for e in filled)
        + count_tokens(unindexed_recent, config.token_counter)
    )
    plan.exclude = set(range(recent_start, n))
    # Entries are in message order: the recent ones are a tail, the candidates the rest
    # less system messages (found by bisection, not by reading every entry).
    cut = bisect_left(complete, recent_start, key=_ENTRY_ID)
    # Short forms for long recent messages, should the budget need them.
    plan.recent_summaries = {e.id: e.summary for e in complete[cut:] if e.status != "verbatim"}
    if config.running_summary_tokens is not None:
        plan.gist = gist_message(state)
    candidates = complete[:cut]
    for position in reversed(systems):
        i = bisect_left(candidates, position, key=_ENTRY_ID)
        if i < len(candidates) and candidates[i].id == position:
            del candidates[i]
    plan.candidates = candidates
    return plan


def _with_gist(curated: list[BaseMessage], gist: SystemMessage | None) -> list[BaseMessage]:
    """The gist goes right after the leading system messages."""
    if gist is None:
        return curated
    return insert_after_system(curated, gist)


def _short_selections(plan: _Plan, ranked: list[int], budget: int) -> dict[int, str]:
    """Short forms of the selected messages, for those too long to fit the budget whole.

    A long message's summary says what it is about; the passages that match the
    question (a line of a pasted log, a clause of a contract) are what the agent needs
    of it, so they follow the summary, up to about a quarter of the budget.
    """
    return _excerpted(plan, _summaries_of(plan.candidates, ranked), ranked, budget)


def _excerpted(
    plan: _Plan, summaries: dict[int, str], positions: Sequence[int], budget: int
) -> dict[int, str]:
    """``summaries``, each long message's among ``positions`` followed by its passages
    that match the question (the message alone when it has no summary)."""
    messages = plan.messages
    found = dict(summaries)
    for position in positions:
        if not 0 <= position < len(messages):
            continue
        message = messages[position]
        content = message.content
        if (
            isinstance(content, str)
            and len(content) <= budget
            and not (isinstance(message, AIMessage) and message.tool_calls)
        ):
            continue  # its text is its content (see message_text), and it is short
        text = message_text(message)
        if len(text) <= budget:  # under a quarter of the budget: it fits, or loses its turn
            continue
        excerpt = matching_excerpt(text, plan.query, budget)
        if excerpt:
            summary = found.get(position, "")
            found[position] = f"{summary}\n[excerpt] {excerpt}" if summary else excerpt
    return found


def _huge_results(plan: _Plan, budget: int) -> dict[int, str]:
    """Short forms of the current turn's tool results longer than the whole budget.

    The current turn is sent whole, but a tool result of hundreds of thousands of tokens
    (a whole log) cannot reach any model whole: it is given as its start and the
    passages that match the question (see :func:`hydrate`), not as something the
    provider rejects. Read backwards to the turn's question: the turn, not the history.
    """
    messages = plan.messages
    found: dict[int, str] = {}
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.type == "human":
            break
        if message.type != "tool":
            continue
        text = message_text(message)
        if len(text) > 4 * budget:  # over the whole budget at any tokenizer's rate
            start = one_line(text, budget // 2)
            excerpt = matching_excerpt(text, plan.query, 2 * budget)
            found[position] = f"{start} [...] [excerpt] {excerpt}" if excerpt else start
    return found


def _with_excerpts(plan: _Plan, summaries: dict[int, str], budget: int) -> dict[int, str]:
    """The recent turns' summaries with their matching passages, as for selections: the
    question after a fetched log ("what was the latency of line 7?") needs the line,
    which the log's summary does not hold."""
    return _excerpted(plan, summaries, list(summaries), budget)


def _summaries_of(candidates: list[IndexEntry], positions: list[int]) -> dict[int, str]:
    """Summaries of the candidates at ``positions`` (candidates are in message order).

    Looked up by bisection: the ranked positions are a handful, the candidates may be
    tens of thousands, and this runs every turn.
    """
    found: dict[int, str] = {}
    for position in positions:
        i = bisect_left(candidates, position, key=_ENTRY_ID)
        if i < len(candidates) and candidates[i].id == position:
            entry = candidates[i]
            if entry.status != "verbatim":
                found[position] = entry.summary
    return found


_ASKED_TERMS = 2
"""Question words a recent message must hold to be what the question asks about..."""
_ASKED_SHARE = 0.4
"""...and this share of them at least."""
_ASKED_MIN_CHARS = 400
"""Shorter recent messages are never given in short form (about 120 tokens)."""
_ASKED_READ_CHARS = 20_000
"""Of a longer paste, its start is read for the question's words (a constant cost)."""
_ASKED_LOOKBACK = 8
"""Only the latest messages of the earlier recent turns are read (a constant cost with
a large ``always_include_recent_turns``)."""


def _asked_about(plan: _Plan) -> list[int]:
    """Earlier recent messages the question asks about: long ones (a recent turn's
    short form replaces only a message that long) holding at least :data:`_ASKED_TERMS`
    of the question's words and :data:`_ASKED_SHARE` of them ("who owns the refunds for
    annual Porto subscribers?" right after the pasted notes that say so). Their full
    text stays in the context (see :func:`hydrate`'s ``keep_whole``)."""
    messages = plan.messages
    # The question as the selector reads it (a French one without "de", "la", "les").
    asked = set(content_terms(without_foreign_function_words(plan.query)))
    if len(asked) < _ASKED_TERMS:
        return []
    start = recent_turns_start(messages, plan.config.always_include_recent_turns)
    current = recent_turns_start(messages, 1)
    found = []
    for position in range(max(start, current - _ASKED_LOOKBACK), current):
        text = message_text(messages[position])
        if len(text) < _ASKED_MIN_CHARS:
            continue
        shared = len(asked.intersection(content_terms(text[:_ASKED_READ_CHARS])))
        if shared >= _ASKED_TERMS and shared >= _ASKED_SHARE * len(asked):
            found.append(position)
    return found


def _finish(plan: _Plan, selection: Selection) -> StateUpdate:
    config, messages = plan.config, plan.messages
    gist_cost = gist_tokens(plan.gist, config)
    budget = config.budget_for(plan.original_tokens)
    # Reserve candidates only fill a budget; they never grow an unbounded context. The
    # LLM selector's picks the offline ranking did not have come last (see
    # LLMSelector._chosen), and always when there is no budget to protect.
    listed = {*selection.ids, *selection.reserve_ids}
    extra = [i for i in selection.model_ids if i not in listed]
    spare: list[int] = []
    flow: list[int] = []
    only_flow: set[int] = set()
    if budget is None:
        ranked = [*selection.ids, *extra]
    else:
        ranked = [*selection.ids, *selection.reserve_ids, *extra]
        # Spare candidates come last, and only while the context stays small.
        listed |= set(extra)
        spare = [i for i in selection.spare_ids if i not in listed]
        ranked.extend(spare)
        # What the best matches' speakers said next, after everything else; one of them
        # that is also a spare candidate may come in either way.
        flow = [i for i in selection.flow_ids if i not in listed]
        only_flow = set(flow).difference(spare)
        ranked.extend(i for i in flow if i in only_flow)
    summaries = plan.recent_summaries
    if budget is not None:  # short forms for messages too long to fit whole
        # (a message only in the flow is never shortened: no excerpts for it)
        summaries = (
            _with_excerpts(plan, summaries, budget)
            | _short_selections(plan, [i for i in ranked if i not in only_flow], budget)
            | _huge_results(plan, budget)
        )
    hydrated = hydrate(
        messages,
        ranked,
        recent_turns=config.always_include_recent_turns,
        token_budget=None if budget is None else max(1, budget - gist_cost),
        token_counter=config.token_counter,
        summaries=summaries,
        spare=spare,
        spare_tokens=0 if budget is None else int(_SPARE_SHARE * budget) - gist_cost,
        flow=flow,
        flow_tokens=0 if budget is None else int(_FLOW_SHARE * budget) - gist_cost,
        keep_whole=() if budget is None else _asked_about(plan),
    )
    curated = _with_gist(hydrated.messages, plan.gist)
    selected = set(hydrated.selected)
    curated_tokens = count_tokens(curated, config.token_counter)
    original = plan.original_tokens
    metadata: dict[str, Any] = {
        "selection_skipped": False,
        "selected_ids": hydrated.selected,
        "selection_reasoning": _bounded(selection.reasoning),
        "selection_strategy": selection.strategy,
        "selection_fallback": selection.strategy == "local_fallback",
        "original_count": len(messages),
        "original_tokens": original,
        "curated_count": len(curated),
        "curated_tokens": curated_tokens,
        "token_reduction_pct": round(100.0 * (1 - curated_tokens / original), 2)
        if original
        else 0.0,
        "query": plan.query[:500],
        "index_size": plan.index_size,
        "unindexed_count": plan.unindexed,
        "candidate_count": len(plan.candidates),
        "selector_shortlisted": selection.shortlisted,
        "selector_prompt_tokens": selection.prompt_tokens,
        "expanded_ids": [p for p in selection.expanded_ids if p in hydrated.selected],
        "dropped_for_budget": hydrated.dropped_for_budget,
        "shortened_recent_ids": [p for p in hydrated.compacted if p not in selected],
        "shortened_selected_ids": [p for p in hydrated.compacted if p in selected],
        "context_budget": budget,
    }
    if selection.fallback_reason:
        metadata["fallback_reason"] = selection.fallback_reason
    if selection.raw_answer:
        metadata["selector_answer"] = selection.raw_answer
    if selection.strategy == "llm":
        metadata["model_selected_ids"] = selection.model_ids
        metadata["kept_local_ids"] = [p for p in selection.kept_local_ids if p in selected]
    if plan.gist is not None:
        metadata["running_summary_included_tokens"] = gist_cost
    metadata["selection_latency_ms"] = round((time.perf_counter() - plan.started) * 1000, 3)
    return {
        "curated_messages": curated,
        "selected_ids": hydrated.selected,
        "librarian_metadata": metadata,
    }


_REASONING_CHARS = 2000
"""Most characters of a selector's reasoning kept in ``librarian_metadata`` (as for its
raw answer): the metadata is checkpointed every turn, and a model that writes 200 KB of
reasoning would otherwise grow every checkpoint of the thread by that much."""


def _bounded(reasoning: str) -> str:
    if len(reasoning) <= _REASONING_CHARS:
        return reasoning
    return reasoning[: _REASONING_CHARS - 1] + "\u2026"


def _selector_failed(exc: Exception) -> str:
    logger.warning("librarian: selector raised; using the local selector", exc_info=True)
    return f"selector raised {type(exc).__name__}: {exc}"[:300]


def _fallback_selector(plan: _Plan) -> LocalSelector:
    return LocalSelector(
        max_selected=plan.config.max_selected, embeddings=resolve_embeddings(plan.config)
    )


def _as_fallback(selection: Selection, reason: str) -> Selection:
    selection.strategy = "local_fallback"
    selection.fallback_reason = reason
    return selection


def _fallback(plan: _Plan, reason: str) -> Selection:
    local = _fallback_selector(plan)
    selection = local.select(plan.query, plan.messages, plan.candidates, exclude=plan.exclude)
    return _as_fallback(selection, reason)


async def _afallback(plan: _Plan, reason: str) -> Selection:
    """Async twin of :func:`_fallback`: a remote embedding model is not called blocking."""
    local = _fallback_selector(plan)
    selection = await local.aselect(
        plan.query, plan.messages, plan.candidates, exclude=plan.exclude
    )
    return _as_fallback(selection, reason)


# -- the selection cache (middleware and hook) ---------------------------------------------


class SelectionCache:
    """Selections and their metadata, per (thread, user turn), bounded (LRU).

    A ``create_agent`` turn calls the model several times (tool loops); selection runs
    on the first call and later calls re-hydrate the cached choice, by message id, with
    the turn's new messages. The key holds the thread, so two threads (tenants) never
    share a selection even for identical text.
    """

    _POSITIONS = (
        "ids",
        "model_ids",
        "kept_local_ids",
        "reserve_ids",
        "spare_ids",
        "flow_ids",
        "expanded_ids",
    )
    """Every position list of a selection, kept as message ids: a later call of the turn
    re-hydrates the same selection (its reserve and spare candidates too) in the longer
    history."""

    def __init__(self, size: int = 512) -> None:
        self._selections: BoundedCache[
            tuple[str, str], tuple[str, dict[str, list[str]], Selection, dict[str, str]]
        ] = BoundedCache(size)
        self._metadata: BoundedCache[tuple[str, str], dict[str, Any]] = BoundedCache(size)

    @staticmethod
    def key(run: Run, messages: Sequence[BaseMessage]) -> tuple[str, str]:
        # Without a thread id (no checkpointer, the index in state) two conversations
        # could share a latest message id: the key then digests the conversation.
        return turn_key(run.thread, messages)

    def get(self, key: tuple[str, str], messages: Sequence[BaseMessage]) -> Selection | None:
        """The turn's cached selection, re-hydrated in ``messages``, if the history it was
        made on is still the history (else ``None``)."""
        found, folded = self.lookup(key, messages)
        return None if folded else found

    def lookup(
        self, key: tuple[str, str], messages: Sequence[BaseMessage]
    ) -> tuple[Selection | None, bool]:
        """``(selection, folded)``: the cached selection re-hydrated in ``messages``, and
        whether the history changed since only by messages removed or added before the
        turn (``folded``: a summarization middleware between two model calls; the
        caller completes the choice for the new history). ``(None, False)`` when there
        is none, or the question or a chosen message was edited."""
        hit = self._selections.get(key)
        if hit is None:
            return None, False
        history, stored, selection, seen = hit
        position = {m.id: i for i, m in enumerate(messages)}
        folded = conversation_key(messages) != history
        if folded and not _only_folded(messages, position, seen):
            # The turn's question was edited (same id, new text: a fork or a chat UI's
            # edit), or a message the choice was made of changed: select again.
            return None, False
        found = dataclasses.replace(selection, prompt_tokens=0)
        for name, ids in stored.items():
            setattr(found, name, [position[i] for i in ids if i in position])
        return found, folded

    def put(self, key: tuple[str, str], messages: Sequence[BaseMessage], sel: Selection) -> None:
        def keys(positions: list[int]) -> list[str]:
            return [str(messages[i].id) for i in positions if 0 <= i < len(messages)]

        stored = {name: keys(getattr(sel, name)) for name in self._POSITIONS}
        # What the choice was made of: the question and every message it names, by
        # content, so a later call of the turn can tell a fold from an edit. (Read at
        # the named positions, not by a pass over the whole history.)
        named = sorted(
            {p for name in self._POSITIONS for p in getattr(sel, name) if 0 <= p < len(messages)}
        )
        # The content hashes are the history view's (each message's content_hash, taken
        # when the view first read it), not computed again (~90 a turn).
        hashes = view_of(messages)[0].hashes
        seen = {str(messages[p].id): hashes[p] for p in named if messages[p].id is not None}
        question = _question(messages)
        if question is not None:
            seen[_QUESTION] = content_hash(question)
        self._selections.put(key, (conversation_key(messages), stored, sel, seen))

    _TURN_NOTES = ("embedding_error", "store_error")
    """What failed open earlier in the turn: a later model call of the turn (after a tool
    call) re-hydrates the cached selection without asking the store or the embedding
    model again, and its record keeps what the first call met."""

    def record(self, key: tuple[str, str], metadata: dict[str, Any]) -> None:
        stored = dict(metadata)
        before = self._metadata.get(key)
        if before is not None:
            for note in self._TURN_NOTES:
                if note in before and note not in stored:
                    stored[note] = before[note]
        self._metadata.put(key, stored)

    def pop_metadata(self, key: tuple[str, str]) -> dict[str, Any] | None:
        return self._metadata.pop(key)


_QUESTION = "\x00question"
"""Key of the turn's question among a cached selection's content hashes (never a message id
the cache stores: ids are kept as given, and this one starts with NUL)."""


def _question(messages: Sequence[BaseMessage]) -> BaseMessage | None:
    return next((m for m in reversed(messages) if m.type == "human"), None)


def _only_folded(
    messages: Sequence[BaseMessage], position: dict[Any, int], seen: dict[str, str]
) -> bool:
    """Whether the history changed since the choice only by messages removed or added
    before the turn (a summarization middleware folding old messages into a summary
    between two model calls): the question and every chosen message still present are
    what they were. Selecting again would cost one more selector call per model call.
    """
    question = _question(messages)
    if question is None or seen.get(_QUESTION) != content_hash(question):
        return False
    for mid, digest in seen.items():
        if mid == _QUESTION:
            continue
        p = position.get(mid)
        if p is not None and content_hash(messages[p]) != digest:
            return False
    return True


# -- selection ---------------------------------------------------------------------------


def select_turn(
    state: dict[str, Any], run: Run, cache: SelectionCache | None = None
) -> StateUpdate:
    """Select and hydrate for the current turn (sync).

    Returns the state update of ``select_and_hydrate``: ``curated_messages``,
    ``selected_ids`` and ``librarian_metadata``. A selector that raises falls back to
    the local selector (``fallback_reason`` says why); store and configuration errors
    propagate.
    """
    messages = read_messages(state)
    entries, blip = run.read_this_turn(messages), None
    if entries is None:
        entries, blip = _loaded(state, run, messages)
    started = time.perf_counter()
    if blip is None:
        run.remember_read(messages, entries)
    with embedding_failures():
        update = _select_loaded(state, run, cache, entries, messages, started)
        return _reported(update, blip, cache, run, messages)


def _select_loaded(
    state: dict[str, Any],
    run: Run,
    cache: SelectionCache | None,
    entries: list[IndexEntry],
    messages: list[BaseMessage],
    started: float,
) -> StateUpdate:
    with turn_view(messages):  # the history is compared with its view once per turn
        plan = _plan(state, run.config, entries, messages, started)
        if plan.skip is not None:
            return plan.skip
        return _finish(plan, _selected(plan, run, cache))


def _cached(
    plan: _Plan, run: Run, cache: SelectionCache | None
) -> tuple[tuple[str, str] | None, Selection | None, bool]:
    """(cache key, cached selection, folded): see :meth:`SelectionCache.lookup`. With
    the offline selector a folded history is simply selected again (milliseconds)."""
    if cache is None:
        return None, None, False
    key = SelectionCache.key(run, plan.messages)
    if not key:
        return None, None, False
    found, folded = cache.lookup(key, plan.messages)
    if folded and run.config.selector is None and run.config.uses_local_selector:
        return key, None, False
    return key, found, folded


_FOLDED = (
    " [history folded mid-turn: the model's choice kept, the offline selection of the "
    "new history added]"
)


def _with_local(cached: Selection, local: Selection) -> Selection:
    """A model's choice made before a fold, completed by the offline selection of the
    folded history: what the fold brought (a summary of the removed messages) is found
    without another model call."""
    ids = list(dict.fromkeys([*cached.ids, *local.ids]))
    taken = set(ids)
    return dataclasses.replace(
        cached,
        ids=ids,
        reserve_ids=[i for i in local.reserve_ids if i not in taken],
        spare_ids=[i for i in local.spare_ids if i not in taken],
        flow_ids=[i for i in local.flow_ids if i not in taken],
        expanded_ids=list(dict.fromkeys([*cached.expanded_ids, *local.expanded_ids])),
        reasoning=f"{cached.reasoning}{_FOLDED}",
    )


def _selected(plan: _Plan, run: Run, cache: SelectionCache | None) -> Selection:
    key, selection, folded = _cached(plan, run, cache)
    if selection is not None and folded:
        local = _fallback_selector(plan).select(
            plan.query, plan.messages, plan.candidates, exclude=plan.exclude
        )
        selection = _with_local(selection, local)
        if cache is not None and key is not None:
            cache.put(key, plan.messages, selection)
    if selection is None:
        try:
            selection = make_selector(run.config).select(
                plan.query,
                plan.messages,
                plan.candidates,
                exclude=plan.exclude,
                config=run.run_config,
            )
        except Exception as exc:
            if not fails_open(exc):  # a model string that cannot become a model, interrupts
                raise
            selection = _fallback(plan, _selector_failed(exc))
        if cache is not None and key is not None:
            cache.put(key, plan.messages, selection)
    return selection


async def aselect_turn(
    state: dict[str, Any], run: Run, cache: SelectionCache | None = None
) -> StateUpdate:
    """Async twin of :func:`select_turn`.

    The CPU work (planning, ranking, hydration: hundreds of milliseconds for a long
    history whose view is new to this process) runs in a worker thread, never on the
    event loop that serves every other conversation; only a selector model's call is
    awaited on the loop.
    """
    messages = read_messages(state)
    entries, blip = run.read_this_turn(messages), None
    if entries is None:
        entries, blip = await _aloaded(state, run, messages)
    started = time.perf_counter()
    if blip is None:
        run.remember_read(messages, entries)
    with embedding_failures():  # the worker threads below share its list
        update = await _aselect_loaded(state, run, cache, entries, messages, started)
        return _reported(update, blip, cache, run, messages)


async def _aselect_loaded(
    state: dict[str, Any],
    run: Run,
    cache: SelectionCache | None,
    entries: list[IndexEntry],
    messages: list[BaseMessage],
    started: float,
) -> StateUpdate:
    if run.config.selector is None and run.config.uses_local_selector:
        return await asyncio.to_thread(
            _select_loaded, state, run, cache, entries, messages, started
        )
    with turn_view(messages):  # copied into the worker threads with the context
        plan = await asyncio.to_thread(_plan, state, run.config, entries, messages, started)
        if plan.skip is not None:
            return plan.skip
        selection = await _aselected(plan, run, cache)
        return await asyncio.to_thread(_finish, plan, selection)


def _store_blip(exc: Exception, step: str, *, after_reply: bool = False) -> str:
    """Absorb a transient store failure (a dropped connection, a locked database) and say
    what it was; anything else (a corrupt index, settings only the user can fix, an
    interrupt) is raised again, except after the reply (``after_reply``).

    A turn does not fail for a blip: without the stored index this turn's selection
    gives every message a provisional offline entry, and a save that failed is made up
    by the next turn's indexing (the index is reconciled with the history each turn).
    Failing the turn instead lost the reply to the caller after it was checkpointed,
    and a retry sent the question twice.

    After the reply, any failure but a configuration problem or an interrupt is
    absorbed too (a store refusing writes, a corrupt index read for indexing): the reply
    is already checkpointed, so raising would only hide it from the caller. It is
    logged at ERROR, reported in ``store_error``, and a corrupt index still raises before
    the model on the next turn, where the caller sees it before any reply.
    """
    kind = classify(exc)
    if kind == "transient":
        log_failure(logger, f"librarian: {step}", exc)
        return f"{step} failed, {describe(exc)}; the next turn catches up"
    if not after_reply or kind != "failure":
        raise exc
    logger.error("librarian: %s failed after the reply: %s", step, describe(exc), exc_info=exc)
    return f"{step} failed after the reply, {describe(exc)}; the next turn tries again"


def _loaded(
    state: dict[str, Any], run: Run, messages: list[BaseMessage], *, after_reply: bool = False
) -> tuple[list[IndexEntry], str | None]:
    """The stored index and ``None``, or no index and why (a store that does not answer
    is asked once per turn: see ``_DOWN_THIS_TURN``)."""
    down = run.store_down(messages)
    if down is not None:
        return [], _skipped_read(down)
    try:
        return run.load(state), None
    except Exception as exc:
        return [], _read_failed(run, messages, exc, after_reply=after_reply)


async def _aloaded(
    state: dict[str, Any], run: Run, messages: list[BaseMessage], *, after_reply: bool = False
) -> tuple[list[IndexEntry], str | None]:
    down = run.store_down(messages)
    if down is not None:
        return [], _skipped_read(down)
    try:
        return await run.aload(state), None
    except Exception as exc:
        return [], _read_failed(run, messages, exc, after_reply=after_reply)


_READ = "reading the index"


def _skipped_read(down: str) -> str:
    return (
        f"{_READ} skipped, the index store did not answer earlier this turn ({down}); "
        "the next turn catches up"
    )


def _read_failed(
    run: Run, messages: list[BaseMessage], exc: Exception, *, after_reply: bool = False
) -> str:
    blip = _store_blip(exc, _READ, after_reply=after_reply)  # raises what is not a blip
    run.store_failed(messages, exc)
    return blip


def _noted(update: StateUpdate, blip: str | None) -> StateUpdate:
    if blip is not None:
        metadata = update.setdefault("librarian_metadata", {})
        metadata["store_error"] = blip
    return update


async def _aselected(plan: _Plan, run: Run, cache: SelectionCache | None) -> Selection:
    key, selection, folded = _cached(plan, run, cache)
    if selection is not None and folded:
        local = await _fallback_selector(plan).aselect(
            plan.query, plan.messages, plan.candidates, exclude=plan.exclude
        )
        selection = _with_local(selection, local)
        if cache is not None and key is not None:
            cache.put(key, plan.messages, selection)
    if selection is None:
        try:
            selection = await make_selector(run.config).aselect(
                plan.query,
                plan.messages,
                plan.candidates,
                exclude=plan.exclude,
                config=run.run_config,
            )
        except Exception as exc:
            if not fails_open(exc):  # a model string that cannot become a model, interrupts
                raise
            selection = await _afallback(plan, _selector_failed(exc))
        if cache is not None and key is not None:
            cache.put(key, plan.messages, selection)
    return selection


def _reported(
    update: StateUpdate,
    blip: str | None,
    cache: SelectionCache | None,
    run: Run,
    messages: Sequence[BaseMessage],
) -> StateUpdate:
    """The selection update with what failed open this turn (a store blip, the embedding
    model), recorded for the middleware's after-agent metadata once complete (recorded
    before the notes, the middleware's turn lost its ``store_error``)."""
    failed = current_embedding_failures()
    if failed:
        # The embedding model failed this turn: the ranking was lexical (see
        # LocalSelector._embedded); the turn says so, as it does for a store blip.
        update["librarian_metadata"]["embedding_error"] = "; ".join(failed)
    update = _noted(update, blip)
    if cache is not None:
        cache.record(SelectionCache.key(run, messages), update["librarian_metadata"])
    return update


def record_pass_through(
    cache: SelectionCache, run: Run, messages: Sequence[BaseMessage], exc: Exception
) -> None:
    """Record a failed-open selection of the middleware: every message went to the model.

    The turn's ``librarian_metadata`` (written after the agent from this record) then
    says what the model got and why, instead of nothing (or the previous turn's
    record): ``selection_skipped`` with ``reason="selection_failed"`` and the
    exception as ``selection_error``.
    """
    try:
        tokens = count_tokens(list(messages), run.config.token_counter)
        metadata = _passed_through("selection_failed", len(messages), tokens, run.config)
        metadata["selection_error"] = describe(exc)
        key = SelectionCache.key(run, messages)
        if key:
            cache.record(key, metadata)
    except Exception:  # the report of a failure must not fail the turn
        logger.warning("librarian: could not record the pass-through", exc_info=True)


# -- indexing ----------------------------------------------------------------------------


def _index_result(state: dict[str, Any], update: IndexUpdate, run: Run) -> StateUpdate:
    metadata: dict[str, Any] = {
        # Spec: "newly indexed messages". A message whose text repeats an earlier one
        # ("Noted.") is indexed too, by a copy of that entry: counted here, and apart
        # in indexing_reused_count.
        "indexing_new_count": update.new_count + update.reused_count,
        "indexing_total_count": len(update.entries),
        "indexing_latency_ms": update.latency_ms,
        "indexing_failed_count": update.failed_count,
        "indexing_dropped_count": update.dropped_count,
        "indexing_reused_count": update.reused_count,
    }
    if update.errors:
        metadata["indexing_errors"] = update.errors[:10]
    result: StateUpdate = {"librarian_metadata": metadata}
    if run.index_in_state:
        # With a store the index stays out of the checkpoint (no second copy).
        if update.entries or not state.get("index"):
            result["index"] = entries_to_state(update.entries)
        else:  # every message was removed: the index goes too (a plain [] would not)
            result["index"] = cleared_index()
    return _consume_query(state, result)


def _consume_query(state: dict[str, Any], result: StateUpdate) -> StateUpdate:
    if state.get("query"):
        result["query"] = ""  # consumed: the next turn must not reuse it
    return result


def _background(state: dict[str, Any], run: Run) -> StateUpdate:
    assert run.session is not None  # background indexing requires a store
    metadata: dict[str, Any] = {"indexing_background": True}
    failed = take_failure(run.config.store, run.session)  # an earlier job's, unreported
    if failed is not None:
        metadata["background_indexing_error"] = failed
    submit_indexing(
        run.config, run.session, read_messages(state), run.run_config, fallback=run.thread
    )
    return _consume_query(state, {"librarian_metadata": metadata})


def _merged(result: StateUpdate, extra: StateUpdate) -> StateUpdate:
    metadata = {**result.get("librarian_metadata", {}), **extra.pop("librarian_metadata", {})}
    return {**result, **extra, "librarian_metadata": metadata}


def _fold(state: dict[str, Any], run: Run, result: StateUpdate) -> StateUpdate:
    """Fold messages that left the recent turns into the gist (when it is enabled)."""
    fold: Fold | None = None
    if run.config.running_summary_tokens is not None:
        fold = plan_fold(read_messages(state), state, run.config)
    if fold is None:
        return result
    summarizer = summarizer_for(run.config)
    try:
        summary = summarizer.summarize(fold.messages, fold.previous, config=run.run_config)
    except Exception as exc:
        if not fails_open(exc):  # interrupts, refused credentials: never absorbed
            raise
        return _merged(result, apply_fold(fold, None, exc))
    return _kept(
        state,
        run,
        _merged(result, apply_fold(fold, summary, None, uses_model=summarizer.uses_model)),
    )


async def _afold(state: dict[str, Any], run: Run, result: StateUpdate) -> StateUpdate:
    fold: Fold | None = None
    if run.config.running_summary_tokens is not None:
        fold = plan_fold(read_messages(state), state, run.config)
    if fold is None:
        return result
    summarizer = summarizer_for(run.config)
    try:
        summary = await summarizer.asummarize(fold.messages, fold.previous, config=run.run_config)
    except Exception as exc:
        if not fails_open(exc):  # interrupts, refused credentials: never absorbed
            raise
        return _merged(result, apply_fold(fold, None, exc))
    return _kept(
        state,
        run,
        _merged(result, apply_fold(fold, summary, None, uses_model=summarizer.uses_model)),
    )


def _kept(state: dict[str, Any], run: Run, update: StateUpdate) -> StateUpdate:
    # A thread is one checkpointer's: another graph may use the same thread id.
    configurable = (run.run_config or {}).get("configurable") or {}
    checkpointer = configurable.get("__pregel_checkpointer")
    if checkpointer is not None and run.thread is not None:
        check_gist_kept(state, f"{id(checkpointer)}:{run.thread}", update)
    return update


def index_turn(state: dict[str, Any], run: Run) -> StateUpdate:
    """Bring the index up to date after the reply (sync): load, update, save.

    With ``background_indexing`` the work goes to a worker thread and this returns at
    once. With ``running_summary_tokens`` the gist is brought up to date too. Returns
    the state update of ``index_messages``.
    """
    if run.config.background_indexing:
        return _fold(state, run, _background(state, run))
    messages = read_messages(state)
    entries = run.read_for_indexing(messages)
    if entries is None:
        entries, blip = _loaded(state, run, messages, after_reply=run.stored)
        if blip is not None:  # nothing to build on: the next turn indexes this one too
            return _noted(_consume_query(state, {}), blip)
    update = update_index(messages, entries, run.config, run_config=run.run_config)
    try:
        run.save(update.entries)
        blip = None
    except Exception as exc:
        blip = _store_blip(exc, "saving the index", after_reply=True)
    return _noted(_fold(state, run, _index_result(state, update, run)), blip)


async def aindex_turn(state: dict[str, Any], run: Run) -> StateUpdate:
    """Async twin of :func:`index_turn`."""
    if run.config.background_indexing:
        return await _afold(state, run, _background(state, run))
    messages = read_messages(state)
    entries = run.read_for_indexing(messages)
    if entries is None:
        entries, blip = await _aloaded(state, run, messages, after_reply=run.stored)
        if blip is not None:  # nothing to build on: the next turn indexes this one too
            return _noted(_consume_query(state, {}), blip)
    update = await aupdate_index(messages, entries, run.config, run_config=run.run_config)
    try:
        await run.asave(update.entries)
        blip = None
    except Exception as exc:
        blip = _store_blip(exc, "saving the index", after_reply=True)
    return _noted(await _afold(state, run, _index_result(state, update, run)), blip)
