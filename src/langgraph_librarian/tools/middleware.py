"""Hot-loading requested tools into a LangChain ``create_agent`` agent (or a StateGraph)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Annotated, Any, Literal, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from langgraph_librarian.errors import ConfigurationError
from langgraph_librarian.tools.index import ToolIndex, ToolLike
from langgraph_librarian.tools.request_tools import (
    LoadedTools,
    create_request_tools,
    in_turn,
    merge_loaded_tools,
    state_messages,
    state_value,
)

__all__ = ["ToolLibrarianMiddleware"]

ToolResult = ToolMessage | Command[Any]


class ToolLibrarianState(AgentState[Any]):
    """Agent state plus the tools loaded in the current turn."""

    loaded_tools: NotRequired[Annotated[LoadedTools, merge_loaded_tools]]


def _unique(tools: list[BaseTool]) -> list[BaseTool]:
    """``tools`` with each name once (the first wins)."""
    seen: set[str] = set()
    out = []
    for tool in tools:
        if tool.name not in seen:
            seen.add(tool.name)
            out.append(tool)
    return out


def _answered_this_turn(messages: list[Any], name: str) -> bool:
    """Whether a ``name`` call (``request_tools``) answered without error since the
    latest human message."""
    for message in reversed(messages):
        kind = getattr(message, "type", None)
        if kind == "human":
            return False
        if (
            kind == "tool"
            and getattr(message, "name", None) == name
            and getattr(message, "status", "success") != "error"
        ):
            return True
    return False


MAX_LIVE_TOOLS = 64
"""Default bound on the catalog tools live in one model call (the latest requested)."""


class ToolLibrarianMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Give an agent ``request_tools`` and hot-load what it asks for.

    The agent starts with the tools you pass to ``create_agent`` (keep them few) plus
    ``request_tools``. Tools it requests join the model's tool list from the next model
    call (``wrap_model_call``) until the end of the user turn, and are executed through
    ``wrap_tool_call``. A new user turn starts with none loaded again. With
    ``mode="all"`` (swarm / autonomous agents) every catalog tool is offered up front
    and ``request_tools`` is not added.

    At most ``max_live_tools`` requested tools (the latest requested) are live at once,
    so a turn that keeps requesting never binds more tools than a provider accepts
    (OpenAI: 128). An older one called again is refused as not loaded; requesting it
    again makes it live. ``mode="all"`` offers the whole catalog, unbounded.

    A call to a catalog tool that was not loaded this turn, or that no longer exists,
    gets a model-visible error message rather than an exception.

    Example:
        ```python
        from langchain.agents import create_agent

        librarian = ToolLibrarianMiddleware(catalog_tools)
        agent = create_agent(model, tools=core_tools, middleware=[librarian])
        ```

    The same object serves hand-built graphs: bind ``tools_for(state)`` to the model
    and build ``ToolNode([...core, librarian.request_tools],
    wrap_tool_call=librarian.wrap_tool_call, awrap_tool_call=librarian.awrap_tool_call)``.
    """

    # Typed on AgentState, not on its own schema: AgentMiddleware is invariant in its state
    # parameter, so a list mixing middleware of different schemas failed to type-check in
    # users' create_agent calls. LangChain reads the schema from ``state_schema``.
    state_schema = ToolLibrarianState

    def __init__(
        self,
        catalog: ToolIndex | Iterable[ToolLike],
        *,
        mode: Literal["discover", "all"] = "discover",
        k: int = 5,
        max_live_tools: int = MAX_LIVE_TOOLS,
    ) -> None:
        super().__init__()
        if mode not in ("discover", "all"):
            raise ValueError(f"mode must be 'discover' or 'all', got {mode!r}")
        if isinstance(max_live_tools, bool) or not isinstance(max_live_tools, int):
            raise TypeError(f"max_live_tools must be an int, got {max_live_tools!r}")
        if max_live_tools < 1:
            raise ValueError(f"max_live_tools must be at least 1, got {max_live_tools}")
        self.max_live_tools = max_live_tools
        self.index = catalog if isinstance(catalog, ToolIndex) else ToolIndex(catalog)
        self.mode = mode
        self.request_tools = create_request_tools(self.index, k=k)
        self.tools = [self.request_tools] if mode == "discover" else []

    # -- which tools are live ---------------------------------------------------------

    def loaded_names(self, state: Any) -> list[str]:
        """Names loaded in the current turn (all catalog tools in ``"all"`` mode)."""
        if self.mode == "all":
            return [r.name for r in self.index.records() if r.tool is not None]
        loaded = state_value(state, "loaded_tools")
        if not isinstance(loaded, dict):
            return []
        if not in_turn(loaded.get("turn"), state_messages(state)):
            return []
        # The most recently requested ones: a turn that keeps requesting would otherwise
        # bind hundreds of tools to one call (OpenAI refuses more than 128). A tool past
        # the bound is "not loaded" again; requesting it again makes it recent.
        return list(loaded.get("names", []))[-self.max_live_tools :]

    def tools_for(self, state: Any) -> list[BaseTool]:
        """``request_tools`` (in discover mode) plus the tools live for this state.

        Each name once: providers reject two tools of one name (a catalog tool named
        like ``request_tools`` is left out).
        """
        live = self.index.tools(self.loaded_names(state))
        return _unique([*self.tools, *live])

    def _with_loaded(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        # A core tool of the same name wins: the model calls it by that name.
        present = {t.name if isinstance(t, BaseTool) else t.get("name") for t in request.tools}
        extra = _unique(
            [t for t in self.index.tools(self.loaded_names(request.state)) if t.name not in present]
        )
        return request.override(tools=[*request.tools, *extra]) if extra else request

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return handler(self._with_loaded(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(self._with_loaded(request))

    # -- execution --------------------------------------------------------------------

    def _resolve(self, request: ToolCallRequest) -> ToolCallRequest | ToolMessage:
        if request.tool is not None:
            return request  # a core tool or request_tools itself
        call = request.tool_call
        name = str(call.get("name", ""))
        record = self.index.get(name)
        if record is None or record.tool is None:
            why = (
                "it does not exist or was removed"
                if record is None
                else "the catalog describes it, but nothing here can run it"
            )
            text = (
                f"Tool `{name}` is not available ({why}). "
                "Call request_tools to find a tool for what you need."
            )
            return ToolMessage(text, tool_call_id=call.get("id") or "", name=name, status="error")
        if name not in self.loaded_names(request.state):
            if state_value(request.state, "loaded_tools") is None and _answered_this_turn(
                state_messages(request.state), self.request_tools.name
            ):
                # request_tools answered, but its update never reached the state: the
                # model would be told to request the tool again and again.
                raise ConfigurationError(
                    "request_tools loaded tools, but the graph's state has no "
                    "'loaded_tools' field to keep them: add ToolLibrarianStateFields to "
                    "the state schema (class State(MessagesState, ToolLibrarianStateFields))"
                )
            text = (
                f"Tool `{name}` is not loaded in this turn. Call "
                f'request_tools("{name}") first, then call it again.'
            )
            return ToolMessage(text, tool_call_id=call.get("id") or "", name=name, status="error")
        return request.override(tool=record.tool)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolResult],
    ) -> ToolResult:
        resolved = self._resolve(request)
        return resolved if isinstance(resolved, ToolMessage) else handler(resolved)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        resolved = self._resolve(request)
        return resolved if isinstance(resolved, ToolMessage) else await handler(resolved)
