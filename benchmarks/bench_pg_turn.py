"""Cost of one graph turn on PostgreSQL: a plain graph vs the Librarian (saver + store).

Run: python benchmarks/bench_pg_turn.py [--sizes 100 1000 10000] [--turns 20]
     [--interleave] [--state] [--face graph|middleware]
     [--dsn postgresql://postgres@127.0.0.1:5432/test]

Both graphs use ``PostgresSaver``; the Librarian keeps its index in ``PostgresStore``
(``create_librarian_graph(..., store=...)``, lean state). Each thread is first filled
with N messages (and, for the Librarian, their index), then ``--turns`` turns are timed:
one user message in, one fixed reply out (no model: this measures the library and the
database, not a provider). The offline engine runs lexical-only so that the query
embedding (about 7 ms with the packaged model) does not blur the comparison. A third
graph, the plain one with two no-op nodes around the agent, shows what LangGraph itself
charges for the Librarian graph's shape.

By default each graph's turns are timed in one block (plain, then shaped, then the
Librarian). With ``--interleave`` the three graphs take turns, one turn each in rotation,
so a change in what else runs on the machine reaches all three alike (on a shared
machine the blocks' ratios swing by more than the Librarian's whole cost).

``--state`` adds a fourth graph, printed as a last column: the no-op shape on the
Librarian's state schema, its two nodes writing what the Librarian's nodes write
(``curated_messages``: the last 19 messages, what the Librarian curates at 100 messages;
``selected_ids``; a ``librarian_metadata`` of the same keys), without reading or doing
anything: what checkpointing the spec's state costs LangGraph, apart from the
Librarian's work.

``--background`` sets ``LibrarianConfig(background_indexing=True)``: indexing and the
store write run in a worker thread after the turn returns (the next turn's selection
gives what is not indexed yet provisional entries).

``--face middleware`` measures the other face instead: ``create_agent`` with a chat model
that always gives the same reply, plain against the same agent with
``LibrarianMiddleware(LibrarianConfig(store=...))`` (selection inside the model call, no
extra node before it; indexing in its ``after_agent`` node). The shape column is then
the plain agent with a middleware whose ``after_agent`` does nothing (LangGraph's cost of
that node). ``--state`` does not apply to it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from typing import Any

os.environ.setdefault("LIBRARIAN_EMBEDDINGS", "none")

from itertools import count

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.postgres import PostgresStore

from langgraph_librarian import (
    LangGraphIndexStore,
    LibrarianConfig,
    create_librarian_graph,
)
from langgraph_librarian.index import update_index
from langgraph_librarian.middleware import LibrarianMiddleware
from langgraph_librarian.state import LibrarianState

TOPICS = [
    "budget",
    "venue",
    "catering",
    "travel",
    "speakers",
    "hotel",
    "visa",
    "agenda",
]


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


def _selection_written(state: dict[str, Any]) -> dict[str, Any]:
    messages = state["messages"]
    n = len(messages)
    metadata: dict[str, Any] = {
        "selection_skipped": False,
        "selected_ids": list(range(n - 19, n - 3)),
        "selection_reasoning": "local: lexical and passage scores",
        "selection_strategy": "local",
        "selection_fallback": False,
        "original_count": n,
        "original_tokens": 108 * n,
        "curated_count": 19,
        "curated_tokens": 1330,
        "token_reduction_pct": 87.7,
        "query": "what did we note about the visa figure?",
        "index_size": n,
        "unindexed_count": 0,
        "candidate_count": n - 3,
        "selector_shortlisted": False,
        "selector_prompt_tokens": 0,
        "expanded_ids": [],
        "dropped_for_budget": [],
        "shortened_recent_ids": [],
        "shortened_selected_ids": [],
        "context_budget": 2000,
        "selection_latency_ms": 1.5,
    }
    return {
        "curated_messages": list(messages[-19:]),
        "selected_ids": metadata["selected_ids"],
        "librarian_metadata": metadata,
    }


def _indexing_written(state: dict[str, Any]) -> dict[str, Any]:
    n = len(state["messages"])
    counts = {"new": 1, "total": n, "failed": 0, "dropped": 0, "reused": 1}
    metadata: dict[str, Any] = {f"indexing_{k}_count": v for k, v in counts.items()}
    metadata["indexing_latency_ms"] = 0.3
    return {"librarian_metadata": metadata}


def state_graph(saver: PostgresSaver) -> Any:
    """The no-op shape on the Librarian's state schema, writing what its nodes write."""
    builder = StateGraph(LibrarianState)
    builder.add_node("before", _selection_written)
    builder.add_node("agent", reply)
    builder.add_node("after", _indexing_written)
    builder.add_edge(START, "before")
    builder.add_edge("before", "agent")
    builder.add_edge("agent", "after")
    return builder.compile(checkpointer=saver)


class _NoOpAfterAgent(AgentMiddleware):  # type: ignore[type-arg]
    """An ``after_agent`` node that writes nothing: the middleware face's shape."""

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return None


def _fixed_reply_model() -> GenericFakeChatModel:
    # A new message object per turn: one object repeated gets its id on the first turn,
    # and each later reply then replaced the earlier one (the thread became a run of user
    # messages with one reply at its end, not a chat).
    return GenericFakeChatModel(messages=(AIMessage(content="Noted, thanks.") for _ in count()))


