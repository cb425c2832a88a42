"""A ready chat node that reads the summary, and spec 02's two-node graph."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from langgraph_librarian.memory._graph import (
    StateUpdate,
    SummarizerLike,
    SummaryNode,
    SummaryState,
    _messages,
    build_model_input,
    create_summarize_node,
    create_summary_router,
)
from langgraph_librarian.tokens import TokenCounter

__all__ = ["create_summary_chat_node", "create_summary_graph"]

SystemPrompt = str | SystemMessage | Sequence[str | SystemMessage] | None


class _LazyModel:
    """Resolves a ``"provider:model"`` string on first use (no API key needed to build)."""

    def __init__(self, model: Runnable[Any, Any] | str) -> None:
        self._spec = model
        self._model: Runnable[Any, Any] | None = None if isinstance(model, str) else model
        self._lock = threading.Lock()

    def get(self) -> Runnable[Any, Any]:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    from langchain.chat_models import init_chat_model

                    self._model = init_chat_model(str(self._spec))
        return self._model


def create_summary_chat_node(
    model: BaseChatModel | Runnable[Any, Any] | str,
    *,
    system_prompt: SystemPrompt = None,
) -> SummaryNode:
    """A chat node that answers from system prompt + summary + recent messages.

    The model gets :func:`~langgraph_librarian.memory.build_model_input` of the state
    and is called with the node's run config (so ``stream_mode="messages"`` streams
    its tokens). Its reply is appended to ``messages``. Bind tools on the model
    yourself (``model.bind_tools(tools)``) when your graph has a tool node.

    Args:
        model: A chat model, any Runnable taking messages, or a ``"provider:model"``
            string (created with ``init_chat_model`` on first use).
        system_prompt: Your persona/instructions (a string, a SystemMessage or a list).

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> node = create_summary_chat_node(GenericFakeChatModel(messages=iter([AIMessage("Hi!")])),
        ...                                 system_prompt="You are Chef Aria.")
        >>> node({"messages": [HumanMessage("hello")], "summary": ""})["messages"][0].content
        'Hi!'
    """
    lazy = _LazyModel(model)

    def prepare(state: Mapping[str, Any]) -> list[Any]:
        summary = state.get("summary") or ""
        return build_model_input(_messages(state), str(summary), system_prompt=system_prompt)

    def run(state: Mapping[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        return {"messages": [lazy.get().invoke(prepare(state), config=config)]}

    async def arun(state: Mapping[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        return {"messages": [await lazy.get().ainvoke(prepare(state), config=config)]}

    return SummaryNode(run, afunc=arun, name="chat")


def create_summary_graph(
    model: BaseChatModel | Runnable[Any, Any] | str,
    *,
    system_prompt: SystemPrompt = None,
    summarizer: SummarizerLike = None,
    max_messages: int | None = 6,
    max_tokens: int | None = None,
    keep_last: int = 2,
    token_counter: TokenCounter | None = None,
    checkpointer: Any = None,
    store: BaseStore | None = None,
    state_schema: type[Any] = SummaryState,
    name: str | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile ``START -> chat -> (summarize_conversation when due) -> END``.

    Args:
        model: The chat model (object, Runnable or ``"provider:model"``).
        system_prompt: The assistant's instructions.
        summarizer: Writes the summary: ``None`` (offline extractive), a chat model or
            ``"provider:model"``, or a configured :class:`RunningSummarizer`.
        max_messages: Summarize when more messages than this are in state.
        max_tokens: Summarize when the messages count more tokens than this.
        keep_last: Messages kept verbatim after summarizing.
        token_counter: Token counter for ``max_tokens``; default approximate.
        checkpointer: A LangGraph checkpointer (e.g. ``SqliteSaver``) so the summary
            and the recent messages survive restarts, per ``thread_id``.
        store: Optional LangGraph store passed to ``compile``.
        state_schema: A TypedDict with ``messages`` and :class:`SummaryFields`.
        name: Graph name.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> graph = create_summary_graph(GenericFakeChatModel(messages=iter([AIMessage("ok")])))
        >>> sorted(graph.get_graph().nodes)
        ['__end__', '__start__', 'chat', 'summarize_conversation']
    """
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(state_schema)
    builder.add_node("chat", create_summary_chat_node(model, system_prompt=system_prompt))
    builder.add_node(
        "summarize_conversation", create_summarize_node(summarizer, keep_last=keep_last)
    )
    builder.add_edge(START, "chat")
    router = create_summary_router(
        max_messages=max_messages, max_tokens=max_tokens, token_counter=token_counter
    )
    builder.add_conditional_edges(
        "chat", router, {"summarize_conversation": "summarize_conversation", END: END}
    )
    builder.add_edge("summarize_conversation", END)
    return builder.compile(checkpointer=checkpointer, store=store, name=name or "running_summary")
