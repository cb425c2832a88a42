"""Load test: many conversations at once on one PostgreSQL (saver + store), several processes.

Run: python benchmarks/bench_load.py [--processes 4] [--threads 4] [--turns 20]
     [--dsn postgresql://postgres@127.0.0.1:5432/test]

Each process opens one connection pool shared by ``PostgresSaver`` and ``PostgresStore``
(the recipe in docs/librarian.md) and runs ``--threads`` conversations concurrently, each
``--turns`` turns long, through ``create_librarian_graph(..., store=...)`` with the offline
engine (lexical) and a fixed reply. Loopback only; bounded by the arguments. Afterwards
every conversation is checked: its index must cover exactly its messages (same ids, same
content hashes, in order).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

os.environ.setdefault("LIBRARIAN_EMBEDDINGS", "none")

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.store.postgres import PostgresStore
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from langgraph_librarian import LangGraphIndexStore, create_librarian_graph
from langgraph_librarian._engine.messages import content_hash

TEXT = (
    "We compared the venue options and noted the prices and dates; the owner of the "
    "decision is Dana and the deadline moved to Friday. "
) * 3


def reply(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [AIMessage(content=f"Noted. {TEXT}")]}


def pool_for(dsn: str, size: int) -> ConnectionPool:
    # The settings LangGraph's Postgres savers and stores need on pooled connections.
    return ConnectionPool(
        dsn,
        min_size=1,
        max_size=size,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=True,
    )


def worker(args: tuple[str, str, int, int, int]) -> dict[str, Any]:
    dsn, run, process, threads, turns = args
    with pool_for(dsn, threads + 2) as pool:
        saver, store = PostgresSaver(pool), PostgresStore(pool)
        graph = create_librarian_graph(reply, checkpointer=saver, store=store)

        def conversation(t: int) -> tuple[str, list[float]]:
            thread = f"load-{run}-{process}-{t}"
            cfg = {"configurable": {"thread_id": thread}}
            times = []
            for turn in range(turns):
                start = time.perf_counter()
                message = HumanMessage(f"Turn {turn}: {TEXT}")
                graph.invoke({"messages": [message]}, cfg)
                times.append((time.perf_counter() - start) * 1000)
            return thread, times

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=threads) as executor:
            results = list(executor.map(conversation, range(threads)))
        elapsed = time.perf_counter() - started
        problems = []
        index_store = LangGraphIndexStore(store)
        for thread, _ in results:
            messages = graph.get_state({"configurable": {"thread_id": thread}}).values["messages"]
            entries = index_store.load(thread) or []
            if [e.message_id for e in entries] != [m.id for m in messages] or [
                e.content_hash for e in entries
            ] != [content_hash(m) for m in messages]:
                problems.append(thread)
    return {
        "times": [t for _, times in results for t in times],
        "elapsed": elapsed,
        "problems": problems,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4, help="conversations per process")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument(
        "--dsn",
        default=os.environ.get(
            "LIBRARIAN_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )
    args = parser.parse_args()
    with (
        PostgresSaver.from_conn_string(args.dsn) as saver,
        PostgresStore.from_conn_string(args.dsn) as store,
    ):
        saver.setup()
        store.setup()
    run = uuid.uuid4().hex[:8]
    jobs = [(args.dsn, run, p, args.threads, args.turns) for p in range(args.processes)]
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        results = pool.map(worker, jobs)
    wall = time.perf_counter() - started
    times = sorted(t for r in results for t in r["times"])
    problems = [p for r in results for p in r["problems"]]
    conversations = args.processes * args.threads
    busiest = max(r["elapsed"] for r in results)
    print(
        f"{conversations} conversations x {args.turns} turns in {args.processes} processes: "
        f"{len(times) / busiest:.1f} turns/s (slowest process {busiest:.1f} s; wall with "
        f"start-up {wall:.1f} s); turn p50 {statistics.median(times):.0f} ms, "
        f"p95 {times[int(0.95 * (len(times) - 1))]:.0f} ms; "
        f"index matches history in {conversations - len(problems)}/{conversations} conversations"
    )
    if problems:
        raise SystemExit(f"index does not match history: {problems[:5]}")


if __name__ == "__main__":
    main()
