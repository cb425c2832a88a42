"""The one seam through which the running summarizer calls its model.

It has the interface of the library's shared model caller (``invoke(value, parent)``
and ``ainvoke``): the run config is built in the calling thread with
:func:`~langgraph_librarian._calls.internal_config` (the user's callbacks, a
``nostream`` tag), each attempt is bounded by a timeout and failures are retried with
backoff. When the shared caller changes, only :func:`make_caller` follows it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig

from langgraph_librarian._calls import acall_with_retries, call_with_retries, internal_config

__all__ = ["SummaryCaller", "make_caller"]

STEP = "running_summary"


class SummaryCaller:
    """Calls ``runnable`` with a per-attempt timeout and retries (sync and async)."""

    def __init__(
        self, runnable: Runnable[Any, Any], *, timeout: float | None, retries: int, backoff: float
    ) -> None:
        self.runnable = runnable
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    def invoke(self, value: Any, parent: RunnableConfig | None = None) -> Any:
        config = internal_config(STEP, parent)
        return call_with_retries(
            lambda: self.runnable.invoke(value, config),
            timeout=self.timeout,
            retries=self.retries,
            backoff=self.backoff,
        )

    async def ainvoke(self, value: Any, parent: RunnableConfig | None = None) -> Any:
        config = internal_config(STEP, parent)
        return await acall_with_retries(
            lambda: self.runnable.ainvoke(value, config),
            timeout=self.timeout,
            retries=self.retries,
            backoff=self.backoff,
        )


def make_caller(
    runnable: Runnable[Any, Any], *, timeout: float | None, retries: int, backoff: float
) -> SummaryCaller:
    """The caller the summarizer uses for ``runnable``."""
    return SummaryCaller(runnable, timeout=timeout, retries=retries, backoff=backoff)
