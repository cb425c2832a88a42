"""Core speed benchmarks: indexing concurrency, selection overhead, selector prompt size.

Run: python benchmarks/bench_core.py [--sizes 100 1000 10000] [--json] [--indexing-only]

A scripted chat model with a fixed latency stands in for the provider, so the numbers
measure the library, not a network. Results are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from langchain_core.messages import AIMessage, HumanMessage

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig, index_messages, select_and_hydrate
from langgraph_librarian.index import aupdate_index, update_index
from langgraph_librarian.select import LocalSelector

TOPICS = ["budget", "venue", "catering", "travel", "speakers", "hotel", "visa", "agenda"]


def history(n: int) -> list:
    messages = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        text = (
            f"Message {i} on the {topic}: we compared options for the {topic} and noted "
            f"figure {i * 37 % 1000} with owner person{i % 13}. " * 4
        )
        cls = HumanMessage if i % 2 == 0 else AIMessage
        messages.append(cls(content=text, id=f"m{i}"))
    messages.append(HumanMessage(content="What did we decide about the visa figure?", id="q"))
    return messages


def bench_indexing(latency: float) -> dict:
    messages = history(100)[:100]
    out = {}
    model = ScriptedChatModel(script="A summary.", latency=latency)
    start = time.perf_counter()
    update_index(messages, [], LibrarianConfig(indexer_model=model))
    out["sync_s"] = round(time.perf_counter() - start, 3)
    model = ScriptedChatModel(script="A summary.", latency=latency)
    start = time.perf_counter()
    asyncio.run(aupdate_index(messages, [], LibrarianConfig(indexer_model=model)))
    out["async_s"] = round(time.perf_counter() - start, 3)
    out["calls"] = len(model.calls)
    return out


def bench_extractive(n: int = 2000) -> dict:
    messages = history(n)[:n]
    start = time.perf_counter()
    update_index(messages, [], LibrarianConfig(embeddings=None))
    elapsed = time.perf_counter() - start
    words = statistics.mean(len(str(m.content).split()) for m in messages)
    return {"messages": n, "words_per_message": round(words), "per_second": round(n / elapsed)}


def bench_local_only(n: int, repeats: int) -> float:
    """LocalSelector.select alone (warm caches), without state parsing and reconciliation."""
    from langgraph_librarian._engine.view import clear_views

    messages = history(n)
    entries = update_index(messages, [], LibrarianConfig(embeddings=None)).entries[:-1]
    clear_views()  # the extractive run built an equal history of other objects
    selector = LocalSelector()
    query = str(messages[-1].content)
    selector.select(query, messages, entries)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        selector.select(query, messages, entries)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def bench_fresh_state(n: int, repeats: int) -> float:
    """select_and_hydrate on a state deserialized anew every turn, as a checkpointer hands it.

    The previous turn's state (n-1 messages and their index, written by index_messages)
    is followed by a new question; each repeat unpickles a fresh copy, so no object is
    shared with an earlier call and only the library's own caches can help.
    """
    import pickle

    messages = history(n)
    config = LibrarianConfig()
    cfg = {"configurable": {"librarian": config}}
    before = index_messages({"messages": messages[:-1]}, cfg)["index"]
    blob = pickle.dumps({"messages": messages, "index": before})
    select_and_hydrate(pickle.loads(blob), cfg)  # the process has served this thread before
    times = []
    for _ in range(repeats):
        state = pickle.loads(blob)
        start = time.perf_counter()
        select_and_hydrate(state, cfg)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def bench_selection(n: int, repeats: int) -> dict:
    from langgraph_librarian._engine.view import clear_views

    messages = history(n)
    index = [e.to_dict() for e in update_index(messages, [], LibrarianConfig()).entries]
    state = {"messages": messages, "index": index}
    result = {
        "messages": n,
        "local_selector_only_ms": bench_local_only(n, repeats),
        "fresh_state_ms": bench_fresh_state(n, repeats),
    }
    for label, config in [
        ("local", LibrarianConfig()),
        (
            "llm",
            LibrarianConfig(
                indexer_model="local", selector_model=ScriptedChatModel(script="IDs: [1, 3]")
            ),
        ),
    ]:
        cfg = {"configurable": {"librarian": config}}
        # The sections above built equal histories of other objects under the same ids;
        # a process serving this conversation would not have them.
        clear_views()
        select_and_hydrate(state, cfg)  # warm caches, as in a running service
        times = []
        meta = {}
        for _ in range(repeats):
            start = time.perf_counter()
            meta = select_and_hydrate(state, cfg)["librarian_metadata"]
            times.append((time.perf_counter() - start) * 1000)
        result[f"{label}_ms_median"] = round(statistics.median(times), 2)
        if label == "llm":
            result["llm_prompt_tokens"] = meta["selector_prompt_tokens"]
            result["llm_shortlisted"] = meta["selector_shortlisted"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--indexing-only", action="store_true", help="the two indexing lines, no selection"
    )
    args = parser.parse_args()
    report = {
        "extractive": bench_extractive(),
        "indexing_100_messages": bench_indexing(args.latency),
        "selection": []
        if args.indexing_only
        else [bench_selection(n, args.repeats) for n in args.sizes],
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    ex = report["extractive"]
    print(
        f"extractive indexing: {ex['per_second']:,} messages/s "
        f"({ex['messages']} messages of ~{ex['words_per_message']} words, lexical only)"
    )
    ix = report["indexing_100_messages"]
    print(
        f"indexing 100 messages at {args.latency * 1000:.0f} ms/call: "
        f"sync {ix['sync_s']} s, async {ix['async_s']} s ({ix['calls']} model calls)"
    )
    if not report["selection"]:
        return
    print(
        "| messages | LocalSelector.select (ms) | select_and_hydrate, local (ms) "
        "| same, state deserialized anew (ms) "
        "| select_and_hydrate, LLM path minus model (ms) | selector prompt tokens |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for row in report["selection"]:
        print(
            f"| {row['messages']:,} | {row['local_selector_only_ms']} | {row['local_ms_median']} | "
            f"{row['fresh_state_ms']} | {row['llm_ms_median']} | "
            f"{row['llm_prompt_tokens']}{' (shortlisted)' if row['llm_shortlisted'] else ''} |"
        )


if __name__ == "__main__":
    main()
