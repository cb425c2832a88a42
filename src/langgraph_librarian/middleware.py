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
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, NotRequired, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime

from langgraph_librarian._messages import current_turn
from langgraph_librarian._pipeline import (
    TurnPlan,
    finish_turn,
    index_update_result,
    make_selector,
    plan_turn,
    state_entries,
)
from langgraph_librarian.config import LibrarianConfig, resolve_config, session_id_from_config
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.index.pipeline import aupdate_index, update_index
from langgraph_librarian.select.result import Selection
from langgraph_librarian.state import merge_index, merge_metadata
from langgraph_librarian.stores.base import aload_index, asave_index

__all__ = ["LibrarianMiddleware", "LibrarianMiddlewareState", "create_librarian_hook"]

logger = logging.getLogger(__name__)


class LibrarianMiddlewareState(AgentState[Any]):
    """Agent state plus the Librarian's index and per-turn metadata."""

    index: NotRequired[Annotated[list[dict[str, Any]], merge_index]]
    librarian_metadata: NotRequired[Annotated[dict[str, Any], merge_metadata]]


def _runnable_config() -> RunnableConfig | None:
    try:
        return get_config()
    except RuntimeError:  # called outside a LangGraph run
        return None


class _TurnCurator:
    """Selection cached per (thread, turn); hydration on every model call."""

    def __init__(self, config: LibrarianConfig | None, cache_size: int = 512) -> None:
        self.config = config
        self._cache: OrderedDict[tuple[str, str], tuple[list[str], Selection]] = OrderedDict()
        self._metadata: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self._size = cache_size
        self._lock = threading.Lock()

    def settings(self, thread: str | None) -> tuple[LibrarianConfig, str]:
        config = _runnable_config()
        resolved = resolve_config(self.config, config)
        return resolved, thread or session_id_from_config(config)

    def _remember(self, key: tuple[str, str], ids: list[str], selection: Selection) -> None:
        with self._lock:
            self._cache[key] = (ids, selection)
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)

    def _cached(self, key: tuple[str, str], messages: Sequence[BaseMessage]) -> Selection | None:
        with self._lock:
            hit = self._cache.get(key)
        if hit is None:
            return None
        ids, selection = hit
        position = {m.id: i for i, m in enumerate(messages)}
        return Selection(
            ids=[position[i] for i in ids if i in position],
            reasoning=selection.reasoning,
            strategy=selection.strategy,
            fallback_reason=selection.fallback_reason,
            candidates=selection.candidates,
            shortlisted=selection.shortlisted,
            prompt_tokens=0,
            expanded_ids=[],
        )

    def _store(self, key: tuple[str, str], update: dict[str, Any]) -> list[BaseMessage]:
        with self._lock:
            self._metadata[key] = dict(update["librarian_metadata"])
            while len(self._metadata) > self._size:
                self._metadata.popitem(last=False)
        return list(update["curated_messages"])

    def pop_metadata(self, thread: str, messages: Sequence[BaseMessage]) -> dict[str, Any] | None:
        with self._lock:
            return self._metadata.pop((thread, current_turn(messages)), None)

    def _begin(
        self,
        messages: Sequence[BaseMessage],
        state: dict[str, Any],
        config: LibrarianConfig,
        session: str,
        stored: list[IndexEntry] | None,
    ) -> tuple[tuple[str, str], TurnPlan]:
        key = (session, current_turn(messages))
        return key, plan_turn(
            {**state, "messages": list(messages)}, config, stored, time.perf_counter()
        )

    def curate(
        self, messages: Sequence[BaseMessage], state: dict[str, Any], thread: str | None
    ) -> list[BaseMessage]:
        """Curated context for one model call (sync)."""
        config, session = self.settings(thread)
        stored = config.store.load(session) if config.store else None
        key, plan = self._begin(messages, state, config, session, stored)
        if plan.skip is not None:
            return self._store(key, plan.skip)
        selection = self._cached(key, plan.messages)
        if selection is None:
            selection = make_selector(config).select(
                plan.query, plan.messages, plan.candidates, exclude=plan.exclude
            )
            self._remember(key, [str(plan.messages[i].id) for i in selection.ids], selection)
        return self._store(key, finish_turn(plan, selection))

    async def acurate(
        self, messages: Sequence[BaseMessage], state: dict[str, Any], thread: str | None
    ) -> list[BaseMessage]:
        """Curated context for one model call (async)."""
        config, session = self.settings(thread)
        stored = await aload_index(config.store, session) if config.store else None
        key, plan = self._begin(messages, state, config, session, stored)
        if plan.skip is not None:
            return self._store(key, plan.skip)
        selection = self._cached(key, plan.messages)
        if selection is None:
            selection = await make_selector(config).aselect(
                plan.query, plan.messages, plan.candidates, exclude=plan.exclude
            )
            self._remember(key, [str(plan.messages[i].id) for i in selection.ids], selection)
        return self._store(key, finish_turn(plan, selection))


