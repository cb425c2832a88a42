"""Scoped recall on LoCoMo: every session a separate thread, every question from a new one.

Run:
    python benchmarks/bench_recall.py --data ../shared/data/locomo/locomo10.json
        [--max-bytes 8000] [--budget 2000] [--no-embeddings] [--json bench-out/recall.json]
        [--conversations 0-4]

For each conversation, each session is captured as its own thread of one scope (the
conversation), through ``ScopeMemory.capture``. Each question is then asked from a
fresh thread: the only thing the model would get is the recalled block
(``ScopeMemory.recall``, ``--max-bytes`` UTF-8 bytes, about ``--budget`` tokens). The
reference is the same conversation asked within one thread: the Librarian's in-thread
selection with ``context_token_budget=--budget`` (what ``librarian bench`` runs).

Evidence recall is the share of a question's gold evidence turns present in the
context. Conversations 0-4 and 5-9 are reported separately (nothing was tuned on
either). LoCoMo is CC BY-NC 4.0: read from its path, never bundled.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.store.memory import InMemoryStore

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.embeddings import default_embeddings
from langgraph_librarian.recall import ScopeMemory
from langgraph_librarian.tokens import count_text_tokens
from librarian_bench.datasets.base import Conversation
from librarian_bench.datasets.locomo import load_locomo
from librarian_bench.metrics import evidence_recall
from librarian_bench.strategies import Librarian, question_message

_SESSION = re.compile(r":D(\d+):")
_UNRELATED_PER_CONVERSATION = 40


def sessions(messages: Sequence[BaseMessage]) -> dict[int, list[BaseMessage]]:
    """LoCoMo turns grouped by session number (from their ``...:D<session>:<turn>`` ids)."""
    grouped: dict[int, list[BaseMessage]] = defaultdict(list)
    for message in messages:
        match = _SESSION.search(str(message.id))
        grouped[int(match.group(1)) if match else 0].append(message)
    return dict(sorted(grouped.items()))


def run_conversation(
    conv: Conversation, *, budget: int, max_bytes: int, embeddings: Any
) -> list[dict[str, Any]]:
    """One row per question: recall across threads vs the Librarian within one thread."""
    in_thread = Librarian(budget, embeddings=embeddings)
    in_thread.prepare(conv.messages)
    index = [e.to_dict() for e in in_thread.entries]
    memory = ScopeMemory(
        InMemoryStore(), config=LibrarianConfig(embeddings=embeddings), max_bytes=max_bytes
    )
    start = time.perf_counter()
    for number, turns in sessions(conv.messages).items():
        # The thread's Librarian index is reused: capture copies its summaries/vectors.
        memory.capture(conv.id, turns, thread_id=f"session-{number}", index=index)
    capture_s = time.perf_counter() - start
    unrelated = [
        memory.recall(conv.id, text).status == "empty"
        for text in unrelated_questions(_UNRELATED_PER_CONVERSATION, seed=len(conv.messages))
    ]
    rows = []
    for question in conv.questions:
        start = time.perf_counter()
        recalled = memory.recall(conv.id, question.text)
        recall_ms = (time.perf_counter() - start) * 1000
        present = {r.message_id for r in recalled.records}
        hits = sum(1 for e in question.evidence if e in present) / len(question.evidence)
        history = [*conv.messages, question_message(question.id, question.text)]
        baseline = in_thread.context(history, question.text)
        base_recall = evidence_recall(question.evidence, baseline.messages)
        rows.append(
            {
                "conversation": conv.id,
                "category": question.category,
                "recall": hits,
                "recall_tokens": count_text_tokens(recalled.text),
                "recall_bytes": len(recalled.text.encode("utf-8")),
                "recall_ms": recall_ms,
                "thread_recall": base_recall,
                "thread_tokens": baseline.context_tokens,
                "thread_ms": baseline.latency_ms,
                "capture_s": capture_s / max(len(conv.questions), 1),
                "recalled": recalled.status == "recalled",
                "unrelated_empty": statistics.fmean(unrelated),
            }
        )
    return rows


# Questions on subjects a personal chat between friends does not touch: specialised
# technical, legal and scientific matters. Each question is a frame around a subject;
# the set is generated, seeded, and never tuned against the conversations.
_UNRELATED_SUBJECTS = [
    "the torque spec for the cylinder head bolts",
    "the VPN client configuration on the build server",
    "the yen to won exchange rate on the invoice",
    "the Kubernetes pod eviction threshold",
    "the statute of limitations for the contract dispute",
    "the boiling point of the solvent in the lab protocol",
    "the firmware version on the warehouse scanners",
    "the API rate limit for the payments gateway",
    "the dosage schedule in the clinical trial protocol",
    "the load rating of the steel beams in the spec",
    "the SQL index on the orders table",
    "the tax code for the quarterly VAT return",
    "the satellite orbit inclination in the mission brief",
    "the baud rate of the serial console",
    "the TLS certificate expiry on the mail server",
    "the pipe diameter in the plumbing schematic",
    "the compiler flag for the ARM build",
    "the half-life of the isotope in the report",
    "the clause on indemnity in the supplier agreement",
    "the voltage of the backup battery bank",
    "the sample size in the survey methodology",
    "the mortgage amortization table for the loan",
    "the DNS TTL for the staging domain",
    "the gear ratio of the test rig gearbox",
]
_UNRELATED_FRAMES = [
    "What did we decide about {}?",
    "Can you remind me of {}?",
    "What was the number for {}?",
    "Did anyone confirm {}?",
    "Where did we note down {}?",
]


def unrelated_questions(count: int, seed: int = 0) -> list[str]:
    """``count`` questions about subjects the conversations never discuss (seeded)."""
    rng = random.Random(seed)
    pairs = [(f, s) for f in _UNRELATED_FRAMES for s in _UNRELATED_SUBJECTS]
    rng.shuffle(pairs)
    return [frame.format(subject) for frame, subject in pairs[:count]]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate question rows."""
    return {
        "questions": len(rows),
        "recall": statistics.fmean(r["recall"] for r in rows),
        "recall_success": statistics.fmean(r["recall"] == 1.0 for r in rows),
        "recall_tokens": statistics.fmean(r["recall_tokens"] for r in rows),
        "recall_max_bytes": max(r["recall_bytes"] for r in rows),
        "recall_p50_ms": _p([r["recall_ms"] for r in rows], 0.5),
        "recall_p95_ms": _p([r["recall_ms"] for r in rows], 0.95),
        "thread_recall": statistics.fmean(r["thread_recall"] for r in rows),
        "thread_success": statistics.fmean(r["thread_recall"] == 1.0 for r in rows),
        "thread_tokens": statistics.fmean(r["thread_tokens"] for r in rows),
        "thread_p50_ms": _p([r["thread_ms"] for r in rows], 0.5),
        "related_recalled": statistics.fmean(r["recalled"] for r in rows),
        "unrelated_empty": statistics.fmean(r["unrelated_empty"] for r in rows),
    }


