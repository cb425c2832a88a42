"""The LLM selector: reasoning over a bounded, fenced index."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from langgraph_librarian._calls import acall_with_retries, call_with_retries
from langgraph_librarian._messages import output_text
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.select.local import LocalSelector
from langgraph_librarian.select.parse import parse_selected_ids
from langgraph_librarian.select.prompts import (
    DEFAULT_SELECTION_PROMPT,
    format_index_line,
    render_selection_prompt,
)
from langgraph_librarian.select.result import Selection
from langgraph_librarian.tokens import TokenCounter, count_text_tokens

__all__ = ["LLMSelector", "SelectionOutput"]


class SelectionOutput(BaseModel):
    """Structured selector answer, used when the model supports tool calling."""

    reasoning: str = Field(description="Brief reasoning about which messages are needed.")
    ids: list[int] = Field(description="Ids of the index entries the assistant must read.")


def _supports_structured_output(model: BaseChatModel) -> bool:
    # The base class's bind_tools raises NotImplementedError; only real overrides work.
    return type(model).bind_tools is not BaseChatModel.bind_tools


class LLMSelector:
    """Asks a chat model which index entries the agent needs.

    The prompt is bounded by ``token_budget``: when the index does not fit, the
    local ranker shortlists the most relevant entries (and the most recent ones as
    filler) first. Any failure (exception, timeout, unusable answer) falls back to
    the local selection, and the returned :class:`Selection` says why.
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
        structured_output: bool | None = None,
    ) -> None:
        self.model = model
        self.local = local
        self.template = prompt_template or DEFAULT_SELECTION_PROMPT
        self.token_budget = token_budget
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.counter = token_counter
        self.structured = (
            _supports_structured_output(model) if structured_output is None else structured_output
        )

    # -- prompt ---------------------------------------------------------------------

    def shortlist(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
    ) -> tuple[list[IndexEntry], bool]:
        """Entries that fit the prompt budget, in conversation order."""
        excluded = set(exclude)
        candidates = [e for e in entries if e.id not in excluded]
        fixed = count_text_tokens(render_selection_prompt(self.template, query, []), self.counter)
        room = self.token_budget - fixed
        # A cheap upper estimate first: only a history that may not fit pays for exact
        # per-line counting, and then only for the lines it actually adds.
        estimate = sum(len(e.summary) + len(e.name or "") + 48 for e in candidates) // 3
        if self.counter is None and estimate <= room:
            return candidates, False

        def cost(entry: IndexEntry) -> int:
            return count_text_tokens(format_index_line(entry), self.counter) + 1

        if estimate <= room * 3 and sum(cost(e) for e in candidates) <= room:
            return candidates, False
        by_pos = {e.id: e for e in candidates}
        order = [pos for pos, _ in self.local.rank(query, messages, candidates)]
        ranked = set(order)
        order += [e.id for e in reversed(candidates) if e.id not in ranked]  # recent first
        chosen: list[int] = []
        used = 0
        misses = 0
        for pos in order:
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

    def _interpret(
        self, result: Any, shown: Sequence[IndexEntry]
    ) -> tuple[list[int] | None, str, str | None]:
        """(ids or None when unusable, reasoning text, problem)."""
        valid = [e.id for e in shown]
        if isinstance(result, dict) and "raw" in result:
            parsed = result.get("parsed")
            raw_text = output_text(result.get("raw"))
            if isinstance(parsed, SelectionOutput):
                ids = [i for i in dict.fromkeys(parsed.ids) if i in set(valid)]
                if parsed.ids and not ids:
                    return None, parsed.reasoning, "selector returned only unknown ids"
                return ids, parsed.reasoning, None
            result = raw_text
        text = output_text(result)
        parsed_text = parse_selected_ids(text, valid)
        if not parsed_text.found:
            return None, text, "selector answer contained no id list"
        if parsed_text.invalid and not parsed_text.ids:
            return None, text, "selector returned only unknown ids"
        return parsed_text.ids, text, None

    def _runnable(self) -> Any:
        if self.structured:
            try:
                return self.model.with_structured_output(SelectionOutput, include_raw=True)
            except NotImplementedError:
                self.structured = False
        return self.model

    def _finish(
        self,
        outcome: tuple[list[int] | None, str, str | None],
        fallback: Selection,
        shown: Sequence[IndexEntry],
        shortlisted: bool,
        prompt_tokens: int,
    ) -> Selection:
        ids, reasoning, problem = outcome
        if ids is None:
            fallback.strategy = "local_fallback"
            fallback.fallback_reason = problem
            fallback.reasoning = reasoning
            fallback.prompt_tokens = prompt_tokens
            fallback.shortlisted = shortlisted
            return fallback
        return Selection(
            ids=ids,
            reasoning=reasoning,
            strategy="llm",
            candidates=len(shown),
            shortlisted=shortlisted,
            prompt_tokens=prompt_tokens,
        )

    def _prepare(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
    ) -> tuple[list[IndexEntry], bool, list[BaseMessage], int]:
        """(entries shown, whether shortlisted, the prompt, its token count)."""
        shown, shortlisted = self.shortlist(query, messages, entries, exclude)
        prompt = render_selection_prompt(self.template, query, shown)
        return (
            shown,
            shortlisted,
            [HumanMessage(content=prompt)],
            count_text_tokens(prompt, self.counter),
        )

    @staticmethod
    def _failed(exc: Exception) -> tuple[None, str, str]:
        return None, "", f"selector failed: {type(exc).__name__}: {exc}"[:300]

    def select(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        config: RunnableConfig | None = None,
    ) -> Selection:
        """Select entries; never raises for model failures (falls back to local).

        ``config`` is passed to the model call (build it with ``internal_config``).
        """
        shown, shortlisted, prompt, tokens = self._prepare(query, messages, entries, exclude)
        runnable = self._runnable()
        try:
            result = call_with_retries(
                lambda: runnable.invoke(prompt, config=config),
                timeout=self.timeout,
                retries=self.max_retries,
                backoff=self.retry_backoff,
            )
            outcome = self._interpret(result, shown)
        except Exception as exc:
            outcome = self._failed(exc)
        if outcome[0] is not None:
            return self._finish(outcome, Selection(), shown, shortlisted, tokens)
        fallback = self.local.select(query, messages, entries, exclude=exclude)
        return self._finish(outcome, fallback, shown, shortlisted, tokens)

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
        shown, shortlisted, prompt, tokens = self._prepare(query, messages, entries, exclude)
        runnable = self._runnable()
        try:
            result = await acall_with_retries(
                lambda: runnable.ainvoke(prompt, config=config),
                timeout=self.timeout,
                retries=self.max_retries,
                backoff=self.retry_backoff,
            )
            outcome = self._interpret(result, shown)
        except Exception as exc:
            outcome = self._failed(exc)
        if outcome[0] is not None:
            return self._finish(outcome, Selection(), shown, shortlisted, tokens)
        fallback = await self.local.aselect(query, messages, entries, exclude=exclude)
        return self._finish(outcome, fallback, shown, shortlisted, tokens)
