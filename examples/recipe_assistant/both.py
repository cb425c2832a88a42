"""Chef Aria with both: a running summary for the gist, the Librarian for the details.

    python examples/recipe_assistant/both.py monday --db recipes.db
    python examples/recipe_assistant/both.py thursday --db recipes.db   # a new process

The graph is the Librarian's (``select_and_hydrate -> agent -> index_messages``) with
the running-summary router and node after indexing. The Librarian selects among the
messages still in state; once more than 10 are there, all but the last 4 (whole turns)
are folded into the summary and deleted, and the index drops them. The model gets the
persona, the summary as system context, then the Librarian's curated messages.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from shared import PERSONA, chat_model, parse_args, run, sqlite_checkpointer

from langgraph_librarian import (
    LibrarianConfig,
    LibrarianState,
    create_index_node,
    create_librarian_node,
)
from langgraph_librarian.memory import (
    RunningSummarizer,
    SummaryFields,
    build_model_input,
    create_summarize_node,
    create_summary_router,
)


class RecipeState(LibrarianState, SummaryFields):
    """The Librarian's state plus ``summary`` and ``summary_metadata``."""


def build(model: Any, summarizer: RunningSummarizer, checkpointer: Any) -> Any:
    config = LibrarianConfig(always_include_recent_turns=1)

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        curated = state.get("curated_messages") or state["messages"]
        model_input = build_model_input(curated, state.get("summary", ""), system_prompt=PERSONA)
        return {"messages": [model.invoke(model_input)]}

    builder = StateGraph(RecipeState)
    builder.add_node("select_and_hydrate", create_librarian_node(config))
    builder.add_node("agent", agent)
    builder.add_node("index_messages", create_index_node(config))
    builder.add_node("summarize_conversation", create_summarize_node(summarizer, keep_last=4))
    builder.add_edge(START, "select_and_hydrate")
    builder.add_edge("select_and_hydrate", "agent")
    builder.add_edge("agent", "index_messages")
    builder.add_conditional_edges(
        "index_messages",
        create_summary_router(max_messages=10),
        {"summarize_conversation": "summarize_conversation", END: END},
    )
    builder.add_edge("summarize_conversation", END)
    return builder.compile(checkpointer=checkpointer)


def main() -> None:
    args = parse_args(__doc__ or "")
    summarizer = RunningSummarizer(args.model, max_summary_tokens=300)
    with sqlite_checkpointer(args.db) as checkpointer:
        graph = build(chat_model(args.model), summarizer, checkpointer)

        def turn(thread: str, text: str) -> tuple[str, str]:
            state = graph.invoke(
                {"messages": [("user", text)]}, {"configurable": {"thread_id": thread}}
            )
            summary = state.get("summary", "")
            meta = state.get("librarian_metadata", {})
            memory = (
                f"{len(state['messages'])} messages kept ({len(state.get('index', []))} indexed), "
                f"model saw {meta.get('curated_count', '?')}, summary {len(summary)} chars"
            )
            return str(state["messages"][-1].content), memory

        run(args, turn)


if __name__ == "__main__":
    main()
