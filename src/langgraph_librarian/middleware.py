"""The Librarian for LangChain ``create_agent`` (middleware) and ``pre_model_hook`` graphs.

Both are thin faces over the same core as the graph nodes. The curated context is
ephemeral: it is handed to the model for one call (``request.override(messages=...)``
or the ``llm_input_messages`` channel) and never appended to ``messages``, so the
checkpoint keeps the real conversation only. Selection runs once per user turn (keyed
by thread and the turn's latest human message, so two threads or tenants never share
it); later model calls of the same turn re-hydrate the cached selection with the
turn's new tool calls and results. Any failure passes the original messages through
(fail-open) and is logged; the index persists in state (or your store).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired, Protocol, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AnyMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from langgraph_librarian._engine.failures import fails_open
from langgraph_librarian._kit.node import run_config
from langgraph_librarian._kit.run import current_run_config, thread_id
from langgraph_librarian._librarian.turn import (
    Run,
    SelectionCache,
    aindex_turn,
    aselect_turn,
    index_turn,
    record_pass_through,
    select_turn,
)
from langgraph_librarian.config import ConfigLike, as_config
from langgraph_librarian.errors import IndexStoreError
from langgraph_librarian.state import merge_index, merge_metadata

__all__ = ["LibrarianMiddleware", "create_librarian_hook"]

logger = logging.getLogger(__name__)


class LibrarianMiddlewareState(AgentState[Any]):
    """Agent state plus the Librarian's index and per-turn metadata."""

    index: NotRequired[Annotated[list[dict[str, Any]], merge_index]]
    librarian_metadata: NotRequired[Annotated[dict[str, Any], merge_metadata]]
    librarian_summary: NotRequired[dict[str, Any]]


def _fail_open(exc: Exception) -> None:
    # Interrupts and configuration errors (a missing thread id, a model that cannot be
    # built, credentials refused) propagate: failing open would index nothing and hide
    # them. So does a corrupt index (IndexStoreError), before the model is called: the
    # step after the reply cannot index either, and raising there left a billed reply in
    # the checkpoint that the caller never saw, turn after turn (the graph's select node
    # raises at the same point). Everything else passes the messages through.
    if isinstance(exc, IndexStoreError) or not fails_open(exc):
        raise exc
    logger.warning("librarian: selection failed; passing all messages", exc_info=exc)


class LibrarianMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Select-then-hydrate for ``langchain.agents.create_agent``.

    Before each model call (``wrap_model_call``) the model gets the curated context
    instead of the whole history; nothing curated is written to state. After the agent
    finishes the turn (``after_agent``) new messages are indexed into ``state["index"]``
    (or ``config.store``) and the turn's ``librarian_metadata`` is recorded.

    Args:
        config: Librarian configuration (``None``: the offline engine);
            ``configurable["librarian"]`` at run time overrides it.

    Example:
        ```python
        from langchain.agents import create_agent

        agent = create_agent(model, tools=tools, middleware=[LibrarianMiddleware()],
                             checkpointer=checkpointer)
        ```
    """

    # Typed on AgentState, not on its own schema: AgentMiddleware is invariant in its state
    # parameter, so a list mixing middleware of different schemas failed to type-check in
    # users' create_agent calls. LangChain reads the schema from ``state_schema``.
    state_schema = LibrarianMiddlewareState

    def __init__(self, config: ConfigLike = None) -> None:
        super().__init__()
        self.config = as_config(config, "LibrarianMiddleware(config)")
        self._cache = SelectionCache()

    def _run(self, runtime: Any) -> Run:
        return Run.open(self.config, current_run_config(), thread=thread_id(runtime=runtime))

    @staticmethod
    def _state(request: ModelRequest[Any]) -> dict[str, Any]:
        state = dict(request.state) if isinstance(request.state, dict) else {}
        state["messages"] = list(request.messages)
        return state

    def _curated(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        run: Run | None = None
        try:
            run = self._run(request.runtime)
            update = select_turn(self._state(request), run, self._cache)
        except Exception as exc:
            return self._passed_through(request, run, exc)
        return request.override(messages=cast(list[AnyMessage], update["curated_messages"]))

    async def _acurated(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        run: Run | None = None
        try:
            run = self._run(request.runtime)
            update = await aselect_turn(self._state(request), run, self._cache)
        except Exception as exc:
            return self._passed_through(request, run, exc)
        return request.override(messages=cast(list[AnyMessage], update["curated_messages"]))

    def _passed_through(
        self, request: ModelRequest[Any], run: Run | None, exc: Exception
    ) -> ModelRequest[Any]:
        _fail_open(exc)  # raises what must not be absorbed
        if run is not None:  # the turn's metadata says the model got everything, and why
            record_pass_through(self._cache, run, request.messages, exc)
        return request

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        return handler(self._curated(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(await self._acurated(request))

    def _with_selection(self, run: Run, state: Any, out: dict[str, Any]) -> dict[str, Any]:
        selected = self._cache.pop_metadata(SelectionCache.key(run, state.get("messages", [])))
        if selected is not None:
            out["librarian_metadata"] = {**selected, **out["librarian_metadata"]}
        return out

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        run = self._run(runtime)
        return self._with_selection(run, state, index_turn(dict(state), run))

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        run = self._run(runtime)
        return self._with_selection(run, state, await aindex_turn(dict(state), run))


class LibrarianHook(Protocol):
    """What :func:`create_librarian_hook` returns: a ``pre_model_hook`` (or graph node)
    called with the graph state (any state holding ``messages``) and the run config.
    (Typed with named parameters: LangGraph's ``add_node`` matches a node by them.)"""

    def __call__(self, state: Any, config: RunnableConfig) -> dict[str, list[AnyMessage]]:
        """The hook's update: ``{"llm_input_messages": [...]}``."""
        ...


def create_librarian_hook(
    config: ConfigLike = None,
) -> LibrarianHook:
    """A ``pre_model_hook`` that writes the curated context to ``llm_input_messages``.

    ``llm_input_messages`` is a checkpointed last-value channel, so the hook writes it on
    every path: on failure it writes the full ``messages`` (fail-open), never ``{}``
    (which would make the model see the previous call's input). Index the conversation
    with :data:`~langgraph_librarian.index_messages` after the agent, and give your state
    an ``index`` field with the :func:`~langgraph_librarian.merge_index` reducer.
    """
    cache = SelectionCache()
    default = as_config(config, "create_librarian_hook(config)")
    warned: list[bool] = []  # the warning is said once per hook (a configuration fault)

    # ``state: Any``: any graph state holding ``messages`` (see ``LibrarianNode``).
    # ``config: RunnableConfig`` exactly: LangGraph passes the run config to a node by that
    # annotation (a union is not recognised, and the node is called without it).
    def librarian_hook(state: Any, config: RunnableConfig) -> dict[str, list[AnyMessage]]:
        # A LibrarianConfig given in place (a direct call) is read as one; another wrong
        # config is a mistake to raise, not absorb.
        given = run_config(cast(Any, config))
        messages = list(state.get("messages") or [])
        try:
            run = Run.open(default, given)
            _check_index_kept(state, messages, run, warned)
            update = select_turn(dict(state), run, cache)
            curated = update["curated_messages"]
        except Exception as exc:
            _fail_open(exc)
            curated = messages
        return {"llm_input_messages": cast(list[AnyMessage], curated)}

    return librarian_hook


_NO_INDEX = (
    "create_librarian_hook: earlier turns were answered, yet the state has no 'index' and "
    "the config no store, so nothing was indexed and every message is passed to the model. "
    "Give the graph's state an `index: Annotated[list, merge_index]` field (for "
    "create_react_agent: state_schema=an AgentState subclass with it) and run "
    "create_index_node(config) after the model, or set LibrarianConfig(store=...)."
)


def _check_index_kept(
    state: dict[str, Any], messages: list[AnyMessage], run: Run, warned: list[bool]
) -> None:
    """Warn (once) when the index is evidently not kept anywhere.

    A graph whose state schema has no ``index`` channel (``create_react_agent``'s
    ``AgentState``) silently drops the index node's update: every turn then starts
    from nothing and the hook passes everything through, with no error to say why. An
    answered earlier turn tells that case apart from a first turn.
    """
    if warned or run.config.store is not None or "index" in state:
        return
    last_human = max((i for i, m in enumerate(messages) if m.type == "human"), default=-1)
    if not any(m.type == "ai" for m in messages[:last_human]):
        return
    warned.append(True)
    logger.warning(_NO_INDEX)