def agents(saver: PostgresSaver, store: PostgresStore) -> tuple[Any, Any, Any]:
    """(plain agent, plain agent + a no-op after_agent node, agent + LibrarianMiddleware)."""
    plain = create_agent(_fixed_reply_model(), checkpointer=saver)
    shaped = create_agent(_fixed_reply_model(), middleware=[_NoOpAfterAgent()], checkpointer=saver)
    librarian = create_agent(
        _fixed_reply_model(),
        middleware=[
            LibrarianMiddleware(LibrarianConfig(store=store, background_indexing=BACKGROUND[0]))
        ],
        checkpointer=saver,
        store=store,
    )
    return plain, shaped, librarian


def time_turns(graph: Any, thread: str, turns: int) -> list[float]:
    cfg = {"configurable": {"thread_id": thread}}
    times = []
    for turn in range(turns):
        message = HumanMessage(content=f"Turn {turn}: what did we note about the visa figure?")
        start = time.perf_counter()
        graph.invoke({"messages": [message]}, cfg)
        times.append((time.perf_counter() - start) * 1000)
    return times


def start_thread(graph: Any, messages: list[BaseMessage], store: Any = None) -> str:
    """A new thread holding ``messages`` (and, with ``store``, their index)."""
    thread = f"bench-{uuid.uuid4()}"
    if store is not None:
        entries = update_index(messages, [], LibrarianConfig()).entries
        LangGraphIndexStore(store).save(thread, entries)
    graph.update_state({"configurable": {"thread_id": thread}}, {"messages": messages})
    return thread


def measure(
    dsn: str,
    n: int,
    turns: int,
    interleave: bool = False,
    state: bool = False,
    face: str = "graph",
) -> dict[str, Any]:
    messages = history(n)
    with (
        PostgresSaver.from_conn_string(dsn) as saver,
        PostgresStore.from_conn_string(dsn) as pg,
    ):
        saver.setup()
        pg.setup()
        if face == "middleware":
            plain, shaped, librarian = agents(saver, pg)
            state = False
        else:
            plain = plain_graph(saver)
            shaped = plain_graph(saver, extra_nodes=True)
            librarian = create_librarian_graph(
                reply,
                # (background indexing needs the store in the config itself)
                LibrarianConfig(store=pg, background_indexing=True)
                if BACKGROUND[0]
                else LibrarianConfig(),
                checkpointer=saver,
                store=pg,
            )
        stated = state_graph(saver) if state else None
        state_ms: list[float] = []
        if interleave:
            runs = [
                (plain, start_thread(plain, messages)),
                (shaped, start_thread(shaped, messages)),
                (librarian, start_thread(librarian, messages, pg)),
            ]
            if stated is not None:
                runs.append((stated, start_thread(stated, messages)))
            timed: list[list[float]] = [[] for _ in runs]
            for _ in range(turns):
                for times, (graph, thread) in zip(timed, runs, strict=True):
                    times.extend(time_turns(graph, thread, 1))
            plain_ms, shape_ms, librarian_ms = timed[:3]
            state_ms = timed[3] if stated is not None else []
        else:
            plain_ms = time_turns(plain, start_thread(plain, messages), turns)
            shape_ms = time_turns(shaped, start_thread(shaped, messages), turns)
            librarian_ms = time_turns(librarian, start_thread(librarian, messages, pg), turns)
            if stated is not None:
                state_ms = time_turns(stated, start_thread(stated, messages), turns)
    return {
        "messages": n,
        "plain_p50": statistics.median(plain_ms),
        "plain_p95": sorted(plain_ms)[int(0.95 * (len(plain_ms) - 1))],
        "shape_p50": statistics.median(shape_ms),
        "state_p50": statistics.median(state_ms) if state_ms else None,
        "librarian_p50": statistics.median(librarian_ms),
        "librarian_p95": sorted(librarian_ms)[int(0.95 * (len(librarian_ms) - 1))],
    }


BACKGROUND = [False]
"""``--background``: the Librarian indexes in a worker thread (``background_indexing``)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--interleave", action="store_true", help="time the graphs turn by turn")
    parser.add_argument(
        "--state", action="store_true", help="add the no-op shape writing the Librarian's state"
    )
    parser.add_argument(
        "--face",
        choices=["graph", "middleware"],
        default="graph",
        help="the Librarian graph (default) or create_agent with LibrarianMiddleware",
    )
    parser.add_argument(
        "--dsn",
        default=os.environ.get(
            "LIBRARIAN_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )
    parser.add_argument(
        "--background",
        action="store_true",
        help="LibrarianConfig(background_indexing=True): the store write leaves the turn",
    )
    args = parser.parse_args()
    BACKGROUND[0] = args.background
    state_head = " plain + 2 nodes writing the Librarian's state p50 ms (ratio) |"
    shape = "1 no-op after_agent node" if args.face == "middleware" else "2 no-op nodes"
    print(
        "| messages | plain turn p50 / p95 ms | Librarian turn p50 / p95 ms | ratio (p50) "
        f"| plain + {shape} p50 ms (ratio) |" + (state_head if args.state else "")
    )
    print("|---:|---:|---:|---:|---:|" + ("---:|" if args.state else ""))
    for n in args.sizes:
        row = measure(args.dsn, n, args.turns, args.interleave, args.state, args.face)
        state = ""
        if row["state_p50"] is not None:
            state = f" {row['state_p50']:.1f} ({row['state_p50'] / row['plain_p50']:.2f}x) |"
        print(
            f"| {n:,} | {row['plain_p50']:.1f} / {row['plain_p95']:.1f} | "
            f"{row['librarian_p50']:.1f} / {row['librarian_p95']:.1f} | "
            f"{row['librarian_p50'] / row['plain_p50']:.2f}x | "
            f"{row['shape_p50']:.1f} ({row['shape_p50'] / row['plain_p50']:.2f}x) |" + state,
            flush=True,
        )


if __name__ == "__main__":
    main()
