"""Running summary for ``create_agent``: LangChain's ``SummarizationMiddleware``, completed.

``SummarizationMiddleware`` already decides when to summarize, cuts without splitting
tool exchanges, and replaces the old messages by a summary message. What it lacks,
added here and nothing more:

- an offline summarizer (it needs a model or a function), and a summary that stays
  within a budget (an LLM re-summarizing its own summary can grow it);
- failing open: it lets a failed summary call fail the agent's turn; here the turn
  goes on with the history untouched and ``summary_metadata`` records the error.
"""

from __future__ import annotations

import logging
from typing import Any, NotRequired

from langchain.agents.middleware import AgentState, SummarizationMiddleware
from langchain.agents.middleware.summarization import ContextSize, TokenCounter, TriggerClause
from langchain_core.language_models import BaseChatModel
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.runtime import Runtime

from langgraph_librarian.memory._graph import SummarizerLike, resolve_summarizer

__all__ = ["RunningSummaryMiddleware", "RunningSummaryMiddlewareState"]

logger = logging.getLogger(__name__)

Trigger = ContextSize | TriggerClause | list[ContextSize | TriggerClause]


class RunningSummaryMiddlewareState(AgentState[Any]):
    """Agent state plus what the last summarization did."""

    summary_metadata: NotRequired[dict[str, Any]]


class RunningSummaryMiddleware(SummarizationMiddleware[Any, Any]):
    """``SummarizationMiddleware`` with an offline default, a bounded summary, fail-open.

    The summary is written by a :class:`~langgraph_librarian.memory.RunningSummarizer`:
    offline (extractive) by default, or by the chat model you pass as ``summarizer``.
    Each new summary extends the previous summary message instead of re-summarizing it,
    and never exceeds the summarizer's ``max_summary_tokens``. A failing summarizer
    leaves the messages alone and the agent answers anyway.

    Stack it before :class:`~langgraph_librarian.LibrarianMiddleware`:
    summarization rewrites the persisted history in ``before_model``; the Librarian
    then curates what the model sees of it in ``wrap_model_call`` and indexes it in
    ``after_agent``.

    Args:
        model: The agent's chat model (object or ``"provider:model"``): its profile
            and token counting drive ``trigger``/``keep``; it is not called for summaries.
        summarizer: ``None`` (offline), a chat model or ``"provider:model"``, or a
            configured ``RunningSummarizer``.
        trigger: When to summarize (LangChain's forms, e.g. ``("messages", 50)``).
        keep: How much recent history stays verbatim (e.g. ``("messages", 20)``).
        token_counter: Counts message tokens for the thresholds.

    Example:
        ```python
        from langchain.agents import create_agent
        from langgraph_librarian import LibrarianMiddleware

        agent = create_agent(
            model,
            tools=tools,
            middleware=[RunningSummaryMiddleware(model, trigger=("messages", 40)),
                        LibrarianMiddleware()],
            checkpointer=checkpointer,
        )
        ```
    """

    state_schema = RunningSummaryMiddlewareState

    def __init__(
        self,
        model: str | BaseChatModel,
        *,
        summarizer: SummarizerLike = None,
        trigger: Trigger = ("messages", 50),
        keep: ContextSize = ("messages", 20),
        token_counter: TokenCounter = count_tokens_approximately,
    ) -> None:
        self.running_summarizer = resolve_summarizer(summarizer)
        super().__init__(
            model,
            trigger=trigger,
            keep=keep,
            token_counter=token_counter,
            # The running summarizer bounds its own prompt and must see the previous
            # summary message, which trimming the batch would drop first.
            trim_tokens_to_summarize=None,
            summarizer=self.running_summarizer.as_langchain_summarizer(),
        )

    @staticmethod
    def _described(state: Any, update: dict[str, Any] | None) -> dict[str, Any] | None:
        if update is None:
            return None
        before = len(state.get("messages") or [])
        # The update is [REMOVE_ALL, summary message, *kept messages].
        kept = max(0, len(update.get("messages") or []) - 2)
        return {
            **update,
            "summary_metadata": {"summarized_count": before - kept, "kept_count": kept},
        }

    @staticmethod
    def _failed(exc: Exception) -> dict[str, Any]:
        logger.warning("running summary failed; history left as it was", exc_info=True)
        return {
            "summary_metadata": {
                "summarized_count": 0,
                "summary_error": f"{type(exc).__name__}: {exc}"[:500],
            }
        }

    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        try:
            return self._described(state, super().before_model(state, runtime))
        except Exception as exc:
            return self._failed(exc)

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        try:
            return self._described(state, await super().abefore_model(state, runtime))
        except Exception as exc:
            return self._failed(exc)
