"""The running summarizer: previous summary + new messages -> a bounded new summary."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_librarian._calls import ModelCaller
from langgraph_librarian._messages import message_text, output_text
from langgraph_librarian.errors import LibrarianError
from langgraph_librarian.memory._facts import compress_lines, merge_facts, parse_summary
from langgraph_librarian.memory._prompts import (
    DEFAULT_RUNNING_SUMMARY_PROMPT,
    recompress_prompt,
    summary_prompt,
)
from langgraph_librarian.tokens import TokenCounter, count_text_tokens

__all__ = [
    "DEFAULT_RUNNING_SUMMARY_PROMPT",
    "RunningSummarizer",
    "SummarizationError",
    "SummaryResult",
    "asummarize_messages",
    "summarize_messages",
]

logger = logging.getLogger(__name__)

_SUMMARY_PREFIX = "Here is a summary of the conversation to date:"
"""Prefix of the summary message LangChain's ``SummarizationMiddleware`` writes."""


class SummarizationError(LibrarianError):
    """The summary model failed, timed out or answered nothing usable."""


@dataclass
class SummaryResult:
    """A new running summary and how it was made.

    Attributes:
        summary: The summary text, within the summarizer's ``max_summary_tokens``.
        method: ``"extractive"`` (offline) or ``"llm"``.
        summarized_count: Messages folded in by this call.
        summary_tokens: Token count of ``summary``.
        recompressed: True when the result had to be shortened to fit the budget.
        latency_ms: Wall time of the call.
        notes: Non-fatal events (e.g. a failed re-compression call).
    """

    summary: str
    method: Literal["extractive", "llm"]
    summarized_count: int
    summary_tokens: int
    recompressed: bool = False
    latency_ms: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_metadata(self) -> dict[str, Any]:
        """JSON-safe description for graph state (``summary_metadata``)."""
        return {
            "summary_method": self.method,
            "summarized_count": self.summarized_count,
            "summary_tokens": self.summary_tokens,
            "summary_recompressed": self.recompressed,
            "summary_latency_ms": round(self.latency_ms, 3),
            **({"summary_notes": list(self.notes)} if self.notes else {}),
        }


def _failure(exc: Exception) -> SummarizationError:
    return SummarizationError(f"{type(exc).__name__}: {exc}")


def _resolve_model(model: BaseChatModel | str) -> BaseChatModel:
    if isinstance(model, BaseChatModel):
        return model
    from langchain.chat_models import init_chat_model

    try:
        resolved = init_chat_model(model)
    except Exception as exc:
        raise ValueError(f"cannot create the summary model from {model!r}: {exc}") from exc
    if not isinstance(resolved, BaseChatModel):
        raise ValueError(f"{model!r} did not produce a chat model")
    return resolved


