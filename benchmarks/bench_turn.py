"""Per-turn cost of select_and_hydrate as a conversation grows: does a turn cost what is new?

Run:
    python benchmarks/bench_turn.py [--sizes 1000 10000 50000] [--turns 20] [--modes ...] [--cpu]
    /tmp/refvenv/bin/python benchmarks/bench_turn.py --reference   # langgraph-librarian==0.1.0

A history of N messages is indexed once; then each turn appends two messages (the
agent's reply and a new question), the index node indexes the reply (not timed), and
``select_and_hydrate`` runs on the new state (timed). Reported: median and p95 ms over
the timed turns, after a few warm-up turns, for

- ``local``: the offline engine, lexical only (``embeddings=None``);
- ``static``: the offline engine with the default packaged embeddings;
- ``fresh``: ``local`` on a state deserialized anew each turn, as a checkpointer hands it;
- ``llm``: the LLM selector path with a scripted zero-latency model (the library's work
  only), comparable with the reference package, whose only selector is a model;
- ``index``: the other half of a turn, the index node (``index_messages``, offline engine,
  index in graph state) indexing the agent's reply: timed instead of the selection;
- ``store`` / ``store-index``: ``local`` and ``index`` with the index in a LangGraph store
  (``LangGraphIndexStore(InMemoryStore())``, as a long-lived thread should keep it), so
  graph state carries no index at all.

``--cpu`` times CPU seconds of this process (``time.process_time``) instead of wall time:
on a machine shared with other work it moves less with the load.

``--reference`` times ``langgraph-librarian==0.1.0`` (installed in its own venv) on the
same histories: its select_and_hydrate with a zero-latency scripted model (it has no
offline selector) and its index grown by two entries per turn.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOPICS = ["budget", "venue", "catering", "travel", "speakers", "hotel", "visa", "agenda"]
WARMUP = 3


def history(n: int) -> list[Any]:
    """The bench_core history (same text), without the final question."""
    from langchain_core.messages import AIMessage, HumanMessage

    messages: list[Any] = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        text = (
            f"Message {i} on the {topic}: we compared options for the {topic} and noted "
            f"figure {i * 37 % 1000} with owner person{i % 13}. " * 4
        )
        cls = HumanMessage if i % 2 == 0 else AIMessage
        messages.append(cls(content=text, id=f"m{i}"))
    return messages


def turn_messages(turn: int) -> tuple[Any, Any]:
    """The agent's reply to the last question, then the next question."""
    from langchain_core.messages import AIMessage, HumanMessage

    topic = TOPICS[turn % len(TOPICS)]
    reply = AIMessage(
        f"Noted: the {topic} figure is {turn * 11} for person{turn % 13}.", id=f"r{turn}"
    )
    question = HumanMessage(f"What did we decide about the {topic} figure?", id=f"q{turn}")
    return reply, question


def summary(ms: list[float]) -> str:
    ordered = sorted(ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ms):.1f} / {p95:.1f}"


def ours(n: int, turns: int, mode: str, cpu: bool = False) -> list[float]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fakes import ScriptedChatModel
    from langgraph_librarian import LibrarianConfig, index_messages, select_and_hydrate
    from langgraph_librarian._engine.view import clear_views

    # Each mode is its own conversation, as in a process serving one: the histories of
    # the modes are equal message for message, and a view left by one would otherwise
    # be matched field by field by the next.
    clear_views()

    if mode == "static":
        config = LibrarianConfig()
    elif mode == "llm":
        config = LibrarianConfig(
            embeddings=None, selector_model=ScriptedChatModel(script="IDs: [1, 3]")
        )
    elif mode in ("store", "store-index"):
        from langgraph.store.memory import InMemoryStore

        from langgraph_librarian import LangGraphIndexStore

        config = LibrarianConfig(embeddings=None, store=LangGraphIndexStore(InMemoryStore()))
    else:
        config = LibrarianConfig(embeddings=None)
    clock = time.process_time if cpu else time.perf_counter
    timed_index = mode in ("index", "store-index")
    cfg: Any = {"configurable": {"librarian": config, "thread_id": f"bench-{mode}-{n}"}}
    messages = history(n)
    index = index_messages({"messages": messages}, cfg).get("index", [])
    times: list[float] = []
    for turn in range(turns + WARMUP):
        reply, question = turn_messages(turn)
        messages = [*messages, reply]
        start = clock()
        index = index_messages({"messages": messages, "index": index}, cfg).get("index", index)
        if timed_index and turn >= WARMUP:
            times.append((clock() - start) * 1000)
        messages = [*messages, question]
        state = {"messages": messages, "index": index}
        if mode == "fresh":  # every object new, as a checkpointer deserializes them
            state = pickle.loads(pickle.dumps(state))
        start = clock()
        select_and_hydrate(state, cfg)
        if turn >= WARMUP and not timed_index:
            times.append((clock() - start) * 1000)
        messages, index = state["messages"], state["index"]
    return times


def reference(n: int, turns: int) -> list[float]:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from langgraph_librarian import LibrarianConfig, select_and_hydrate
    from langgraph_librarian.state import IndexEntry

    def entry(i: int, message: Any) -> Any:
        # What its indexer stores: a summary per message (the model's text; here the
        # message's first sentence, so the selection prompt has a realistic size).
        return IndexEntry(id=i, role=message.type, summary=str(message.content)[:160])

    model = FakeListChatModel(responses=["Reasoning: scripted. IDs: [1, 3]"])
    config = LibrarianConfig(indexer_model=model, selector_model=model)
    cfg: Any = {"configurable": {"librarian": config}}
    messages = history(n)
    index = [entry(i, m) for i, m in enumerate(messages)]
    times: list[float] = []
    for turn in range(turns + WARMUP):
        reply, question = turn_messages(turn)
        messages = [*messages, reply, question]
        index = [*index, entry(len(index), reply)]
        state = {"messages": messages, "index": index, "query": str(question.content)}
        start = time.perf_counter()
        select_and_hydrate(state, cfg)
        if turn >= WARMUP:
            times.append((time.perf_counter() - start) * 1000)
        index = [*index, entry(len(index), question)]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--modes", nargs="+", default=["local", "static", "fresh", "llm", "index"])
    parser.add_argument("--reference", action="store_true")
    parser.add_argument("--cpu", action="store_true", help="CPU time instead of wall time")
    args = parser.parse_args()
    if args.reference:
        print("| messages | langgraph-librarian 0.1.0, LLM selector (scripted, 0 ms) |")
        print("|---:|---:|")
        for n in args.sizes:
            print(f"| {n:,} | {summary(reference(n, args.turns))} |", flush=True)
        return
    runs: dict[str, Callable[[int], list[float]]] = {
        mode: (lambda n, mode=mode: ours(n, args.turns, mode, args.cpu)) for mode in args.modes
    }
    print("| messages | " + " | ".join(f"{m} (ms, median / p95)" for m in runs) + " |")
    print("|---:|" + "---:|" * len(runs))
    for n in args.sizes:
        cells = [summary(run(n)) for run in runs.values()]
        print(f"| {n:,} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