def _thread(runtime: Any) -> str | None:
    info = getattr(runtime, "execution_info", None)
    thread = getattr(info, "thread_id", None)
    return str(thread) if thread else None


class LibrarianMiddleware(AgentMiddleware[LibrarianMiddlewareState, Any]):
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

    state_schema = LibrarianMiddlewareState

    def __init__(self, config: LibrarianConfig | None = None) -> None:
        super().__init__()
        self._curator = _TurnCurator(config)

    def _curated(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        try:
            state = dict(request.state) if isinstance(request.state, dict) else {}
            curated = self._curator.curate(request.messages, state, _thread(request.runtime))
            return request.override(messages=cast(list[AnyMessage], curated))
        except Exception:
            logger.warning("librarian: selection failed; passing all messages", exc_info=True)
            return request

    async def _acurated(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        try:
            state = dict(request.state) if isinstance(request.state, dict) else {}
            curated = await self._curator.acurate(request.messages, state, _thread(request.runtime))
            return request.override(messages=cast(list[AnyMessage], curated))
        except Exception:
            logger.warning("librarian: selection failed; passing all messages", exc_info=True)
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

    def _result(self, state: Any, session: str, update: Any, in_state: bool) -> dict[str, Any]:
        out = index_update_result({}, update, in_state=in_state)
        selected = self._curator.pop_metadata(session, state.get("messages", []))
        if selected is not None:
            out["librarian_metadata"] = {**selected, **out["librarian_metadata"]}
        return out

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        config, session = self._curator.settings(_thread(runtime))
        stored = config.store.load(session) if config.store else None
        entries = stored if stored is not None else state_entries(state)
        update = update_index(state.get("messages", []), entries, config)
        if config.store:
            config.store.save(session, update.entries)
        return self._result(state, session, update, config.store is None)

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        config, session = self._curator.settings(_thread(runtime))
        stored = await aload_index(config.store, session) if config.store else None
        entries = stored if stored is not None else state_entries(state)
        update = await aupdate_index(state.get("messages", []), entries, config)
        if config.store:
            await asave_index(config.store, session, update.entries)
        return self._result(state, session, update, config.store is None)


def create_librarian_hook(
    config: LibrarianConfig | None = None,
) -> Callable[[dict[str, Any], RunnableConfig], dict[str, list[AnyMessage]]]:
    """A ``pre_model_hook`` that writes the curated context to ``llm_input_messages``.

    ``llm_input_messages`` is a checkpointed last-value channel, so the hook writes it on
    every path: on failure it writes the full ``messages`` (fail-open), never ``{}``
    (which would make the model see the previous call's input). Index the conversation
    with :data:`~langgraph_librarian.index_messages` after the agent, and give your state
    an ``index`` field with the :func:`~langgraph_librarian.merge_index` reducer.
    """
    curator = _TurnCurator(config)

    def librarian_hook(
        state: dict[str, Any], config: RunnableConfig
    ) -> dict[str, list[AnyMessage]]:
        messages = list(state.get("messages") or [])
        try:
            configurable = (config or {}).get("configurable") or {}
            thread = configurable.get("thread_id")
            curated = curator.curate(messages, dict(state), str(thread) if thread else None)
        except Exception:
            logger.warning("librarian: selection failed; passing all messages", exc_info=True)
            curated = messages
        return {"llm_input_messages": cast(list[AnyMessage], curated)}

    return librarian_hook
