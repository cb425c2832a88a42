"""The model path on the bench: a weak model costs nothing, an oracle adds.

The scripted models (:mod:`librarian_bench.scripted`) replay what weak local
models do (garbage and fabricated summaries, wrong or unreadable selections) and what a
perfect one would do (faithful summaries, the gold evidence). The offline Librarian runs
on the same questions with the same embeddings.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from langgraph_librarian.embeddings import default_embeddings
from librarian_bench._budget import parse_budget
from librarian_bench.datasets.phenomena import generate_dataset
from librarian_bench.metrics import evidence_recall
from librarian_bench.runner import format_llm_health, run_bench, summary_rows
from librarian_bench.scripted import ScriptedBenchModel
from librarian_bench.strategies import Librarian, SharedIndexing, question_message


@pytest.fixture(scope="module")
def dataset():
    return generate_dataset("dev", seed=0, message_length="long")


def _run(dataset, kind):
    embeddings = default_embeddings()
    model = ScriptedBenchModel(kind=kind).use(dataset)
    reports: dict = {}
    outcomes, _ = run_bench(
        "phenomena-dev",
        dataset,
        ["librarian", "librarian-llm"],
        budget="auto",
        embeddings=embeddings,
        model=model,
        limit=80,
        shared=SharedIndexing(embeddings),
        indexing_reports=reports,
    )
    rows = summary_rows(outcomes)
    by = {r["strategy"]: r for r in rows if r["category"] == "all"}
    return by["librarian"], by["librarian-llm"], format_llm_health(rows, reports), reports


def test_a_weak_model_costs_no_context_success(dataset):
    offline, llm, table, reports = _run(dataset, "weak")
    assert llm["llm_selection_rate"] > 0.5  # its wrong selections were used...
    assert llm["context_success"] >= offline["context_success"]  # ...and cost nothing
    assert reports["librarian-llm"]["summary_failure_rate"] > 0.9  # garbage not stored
    assert "| librarian-llm |" in table and "offline Librarian" in table


def test_an_oracle_costs_no_context_success(dataset):
    offline, llm, _, _ = _run(dataset, "oracle")
    assert llm["llm_selection_rate"] == 1.0
    # The offline selection comes first (selector_keeps_local): a perfect model's picks
    # add what still fits, and never push out what the offline engine sent.
    assert llm["context_success"] >= offline["context_success"]


def test_an_oracle_alone_adds_context_success(dataset):
    """Its picks alone (``selector_keeps_local=False``): the gold evidence, in full."""
    embeddings = default_embeddings()
    model = ScriptedBenchModel(kind="oracle").use(dataset)
    shared = SharedIndexing(embeddings)
    offline = Librarian(parse_budget("auto"), embeddings=embeddings, shared=shared)
    oracle = Librarian(parse_budget("auto"), embeddings=embeddings, model=model, shared=shared)
    oracle.config = replace(oracle.config, selector_keeps_local=False)
    success = {"offline": 0, "oracle": 0}
    for conversation in dataset:
        offline.prepare(conversation.messages)
        oracle.prepare(conversation.messages)
        for question in conversation.questions[:12]:
            history = [*conversation.messages, question_message(question.id, question.text)]
            for name, strategy in (("offline", offline), ("oracle", oracle)):
                result = strategy.context(history, question.text)
                success[name] += evidence_recall(question.evidence, result.messages) == 1.0
    assert success["oracle"] > success["offline"]
