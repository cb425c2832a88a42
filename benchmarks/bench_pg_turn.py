"""Cost of one graph turn on PostgreSQL: a plain graph vs the Librarian (saver + store).

Run: python benchmarks/bench_pg_turn.py [--sizes 100 1000 10000] [--turns 20]
     [--dsn postgresql://postgres@127.0.0.1:5432/test]

Both graphs use ``PostgresSaver``; the Librarian keeps its index in ``PostgresStore``
(``create_librarian_graph(..., store=...)``, lean state). Each thread is first filled
with N messages (and, for the Librarian, their index), then ``--turns`` turns are timed:
one user message in, one fixed reply out (no model: this measures the library and the
database, not a provider). The offline engine runs lexical-only so that the query
embedding (about 7 ms with the packaged model) does not blur the comparison. A third
graph, the plain one with two no-op nodes around the agent, shows what LangGraph itself
charges for the Librarian graph's shape.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from typing import Any

os.environ.setdefault("LIBRARIAN_EMBEDDINGS", "none")

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.postgres import PostgresStore

from langgraph_librarian import LangGraphIndexStore, LibrarianConfig, create_librarian_graph
from langgraph_librarian.index import update_index

TOPICS = ["budget", "venue", "catering", "travel", "speakers", "hotel", "visa", "agenda"]


def history(n: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        text = (
            f"Message {i} on the {topic}: we compared options for the {topic} and noted "
            f"figure {i * 37 % 1000} with owner person{i % 13}. "
        ) * 4
        cls = HumanMessage if i % 2 == 0 else AIMessage
        messages.append(cls(content=text, id=f"m{i}"))
    return messages


def reply(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [AIMessage(content="Noted, thanks.")]}


def plain_graph(saver: PostgresSaver, extra_nodes: bool = False) -> Any:
    """The plain graph; with ``extra_nodes``, no-op nodes before and after the agent (the
    shape of a Librarian graph with nothing in its two nodes: LangGraph's own cost)."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", reply)
    if extra_nodes:
        builder.add_node("before", lambda state: {})
        builder.add_node("after", lambda state: {})
        builder.add_edge(START, "before")
        builder.add_edge("before", "agent")
        builder.add_edge("agent", "after")
    else:
        builder.add_edge(START, "agent")
    return builder.compile(checkpointer=saver)


def time_turns(graph: Any, thread: str, turns: int) -> list[float]:
    cfg = {"configurable": {"thread_id": thread}}
    times = []
    for turn in range(turns):
        message = HumanMessage(content=f"Turn {turn}: what did we note about the visa figure?")
        start = time.perf_counter()
        graph.invoke({"messages": [message]}, cfg)
        times.append((time.perf_counter() - start) * 1000)
    return times


def measure(dsn: str, n: int, turns: int) -> dict[str, Any]:
    messages = history(n)
    with PostgresSaver.from_conn_string(dsn) as saver, PostgresStore.from_conn_string(dsn) as pg:
        saver.setup()
        pg.setup()
        plain = plain_graph(saver)
        thread = f"bench-plain-{uuid.uuid4()}"
        plain.update_state({"configurable": {"thread_id": thread}}, {"messages": messages})
        plain_ms = time_turns(plain, thread, turns)

        shaped = plain_graph(saver, extra_nodes=True)
        thread = f"bench-shape-{uuid.uuid4()}"
        shaped.update_state({"configurable": {"thread_id": thread}}, {"messages": messages})
        shape_ms = time_turns(shaped, thread, turns)

        librarian = create_librarian_graph(reply, LibrarianConfig(), checkpointer=saver, store=pg)
        thread = f"bench-lib-{uuid.uuid4()}"
        entries = update_index(messages, [], LibrarianConfig()).entries
        LangGraphIndexStore(pg).save(thread, entries)
        librarian.update_state({"configurable": {"thread_id": thread}}, {"messages": messages})
        librarian_ms = time_turns(librarian, thread, turns)
    return {
        "messages": n,
        "plain_p50": statistics.median(plain_ms),
        "plain_p95": sorted(plain_ms)[int(0.95 * (len(plain_ms) - 1))],
        "shape_p50": statistics.median(shape_ms),
        "librarian_p50": statistics.median(librarian_ms),
        "librarian_p95": sorted(librarian_ms)[int(0.95 * (len(librarian_ms) - 1))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument(
        "--dsn",
        default=os.environ.get(
            "LIBRARIAN_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )
    args = parser.parse_args()
    print(
        "| messages | plain turn p50 / p95 ms | Librarian turn p50 / p95 ms | ratio (p50) "
        "| plain + 2 no-op nodes p50 ms (ratio) |"
    )
    print("|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        row = measure(args.dsn, n, args.turns)
        print(
            f"| {n:,} | {row['plain_p50']:.1f} / {row['plain_p95']:.1f} | "
            f"{row['librarian_p50']:.1f} / {row['librarian_p95']:.1f} | "
            f"{row['librarian_p50'] / row['plain_p50']:.2f}x | "
            f"{row['shape_p50']:.1f} ({row['shape_p50'] / row['plain_p50']:.2f}x) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