def table(groups: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "| conversations | questions | setting | evidence recall | context success "
        "| context tokens | p50 / p95 ms |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for label, rows in groups.items():
        s = summarize(rows)
        lines.append(
            f"| {label} | {s['questions']} | scope recall, fresh thread | {s['recall']:.3f} | "
            f"{s['recall_success']:.1%} | {s['recall_tokens']:,.0f} | "
            f"{s['recall_p50_ms']:.1f} / {s['recall_p95_ms']:.1f} |"
        )
        lines.append(
            f"| {label} | {s['questions']} | Librarian, same thread | {s['thread_recall']:.3f} | "
            f"{s['thread_success']:.1%} | {s['thread_tokens']:,.0f} | "
            f"{s['thread_p50_ms']:.1f} / - |"
        )
    return "\n".join(lines)


def by_category(groups: dict[str, list[dict[str, Any]]]) -> str:
    categories = sorted({r["category"] for rows in groups.values() for r in rows})
    lines = [
        "| conversations | setting | " + " | ".join(categories) + " |",
        "|---|---|" + "---:|" * len(categories),
    ]
    for label, rows in groups.items():
        for key, name in (("recall", "scope recall"), ("thread_recall", "same thread")):
            cells = []
            for category in categories:
                subset = [r[key] for r in rows if r["category"] == category]
                cells.append(f"{statistics.fmean(subset):.3f} ({len(subset)})" if subset else "-")
            lines.append(f"| {label} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data/locomo/locomo10.json")
    parser.add_argument("--max-bytes", type=int, default=8000)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--no-embeddings", action="store_true")
    parser.add_argument("--limit", type=int, default=None, help="first N conversations only")
    parser.add_argument(
        "--conversations",
        default=None,
        help="a range of conversations, e.g. 0-4 (develop) or 5-9 (held out)",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    embeddings = None if args.no_embeddings else default_embeddings()
    conversations = list(enumerate(load_locomo(args.data, categories={1, 2, 3, 4})))
    if args.conversations:
        first, _, last = args.conversations.partition("-")
        low, high = int(first), int(last or first)
        conversations = [(n, c) for n, c in conversations if low <= n <= high]
    conversations = conversations[: args.limit]
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for n, conv in conversations:
        rows += [
            {**row, "position": n}
            for row in run_conversation(
                conv, budget=args.budget, max_bytes=args.max_bytes, embeddings=embeddings
            )
        ]
        print(f"conversation {n} ({conv.id}) done", file=sys.stderr)
    groups = {
        "0-4": [r for r in rows if r["position"] < 5],
        "5-9": [r for r in rows if r["position"] >= 5],
    }
    groups = {k: v for k, v in groups.items() if v}
    print(
        f"embeddings: {type(embeddings).__name__ if embeddings is not None else 'none (lexical)'}"
    )
    print(f"max_bytes={args.max_bytes}, in-thread budget={args.budget} tokens")
    print(table(groups))
    print()
    for label, group in groups.items():
        s = summarize(group)
        print(
            f"{label}: related questions recalled {s['related_recalled']:.1%}; "
            f"{_UNRELATED_PER_CONVERSATION} unrelated questions per conversation empty "
            f"{s['unrelated_empty']:.1%}"
        )
    print()
    print(by_category(groups))
    print(f"\nwall time: {time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        summary = {label: summarize(group) for label, group in groups.items()}
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
