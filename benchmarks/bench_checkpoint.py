"""Checkpoint growth: a thread of N turns with and without the Librarian (SqliteSaver).

Run: python benchmarks/bench_checkpoint.py [--turns 100]

Every turn appends a user message and a reply of ~120 words. Reports the SQLite file
size after the last turn for a plain agent graph, the Librarian graph with state-kept
index (lexical), the Librarian with an external FileIndexStore, and the state-kept
index with ``durability="exit"`` (one checkpoint per run instead of one per step).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_librarian import FileIndexStore, LibrarianConfig, create_librarian_graph

TEXT = (
    "We compared three options for the venue and noted the prices, the dates and who owns "
    "each decision, then agreed to revisit the budget after the review. "
) * 4


def agent(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [AIMessage(content=TEXT)]}


def run(graph: Any, turns: int, durability: str | None = None) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    for turn in range(turns):
        message = HumanMessage(content=f"Turn {turn}: {TEXT}")
        graph.invoke({"messages": [message]}, cfg, durability=durability)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()
    os.environ.setdefault("LIBRARIAN_EMBEDDINGS", "none")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for label in (
            "plain agent",
            "librarian (index in state)",
            "librarian (FileIndexStore)",
            "librarian (index in state), durability='exit'",
        ):
            db = Path(tmp) / f"{len(results)}.db"
            saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
            if label == "plain agent":
                builder = StateGraph(MessagesState)
                builder.add_node("agent", agent)
                builder.add_edge(START, "agent")
                builder.add_edge("agent", END)
                graph = builder.compile(checkpointer=saver)
            else:
                store = FileIndexStore(Path(tmp) / "idx") if "File" in label else None
                graph = create_librarian_graph(
                    agent, LibrarianConfig(store=store), checkpointer=saver
                )
            run(graph, args.turns, "exit" if "exit" in label else None)
            saver.conn.close()
            results[label] = db.stat().st_size
        base = results["plain agent"]
        title = f"graph ({args.turns} turns, {2 * args.turns} messages)"
        print(f"| {title} | SQLite checkpoint size | vs plain |")
        print("|---|---:|---:|")
        for label, size in results.items():
            print(f"| {label} | {size / 1e6:.1f} MB | {size / base:.2f}x |")


if __name__ == "__main__":
    main()
