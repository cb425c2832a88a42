"""Run strategies over datasets and write the report files."""

from __future__ import annotations

import csv
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langgraph_librarian.evals.datasets.base import Conversation
from langgraph_librarian.evals.judge import AnswerJudge
from langgraph_librarian.evals.metrics import (
    Outcome,
    answer_contained,
    evidence_recall,
    summarize_outcomes,
)
from langgraph_librarian.evals.strategies import make_strategy, question_message

__all__ = ["format_table", "run_bench", "write_report"]

Progress = Callable[[str, int, int], None]


def stderr_progress(stream: TextIO = sys.stderr) -> Progress:
    """A one-line progress bar on stderr."""

    def show(label: str, done: int, total: int) -> None:
        width = 28
        filled = int(width * done / max(total, 1))
        stream.write(f"\r{label:<22} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            stream.write("\n")
        stream.flush()

    return show


def run_bench(
    dataset_name: str,
    conversations: Sequence[Conversation],
    strategy_names: Sequence[str],
    *,
    budget: int,
    embeddings: Embeddings | None = None,
    model: BaseChatModel | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    judge: AnswerJudge | None = None,
) -> tuple[list[Outcome], dict[str, float]]:
    """Evaluate each strategy on every question; returns outcomes and indexing seconds.

    With ``judge``, each curated context is also answered and graded (answer success).
    """
    outcomes: list[Outcome] = []
    indexing_seconds: dict[str, float] = {}
    total = sum(len(c.questions) for c in conversations)
    if limit is not None:
        total = min(total, limit)
    for name in strategy_names:
        strategy = make_strategy(name, budget=budget, embeddings=embeddings, model=model)
        done = 0
        indexing_seconds[name] = 0.0
        for conv in conversations:
            if limit is not None and done >= limit:
                break
            questions = conv.questions[: (limit - done) if limit is not None else None]
            if not questions:
                continue
            start = time.perf_counter()
            index_tokens = strategy.prepare(conv.messages)
            indexing_seconds[name] += time.perf_counter() - start
            per_question = index_tokens / max(len(conv.questions), 1)
            for question in questions:
                history = [*conv.messages, question_message(question.id, question.text)]
                result = strategy.context(history, question.text)
                recall = evidence_recall(question.evidence, result.messages)
                graded = (
                    judge.judge(question.text, question.answer, result.messages) if judge else None
                )
                outcomes.append(
                    Outcome(
                        strategy=name,
                        dataset=dataset_name,
                        conversation=conv.id,
                        question=question.id,
                        category=question.category,
                        recall=recall,
                        success=recall == 1.0,
                        contained=answer_contained(question.answer, result.messages),
                        context_tokens=result.context_tokens,
                        selection_tokens=result.selection_tokens,
                        indexing_tokens=per_question,
                        latency_ms=result.latency_ms,
                        fallback=result.fallback,
                        answer_correct=graded.correct if graded else None,
                        answer=graded.answer if graded else None,
                    )
                )
                done += 1
                if progress is not None:
                    progress(name, done, total)
    return outcomes, indexing_seconds


def summary_rows(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """One row per strategy and per (strategy, category)."""
    rows: list[dict[str, Any]] = []
    strategies = list(dict.fromkeys(o.strategy for o in outcomes))
    for name in strategies:
        mine = [o for o in outcomes if o.strategy == name]
        rows.append({"strategy": name, "category": "all", **summarize_outcomes(mine)})
        for category in sorted({o.category for o in mine}):
            subset = [o for o in mine if o.category == category]
            rows.append({"strategy": name, "category": category, **summarize_outcomes(subset)})
    return rows


def format_table(rows: Sequence[dict[str, Any]], category: str = "all") -> str:
    """A Markdown table of the rows for one category."""
    judged = any("answer_success" in r for r in rows)
    header = (
        "| strategy | questions | context success | evidence recall | answer in context "
        + ("| answer success (judge) " if judged else "")
        + "| context tokens | total tokens | p50 ms | p95 ms |"
    )
    lines = [
        header,
        "|---|---:|---:|---:|---:|" + ("---:|" if judged else "") + "---:|---:|---:|---:|",
    ]
    for row in rows:
        if row["category"] != category or not row.get("questions"):
            continue
        lines.append(
            f"| {row['strategy']} | {row['questions']} | {row['context_success']:.1%} | "
            f"{row['evidence_recall']:.3f} | {row['answer_containment']:.1%} | "
            + (f"{row.get('answer_success', 0.0):.1%} | " if judged else "")
            + f"{row['context_tokens']:,.0f} | {row['total_tokens']:,.0f} | "
            f"{row['latency_p50_ms']:.1f} | {row['latency_p95_ms']:.1f} |"
        )
    return "\n".join(lines)


def format_by_category(rows: Sequence[dict[str, Any]]) -> str:
    """Evidence recall and context success per category and strategy."""
    categories = sorted({r["category"] for r in rows if r["category"] != "all"})
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    lines = ["| strategy | " + " | ".join(categories) + " |", "|---|" + "---:|" * len(categories)]
    for name in strategies:
        cells = []
        for category in categories:
            row = next(
                (r for r in rows if r["strategy"] == name and r["category"] == category), None
            )
            cells.append(
                f"{row['evidence_recall']:.3f} / {row['context_success']:.0%}" if row else "-"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(
    out_dir: Path, dataset: str, outcomes: Sequence[Outcome], meta: dict[str, Any]
) -> list[Path]:
    """Write ``<dataset>-outcomes.json``, ``<dataset>-summary.csv`` and a PNG plot."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = summary_rows(outcomes)
    written: list[Path] = []
    json_path = out_dir / f"{dataset}-outcomes.json"
    json_path.write_text(
        json.dumps(
            {"meta": meta, "summary": rows, "outcomes": [o.to_dict() for o in outcomes]}, indent=1
        )
    )
    written.append(json_path)
    csv_path = out_dir / f"{dataset}-summary.csv"
    with csv_path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    written.append(csv_path)
    plot = _plot(out_dir / f"{dataset}-recall-vs-tokens.png", dataset, rows)
    if plot is not None:
        written.append(plot)
    return written


def _plot(path: Path, dataset: str, rows: Sequence[dict[str, Any]]) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    overall = [r for r in rows if r["category"] == "all"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    markers = "osD^vP*X"
    for n, row in enumerate(overall):
        ax.scatter(
            row["context_tokens"],
            row["evidence_recall"],
            s=70,
            marker=markers[n % len(markers)],
            label=row["strategy"],
        )
    ax.legend(loc="lower right", fontsize=9)
    ax.set_xscale("log")
    ax.set_xlabel("context tokens per question (log scale)")
    ax.set_ylabel("evidence recall")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"{dataset}: evidence recall vs context tokens")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
