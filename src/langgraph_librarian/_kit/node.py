"""The graph node every face builds: native sync and async paths, callable directly."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, cast

from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_librarian.config import LibrarianConfig

__all__ = ["LibrarianNode", "StateUpdate", "run_config"]

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

    def __call__(
        self, state: Any, config: RunnableConfig | LibrarianConfig | None = None
    ) -> StateUpdate:
        func = cast(Callable[[Any, RunnableConfig | None], StateUpdate], self.func)
        return func(state, run_config(config))

    def invoke(
        self, input: Any, config: RunnableConfig | LibrarianConfig | None = None, **kwargs: Any
    ) -> StateUpdate:
        return super().invoke(input, run_config(config), **kwargs)

    async def ainvoke(
        self, input: Any, config: RunnableConfig | LibrarianConfig | None = None, **kwargs: Any
    ) -> StateUpdate:
        return await super().ainvoke(input, run_config(config), **kwargs)

    def stream(
        self, input: Any, config: RunnableConfig | LibrarianConfig | None = None, **kwargs: Any
    ) -> Iterator[StateUpdate]:
        return super().stream(input, run_config(config), **kwargs)

    def astream(
        self, input: Any, config: RunnableConfig | LibrarianConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[StateUpdate]:
        return super().astream(input, run_config(config), **kwargs)

    def batch(
        self,
        inputs: list[Any],
        config: RunnableConfig | LibrarianConfig | list[RunnableConfig] | None = None,
        **kwargs: Any,
    ) -> list[StateUpdate]:
        return super().batch(inputs, _run_configs(config), **kwargs)

    async def abatch(
        self,
        inputs: list[Any],
        config: RunnableConfig | LibrarianConfig | list[RunnableConfig] | None = None,
        **kwargs: Any,
    ) -> list[StateUpdate]:
        return await super().abatch(inputs, _run_configs(config), **kwargs)


def _run_configs(
    config: RunnableConfig | LibrarianConfig | list[RunnableConfig] | None,
) -> RunnableConfig | list[RunnableConfig] | None:
    if isinstance(config, list):
        return [run_config(c) or {} for c in config]
    return run_config(config)


def run_config(config: RunnableConfig | LibrarianConfig | None) -> RunnableConfig | None:
    """The run config of a call: a ``LibrarianConfig`` passed in its place
    (``select_and_hydrate(state, LibrarianConfig(...))``, a natural first try) is read as
    ``{"configurable": {"librarian": config}}``; anything else but a mapping is a
    ``TypeError`` saying what is expected (it was an ``AttributeError`` from deep inside)."""
    if isinstance(config, LibrarianConfig):
        return {"configurable": {"librarian": config}}
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(
            "a Librarian node's config is a RunnableConfig such as "
            '{"configurable": {"thread_id": "...", "librarian": LibrarianConfig(...)}} '
            f"(or a LibrarianConfig), got {type(config).__name__}"
        )
    return config
