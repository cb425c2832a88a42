"""What the selector's question-shape rules cost when they fire, at a long history.

Run: python benchmarks/bench_rules.py [--messages 10000] [--repeats 30]

Some rules of the offline selector read more of the history only for questions of one
shape: a go-ahead question reads the statements of what the user cannot have
(``_constraints``), a question relating two events in time reads the passages naming the
months around a best match's dates (``_coinciding``); and one reads every question of a
chat with an assistant (``_restated``: the best-matching replies and the user's messages
around them). This times ``LocalSelector.select``
(lexical only, so no query embedding blurs it) for such questions on a history in which
every message names days and allergies come up, with each rule switched on and off
(its question pattern replaced by one that never matches). The worst case for both:
nearly every passage holds what the rule reads. Results are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector, local

MONTHS = "January February March April May June July August September October November December"
EVENTS = ["dentist", "show", "trip", "meeting", "party", "exam", "recital", "visit"]

RULES = {
    "_TWO_EVENTS": "Will I be able to go to the show after my exam on June 14?",
    "_ASKS_GO_AHEAD": "Can I eat the pad thai at the party?",
    "_restated": "Which figures did person5 note for the recital?",
}
"""Rule -> a question it reads. A pattern rule is switched off by a pattern that never
matches; a method (``_restated``, which reads every question in a chat with an assistant)
by one that changes nothing."""


def _switched_off(name: str) -> object:
    if name.startswith("_") and name[1:2].isupper():
        return re.compile(r"(?P<next>(?!))")
    return staticmethod(lambda *args, **kwargs: (None, set()))


def history(n: int, seed: int = 3) -> list[BaseMessage]:
    rng = random.Random(seed)
    months = MONTHS.split()
    messages: list[BaseMessage] = []
    for i in range(n):
        month = months[rng.randrange(12)]
        text = (
            f"Note {i}: the {rng.choice(EVENTS)} is on {rng.choice(['Monday', 'Friday'])} "
            f"{month} {rng.randrange(1, 28)} and we are back {month} {rng.randrange(1, 28)}; "
            f"owner person{i % 13}, figure {i * 37 % 1000}."
        )
        if i % 50 == 0:
            text += " I'm allergic to peanuts, so is my son."
        messages.append((HumanMessage if i % 2 == 0 else AIMessage)(text, id=f"m{i}"))
    return messages


def timed(question: str, messages: list[BaseMessage], entries: list, repeats: int) -> float:
    selector = LocalSelector(embeddings=None)
    selector.select(question, messages, entries)  # warm the index and the memos
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        selector.select(question, messages, entries)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    base = history(args.messages)
    print("| rule | question | select p50 ms, rule on | rule off |")
    print("|---|---|---:|---:|")
    for name, question in RULES.items():
        messages = [*base, HumanMessage(question, id="q")]
        entries = update_index(messages, [], LibrarianConfig(embeddings=None)).entries[:-1]
        on = timed(question, messages, entries, args.repeats)
        owner = local if hasattr(local, name) else LocalSelector
        saved = owner.__dict__[name]
        setattr(owner, name, _switched_off(name))
        try:
            off = timed(question, messages, entries, args.repeats)
        finally:
            setattr(owner, name, saved)
        print(f"| `{name}` | {question} | {on:.2f} | {off:.2f} |")


if __name__ == "__main__":
    main()
