"""Chef Aria with a running summary (spec 02): old turns are folded into ``summary``.

    python examples/recipe_assistant/summary.py monday --db recipes.db
    python examples/recipe_assistant/summary.py thursday --db recipes.db   # a new process
    python examples/recipe_assistant/summary.py say "Any soup ideas?" --thread sam

After more than 6 messages the oldest are summarized (offline extractive summary, or
the ``--model`` when given) and deleted; the last 2 stay. The summary reaches the model
as a system message, so Thursday's Aria still knows Monday's allergy.
"""

from __future__ import annotations

from shared import PERSONA, chat_model, parse_args, run, sqlite_checkpointer

from langgraph_librarian.memory import RunningSummarizer, create_summary_graph


def main() -> None:
    args = parse_args(__doc__ or "")
    model = chat_model(args.model)
    summarizer = RunningSummarizer(args.model, max_summary_tokens=300)
    with sqlite_checkpointer(args.db) as checkpointer:
        graph = create_summary_graph(
            model,
            system_prompt=PERSONA,
            summarizer=summarizer,
            max_messages=6,
            keep_last=2,
            checkpointer=checkpointer,
        )

        def turn(thread: str, text: str) -> tuple[str, str]:
            state = graph.invoke(
                {"messages": [("user", text)]}, {"configurable": {"thread_id": thread}}
            )
            summary = state.get("summary", "")
            memory = f"{len(state['messages'])} messages kept, summary {len(summary)} chars"
            if summary:
                memory += " | " + summary.replace("\n", " ")[:160]
            return str(state["messages"][-1].content), memory

        run(args, turn)


if __name__ == "__main__":
    main()
