"""Chef Aria with the Librarian: every message is kept, indexed, and selected on demand.

    python examples/recipe_assistant/librarian.py monday --db recipes.db
    python examples/recipe_assistant/librarian.py thursday --db recipes.db   # a new process

The whole history stays in the checkpoint. Before each reply the Librarian (offline
engine: extractive index, lexical/embedding selection) picks the earlier messages that
matter for the question and hands the model those plus the recent turns. Thursday's
"nut tart" question brings back Monday's "allergic to nuts" message.
"""

from __future__ import annotations

from typing import Any

from shared import PERSONA, chat_model, parse_args, run, sqlite_checkpointer

from langgraph_librarian import LibrarianConfig, create_librarian_graph
from langgraph_librarian.memory import build_model_input


def main() -> None:
    args = parse_args(__doc__ or "")
    model = chat_model(args.model)

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        curated = state.get("curated_messages") or state["messages"]
        return {"messages": [model.invoke(build_model_input(curated, system_prompt=PERSONA))]}

    with sqlite_checkpointer(args.db) as checkpointer:
        graph = create_librarian_graph(
            agent, LibrarianConfig(always_include_recent_turns=1), checkpointer=checkpointer
        )

        def turn(thread: str, text: str) -> tuple[str, str]:
            state = graph.invoke(
                {"messages": [("user", text)]}, {"configurable": {"thread_id": thread}}
            )
            meta = state.get("librarian_metadata", {})
            memory = (
                f"{len(state['messages'])} messages kept, model saw "
                f"{meta.get('curated_count', '?')} (selected {meta.get('selected_ids', [])})"
            )
            return str(state["messages"][-1].content), memory

        run(args, turn)


if __name__ == "__main__":
    main()
