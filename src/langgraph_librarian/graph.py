"""``create_librarian_graph``: select_and_hydrate -> your agent -> index_messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from langgraph_librarian.config import ConfigLike, as_config
from langgraph_librarian.nodes import create_index_node, create_librarian_node
from langgraph_librarian.state import LibrarianState
from langgraph_librarian.stores.langgraph_store import LangGraphIndexStore

__all__ = ["create_librarian_graph"]


def create_librarian_graph(
    agent_fn: Callable[..., Any] | Any,
    config: ConfigLike = None,
    *,
    checkpointer: Any = None,
    store: BaseStore | None = None,
    state_schema: type[Any] = LibrarianState,
    name: str | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile ``START -> select_and_hydrate -> agent -> index_messages -> END``.

    Args:
        agent_fn: Your agent node (sync or async function, or a Runnable). It gets the
            full state; the curated context is ``state["curated_messages"]``. Return a
            state update such as ``{"messages": [reply]}``.
        config: Librarian configuration; ``configurable["librarian"]`` at run time
            overrides it (a whole :class:`LibrarianConfig` or a dict of fields).
            ``None``: the offline engine.
        checkpointer: LangGraph checkpointer; the index persists with the thread.
        store: A LangGraph ``BaseStore`` (``PostgresStore``, ``SqliteStore``...). It is
            passed to ``compile`` (your nodes can use it) **and** keeps the Librarian's
            index, under the namespace ``("librarian", "index")`` keyed by thread id,
            instead of graph state (a lean checkpoint; every worker sharing the store
            shares the index). A ``store`` set in ``config`` wins over this one.
        state_schema: A TypedDict extending :class:`LibrarianState`.
        name: Graph name.

    Returns:
        The compiled graph.

    Note:
        ``invoke``/``ainvoke`` return after ``index_messages``; stream the graph
        (``stream_mode="messages"`` or ``"updates"``) to show the reply before
        indexing finishes.
    """
    config = as_config(config, "create_librarian_graph(config)")
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(state_schema)
    index_store = LangGraphIndexStore(store) if store is not None else None
    nodes: dict[str, Any] = {
        "select_and_hydrate": create_librarian_node(config, store=index_store),
        "agent": agent_fn,
        "index_messages": create_index_node(config, store=index_store),
    }
    for node_name, action in nodes.items():
        builder.add_node(node_name, action)
    builder.add_edge(START, "select_and_hydrate")
    builder.add_edge("select_and_hydrate", "agent")
    builder.add_edge("agent", "index_messages")
    builder.add_edge("index_messages", END)
    return builder.compile(checkpointer=checkpointer, store=store, name=name or "librarian")
