"""The running summarizer: previous summary + new messages -> a bounded new summary."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
)
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_librarian._engine.calls import CallPolicy, ModelCaller
from langgraph_librarian._engine.failures import fails_open
from langgraph_librarian._engine.history import as_messages
from langgraph_librarian._engine.messages import message_text, output_text, stopped_at_length
from langgraph_librarian._engine.models import LazyModel, build_model
from langgraph_librarian._engine.text import content_terms
from langgraph_librarian.index._validate import clean_model_summary, cut_unreported
from langgraph_librarian.index.summarize import summary_problem
from langgraph_librarian.memory._adapter import langchain_summarizer
from langgraph_librarian.memory._facts import (
    compress_lines,
    gist_problem,
    merge_facts,
    parse_summary,
    retained_terms,
    user_fact_terms,
)
from langgraph_librarian.memory._prompts import (
    DATA_TAGS,
    DEFAULT_RUNNING_SUMMARY_PROMPT,
    MAX_MESSAGE_CHARS,
    RECOMPRESS_PROMPT,
    RECOMPRESS_TAGS,
    clip_middle,
    recompress_prompt,
    render_messages,
    summary_prompt,
)
from langgraph_librarian.memory._result import (
    SummarizationError,
    SummaryResult,
    checked_count,
    checked_seconds,
)
from langgraph_librarian.select.prompts import echoes_template
from langgraph_librarian.tokens import TokenCounter, count_text_tokens

__all__ = [
    "DEFAULT_RUNNING_SUMMARY_PROMPT",
    "RunningSummarizer",
    "SummarizationError",
    "SummaryResult",
    "asummarize_messages",
    "summarize_messages",
]

logger = logging.getLogger("langgraph_librarian")

_REJECTIONS_WARNED: OrderedDict[str, None] = OrderedDict()
_REJECTIONS_MAX = 256
_REJECTIONS_LOCK = threading.Lock()


def _log_rejection(problem: str) -> None:
    """Log a rejected model summary: a warning the first time a cause is seen in this
    process (as the index's fallbacks and a failing embedding model are), a debug line
    after. The cause is the problem without its quoted words and numbers ("the summary
    gives 14 to 'seat'" and "... 9 to 'people'" are one cause)."""
    cause = re.sub(r"'[^']*'|\([^)]*\)|\d+", "", problem.split(": ", 1)[0]).strip()
    with _REJECTIONS_LOCK:
        seen = cause in _REJECTIONS_WARNED
        if not seen:
            if len(_REJECTIONS_WARNED) >= _REJECTIONS_MAX:
                _REJECTIONS_WARNED.popitem(last=False)
            _REJECTIONS_WARNED[cause] = None
    (logger.debug if seen else logger.warning)(
        "librarian: running summary by the model rejected (%s); offline summary used", problem
    )


_MIN_RETAINED = 0.3
"""An answer must keep this share of the previous summary's content words."""

Prompt = list[BaseMessage]
_Flow = Generator[Prompt, object, "SummaryResult"]


def _answer_problem(
    answer: str,
    source: str,
    instructions: str,
    fences: Sequence[str],
    previous: str = "",
    news: frozenset[str] = frozenset(),
    folded: Sequence[BaseMessage] | None = None,
    offline: Callable[[], str] | None = None,
) -> str | None:
    """Why a model's answer must not become the summary, or ``None``.

    The index's checks (empty, instructions repeated, refusal, nothing in common with
    the source) and the selector's echo check (the prompt's data tags in the answer),
    plus three that only a running summary has: it must say something about the
    conversation ("OK" or "Done." does not), keep most of the previous summary, and
    take in something of what the user's new messages establish (``news``: the words
    of their lasting facts that the previous summary lacks): a model that echoes the
    previous summary would drop them.
    """
    problem = summary_problem(answer, source, instructions, conversation=True)
    if problem is None and echoes_template(answer, instructions, fences):
        problem = "the model repeated its prompt"
    source_terms = set(content_terms(source))
    if problem is None and source_terms and not source_terms & set(content_terms(answer)):
        problem = "the summary says nothing about the conversation"
    if problem is None and previous:
        kept = retained_terms(previous)
        if kept and len(kept & set(content_terms(answer))) < _MIN_RETAINED * len(kept):
            problem = "the summary drops most of the previous summary"
    if problem is None and news and not news & set(content_terms(answer)):
        problem = "the summary leaves out the new messages' facts"
    if problem is None and folded is not None:
        problem = gist_problem(answer, folded, previous, offline)
    return problem


# Tags a model puts around its summary: the prompts fence their data in tags (the
# re-compression prompt the summary itself, in <summary>), and models answer in kind.
# Not the fold prompt's own tags (<previous_summary>, <messages>): an answer with those
# repeated its prompt. The indexer drops the same tags (``_WRAPPER``).
_SUMMARY_TAG = re.compile(
    r"</?\s*(?:(?:updated|new|revised|shortened|running|conversation)[ _-]?)?summary\s*>",
    re.IGNORECASE,
)


def _uncut(raw: object, source: str) -> tuple[str, str | None]:
    """The answer's cleaned text without a last line the output limit cut, and why it
    is unusable (``None`` when it may be checked).

    A limit the provider reported (``finish_reason="length"``, ``stop_reason=
    "max_tokens"``) stopped the last line wherever it fell ("- User can eat" before
    "no nuts"): that line goes, the rest is checked as usual. An unreported one shows
    as a last word cut mid-word (:func:`cut_unreported`).
    """
    answer = _SUMMARY_TAG.sub("\n", output_text(raw))
    text, cut = cut_unreported(clean_model_summary(answer), source, raw)
    if stopped_at_length(raw):
        text = text.rstrip()
        # The last line goes; of a one-paragraph answer, the last sentence.
        ends = [m.end() for m in re.finditer(r"\n|[.!?](?=\s)", text)]
        text = text[: ends[-1]].rstrip() if ends else ""
        return text, None if text else "the summary was cut off at the output-token limit"
    return text, "the summary was cut off mid-word" if cut and not text else None


def _passes_through(exc: BaseException) -> bool:
    """Interrupts and configuration errors are not summary failures: they propagate."""
    return not fails_open(exc)


@dataclass
class _Request:
    prompt: Prompt
    previous: str  # the previous summary as the model sees it
    source: str  # everything the model was given to summarize
    notes: list[str]
    news: frozenset[str]  # words of the user's new lasting facts, not in ``previous``
    shown: list[BaseMessage]  # the messages the model was given whole


@dataclass
class _Reply:
    value: object = None
    error: Exception | None = None


def _advance(flow: _Flow, reply: _Reply) -> tuple[bool, Any]:
    """Give ``reply`` to ``flow``: ``(True, result)`` when done, else ``(False, prompt)``."""
    try:
        if reply.error is not None:
            return False, flow.throw(reply.error)
        return False, flow.send(reply.value)
    except StopIteration as done:  # caught here: a StopIteration must not cross threads
        return True, done.value


def _inputs(messages: Sequence[Any], previous: object) -> tuple[list[BaseMessage], str]:
    """Messages as LangChain accepts them everywhere (dicts, ``(role, text)`` tuples,
    strings; chunks and ``ChatMessage`` as their role's class) and the previous summary
    as text (``None`` is no summary yet)."""
    if previous is None:
        previous = ""
    if not isinstance(previous, str):
        raise TypeError(f"previous_summary must be a str, got {type(previous).__name__}")
    return as_messages(list(messages)), previous  # list: a generator is read once


class RunningSummarizer:
    """Folds messages into a running summary that never outgrows its budget.

    With no model, the offline engine writes the summary (one extractive fact line
    per message, least important lines dropped first when over budget). With a chat
    model (an object or a ``"provider:model"`` string, checked now and created on
    first use with a client timeout and no client retries) the model extends the
    previous summary; an answer over budget is re-compressed by a second call, then
    offline if still too long.

    An answer that is not a summary (an echo of the prompt, a refusal, "OK", text
    unrelated to the conversation, one that drops most of the previous summary, or
    one that leaves out every new lasting fact the user stated, such as the previous
    summary echoed unchanged) is never used: the offline summary is returned instead
    (``method="extractive"``, a note says why). A failed or timed-out call raises
    :class:`SummarizationError`:
    callers keep their messages and old summary. A model string that cannot become a
    model, or a provider answering 401/403/404, raises as it is (a configuration error
    to fix, not a failure to wait out).

    Args:
        model: Chat model for LLM summaries; ``None``: offline.
        max_summary_tokens: Budget of the summary.
        prompt: Replaces :data:`DEFAULT_RUNNING_SUMMARY_PROMPT` (``{max_words}`` is filled).
        timeout: Seconds before one model call is abandoned.
        max_retries: Extra attempts after a failed model call.
        retry_backoff: Seconds before the first retry (doubles).
        token_counter: Your model's message token counter (budget counts); default
            approximate, which undercounts CJK text.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> result = RunningSummarizer(max_summary_tokens=100).summarize(
        ...     [HumanMessage("I'm vegetarian and allergic to nuts."), AIMessage("Noted!")])
        >>> print(result.summary)
        - User: I'm vegetarian and allergic to nuts.
        - Assistant: Noted!
    """

    def __init__(
        self,
        model: BaseChatModel | str | None = None,
        *,
        max_summary_tokens: int = 200,
        prompt: str | None = None,
        timeout: float | None = 20.0,
        max_retries: int = 1,
        retry_backoff: float = 0.5,
        token_counter: TokenCounter | None = None,
    ) -> None:
        max_summary_tokens = checked_count("max_summary_tokens", max_summary_tokens, 16)
        if timeout is not None:
            timeout = checked_seconds("timeout", timeout, positive=True)
        max_retries = checked_count("max_retries", max_retries, 0)
        retry_backoff = checked_seconds("retry_backoff", retry_backoff, positive=False)
        if prompt is not None and not isinstance(prompt, str):
            raise TypeError(f"prompt must be a str or None, got {type(prompt).__name__}")
        if model is not None and not isinstance(model, str | BaseChatModel):
            raise TypeError(
                "model must be a chat model, a 'provider:model' string or None, "
                f"not {type(model).__name__}"
            )
        self._lazy = (
            None
            if model is None
            else LazyModel(
                model,
                "summary_model",
                lambda spec: build_model(spec, "summary_model", timeout=timeout),
            )
        )
        self._summary_caller: ModelCaller | None = None
        self.max_summary_tokens = max_summary_tokens
        self.prompt = prompt or DEFAULT_RUNNING_SUMMARY_PROMPT
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.token_counter = token_counter

    @property
    def uses_model(self) -> bool:
        """True when summaries come from a chat model."""
        return self._lazy is not None

    @property
    def model(self) -> BaseChatModel | None:
        """The summary chat model (created on first use from a string), or ``None``."""
        return None if self._lazy is None else cast(BaseChatModel, self._lazy.get())

    def _caller(self) -> ModelCaller | None:
        model = self.model
        if model is not None and self._summary_caller is None:
            policy = CallPolicy(self.timeout, self.max_retries, self.retry_backoff)
            self._summary_caller = policy.caller(model, "running_summary")
        return self._summary_caller

    # -- offline ----------------------------------------------------------------------

    def compress(self, summary: str) -> str:
        """``summary`` re-compressed offline to ``max_summary_tokens`` (unchanged if it fits)."""
        if not self._over(summary):
            return summary
        text, _ = compress_lines(
            parse_summary(summary), self.max_summary_tokens, self.token_counter
        )
        return text

    def _over(self, text: str) -> bool:
        return count_text_tokens(text, self.token_counter) > self.max_summary_tokens

    def _offline(
        self,
        messages: Sequence[BaseMessage],
        previous: str,
        start: float,
        notes: list[str] | None = None,
    ) -> SummaryResult:
        text, changed = merge_facts(previous, messages, self.max_summary_tokens, self.token_counter)
        return self._result(text, "extractive", messages, changed, start, notes)

    def _result(
        self,
        text: str,
        method: Literal["extractive", "llm"],
        messages: Sequence[BaseMessage],
        recompressed: bool,
        start: float,
        notes: list[str] | None = None,
    ) -> SummaryResult:
        return SummaryResult(
            summary=text,
            method=method,
            summarized_count=sum(1 for m in messages if m.type != "system"),
            summary_tokens=count_text_tokens(text, self.token_counter),
            recompressed=recompressed,
            latency_ms=(time.perf_counter() - start) * 1000,
            notes=notes or [],
        )

    # -- model prompts ---------------------------------------------------------------------

    @property
    def _max_words(self) -> int:
        return max(10, int(self.max_summary_tokens * 0.7))

    def _request(self, messages: Sequence[BaseMessage], previous_summary: str) -> _Request:
        conversation = [m for m in messages if m.type != "system"]
        lines, older = render_messages(conversation)
        previous, notes = previous_summary.strip(), []
        if older:
            # What the prompt cannot hold is folded offline into the previous summary,
            # so nothing the node is about to delete goes unread.
            previous, _ = merge_facts(
                previous, conversation[:older], self.max_summary_tokens, self.token_counter
            )
            notes.append(f"{older} older message(s) folded in offline (prompt full)")
        elif self._over(previous):
            previous = self.compress(previous)
            notes.append("previous summary re-compressed offline")
        # Within budget a summary is never cut; this only bounds odd token counters.
        previous = clip_middle(previous, max(2 * MAX_MESSAGE_CHARS, 8 * self.max_summary_tokens))
        shown = conversation[older:]
        source = "\n".join([previous, *(message_text(m) for m in shown)])
        prompt = summary_prompt(lines, previous, self.prompt, self._max_words)
        news: frozenset[str] = frozenset()
        if previous:
            news = frozenset(user_fact_terms(shown) - set(content_terms(previous)))
        return _Request(prompt, previous, source, notes, news, shown)

    def build_prompt(
        self, messages: Sequence[BaseMessage], previous_summary: str = ""
    ) -> list[BaseMessage]:
        """The summary model's input: instructions, then the fenced summary and messages.

        The previous summary is given whole (re-compressed offline first if over
        budget). Each message is clipped to a few thousand characters (head and
        tail); past the prompt's size, older messages are given as offline fact lines,
        and the oldest are folded offline into the previous summary.
        """
        return self._request(messages, previous_summary).prompt

    # -- one summary, whatever runs the calls -----------------------------------------------

    def _flow(self, messages: Sequence[BaseMessage], previous_summary: str | None) -> _Flow:
        """The whole summary step; it yields each model prompt and is sent the answer
        (or thrown the error). :meth:`summarize` and :meth:`asummarize` only run the calls.
        """
        start = time.perf_counter()
        messages, previous_summary = _inputs(messages, previous_summary)
        if not self.uses_model or not any(
            message_text(m).strip() for m in messages if m.type != "system"
        ):
            # Nothing to fold (no message, or none with text): no model call, whose
            # answer could only rewrite the previous summary with nothing new.
            return self._offline(messages, previous_summary, start)
        request = self._request(messages, previous_summary)
        try:
            raw = yield request.prompt
        except Exception as exc:
            if _passes_through(exc):
                raise
            raise SummarizationError(f"{type(exc).__name__}: {exc}") from exc
        # Checked and kept without a preamble, fence, label or closing offer, nor a last
        # line cut by the output limit.
        text, problem = _uncut(raw, request.source)
        if problem is None:
            problem = _answer_problem(
                text,
                request.source,
                self.prompt,
                DATA_TAGS,
                request.previous,
                request.news,
                request.shown,
                # What the fallback keeps: a model is not held to more than that.
                lambda: merge_facts(
                    previous_summary, messages, self.max_summary_tokens, self.token_counter
                )[0],
            )
        if problem is not None:
            note = f"model summary rejected ({problem}); offline summary used"
            _log_rejection(problem)
            return self._offline(messages, previous_summary, start, [*request.notes, note])
        notes = list(request.notes)
        if not self._over(text):
            return self._result(text, "llm", messages, False, start, notes)
        try:
            raw = yield recompress_prompt(text, self._max_words)
        except Exception as exc:  # the first summary is real: compress it offline
            if _passes_through(exc):
                raise
            notes.append(f"re-compression call failed: {type(exc).__name__}")
        else:
            shorter, problem = _uncut(raw, text)
            if problem is None:
                problem = _answer_problem(shorter, text, RECOMPRESS_PROMPT, RECOMPRESS_TAGS)
            if problem is None and count_text_tokens(
                shorter, self.token_counter
            ) >= count_text_tokens(text, self.token_counter):
                # (what it was given, back: in its <summary> tags, or without them)
                problem = "the answer is no shorter"
            if problem is None:
                # Held to what the first answer was: true to the conversation, and keeping
                # the user's facts (as far as the offline re-compression below would).
                problem = gist_problem(
                    shorter, request.shown, request.previous, lambda: self.compress(text)
                )
            if problem is None:
                text = shorter
            else:
                notes.append(f"re-compression rejected ({problem})")
        if self._over(text):
            notes.append("offline re-compression")
            text = self.compress(text)
        return self._result(text, "llm", messages, True, start, notes)

    def summarize(
        self,
        messages: Sequence[BaseMessage],
        previous_summary: str | None = "",
        *,
        config: RunnableConfig | None = None,
    ) -> SummaryResult:
        """Fold ``messages`` into ``previous_summary``.

        Args:
            messages: Messages to absorb (system messages are ignored).
            previous_summary: The running summary so far (any text; re-compressed if
                over budget).
            config: The caller's run config; model calls inherit its callbacks and are
                tagged ``nostream``.

        Raises:
            SummarizationError: the model failed or timed out.
        """
        caller = self._caller()
        flow = self._flow(messages, previous_summary)
        reply = _Reply()
        while True:
            done, value = _advance(flow, reply)
            if done:
                return cast(SummaryResult, value)
            assert caller is not None  # only the model path yields prompts
            try:
                reply = _Reply(caller.invoke(value, config))
            except Exception as exc:
                reply = _Reply(error=exc)

    async def asummarize(
        self,
        messages: Sequence[BaseMessage],
        previous_summary: str | None = "",
        *,
        config: RunnableConfig | None = None,
    ) -> SummaryResult:
        """Async twin of :meth:`summarize`.

        The offline work (fact extraction, re-compression, prompt building) runs in a
        worker thread, so the event loop is never blocked by it.
        """
        caller = self._caller()
        flow = self._flow(messages, previous_summary)
        reply = _Reply()
        while True:
            done, value = await asyncio.to_thread(_advance, flow, reply)
            if done:
                return cast(SummaryResult, value)
            assert caller is not None
            try:
                reply = _Reply(await caller.ainvoke(value, config))
            except Exception as exc:
                reply = _Reply(error=exc)

    # -- LangChain SummarizationMiddleware ----------------------------------------------------

    def as_langchain_summarizer(self) -> RunnableLambda[list[AnyMessage], str]:
        """This summarizer in the shape ``SummarizationMiddleware(summarizer=...)`` takes.

        The middleware hands over the messages to summarize, its own earlier summary
        message (``lc_source == "summarization"``) among them; that message is read back
        as the previous summary so the new one extends it instead of summarizing a
        summary. Sync and async. Raises :class:`SummarizationError` on model failure.
        (:class:`RunningSummaryMiddleware` also collects each :class:`SummaryResult`
        for ``summary_metadata``.)
        """
        return langchain_summarizer(self.summarize, self.asummarize)


def summarize_messages(
    messages: Sequence[BaseMessage],
    previous_summary: str | None = "",
    *,
    model: BaseChatModel | str | None = None,
    max_summary_tokens: int = 200,
    token_counter: TokenCounter | None = None,
    config: RunnableConfig | None = None,
) -> SummaryResult:
    """Fold ``messages`` into ``previous_summary`` once (offline when ``model`` is ``None``).

    A shortcut for ``RunningSummarizer(model, ...).summarize(...)``; build the
    summarizer once when you call it repeatedly (a model string is resolved once).
    Pass your model's ``token_counter`` when the text is CJK or otherwise dense.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> result = summarize_messages([HumanMessage("I avoid mushrooms.")],
        ...                             "- User: allergic to nuts.")
        >>> print(result.summary)
        - User: allergic to nuts.
        - User: I avoid mushrooms.
    """
    summarizer = RunningSummarizer(
        model, max_summary_tokens=max_summary_tokens, token_counter=token_counter
    )
    return summarizer.summarize(messages, previous_summary, config=config)


async def asummarize_messages(
    messages: Sequence[BaseMessage],
    previous_summary: str | None = "",
    *,
    model: BaseChatModel | str | None = None,
    max_summary_tokens: int = 200,
    token_counter: TokenCounter | None = None,
    config: RunnableConfig | None = None,
) -> SummaryResult:
    """Async twin of :func:`summarize_messages`."""
    summarizer = RunningSummarizer(
        model, max_summary_tokens=max_summary_tokens, token_counter=token_counter
    )
    return await summarizer.asummarize(messages, previous_summary, config=config)
