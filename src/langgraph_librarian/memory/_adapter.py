"""A running summarizer in the shape LangChain's ``SummarizationMiddleware`` takes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian.memory._result import SummaryResult

__all__ = ["captured_results", "langchain_summarizer"]

_LANGCHAIN_SUMMARY_PREFIX = "Here is a summary of the conversation to date:"
"""What LangChain's ``SummarizationMiddleware`` writes before a summary. Only read back
from summary messages that do not carry ``additional_kwargs["running_summary"]``."""

Summarize = Callable[..., SummaryResult]
ASummarize = Callable[..., Awaitable[SummaryResult]]

_CAPTURED: ContextVar[list[SummaryResult] | None] = ContextVar(
    "langgraph_librarian_summary_results", default=None
)


@contextmanager
def captured_results() -> Iterator[list[SummaryResult]]:
    """Collect the results of :meth:`RunningSummarizer.as_langchain_summarizer` calls
    made in this context (LangChain's middleware only passes the summary text on)."""
    results: list[SummaryResult] = []
    token = _CAPTURED.set(results)
    try:
        yield results
    finally:
        _CAPTURED.reset(token)


def split_previous_summary(messages: Sequence[AnyMessage]) -> tuple[list[BaseMessage], str]:
    """The messages to fold in, and the previous summary read back from summary messages."""
    previous: list[str] = []
    rest: list[BaseMessage] = []
    for message in messages:
        extra = message.additional_kwargs or {}
        if extra.get("lc_source") != "summarization":
            rest.append(message)
        elif isinstance(extra.get("running_summary"), str):
            previous.append(extra["running_summary"])
        else:
            text = message_text(message)
            previous.append(text.removeprefix(_LANGCHAIN_SUMMARY_PREFIX).strip())
    return rest, "\n".join(previous)


def _record(result: SummaryResult) -> str:
    captured = _CAPTURED.get()
    if captured is not None:
        captured.append(result)
    return result.summary


def langchain_summarizer(
    summarize: Summarize, asummarize: ASummarize
) -> RunnableLambda[list[AnyMessage], str]:
    """A Runnable taking the middleware's messages and returning the summary text."""

    def run(messages: list[AnyMessage], config: RunnableConfig) -> str:
        rest, previous = split_previous_summary(messages)
        return _record(summarize(rest, previous, config=config))

    async def arun(messages: list[AnyMessage], config: RunnableConfig) -> str:
        rest, previous = split_previous_summary(messages)
        return _record(await asummarize(rest, previous, config=config))

    return RunnableLambda(run, afunc=arun, name="running_summary")