class RunningSummarizer:
    """Folds messages into a running summary that never outgrows its budget.

    With no model, the offline engine writes the summary (one extractive fact line
    per message, least important lines dropped first when over budget). With a chat
    model (an object or a ``"provider:model"`` string for ``init_chat_model``) the
    model extends the previous summary; an answer over budget is re-compressed by a
    second call, then offline if still too long. A failed or timed-out model call
    raises :class:`SummarizationError`: callers keep their messages and old summary.

    Args:
        model: Chat model for LLM summaries; ``None``: offline.
        max_summary_tokens: Budget of the summary.
        prompt: Replaces :data:`DEFAULT_RUNNING_SUMMARY_PROMPT` (``{max_words}`` is filled).
        timeout: Seconds before one model call is abandoned.
        max_retries: Extra attempts after a failed model call.
        retry_backoff: Seconds before the first retry (doubles).
        token_counter: Your model's message token counter; default approximate.

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
        max_summary_tokens: int = 400,
        prompt: str | None = None,
        timeout: float | None = 60.0,
        max_retries: int = 1,
        retry_backoff: float = 0.5,
        token_counter: TokenCounter | None = None,
    ) -> None:
        if max_summary_tokens < 16:
            raise ValueError("max_summary_tokens must be >= 16")
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be > 0 or None")
        if max_retries < 0 or retry_backoff < 0:
            raise ValueError("max_retries and retry_backoff must be >= 0")
        self._model_spec = model
        self._model: BaseChatModel | None = None
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
        return self._model_spec is not None

    @property
    def model(self) -> BaseChatModel | None:
        """The summary chat model (created on first use from a string), or ``None``."""
        if self._model is None and self._model_spec is not None:
            self._model = _resolve_model(self._model_spec)
        return self._model

    # -- offline ----------------------------------------------------------------------

    def compress(self, summary: str) -> str:
        """``summary`` re-compressed offline to ``max_summary_tokens`` (unchanged if it fits)."""
        if count_text_tokens(summary, self.token_counter) <= self.max_summary_tokens:
            return summary
        text, _ = compress_lines(
            parse_summary(summary), self.max_summary_tokens, self.token_counter
        )
        return text

    def _extractive(
        self, messages: Sequence[BaseMessage], previous: str, start: float
    ) -> SummaryResult:
        text, changed = merge_facts(previous, messages, self.max_summary_tokens, self.token_counter)
        return self._result(text, "extractive", messages, changed, start)

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
            summarized_count=len(messages),
            summary_tokens=count_text_tokens(text, self.token_counter),
            recompressed=recompressed,
            latency_ms=(time.perf_counter() - start) * 1000,
            notes=notes or [],
        )

    # -- model prompts ---------------------------------------------------------------------

    @property
    def _max_words(self) -> int:
        return max(10, int(self.max_summary_tokens * 0.7))

    def build_prompt(
        self, messages: Sequence[BaseMessage], previous_summary: str = ""
    ) -> list[BaseMessage]:
        """The summary model's input: instructions, then the fenced summary and messages.

        Each message is clipped to a few thousand characters (head and tail); when the
        whole is still too long, older messages are given as offline fact lines.
        """
        return summary_prompt(messages, previous_summary, self.prompt, self._max_words)

    def _recompress_prompt(self, summary: str) -> list[BaseMessage]:
        return recompress_prompt(summary, self._max_words)

    def _clean(self, raw: object) -> str:
        text = output_text(raw).strip()
        if not text:
            raise SummarizationError("the summary model answered with an empty summary")
        return text

    def _fit(self, text: str, notes: list[str]) -> tuple[str, bool]:
        if count_text_tokens(text, self.token_counter) <= self.max_summary_tokens:
            return text, False
        notes.append("offline re-compression")
        return self.compress(text), True

    def _over(self, text: str) -> bool:
        return count_text_tokens(text, self.token_counter) > self.max_summary_tokens

    # -- public entry points -----------------------------------------------------------------

    def summarize(
        self,
        messages: Sequence[BaseMessage],
        previous_summary: str = "",
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
            SummarizationError: the model failed, timed out or answered nothing.
        """
        start = time.perf_counter()
        caller = self._caller()
        if caller is None:
            return self._extractive(messages, previous_summary, start)
        prompt = self.build_prompt(messages, previous_summary)
        try:
            text = self._clean(caller.invoke(prompt, config))
        except SummarizationError:
            raise
        except Exception as exc:
            raise _failure(exc) from exc
        notes: list[str] = []
        if not self._over(text):
            return self._result(text, "llm", messages, False, start)
        try:
            text = self._clean(caller.invoke(self._recompress_prompt(text), config))
        except Exception as exc:  # the first summary is real: compress it offline
            notes.append(f"re-compression call failed: {type(exc).__name__}")
        text, _ = self._fit(text, notes)
        return self._result(text, "llm", messages, True, start, notes)

    async def asummarize(
        self,
        messages: Sequence[BaseMessage],
        previous_summary: str = "",
        *,
        config: RunnableConfig | None = None,
    ) -> SummaryResult:
        """Async twin of :meth:`summarize`."""
        start = time.perf_counter()
        caller = self._caller()
        if caller is None:
            return self._extractive(messages, previous_summary, start)
        prompt = self.build_prompt(messages, previous_summary)
        try:
            text = self._clean(await caller.ainvoke(prompt, config))
        except SummarizationError:
            raise
        except Exception as exc:
            raise _failure(exc) from exc
        notes: list[str] = []
        if not self._over(text):
            return self._result(text, "llm", messages, False, start)
        try:
            text = self._clean(await caller.ainvoke(self._recompress_prompt(text), config))
        except Exception as exc:
            notes.append(f"re-compression call failed: {type(exc).__name__}")
        text, _ = self._fit(text, notes)
        return self._result(text, "llm", messages, True, start, notes)

    def _caller(self) -> ModelCaller | None:
        model = self.model
        if model is None:
            return None
        if self._summary_caller is None:
            self._summary_caller = ModelCaller(
                model,
                step="running_summary",
                timeout=self.timeout,
                retries=self.max_retries,
                backoff=self.retry_backoff,
            )
        return self._summary_caller

    # -- LangChain SummarizationMiddleware ----------------------------------------------------

    def as_langchain_summarizer(self) -> RunnableLambda[list[AnyMessage], str]:
        """This summarizer in the shape ``SummarizationMiddleware(summarizer=...)`` takes.

        The middleware hands over the messages to summarize, its own earlier summary
        message (``lc_source == "summarization"``) among them; that message is read back
        as the previous summary so the new one extends it instead of summarizing a
        summary. Sync and async. Raises :class:`SummarizationError` on model failure.
        """

        def split(messages: list[AnyMessage]) -> tuple[list[BaseMessage], str]:
            previous: list[str] = []
            rest: list[BaseMessage] = []
            for message in messages:
                if (message.additional_kwargs or {}).get("lc_source") == "summarization":
                    text = message_text(message)
                    previous.append(text.removeprefix(_SUMMARY_PREFIX).strip())
                else:
                    rest.append(message)
            return rest, "\n".join(previous)

        def run(messages: list[AnyMessage], config: RunnableConfig) -> str:
            rest, previous = split(messages)
            return self.summarize(rest, previous, config=config).summary

        async def arun(messages: list[AnyMessage], config: RunnableConfig) -> str:
            rest, previous = split(messages)
            return (await self.asummarize(rest, previous, config=config)).summary

        return RunnableLambda(run, afunc=arun, name="running_summary")


