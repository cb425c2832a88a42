"""The LLM selector: reasoning over a bounded, fenced index, failing open to the local one."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Sequence
from itertools import chain
from operator import attrgetter
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._engine.calls import CallPolicy, ModelCaller, request_bounded
from langgraph_librarian._engine.failures import fails_open, status_code
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.select import _ladder
from langgraph_librarian.select._answers import (
    LENGTH_PROBLEM,
    Answer,
    cut_off_text,
    interpret,
    stopped_at_length,
)
from langgraph_librarian.select._ladder import OutputMode, Rung
from langgraph_librarian.select.local import LocalSelector
from langgraph_librarian.select.prompts import (
    DEFAULT_SELECTION_PROMPT,
    JSON_ANSWER_INSTRUCTIONS,
    SHORT_ANSWER_INSTRUCTIONS,
    format_index_line,
    format_query,
    render_selection_prompt,
    shorten_middle,
)
from langgraph_librarian.select.result import Selection
from langgraph_librarian.tokens import TokenCounter, count_text_tokens

__all__ = ["LLMSelector"]

_ENTRY_ID, _SUMMARY, _NAME = attrgetter("id"), attrgetter("summary"), attrgetter("name")
logger = logging.getLogger("langgraph_librarian")

_RAW_LIMIT = 2000

_QUERY_SHARE = 4
"""The query takes at most a quarter of ``token_budget``: the current message can be a
3 MB pasted log, and the index (what the model chooses from) must keep most of the
prompt."""
_CHARS_PER_TOKEN_CAP = 8
"""A first cut of a long query at this many characters a token (more than tokenizers
pack into text) spares counting a pasted megabyte; the token counter then decides."""
_LONGEST_SUFFIX = f"\n\n{JSON_ANSWER_INSTRUCTIONS}\n\n{SHORT_ANSWER_INSTRUCTIONS}"
"""The most :meth:`LLMSelector._messages` appends to the prompt (JSON mode's answer shape,
then the request for a shorter answer): the budget reserves room for it."""


def _describe(exc: BaseException) -> str:
    status = status_code(exc)
    where = f" (HTTP {status})" if status is not None else ""
    return f"selector failed{where}: {type(exc).__name__}: {exc}"[:300]


def _raise_unless_absorbed(exc: Exception, rung: Rung, last: bool) -> None:
    """Raise what the failure policy never absorbs (refused credentials, an unknown
    model, interrupts: :func:`~langgraph_librarian._engine.failures.fails_open`).

    A 404 to a structured output form may be that form's refusal rather than an unknown
    model: the simpler forms are tried first, and the 404 raises from the last one.
    """
    if fails_open(exc):
        return
    if status_code(exc) == 404 and not last and _ladder.is_capability_error(exc):
        return
    raise exc


class LLMSelector:
    """Asks a chat model which index entries the agent needs.

    The prompt is bounded by ``token_budget``: the query takes at most a quarter of it
    (:meth:`fit_query`), and when the index does not fit the rest, the local ranker
    shortlists the most relevant entries (and the most recent ones as filler). When the
    template leaves the index no room, the local selection is returned without a call.
    The answer is asked for in the most structured form the model accepts
    (``output="auto"``: structured output, then JSON mode, then an ``IDs: [...]`` line;
    see :mod:`~langgraph_librarian.select._ladder`). Only a non-empty list of known ids,
    or an explicit "none needed", is used; anything else (an exception, a timeout, the
    time budget used up, an echo of the prompt, ``[]``, strings, unknown ids) falls
    back to the local selection, and the returned :class:`Selection` says why.

    Args:
        model: The selector chat model.
        local: The fallback (and shortlisting) selector.
        prompt_template: Replaces the selection template (``{query}`` and ``{index}``).
        token_budget: Upper bound on the whole prompt (the query at most a quarter).
        timeout: Seconds per model attempt.
        max_retries: Extra attempts after transient failures.
        retry_backoff: Seconds before the first retry.
        token_counter: Counts prompt tokens (default approximate).
        output: ``"auto"`` (the ladder) or one fixed form.
        time_budget: Seconds for the whole selection (all forms and retries);
            ``None``: no overall bound.
        keep_local: Keep the local selector's confident picks next to the model's
            (see :meth:`_chosen`); ``False``: the model's picks alone.
        step: ``metadata["librarian_step"]`` of the model call (``"select"`` in a
            Librarian turn, ``"scope_recall"`` when recall selects scope memory).
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        local: LocalSelector,
        prompt_template: str | None = None,
        token_budget: int = 8000,
        timeout: float | None = 60.0,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
        token_counter: TokenCounter | None = None,
        output: OutputMode = "auto",
        time_budget: float | None = 60.0,
        keep_local: bool = True,
        step: str = "select",
    ) -> None:
        self.model = model
        self.step = step
        self.local = local
        self.template = prompt_template or DEFAULT_SELECTION_PROMPT
        self.token_budget = token_budget
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.counter = token_counter
        self.output = output
        self.time_budget = time_budget
        self.keep_local = keep_local

    # -- prompt ---------------------------------------------------------------------

    def shortlist(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
        query_vector: Sequence[float] | None = None,
        *,
        prompt_query: str | None = None,
    ) -> tuple[list[IndexEntry], bool]:
        """Entries that fit the prompt budget, in conversation order.

        When the index does not fit, the local selector's ranking (lexical and, with an
        embedding model, by meaning: ``query_vector``, else the query is embedded)
        decides what is shown. ``prompt_query`` is the query as the prompt shows it
        (default :meth:`fit_query` of ``query``); the ranking reads ``query`` whole.
        """
        if prompt_query is None:
            prompt_query = self.fit_query(query)
        return self._shortlist(
            query, messages, entries, exclude, query_vector, self._room(prompt_query), False
        )

    def fit_query(self, query: str) -> str:
        """``query`` as the prompt shows it: within its share of ``token_budget``.

        A longer query keeps its start and its end, the middle marked as omitted
        (:func:`~langgraph_librarian.select.prompts.shorten_middle`), cut by characters
        and checked with the token counter.
        """
        limit = max(1, self.token_budget // _QUERY_SHARE)
        keep = min(len(query), limit * _CHARS_PER_TOKEN_CAP)
        for _ in range(16):
            text = shorten_middle(query, keep)
            tokens = count_text_tokens(format_query(text), self.counter)
            if tokens <= limit or keep == 0:
                return text
            # Proportional to the overshoot, and by a tenth at least: a counter that
            # counts escapes or the marker heavily still ends within a few rounds.
            keep = int(keep * min(0.9, limit / tokens))
        return shorten_middle(query, 0)

    def _room(self, prompt_query: str) -> int:
        """Tokens the index lines may take: the budget less the template with the
        query and the longest instructions :meth:`_messages` may append."""
        fixed = count_text_tokens(
            render_selection_prompt(self.template, prompt_query, []), self.counter
        )
        return self.token_budget - fixed - count_text_tokens(_LONGEST_SUFFIX, self.counter)

    def _shortlist(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
        query_vector: Sequence[float] | None,
        room: int,
        exact: bool,
    ) -> tuple[list[IndexEntry], bool]:
        """:meth:`shortlist` within ``room`` tokens; ``exact``: count every line even
        when the quick estimate says the whole index fits."""
        excluded = set(exclude)
        # Every turn: the passes over all entries are C-level maps (the usual exclusion,
        # the recent turns, lies past every candidate and filters nothing).
        if excluded and max(map(_ENTRY_ID, entries), default=-1) >= min(excluded):
            candidates = [e for e in entries if e.id not in excluded]
        else:
            candidates = list(entries)
        if room <= 0:
            return [], True
        # A cheap upper estimate first: only a history that may not fit pays for exact
        # per-line counting, and then only for the lines it actually adds.
        summaries = sum(map(len, map(_SUMMARY, candidates)))
        names = sum(map(len, filter(None, map(_NAME, candidates))))
        estimate = (summaries + names + 48 * len(candidates)) // 3
        if self.counter is None and not exact and estimate <= room:
            return candidates, False

        def cost(entry: IndexEntry) -> int:
            return count_text_tokens(format_index_line(entry), self.counter) + 1

        if estimate <= room * 3 and sum(cost(e) for e in candidates) <= room:
            return candidates, False
        by_pos = dict(zip(map(_ENTRY_ID, candidates), candidates, strict=True))
        ranked_order = [
            pos
            for pos, _ in self.local.rank(query, messages, candidates, query_vector=query_vector)
        ]
        ranked = set(ranked_order)
        # Then the unranked, recent first; read only if the ranked ones leave room.
        unranked = (e.id for e in reversed(candidates) if e.id not in ranked)
        chosen: list[int] = []
        used = 0
        misses = 0
        for pos in chain(ranked_order, unranked):
            line = cost(by_pos[pos])
            if used + line > room:
                misses += 1
                if misses > 50:  # the budget is effectively full
                    break
                continue
            chosen.append(pos)
            used += line
            if room - used < 8:
                break
        return [by_pos[p] for p in sorted(chosen)], True

    # -- calls ----------------------------------------------------------------------

    def _prepare(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
        query_vector: Sequence[float] | None,
    ) -> tuple[list[IndexEntry], bool, str, int]:
        """(entries shown, whether shortlisted, the prompt text, its token count).

        The prompt with the longest instructions :meth:`_messages` appends stays within
        ``token_budget``. No entries shown while there were candidates means the index
        got no room: the caller selects locally instead of asking the model.
        """
        prompt_query = self.fit_query(query)
        room = self._room(prompt_query)
        suffix = count_text_tokens(_LONGEST_SUFFIX, self.counter)
        exact = False
        for _ in range(3):
            shown, shortlisted = self._shortlist(
                query, messages, entries, exclude, query_vector, room, exact
            )
            prompt = render_selection_prompt(self.template, prompt_query, shown)
            tokens = count_text_tokens(prompt, self.counter)
            over = tokens + suffix - self.token_budget
            if over <= 0 or not shown:
                return shown, shortlisted, prompt, tokens
            # The quick estimate missed (summaries full of escaped characters) or the
            # counter counts pieces apart as less than together: every line counted,
            # in the room less the overshoot.
            room, exact = room - over, True
        prompt = render_selection_prompt(self.template, prompt_query, [])
        return [], True, prompt, count_text_tokens(prompt, self.counter)

    def _no_room(self, entries: Sequence[IndexEntry], exclude: Collection[int], tokens: int) -> str:
        """Why the model is not asked, when the index got no room in the prompt (a model
        asked without an index can only answer "none") and there is something to select;
        else ``""``. The caller selects locally (sync or async)."""
        excluded = set(exclude)
        if not any(e.id not in excluded for e in entries):
            return ""
        taken = tokens + count_text_tokens(_LONGEST_SUFFIX, self.counter)
        return (
            "no room for the index in the selector prompt: the template, the query and the "
            f"answer instructions take {taken} of selector_token_budget={self.token_budget} "
            "tokens; selected locally without a model call"
        )

    def _attempts(self) -> list[tuple[Rung, Any]]:
        found = [
            (rung, _ladder.build(self.model, rung))
            for rung in _ladder.rungs(self.model, self.output)
        ]
        return [(rung, runnable) for rung, runnable in found if runnable is not None]

    @property
    def policy(self) -> CallPolicy:
        """``timeout``, ``max_retries`` and ``retry_backoff`` as the call policy."""
        return CallPolicy(self.timeout, self.max_retries, self.retry_backoff)

    def _caller(self, runnable: Any, rung: Rung) -> ModelCaller:
        def bounded(timeout: float) -> Any:
            # The same output form on a copy of the model whose request ends in time.
            model = request_bounded(self.model, timeout)
            return None if model is None else _ladder.build(model, rung)

        return self.policy.caller(runnable, self.step, build=bounded)

    @staticmethod
    def _messages(prompt: str, rung: Rung, short: bool = False) -> list[BaseMessage]:
        if rung == "json_mode":  # JSON mode needs the word JSON and the shape in the prompt
            prompt = f"{prompt}\n\n{JSON_ANSWER_INSTRUCTIONS}"
        if short:  # the previous answer ran into the output limit
            prompt = f"{prompt}\n\n{SHORT_ANSWER_INSTRUCTIONS}"
        return [HumanMessage(content=prompt)]

    def _next(self, rung: Rung, exc: Exception, last: bool) -> tuple[bool, Answer]:
        """After a failed call: (try the next rung?, the failure as an answer)."""
        answer = Answer(problem=_describe(exc))
        if _ladder.is_capability_error(exc) and rung != "text":
            _ladder.refused(self.model, rung)
        if not last and _ladder.is_capability_error(exc):
            logger.info(
                "librarian: selector refused %s output (%s); trying a simpler form",
                rung,
                answer.problem,
            )
            return True, answer
        return False, answer

    def _deadline(self) -> float | None:
        return None if self.time_budget is None else time.monotonic() + self.time_budget

    def _outcome(
        self, rung: Rung, outcome: object, failed: bool, last: bool, short: bool, valid: list[int]
    ) -> tuple[str, Answer]:
        """What to do after one call: ``"done"``, ``"shorter"`` (ask again, briefly) or
        ``"next"`` (a simpler output form), with the answer so far."""
        if failed:
            assert isinstance(outcome, Exception)
            cut = cut_off_text(outcome)
            if cut is None:
                go_on, answer = self._next(rung, outcome, last)
                return ("next" if go_on else "done"), answer
            answer = Answer(raw=cut, problem=LENGTH_PROBLEM)
        else:
            try:
                answer = interpret(outcome, valid, self.template)
            except Exception as exc:  # an answer we cannot read is an unusable answer
                answer = Answer(problem=f"unreadable answer: {_describe(exc)}")
            if answer.usable:
                _ladder.remember(self.model, rung)
                return "done", answer
            if not stopped_at_length(outcome):
                return "done", answer
            answer = Answer(raw=answer.raw, problem=LENGTH_PROBLEM)
        # Cut off at the output limit: a shorter answer (no reasoning) usually fits.
        return ("done" if short else "shorter"), answer

    def select(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        config: RunnableConfig | None = None,
    ) -> Selection:
        """Select entries; a failed or unusable model answer falls back to local selection.

        Configuration errors (HTTP 401/403, an unknown model's 404) and interrupts raise:
        falling back would hide a revoked key turn after turn.

        ``config`` is the caller's run config: the model call runs as its child run,
        tagged so that it never streams as the agent's tokens.
        """
        # One query embedding for the shortlist and the local selection.
        vector = self.local._query_vector(query)
        shown, shortlisted, prompt, tokens = self._prepare(
            query, messages, entries, exclude, vector
        )
        if not shown and (problem := self._no_room(entries, exclude, tokens)):
            local = self.local._by_parts(query, messages, entries, exclude, vector)
            return self._fell_back(Answer(problem=problem), local, True, tokens)
        deadline, answer = (
            self._deadline(),
            Answer(problem="the selector model offers no usable output form"),
        )
        attempts, valid = self._attempts(), [e.id for e in shown]
        for n, (rung, runnable) in enumerate(attempts):
            short, action = False, "shorter"
            while action == "shorter":
                try:
                    outcome: object = self._caller(runnable, rung).invoke(
                        self._messages(prompt, rung, short), config, deadline=deadline
                    )
                    failed = False
                except Exception as exc:
                    _raise_unless_absorbed(exc, rung, n == len(attempts) - 1)
                    outcome, failed = exc, True
                last = n == len(attempts) - 1
                action, answer = self._outcome(rung, outcome, failed, last, short, valid)
                short = True
            if action == "done":
                break
        local = self.local._by_parts(query, messages, entries, exclude, vector)
        if answer.usable:
            return self._chosen(answer, local, shown, shortlisted, tokens)
        return self._fell_back(answer, local, shortlisted, tokens)

    async def aselect(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        config: RunnableConfig | None = None,
    ) -> Selection:
        """Async twin of :meth:`select` (a timed-out call is cancelled)."""
        vector = await self.local._aquery_vector(query)
        shown, shortlisted, prompt, tokens = self._prepare(
            query, messages, entries, exclude, vector
        )
        if not shown and (problem := self._no_room(entries, exclude, tokens)):
            local = await self.local._aby_parts(query, messages, entries, exclude, vector)
            return self._fell_back(Answer(problem=problem), local, True, tokens)
        deadline, answer = (
            self._deadline(),
            Answer(problem="the selector model offers no usable output form"),
        )
        attempts, valid = self._attempts(), [e.id for e in shown]
        for n, (rung, runnable) in enumerate(attempts):
            short, action = False, "shorter"
            while action == "shorter":
                try:
                    outcome: object = await self._caller(runnable, rung).ainvoke(
                        self._messages(prompt, rung, short), config, deadline=deadline
                    )
                    failed = False
                except Exception as exc:
                    _raise_unless_absorbed(exc, rung, n == len(attempts) - 1)
                    outcome, failed = exc, True
                last = n == len(attempts) - 1
                action, answer = self._outcome(rung, outcome, failed, last, short, valid)
                short = True
            if action == "done":
                break
        local = await self.local._aby_parts(query, messages, entries, exclude, vector)
        if answer.usable:
            return self._chosen(answer, local, shown, shortlisted, tokens)
        return self._fell_back(answer, local, shortlisted, tokens)

    def _chosen(
        self,
        answer: Answer,
        local: Selection,
        shown: Sequence[IndexEntry],
        shortlisted: bool,
        tokens: int,
    ) -> Selection:
        """The model's picks, merged with what the offline engine is sure of.

        A weak model's wrong picks must not push out anything the offline engine would
        have sent. In rank order: the offline selection (:func:`confident_picks`), the
        model's picks that the offline engine ranked next-best (its ``reserve_ids``:
        the model settles its doubt), the rest of that reserve, and last the model's
        picks the offline ranking did not have at all (the pipeline sends them whole
        when the context is unbounded, else as budget allows). The budget cuts from the
        end. Promoting the model's picks further was measured and rejected: it lets a
        weak model's wrong picks cost answers (see docs/local-models.md).
        """
        if self.keep_local:
            sure = confident_picks(local)
            nextbest = set(local.reserve_ids)
            backed = [i for i in answer.ids if i in nextbest]
            # The exchanges the offline engine keeps by structure (a bare answer, the
            # message a reply reacts to) come after the picks the model backed.
            ids = list(dict.fromkeys([*sure, *backed, *local.exchange_ids])) or list(answer.ids)
            reserve = [i for i in local.reserve_ids if i not in ids]
        else:
            sure, ids, reserve = [], list(answer.ids), []
        return Selection(
            ids=ids,
            reasoning=answer.reasoning,
            strategy="llm",
            candidates=len(shown),
            shortlisted=shortlisted,
            prompt_tokens=tokens,
            raw_answer=answer.raw[:_RAW_LIMIT],
            reserve_ids=reserve,
            model_ids=list(answer.ids),
            kept_local_ids=[i for i in sure if i not in answer.ids],
        )

    @staticmethod
    def _fell_back(
        answer: Answer, fallback: Selection, shortlisted: bool, tokens: int
    ) -> Selection:
        fallback.strategy = "local_fallback"
        fallback.fallback_reason = answer.problem
        fallback.reasoning = f"[local fallback: {answer.problem}] {fallback.reasoning}"
        fallback.raw_answer = answer.raw[:_RAW_LIMIT]
        fallback.prompt_tokens = tokens
        fallback.shortlisted = shortlisted
        return fallback


def confident_picks(local: Selection) -> list[int]:
    """What the offline engine is sure of: its selection proper, in rank order.

    That is the matches above its relevance cutoff and their dependencies (a later
    change, the statement it changes, the question an answer replies to), not its
    next-best ``reserve_ids`` nor the exchanges it keeps by structure
    (``exchange_ids``).
    """
    exchanges = set(local.exchange_ids)
    return [i for i in local.ids if i not in exchanges]
