"""The Librarian graph for LangGraph Studio (``langgraph dev``) and the LangGraph CLI.

``langgraph.json`` at the repository root points here. Studio's chat sends each message
as a new turn; after a few turns open the thread's state to see what the Librarian
keeps: ``index`` (one entry per message: summary, keywords, status), ``selected_ids``,
``curated_messages`` (what the agent was shown) and ``librarian_metadata`` (selection
strategy, token counts, indexing counts).

The agent is offline by default: it answers by quoting the earlier messages it was
shown, so you can see the selection at work without an API key. Set
``LIBRARIAN_STUDIO_MODEL`` to a ``"provider:model"`` string (the provider's LangChain
package installed, its API key in the environment or in ``.env``) to answer with a real
model from the same curated context.

Run it::

    pip install -e . "langgraph-cli[inmem]"
    langgraph dev
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from langgraph_librarian import LibrarianConfig, create_librarian_graph

__all__ = ["build_graph", "graph"]

_QUOTE_CHARS = 160


def _text(message: BaseMessage) -> str:
    return " ".join(str(message.content).split())


def offline_agent(state: dict[str, Any]) -> dict[str, Any]:
    """Answer by quoting what the Librarian selected (no model, no key)."""
    curated: list[BaseMessage] = list(state.get("curated_messages") or state["messages"])
    question = next((m for m in reversed(curated) if isinstance(m, HumanMessage)), None)
    earlier = [m for m in curated if m is not question and not isinstance(m, AIMessage)]
    total = len(state["messages"])
    if not earlier:
        reply = f"I was shown {len(curated)} of {total} messages; nothing earlier was relevant."
    else:
        quotes = "\n".join(f'- "{_text(m)[:_QUOTE_CHARS]}"' for m in earlier[:5])
        reply = (
            f"I was shown {len(curated)} of {total} messages. "
            f"The earlier ones picked for this question:\n{quotes}"
        )
    return {"messages": [AIMessage(content=reply)]}


def _model_agent(model_name: str) -> Any:
    from langchain.chat_models import init_chat_model

    model = init_chat_model(model_name)

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [model.invoke(list(state["curated_messages"]))]}

    return agent


def build_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The Studio graph; ``langgraph dev`` supplies its own checkpointer, tests pass one."""
    model_name = os.environ.get("LIBRARIAN_STUDIO_MODEL")
    agent = _model_agent(model_name) if model_name else offline_agent
    # One recent turn kept verbatim, so that selection has visible work from turn three on.
    config = LibrarianConfig(always_include_recent_turns=1)
    return create_librarian_graph(agent, config, checkpointer=checkpointer, name="librarian")


graph = build_graph()