def summarize_messages(
    messages: Sequence[BaseMessage],
    previous_summary: str = "",
    *,
    model: BaseChatModel | str | None = None,
    max_summary_tokens: int = 400,
    config: RunnableConfig | None = None,
) -> SummaryResult:
    """Fold ``messages`` into ``previous_summary`` once (offline when ``model`` is ``None``).

    A shortcut for ``RunningSummarizer(model, ...).summarize(...)``; build the
    summarizer once when you call it repeatedly (a model string is resolved once).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> result = summarize_messages([HumanMessage("I avoid mushrooms.")],
        ...                             "- User: allergic to nuts.")
        >>> print(result.summary)
        - User: allergic to nuts.
        - User: I avoid mushrooms.
    """
    summarizer = RunningSummarizer(model, max_summary_tokens=max_summary_tokens)
    return summarizer.summarize(messages, previous_summary, config=config)


async def asummarize_messages(
    messages: Sequence[BaseMessage],
    previous_summary: str = "",
    *,
    model: BaseChatModel | str | None = None,
    max_summary_tokens: int = 400,
    config: RunnableConfig | None = None,
) -> SummaryResult:
    """Async twin of :func:`summarize_messages`."""
    summarizer = RunningSummarizer(model, max_summary_tokens=max_summary_tokens)
    return await summarizer.asummarize(messages, previous_summary, config=config)
