"""The web chat's costs: loading the demo, a turn, and SQLite growth per turn.

Run: python benchmarks/bench_ui.py [--questions 5] [--no-recall]
     LIBRARIAN_EMBEDDINGS=none python benchmarks/bench_ui.py   # lexical only

Uses ``ChatService`` (what ``librarian ui`` runs) with no chat model: loads the
240-message demo conversation into a new thread, asks its first questions, and prints
the load time, each turn's time (selection, indexing and the checkpoint write) and how
much the SQLite file grew per turn. Then it asks the next questions from a new thread,
which (recall on, the default) recalls from the demo thread's copy in the scope.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from langgraph_librarian.ui import ChatService


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--no-recall", action="store_true", help="ChatService(scope=None)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    service = ChatService(folder / "chat.db", scope=None if args.no_recall else "default")
    start = time.perf_counter()
    demo = service.load_demo()
    load_seconds = time.perf_counter() - start
    loaded = _size(folder)
    turns = []
    for question in demo.questions[: args.questions]:
        start = time.perf_counter()
        list(service.send(demo.thread_id, question, "librarian"))
        turns.append(time.perf_counter() - start)
    growth = (_size(folder) - loaded) / max(len(turns), 1)
    fresh = service.new_thread_id()
    fresh_turns = []
    recalled = 0
    for question in demo.questions[args.questions : args.questions + 3]:
        start = time.perf_counter()
        events = list(service.send(fresh, question, "librarian"))
        fresh_turns.append(time.perf_counter() - start)
        report = getattr(events[-1], "report", None)
        recalled = len(report.recalled) if report is not None else 0
    service.close()
    engine = os.environ.get("LIBRARIAN_EMBEDDINGS") or "auto (packaged model if installed)"
    print(f"embeddings: {engine}")
    print(f"demo load: {demo.messages} messages in {load_seconds:.1f} s")
    print(f"turns (s): {', '.join(f'{t:.2f}' for t in turns)}")
    print(f"SQLite: {loaded / 1e6:.1f} MB after the load, +{growth / 1e6:.2f} MB per turn")
    print(
        f"new thread, recall {'off' if args.no_recall else 'on'} (s): "
        f"{', '.join(f'{t:.2f}' for t in fresh_turns)}; records recalled last turn: {recalled}"
    )
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
