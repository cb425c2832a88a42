"""The run a face is called in: its config, runtime, context and thread id.

LangGraph hands these over in different places depending on the face: a graph node gets
the ``RunnableConfig`` as an argument, middleware gets a ``Runtime`` (with
``execution_info``), a tool gets a ``ToolRuntime`` (with ``config``), and code called
outside a graph run has none of them. These functions look in every place, in one order.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import get_runtime

from langgraph_librarian.config import session_id_from_config, thread_text

__all__ = ["current_run_config", "current_runtime", "run_context", "thread_id"]


def current_run_config() -> RunnableConfig | None:
    """The ``RunnableConfig`` of the LangGraph run we are in, or ``None`` outside one."""
    try:
        return get_config()
    except RuntimeError:  # called outside a LangGraph run
        return None


def current_runtime() -> Any:
    """The LangGraph ``Runtime`` of the run we are in, or ``None`` outside one."""
    try:
        return get_runtime()
    except RuntimeError:  # called directly, outside a graph run
        return None


def run_context(runtime: Any) -> Any:
    """The run's ``context`` (``graph.invoke(..., context=...)``), or ``None``."""
    return getattr(runtime, "context", None)


def thread_id(config: RunnableConfig | None = None, runtime: Any = None) -> str | None:
    """The thread the run belongs to; ``None`` when there is none (or it is empty).

    Looks, in order, at the runtime's ``execution_info.thread_id`` (middleware), the
    runtime's own ``config`` (tools), the ``config`` given (graph nodes) and, failing
    those, the config of the LangGraph run we are in. ``configurable["session_id"]`` is
    accepted where ``thread_id`` is absent.
    """
    info = getattr(runtime, "execution_info", None)
    found = thread_text(getattr(info, "thread_id", None))
    if found:
        return found
    for candidate in (getattr(runtime, "config", None), config):
        found = session_id_from_config(candidate)
        if found:
            return found
    if config is None:
        return session_id_from_config(current_run_config())
    return None
