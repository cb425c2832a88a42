"""Running summary for ``create_agent``: LangChain's ``SummarizationMiddleware``, completed.

``SummarizationMiddleware`` already decides when to summarize, cuts without splitting
tool exchanges, and replaces the old messages by a summary message. What it lacks,
added here and nothing more:

- an offline summarizer (it needs a model or a function), and a summary that stays
  within a budget and extends the previous one;
- the current question stays: its ``before_model`` also runs between tool calls, and
  its cut can fall after the question of a long agentic turn; here the question is
  kept (after the summary) and only the turn's earlier tool exchanges are folded in;
- failing open: it lets a failed summary call fail the agent's turn; here the turn
  goes on with the history untouched, ``summary_metadata`` records the error and the
  next attempt waits for a few more messages.

LangChain-style arguments (a callable ``summarizer``, ``summary_prompt``,
``trim_tokens_to_summarize``...) are passed through: LangChain then writes the summary,
and the question, fail-open and metadata additions still apply.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NotRequired, cast

from langchain.agents.middleware import AgentState, SummarizationMiddleware
from langchain.agents.middleware.summarization import ContextSize, TokenCounter, TriggerClause
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, RemoveMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from langgraph_librarian._engine.failures import fails_open
from langgraph_librarian.memory._adapter import captured_results
from langgraph_librarian.memory._graph import SummarizerLike, resolve_summarizer
from langgraph_librarian.memory._nodes import failure_metadata, waiting_after_failure
from langgraph_librarian.memory._result import SummarizationError, SummaryResult
from langgraph_librarian.memory._summarizer import RunningSummarizer

__all__ = ["RunningSummaryMiddleware", "RunningSummaryMiddlewareState"]

logger = logging.getLogger("langgraph_librarian.memory")

Trigger = ContextSize | TriggerClause | list[ContextSize | TriggerClause]


class RunningSummaryMiddlewareState(AgentState[Any]):
    """Agent state plus what the latest summarization did (not reset on other turns)."""

    summary_metadata: NotRequired[dict[str, Any]]


def _is_summary(message: BaseMessage) -> bool:
    return (message.additional_kwargs or {}).get("lc_source") == "summarization"


def _check_written(update: dict[str, Any] | None) -> None:
    """Raise when the summary about to replace the old messages is blank (a summarizer
    function or a ``summary_prompt`` model that answered nothing): it would delete the
    previous summary and every folded message, keeping nothing of them."""
    for message in (update or {}).get("messages") or []:
        if (
            _is_summary(message)
            and not str(message.additional_kwargs.get("running_summary", "x")).strip()
        ):
            raise SummarizationError("the summarizer returned an empty summary")


def _is_question(message: BaseMessage) -> bool:
    return message.type == "human" and not _is_summary(message)


class RunningSummaryMiddleware(SummarizationMiddleware[Any, Any]):
    """``SummarizationMiddleware`` with an offline default, a bounded summary, fail-open.

    The summary is written by a :class:`~langgraph_librarian.memory.RunningSummarizer`:
    offline (extractive) by default, or by the chat model you pass as ``summarizer``.
    Each new summary extends the previous summary message instead of re-summarizing it,
    and never exceeds the summarizer's ``max_summary_tokens``. The current question is
    never folded into the summary. A failing summarizer leaves the messages alone and
    the agent answers anyway (a summary model that cannot be created raises).

    Stack it before :class:`~langgraph_librarian.LibrarianMiddleware`:
    summarization rewrites the persisted history in ``before_model``; the Librarian
    then curates what the model sees of it in ``wrap_model_call`` and indexes it in
    ``after_agent``.

    Args:
        model: The agent's chat model (object or ``"provider:model"``): its profile
            and token counting drive ``trigger``/``keep``; it is not called for summaries
            unless LangChain writes them (``summary_prompt`` given).
        summarizer: ``None`` (offline), a chat model or ``"provider:model"``, or a
            configured ``RunningSummarizer``; or, LangChain-style, any callable or
            Runnable taking the messages and returning the summary text.
        trigger: When to summarize (LangChain's forms, e.g. ``("messages", 50)``).
        keep: How much recent history stays verbatim (e.g. ``("messages", 20)``).
        token_counter: Counts message tokens for the thresholds, and for the running
            summary's budget (pass your model's counter for CJK text).
        **kwargs: Passed to ``SummarizationMiddleware`` (``summary_prompt``,
            ``trim_tokens_to_summarize``...). With ``summary_prompt`` LangChain prompts
            the ``summarizer`` model (or ``model``) itself.

    Example:
        >>> from langchain.agents import create_agent
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> model = GenericFakeChatModel(messages=iter([AIMessage("Noted.")] * 10))
        >>> agent = create_agent(
        ...     model,
        ...     middleware=[RunningSummaryMiddleware(model, trigger=("messages", 4),
        ...                                          keep=("messages", 2))],
        ... )
        >>> history = [("user", "I'm allergic to nuts."), ("ai", "Noted."),
        ...            ("user", "Lunch?"), ("ai", "Soup."), ("user", "Dessert?")]
        >>> state = agent.invoke({"messages": history})
        >>> print(state["messages"][0].content.splitlines()[-1])
        - User: Lunch?
        >>> [m.content for m in state["messages"][1:]]
        ['Soup.', 'Dessert?', 'Noted.']
        >>> state["summary_metadata"]["summarized_count"]
        3
    """

    state_schema = RunningSummaryMiddlewareState

    def __init__(
        self,
        model: str | BaseChatModel,
        *,
        summarizer: RunningSummarizer
        | BaseChatModel
        | str
        | Runnable[Any, Any]
        | Callable[..., Any]
        | None = None,
        trigger: Trigger = ("messages", 50),
        keep: ContextSize = ("messages", 20),
        token_counter: TokenCounter = count_tokens_approximately,
        **kwargs: Any,
    ) -> None:
        # The running summarizer writes unless LangChain was asked to (its own prompt,
        # or a summarizer function of yours).
        ours = isinstance(summarizer, RunningSummarizer) or (
            "summary_prompt" not in kwargs
            and (summarizer is None or isinstance(summarizer, str | BaseChatModel))
        )
        self.running_summarizer: RunningSummarizer | None = None
        handed: Any = summarizer
        if ours:
            if "summary_prompt" in kwargs:
                raise ValueError(
                    "summary_prompt is LangChain's prompt; give RunningSummarizer(prompt=...) "
                    "to change the running summarizer's instructions"
                )
            counter = None if token_counter is count_tokens_approximately else token_counter
            self.running_summarizer = resolve_summarizer(cast(SummarizerLike, summarizer), counter)
            handed = self.running_summarizer.as_langchain_summarizer()
            # The running summarizer bounds its own prompt and must see the previous
            # summary message, which trimming the batch would drop first.
            kwargs["trim_tokens_to_summarize"] = None
        elif not (
            summarizer is None or isinstance(summarizer, str | Runnable) or callable(summarizer)
        ):
            raise TypeError(
                "summarizer must be a RunningSummarizer, a chat model, a 'provider:model' "
                f"string, a callable or a Runnable, not {type(summarizer).__name__}"
            )
        super().__init__(
            model,
            trigger=trigger,
            keep=keep,
            token_counter=token_counter,
            summarizer=handed,
            **kwargs,
        )

    # -- LangChain's cut, with the question kept ---------------------------------------------

    @staticmethod
    def _partition_messages(
        conversation_messages: list[AnyMessage], cutoff_index: int
    ) -> tuple[list[AnyMessage], list[AnyMessage]]:
        """LangChain's split, except that the current question is never summarized.

        ``before_model`` also runs between the tool calls of one turn; when the cut
        falls after the turn's question, the question moves to the kept part (it
        will follow the summary) and only the exchanges before the cut are folded in.
        """
        old = list(conversation_messages[:cutoff_index])
        kept = list(conversation_messages[cutoff_index:])
        if not any(_is_question(m) for m in kept):
            at = next((i for i in range(len(old) - 1, -1, -1) if _is_question(old[i])), None)
            if at is not None:
                kept.insert(0, old.pop(at))
        return old, kept

    def _determine_cutoff_index(self, messages: list[AnyMessage]) -> int:
        """LangChain's cutoff, or 0 (no summary this call) when the old part holds no
        conversation message once the question is kept: LangChain would write "No
        previous conversation history." as the summary, or re-summarize the previous
        summary alone (a model call before every model call of a long turn)."""
        cutoff = super()._determine_cutoff_index(messages)
        if cutoff > 0:
            old, _ = self._partition_messages(list(messages), cutoff)
            if all(_is_summary(m) for m in old):
                return 0
        return cutoff

    @staticmethod
    def _build_new_messages(summary: str) -> list[HumanMessage]:
        # The raw summary travels with the message, so the next summary extends it
        # without parsing LangChain's wording around it.
        messages = SummarizationMiddleware._build_new_messages(summary)
        for message in messages:
            message.additional_kwargs["running_summary"] = summary
        return messages

    # -- metadata, fail-open, cool-down ------------------------------------------------------

    @staticmethod
    def _described(
        state: Any, update: dict[str, Any] | None, results: list[SummaryResult]
    ) -> dict[str, Any] | None:
        if update is None:
            return None
        written = [m for m in update.get("messages") or [] if not isinstance(m, RemoveMessage)]
        kept = [m for m in written if not _is_summary(m)]
        kept_ids = {m.id for m in kept}
        before = list(state.get("messages") or [])
        removed = [m for m in before if m.id not in kept_ids]
        positions = [i for i, m in enumerate(before) if m.id in kept_ids]
        metadata: dict[str, Any] = results[-1].to_metadata() if results else {}
        metadata.update(
            summarized_count=sum(1 for m in removed if not _is_summary(m)),
            removed_count=len(removed),
            kept_count=len(kept),
            turn_aligned=positions == list(range(positions[0], positions[0] + len(positions)))
            if positions
            else True,
        )
        return {**update, "summary_metadata": metadata}

    @staticmethod
    def _failed(state: Any, exc: Exception) -> dict[str, Any]:
        logger.warning("running summary failed; history left as it was", exc_info=True)
        count = len(state.get("messages") or [])
        return {"summary_metadata": failure_metadata(exc, count, state.get("summary_metadata"))}

    @staticmethod
    def _waiting(state: Any) -> bool:
        return waiting_after_failure(
            state.get("summary_metadata"), len(state.get("messages") or [])
        )

    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self._waiting(state):
            return None
        with captured_results() as results:
            try:
                update = super().before_model(state, runtime)
                _check_written(update)
            except Exception as exc:
                if not fails_open(exc):
                    raise
                return self._failed(state, exc)
        return self._described(state, update, results)

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self._waiting(state):
            return None
        with captured_results() as results:
            try:
                update = await super().abefore_model(state, runtime)
                _check_written(update)
            except Exception as exc:
                if not fails_open(exc):
                    raise
                return self._failed(state, exc)
        return self._described(state, update, results)
