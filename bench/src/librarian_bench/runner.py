"""Run strategies over datasets and write the report files."""

from __future__ import annotations

import contextlib
import csv
import json
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langgraph_librarian._apps.progress import ProgressPrinter
from librarian_bench._budget import BudgetSpec
from librarian_bench._plot import plot_recall_vs_tokens
from librarian_bench.datasets.base import Conversation, Question
from librarian_bench.judge import AnswerJudge
from librarian_bench.metrics import (
    Outcome,
    answer_contained,
    evidence_recall,
    missed_evidence,
    summarize_outcomes,
)
from librarian_bench.strategies import (
    SharedIndexing,
    Strategy,
    make_strategy,
    question_message,
)

__all__ = [
    "ProgressPrinter",
    "describe_plan",
    "format_table",
    "plan_questions",
    "run_bench",
    "write_report",
]

Progress = Callable[[str, int, int], None]
"""``progress(label, done, total)``: one bar per label."""


def stderr_progress(stream: TextIO | None = None) -> Progress:
    """A :class:`ProgressPrinter` on ``stream`` (default stderr)."""
    return ProgressPrinter(stream)


def plan_questions(
    conversations: Sequence[Conversation], limit: int | None = None
) -> list[tuple[Conversation, list[Question]]]:
    """The questions a run asks: the first ``limit`` in dataset order, by conversation.

    Conversations left without a question are not in the plan, so they are never indexed.
    """
    plan: list[tuple[Conversation, list[Question]]] = []
    left = limit
    for conv in conversations:
        if left is not None and left <= 0:
            break
        questions = conv.questions[:left] if left is not None else list(conv.questions)
        if questions:
            plan.append((conv, questions))
            if left is not None:
                left -= len(questions)
    return plan


def describe_plan(
    dataset: str,
    conversations: Sequence[Conversation],
    plan: Sequence[tuple[Conversation, Sequence[Question]]],
    strategies: Sequence[str],
) -> str:
    """One line saying what a run will do (questions, conversations, messages, strategies)."""
    asked = sum(len(q) for _, q in plan)
    available = sum(len(c.questions) for c in conversations)
    messages = sum(len(c.messages) for c, _ in plan)
    return (
        f"{dataset}: {asked} of {available} questions from {len(plan)} of "
        f"{len(conversations)} conversations ({messages:,} messages to index); "
        f"{len(strategies)} strategies: {', '.join(strategies)}"
    )


def run_bench(
    dataset_name: str,
    conversations: Sequence[Conversation],
    strategy_names: Sequence[str],
    *,
    budget: BudgetSpec,
    embeddings: Embeddings | None = None,
    model: BaseChatModel | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    judge: AnswerJudge | None = None,
    shared: SharedIndexing | None = None,
    indexing_reports: dict[str, dict[str, Any]] | None = None,
    selector_model: BaseChatModel | None = None,
) -> tuple[list[Outcome], dict[str, float]]:
    """Evaluate each strategy on the planned questions; returns outcomes and indexing seconds.

    ``selector_model`` (default ``model``) selects for librarian-llm while ``model``
    summarizes: models built from one string get each role's output limit.
    ``indexing_reports``, when given, is filled with each Librarian strategy's
    :class:`~librarian_bench.strategies.IndexingReport` (entries by status,
    summary failure rate and reasons), so failures hidden by fallbacks stay visible.

    Only conversations with a planned question (see :func:`plan_questions`) are indexed.
    Strategies share identical indexing work through ``shared`` (a new
    :class:`SharedIndexing` when not given); the indexing seconds reported per strategy
    include the cost of shared work it reused, i.e. what it would have spent alone.
    With ``judge``, each curated context is also answered and graded (answer success).
    """
    shared = shared if shared is not None else SharedIndexing(embeddings)
    plan = plan_questions(conversations, limit)
    outcomes: list[Outcome] = []
    indexing_seconds: dict[str, float] = {}
    total = sum(len(q) for _, q in plan)
    for name in dict.fromkeys(strategy_names):  # a strategy named twice runs once
        strategy = make_strategy(
            name,
            budget=budget,
            embeddings=embeddings,
            model=model,
            shared=shared,
            selector_model=selector_model,
        )
        done = 0
        indexing_seconds[name] = 0.0
        for conv, questions in plan:
            label = f"[{name}] index {conv.id}"
            index_progress = partial(progress, label) if progress is not None else None
            start, charged = time.perf_counter(), shared.charged_seconds
            index_tokens = strategy.prepare(conv.messages, progress=index_progress)
            spent = time.perf_counter() - start
            shared.spent_seconds += spent
            indexing_seconds[name] += spent + shared.charged_seconds - charged
            per_question = index_tokens / max(len(conv.questions), 1)
            for question in questions:
                outcomes.append(
                    _ask(strategy, name, dataset_name, conv, question, per_question, judge)
                )
                done += 1
                if progress is not None:
                    progress(f"[{name}] questions", done, total)
        report = getattr(strategy, "indexing", None)
        if indexing_reports is not None and report is not None:
            indexing_reports[name] = report.to_dict()
    return outcomes, indexing_seconds


