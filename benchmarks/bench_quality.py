"""Context quality against cost, on visible and held-out halves, at several budgets.

Run:
    python benchmarks/bench_quality.py --dataset phenomena --budgets 3% 6% 8% 12% auto
    python benchmarks/bench_quality.py --dataset locomo \\
        --data ../shared/data/locomo/locomo10.json --budgets 2000 auto
    python benchmarks/bench_quality.py --dataset synthetic --budgets auto 3% 6%
    python benchmarks/bench_quality.py --dataset locomo --data FILE --strategies librarian --misses

Each dataset is reported in two halves so that tuning to one shows up as a gap:
phenomena's ``dev`` and ``heldout`` splits; LoCoMo conversations 0-4 and 5-9;
the synthetic generator with two seeds. A budget is tokens, ``auto`` (the
Librarian's default, :meth:`LibrarianConfig.budget_for`) or a share of each history
(``6%``); every strategy gets the same budget for the same question.

Columns: context success (every gold message present in full), evidence recall,
answer in context (every part of the gold answer appears in the context text: the fair
measure for a running summary, which holds facts but no original message), mean and
p95 context tokens, and the mean context as a share of sending the whole
history (brute force) on the same questions. Nothing here calls a model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph_librarian.embeddings import default_embeddings
from langgraph_librarian.tokens import count_tokens
from librarian_bench._budget import BudgetSpec, parse_budget
from librarian_bench.datasets.base import Conversation
from librarian_bench.metrics import Outcome, percentile
from librarian_bench.runner import run_bench
from librarian_bench.strategies import SharedIndexing, question_message

DEFAULT_STRATEGIES = ["last-n", "bm25", "vector", "librarian"]


def _halves(args: argparse.Namespace) -> list[tuple[str, list[Conversation]]]:
    if args.dataset == "phenomena":
        from librarian_bench.datasets import phenomena

        return [(s, phenomena.generate_dataset(s)) for s in ("dev", "heldout")]
    if args.dataset == "synthetic":
        from librarian_bench.datasets import synthetic

        return [
            (f"seed {seed}", synthetic.generate_dataset(seed, conversations_per_level=2))
            for seed in (7, 8)
        ]
    from librarian_bench.datasets.locomo import load_locomo

    if args.data is None:
        raise SystemExit("--data is required for locomo (the LoCoMo JSON file)")
    cats = {int(c) for c in args.categories.split(",")}
    conversations = load_locomo(args.data, categories=cats)
    return [("conv 0-4", conversations[:5]), ("conv 5-9", conversations[5:])]


def _history_tokens(conversations: Sequence[Conversation]) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for conv in conversations:
        base = count_tokens(conv.messages)
        for q in conv.questions:
            out[(conv.id, q.id)] = base + count_tokens([question_message(q.id, q.text)])
    return out


def _rows(outcomes: Sequence[Outcome], full: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    rows = []
    for name in dict.fromkeys(o.strategy for o in outcomes):
        mine = [o for o in outcomes if o.strategy == name]
        tokens = [o.context_tokens for o in mine]
        whole = statistics.fmean(full[(o.conversation, o.question)] for o in mine)
        rows.append(
            {
                "strategy": name,
                "questions": len(mine),
                "context_success": sum(o.success for o in mine) / len(mine),
                "evidence_recall": statistics.fmean(o.recall for o in mine),
                "answer_in_context": sum(o.contained for o in mine) / len(mine),
                "mean_tokens": statistics.fmean(tokens),
                "p95_tokens": percentile(tokens, 0.95),
                "share_of_history": statistics.fmean(tokens) / whole,
            }
        )
    return rows


def _print_misses(
    outcomes: Sequence[Outcome], conversations: Sequence[Conversation], budget: BudgetSpec
) -> None:
    """Each question with evidence left out of the context, and the evidence's text."""
    by_id = {conv.id: conv for conv in conversations}
    texts = {conv.id: {m.id: str(m.content) for m in conv.messages} for conv in conversations}
    for o in outcomes:
        if not o.missed:
            continue
        conv = by_id[o.conversation]
        question = next(q for q in conv.questions if q.id == o.question)
        missed = set(o.missed)
        print(
            f"\n[{o.strategy} @ {budget}] {o.conversation} {o.question} ({o.category}), "
            f"recall {o.recall:.2f}, {o.context_tokens:,} tokens\n  Q: {question.text}"
            f"\n  A: {question.answer}"
        )
        for gold in question.evidence:
            text = texts[conv.id].get(gold, "?")
            print(f"  {'MISSED' if gold in missed else 'found '} {gold}: {text[:240]!r}")
    print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", choices=["phenomena", "locomo", "synthetic"], required=True)
    parser.add_argument("--data", type=Path, help="locomo: the LoCoMo-format JSON file")
    parser.add_argument("--categories", default="1,2,3,4", help="locomo categories")
    parser.add_argument("--budgets", nargs="+", default=["auto"])
    parser.add_argument("--strategies", nargs="+", default=DEFAULT_STRATEGIES)
    parser.add_argument("--no-embeddings", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument(
        "--misses",
        action="store_true",
        help="list each question a strategy missed evidence for, with that evidence's text",
    )
    args = parser.parse_args(argv)
    budgets: list[BudgetSpec] = [parse_budget(b) for b in args.budgets]
    embeddings = None if args.no_embeddings else default_embeddings()
    strategies = [s for s in args.strategies if s != "vector" or embeddings is not None]
    results: list[dict[str, Any]] = []
    for half, conversations in _halves(args):
        if not conversations:  # a LoCoMo-format file of five conversations or fewer
            continue
        full = _history_tokens(conversations)
        shared = SharedIndexing(embeddings)
        whole = statistics.fmean(full.values())
        print(f"\n## {args.dataset}, {half}: {len(full)} questions, history {whole:,.0f} tokens")
        print(
            "| budget | strategy | context success | evidence recall | answer in context "
            "| mean tokens | p95 tokens | share of history |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        misses: list[tuple[BudgetSpec, list[Outcome]]] = []
        for budget in budgets:
            outcomes, _ = run_bench(
                args.dataset,
                conversations,
                strategies,
                budget=budget,
                embeddings=embeddings,
                shared=shared,
            )
            if args.misses:
                misses.append((budget, outcomes))
            for row in _rows(outcomes, full):
                row.update(half=half, budget=str(budget))
                results.append(row)
                print(
                    f"| {budget} | {row['strategy']} | {row['context_success']:.1%} | "
                    f"{row['evidence_recall']:.3f} | {row['answer_in_context']:.1%} | "
                    f"{row['mean_tokens']:,.0f} | "
                    f"{row['p95_tokens']:,.0f} | {row['share_of_history']:.1%} |",
                    flush=True,
                )
        for budget, outcomes in misses:
            _print_misses(outcomes, conversations, budget)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
