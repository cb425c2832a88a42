"""A ready chat node that reads the summary, and spec 02's two-node graph."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_type_hints

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from langgraph_librarian._engine.models import LazyModel
from langgraph_librarian._kit.node import LibrarianNode
from langgraph_librarian._kit.state import read_messages
from langgraph_librarian.memory._graph import (
    SummarizerLike,
    SummaryFields,
    SummaryState,
    SystemPrompt,
    build_model_input,
    create_summary_router,
)
from langgraph_librarian.memory._nodes import create_summarize_node
from langgraph_librarian.tokens import TokenCounter

__all__ = ["create_summary_chat_node", "create_summary_graph"]

StateUpdate = dict[str, Any]


def _init_chat_model(spec: str) -> Runnable[Any, Any]:
    # The user's own chat model: their provider defaults (retries, output length)
    # apply, unlike the library's internal calls (``_models.build_model``).
    from langchain.chat_models import init_chat_model

    return init_chat_model(spec)


def create_summary_chat_node(
    model: BaseChatModel | Runnable[Any, Any] | str,
    *,
    system_prompt: SystemPrompt = None,
    require_human_first: bool = True,
    repair: bool = True,
    _start_summary: bool = False,
) -> LibrarianNode:
    """A chat node that answers from system prompt + summary + recent messages.

    The model gets :func:`~langgraph_librarian.memory.build_model_input` of the state
    and is called with the node's run config (so ``stream_mode="messages"`` streams
    its tokens). Its reply is appended to ``messages``. Bind tools on the model
    yourself (``model.bind_tools(tools)``) when your graph has a tool node.

    Args:
        model: A chat model, any Runnable taking messages (a ``str`` answer
            becomes an AIMessage), or a ``"provider:model"``
            string (its provider package is checked now; the model is created with
            ``init_chat_model`` on first use).
        system_prompt: Your persona/instructions (a string, a SystemMessage or a list).
        require_human_first: Drop conversational messages before the first human
            message (what Anthropic and Gemini require). Pass ``False`` to keep an
            assistant greeting that opens the thread.
        repair: Repair the history for the provider (see
            :func:`~langgraph_librarian.memory.build_model_input`); repairs are logged.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> node = create_summary_chat_node(GenericFakeChatModel(messages=iter([AIMessage("Hi!")])),
        ...                                 system_prompt="You are Chef Aria.")
        >>> node({"messages": [HumanMessage("hello")], "summary": ""})["messages"][0].content
        'Hi!'
    """
    lazy = LazyModel(model, "model", _init_chat_model)

    def prepare(state: Mapping[str, Any]) -> list[Any]:
        return build_model_input(
            read_messages(state),
            str(state.get("summary") or ""),
            system_prompt=system_prompt,
            repair=repair,
            require_human_first=require_human_first,
        )

    def update(state: Mapping[str, Any], reply: Any) -> StateUpdate:
        if isinstance(reply, str):  # a chain ending in StrOutputParser: still the assistant's
            reply = AIMessage(reply)
        out: StateUpdate = {"messages": [reply]}
        if _start_summary and "summary" not in state:
            out["summary"] = ""  # spec 02: the summary starts as an empty string
        return out

    def run(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        return update(state, lazy.get().invoke(prepare(state), config=config))

    async def arun(state: dict[str, Any], config: RunnableConfig | None = None) -> StateUpdate:
        return update(state, await lazy.get().ainvoke(prepare(state), config=config))

    return LibrarianNode(run, afunc=arun, name="chat")


def _fields(schema: type[Any]) -> set[str]:
    try:
        return set(get_type_hints(schema))
    except Exception:  # an unresolvable annotation: fall back to the raw names
        return set(getattr(schema, "__annotations__", {}))


def create_summary_graph(
    model: BaseChatModel | Runnable[Any, Any] | str,
    *,
    system_prompt: SystemPrompt = None,
    summarizer: SummarizerLike = None,
    max_messages: int | None = 6,
    max_tokens: int | None = None,
    keep_last: int = 2,
    token_counter: TokenCounter | None = None,
    require_human_first: bool = True,
    repair: bool = True,
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
        token_counter: Your model's token counter, for ``max_tokens`` and for the
            summary's own budget (default approximate, which undercounts CJK text).
        require_human_first: See :func:`create_summary_chat_node`.
        repair: See :func:`create_summary_chat_node`.
        checkpointer: A LangGraph checkpointer (e.g. ``SqliteSaver``) so the summary
            and the recent messages survive restarts, per ``thread_id``.
        store: Optional LangGraph store passed to ``compile``.
        state_schema: A TypedDict with ``messages`` and :class:`SummaryFields` (a schema
            without them raises ``ValueError``: LangGraph would drop the summary).
        name: Graph name.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> graph = create_summary_graph(GenericFakeChatModel(messages=iter([AIMessage("ok")])))
        >>> sorted(graph.get_graph().nodes)
        ['__end__', '__start__', 'chat', 'summarize_conversation']
    """
    fields = _fields(state_schema)
    missing = [name for name in ("messages", *SummaryFields.__annotations__) if name not in fields]
    if missing:
        # LangGraph drops updates to keys its state lacks: the node would delete the old
        # messages and the summary of them would vanish (or the cool-down would not hold).
        raise ValueError(
            f"state_schema {getattr(state_schema, '__name__', state_schema)!r} lacks "
            f"{', '.join(missing)}: mix SummaryFields into it (class MyState(MessagesState, "
            "SummaryFields)) or use SummaryState"
        )
    # Typed Any like graph.py's nodes: StateGraph's node typing wants a state class.
    nodes: dict[str, Any] = {
        "chat": create_summary_chat_node(
            model,
            system_prompt=system_prompt,
            require_human_first=require_human_first,
            repair=repair,
            # The ready graph's state has ``summary``: its first turn writes "" (spec
            # 02), so ``state["summary"]`` reads before the first summary is due.
            _start_summary=True,
        ),
        "summarize_conversation": create_summarize_node(
            summarizer, keep_last=keep_last, token_counter=token_counter
        ),
    }
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(state_schema)
    for node_name, node in nodes.items():
        builder.add_node(node_name, node)
    builder.add_edge(START, "chat")
    router = create_summary_router(
        max_messages=max_messages, max_tokens=max_tokens, token_counter=token_counter
    )
    builder.add_conditional_edges(
        "chat", router, {"summarize_conversation": "summarize_conversation", END: END}
    )
    builder.add_edge("summarize_conversation", END)
    return builder.compile(checkpointer=checkpointer, store=store, name=name or "running_summary")