def _ask(
    strategy: Strategy,
    name: str,
    dataset_name: str,
    conv: Conversation,
    question: Question,
    indexing_tokens: float,
    judge: AnswerJudge | None,
) -> Outcome:
    history = [*conv.messages, question_message(question.id, question.text)]
    result = strategy.context(history, question.text)
    recall = evidence_recall(question.evidence, result.messages)
    graded = judge.judge(question.text, question.answer, result.messages) if judge else None
    return Outcome(
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
        indexing_tokens=indexing_tokens,
        latency_ms=result.latency_ms,
        fallback=result.fallback,
        answer_correct=graded.correct if graded else None,
        answer=graded.answer if graded else None,
        selection=result.selection,
        fallback_reason=result.fallback_reason,
        kept_local=result.kept_local,
        missed=missed_evidence(question.evidence, result.messages),
    )


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


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def format_llm_health(
    rows: Sequence[dict[str, Any]], reports: dict[str, dict[str, Any]] | None = None
) -> str:
    """For strategies that use a model: selection by the model vs fallback, and failures.

    ``context success`` is next to the offline Librarian's on the same questions (when
    the run has it): a weak model must not go below it. ``offline picks kept`` is the
    mean number of offline picks the model did not make that stayed in its selections.
    Empty when no strategy selected or indexed with a model.
    """
    reports = reports or {}
    offline = next(
        (r for r in rows if r["strategy"] == "librarian" and r["category"] == "all"), None
    )
    lines = [
        "| strategy | context success | offline Librarian | LLM selections | success (LLM) "
        "| offline picks kept | fallbacks | success (fallback) | top fallback reason "
        "| summary failures |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    shown = False
    for row in rows:
        if row["category"] != "all":
            continue
        report = reports.get(row["strategy"], {})
        failures = report.get("summary_failure_rate", 0.0)
        used_a_model = "llm_selection_rate" in row or report.get("by_status", {}).get("summarized")
        if not used_a_model and not failures:
            continue
        shown = True
        reasons = row.get("fallback_reasons") or {}
        top = next(iter(reasons), "-")
        kept = row.get("kept_local_mean")
        lines.append(
            f"| {row['strategy']} | {_pct(row.get('context_success'))} | "
            f"{_pct(offline['context_success'] if offline else None)} | "
            f"{_pct(row.get('llm_selection_rate'))} | "
            f"{_pct(row.get('context_success_llm'))} | "
            f"{'-' if kept is None else f'{kept:.1f}'} | {_pct(row.get('fallback_rate'))} | "
            f"{_pct(row.get('context_success_fallback'))} | {top} | {failures:.0%} |"
        )
    return "\n".join(lines) if shown else ""


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
        # Strategies report different columns (an LLM selector adds its fallback rates):
        # every column any row has, in first-seen order; a row without one leaves it blank.
        columns = list(dict.fromkeys(key for row in rows for key in row))
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    written.append(csv_path)
    png = out_dir / f"{dataset}-recall-vs-tokens.png"
    with contextlib.suppress(ImportError):  # no matplotlib: the CLI said so before the run
        written.append(plot_recall_vs_tokens(png, dataset, rows))
    return written
