"""The graph node every face builds: native sync and async paths, callable directly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain_core.runnables import RunnableConfig, RunnableLambda

__all__ = ["LibrarianNode", "StateUpdate"]

StateUpdate = dict[str, Any]


class LibrarianNode(RunnableLambda[Any, StateUpdate]):
    """A graph node with native sync and async paths that can also be called directly.

    ``node(state, config)`` runs the sync path; ``await node.ainvoke(state, config)``
    and LangGraph's ``ainvoke``/``astream`` run the async one. Build it as
    ``LibrarianNode(run, afunc=arun, name=...)`` where both functions take
    ``(state, config)``: the parameter must be named ``config``, LangGraph passes the
    ``RunnableConfig`` by name.
    """

    # The state is typed ``Any``: a node runs on any graph state holding ``messages``
    # (the user's TypedDict, dataclass or model), and LangGraph's ``add_node`` only
    # types a node whose input is a TypedDict, a dataclass or a model (a plain
    # ``dict[str, Any]`` made every ``add_node`` of ours a mypy error in user code).

    def __call__(self, state: Any, config: RunnableConfig | None = None) -> StateUpdate:
        func = cast(Callable[[Any, RunnableConfig | None], StateUpdate], self.func)
        return func(state, config)
