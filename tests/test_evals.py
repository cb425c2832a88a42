"""Evaluation harness: generators, LoCoMo loader quirks, metrics, CLI."""

from __future__ import annotations

import json
import re

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian.cli import main
from librarian_bench.datasets.locomo import LocomoFormatError, LocomoStats, load_locomo
from librarian_bench.datasets.synthetic import generate_conversation, generate_dataset
from librarian_bench.datasets.tools import DOMAINS, generate_tool_catalog
from librarian_bench.metrics import (
    Outcome,
    answer_contained,
    evidence_recall,
    missed_evidence,
    summarize_outcomes,
)
from librarian_bench.runner import run_bench, summary_rows, write_report


def test_synthetic_is_deterministic_and_sized():
    a = generate_conversation(3, n_messages=60, noise="low")
    b = generate_conversation(3, n_messages=60, noise="low")
    assert [m.content for m in a.messages] == [m.content for m in b.messages]
    assert [q.text for q in a.questions] == [q.text for q in b.questions]
    c = generate_conversation(4, n_messages=60, noise="low")
    assert [m.content for m in a.messages] != [m.content for m in c.messages]
    for noise, (low, high) in {"low": (150, 300), "high": (500, 1000)}.items():
        conv = generate_conversation(1, n_messages=40, noise=noise)
        words = [len(m.content.split()) for m in conv.messages]
        assert min(words) >= low * 0.8 and max(words) <= high * 1.3


def test_synthetic_evidence_states_the_answer():
    for conv in generate_dataset(7, conversations_per_level=1, n_messages=80):
        by_id = {m.id: m for m in conv.messages}
        assert len({m.id for m in conv.messages}) == len(conv.messages)
        for q in conv.questions:
            assert q.evidence and all(e in by_id for e in q.evidence)
            text = " ".join(by_id[e].content for e in q.evidence)
            for part in q.answer.replace(" -> ", ";").split(";"):
                assert part.strip() in text, (q, part)
            if q.category == "changed":  # the latest value comes from a change message
                assert any(
                    w in text
                    for w in (
                        "no longer",
                        "moved",
                        "instead",
                        "now",
                        "replaces",
                        "clarified",
                        "rebooked",
                        "switched",
                        "rescheduled",
                        "revised",
                        "handed",
                        "changed",
                    )
                )
            if q.category == "history":
                assert len(q.evidence) >= 2


def test_default_dataset_has_45_questions_per_noise_level():
    data = generate_dataset()
    for level in ("low", "medium", "high"):
        assert sum(len(c.questions) for c in data if c.id.startswith(level)) >= 45


def test_tool_catalog_covers_domains_and_gold_exists():
    tools, cases = generate_tool_catalog(600, 50)
    names = {t.name for t in tools}
    assert len(names) == len(tools) == 600
    assert set(DOMAINS) <= {t.domain for t in tools}
    assert all(c.gold in names for c in cases)
    assert generate_tool_catalog(600, 50)[1] == cases


def locomo_fixture(tmp_path, data):
    path = tmp_path / "mini_locomo.json"
    path.write_text(json.dumps(data))
    return path


MINI = [
    {
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:00 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
                {
                    "speaker": "Bob",
                    "dia_id": "D1:2",
                    "text": "Look at this!",
                    "blip_caption": "a photo of a red bike",
                },
            ],
            "session_2_date_time": "2:00 pm on 9 May, 2023",
            "session_2": [],
            "session_3_date_time": "3:00 pm on 10 May, 2023",
            "session_3": [{"speaker": "Ann", "dia_id": "D3:1", "text": "The cat is called Miso."}],
        },
        "qa": [
            {
                "question": "What pet did Ann adopt?",
                "answer": "a cat",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Name and pet?",
                "answer": "Miso",
                "evidence": ["D1:1; D3:1"],
                "category": 1,
            },
            {
                "question": "Broken evidence",
                "answer": "x",
                "evidence": ["D", "D9:99"],
                "category": 2,
            },
            {"question": "No evidence", "answer": "y", "evidence": [], "category": 3},
            {
                "question": "Adversarial?",
                "adversarial_answer": "none",
                "evidence": ["D1:2"],
                "category": 5,
            },
        ],
    }
]


def test_locomo_loader_quirks(tmp_path):
    stats = LocomoStats()
    convs = load_locomo(locomo_fixture(tmp_path, MINI), stats=stats)
    conv = convs[0]
    assert [m.id for m in conv.messages] == ["s1:D1:1", "s1:D1:2", "s1:D3:1"]
    assert isinstance(conv.messages[0], HumanMessage) and isinstance(conv.messages[1], AIMessage)
    assert "red bike" in conv.messages[1].content and "8 May 2023" in conv.messages[0].content
    by_text = {q.text: q for q in conv.questions}
    assert by_text["Name and pet?"].evidence == ["s1:D1:1", "s1:D3:1"]
    assert "Broken evidence" not in by_text and "No evidence" not in by_text
    assert (
        by_text["Adversarial?"].category == "adversarial"
        and by_text["Adversarial?"].answer == "none"
    )
    assert stats.empty_sessions == 1 and stats.skipped_no_evidence == 2
    assert stats.unknown_evidence == 1 and stats.malformed_evidence >= 2
    only = load_locomo(locomo_fixture(tmp_path, MINI), categories={4})
    assert [q.category for q in only[0].questions] == ["single-hop"]


@pytest.mark.parametrize(
    "content", ["not json", "{}", "[]", '[{"qa": []}]', '[{"conversation": {}, "qa": []}]']
)
def test_locomo_rejects_wrong_shapes(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(LocomoFormatError):
        load_locomo(path)
    with pytest.raises(LocomoFormatError):
        load_locomo(tmp_path / "missing.json")


def test_metrics():
    ctx = [HumanMessage("The budget is $15,500 now.", id="a"), AIMessage("ok", id="b")]
    assert evidence_recall(["a", "z"], ctx) == 0.5 and evidence_recall([], ctx) == 1.0
    assert missed_evidence(["a", "z"], ctx) == ["z"] and missed_evidence([], ctx) == []
    assert answer_contained("$15,500", ctx) and not answer_contained("$12,000 -> $15,500", ctx)
    outcomes = [
        Outcome("s", "d", "c", "q1", "x", 1.0, True, True, 100, 10, 5.0, 1.0),
        Outcome("s", "d", "c", "q2", "x", 0.5, False, False, 300, 10, 5.0, 3.0),
    ]
    summary = summarize_outcomes(outcomes)
    assert summary["context_success"] == 0.5 and summary["evidence_recall"] == 0.75
    assert summary["context_tokens"] == 200 and summary["total_tokens"] == 215


def test_runner_end_to_end_with_report(tmp_path):
    convs = load_locomo(locomo_fixture(tmp_path, MINI))
    outcomes, _ = run_bench(
        "mini", convs, ["brute-force", "bm25", "librarian-lexical", "last-n"], budget=500
    )
    rows = summary_rows(outcomes)
    brute = next(r for r in rows if r["strategy"] == "brute-force" and r["category"] == "all")
    assert brute["context_success"] == 1.0
    # Each outcome names the evidence it left out: none at full recall, some below it.
    assert all(bool(o.missed) == (o.recall < 1.0) for o in outcomes)
    files = write_report(tmp_path / "out", "mini", outcomes, {"seed": 1})
    assert {p.suffix for p in files} >= {".json", ".csv", ".png"}


def test_cli_errors_are_one_line(capsys, tmp_path):
    assert main(["bench", "--dataset", "locomo", "--data", str(tmp_path / "nope.json")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["bench", "--model", "noprovider:model", "--strategies", "bm25"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("librarian: error:") and "Traceback" not in err


def test_cli_bench_and_demo_run(capsys, tmp_path):
    path = locomo_fixture(tmp_path, MINI)
    assert (
        main(
            [
                "bench",
                "--dataset",
                "locomo",
                "--data",
                str(path),
                "--quiet",
                "--strategies",
                "bm25",
                "librarian-lexical",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    assert "librarian-lexical" in capsys.readouterr().out
    assert main(["demo", "--messages", "40", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["questions"] > 0
    assert (
        main(["bench", "--dataset", "tools", "--tools", "200", "--limit", "20", "--no-embeddings"])
        == 0
    )
    assert "recall@1" in capsys.readouterr().out


def test_answer_success_with_scripted_answer_and_judge_models(tmp_path):
    from fakes import ScriptedChatModel
    from librarian_bench.judge import AnswerJudge
    from librarian_bench.runner import format_table

    def answer(messages):
        context = " ".join(str(m.content) for m in messages)
        return "a cat" if "adopted a cat" in context else "I don't know"

    def grade(messages):
        payload = json.loads(messages[-1].content)
        ok = payload["gold_answer"].lower() in payload["candidate_answer"].lower()
        return json.dumps({"verdict": "CORRECT" if ok else "WRONG", "reason": "compared"})

    answerer, judge_model = ScriptedChatModel(script=answer), ScriptedChatModel(script=grade)
    convs = load_locomo(locomo_fixture(tmp_path, MINI), categories={4})
    outcomes, _ = run_bench(
        "mini", convs, ["brute-force", "last-n"], budget=5, judge=AnswerJudge(answerer, judge_model)
    )
    by_strategy = {o.strategy: o for o in outcomes}
    assert by_strategy["brute-force"].answer_correct is True
    assert by_strategy["last-n"].answer_correct is False  # the cat message was trimmed away
    rows = summary_rows(outcomes)
    assert "answer success (judge)" in format_table(rows)
    assert "JSON object" in judge_model.calls[0][0].content  # the fixed rubric was sent


def test_unparsable_verdict_counts_as_wrong():
    from fakes import ScriptedChatModel
    from librarian_bench.judge import AnswerJudge

    judge = AnswerJudge(ScriptedChatModel(script="a cat"), ScriptedChatModel(script="hmm"))
    result = judge.judge("q?", "a cat", [HumanMessage("q?")])
    assert result.correct is False and result.reason == "unparsable verdict"


def test_cli_needs_both_answer_and_judge_models(capsys):
    assert main(["bench", "--answer-model", "x:y", "--strategies", "bm25"]) == 2
    assert "--judge-model" in capsys.readouterr().err


def test_plot_is_readable_when_strategies_coincide():
    """Ticks do not overlap, coinciding markers are both visible, y=0 is drawn whole."""
    import itertools
    import math

    from matplotlib.text import Annotation, Text

    from librarian_bench._plot import recall_figure

    points = [
        ("brute-force", 39673, 1.0),
        ("last-n", 1485, 0.0),
        ("bm25", 1971, 1.0),
        ("librarian-lexical", 1826, 1.0),
        ("librarian", 1826, 1.0),  # the same spot as librarian-lexical
    ]
    rows = [
        {
            "strategy": s,
            "category": "all",
            "questions": 5,
            "context_tokens": t,
            "evidence_recall": r,
        }
        for s, t, r in points
    ]
    fig = recall_figure("mini", rows)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (ax,) = fig.axes
    ticks = [t for t in ax.get_xticklabels() if t.get_text()]
    assert len(ticks) >= 2
    boxes = [t.get_window_extent(renderer) for t in ticks]
    assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))
    assert all(not t.get_text() for t in ax.get_xticklabels(minor=True))
    centres = {}
    for collection, (name, _, _) in zip(ax.collections, points, strict=True):
        centres[name] = ax.transData.transform(collection.get_offsets()[0])
        assert not collection.get_clip_on()
    width = math.sqrt(collection.get_sizes()[0]) * fig.dpi / 72
    assert math.dist(centres["librarian"], centres["librarian-lexical"]) >= width
    assert centres["librarian-lexical"][0] < centres["bm25"][0]  # order kept
    bottom = ax.get_window_extent(renderer).y0
    assert centres["last-n"][1] - width / 2 > bottom  # the y=0 marker is inside the frame
    labels = [a for a in ax.texts if isinstance(a, Annotation)]
    assert sorted(a.get_text() for a in labels) == sorted(p[0] for p in points)
    label_boxes = []
    for label in labels:
        label.update_positions(renderer)
        label_boxes.append(Text.get_window_extent(label, renderer))
    assert not any(a.overlaps(b) for a, b in itertools.combinations(label_boxes, 2))


def test_bench_reports_model_failures_hidden_by_fallbacks(tmp_path):
    """Summaries that fail and selections that fall back are counted, not hidden."""
    from fakes import ScriptedChatModel
    from librarian_bench.runner import format_llm_health

    def flaky(messages):
        prompt = str(messages[-1].content)
        if "<message>" in prompt:
            raise ConnectionError("summary service down")
        if "librarian of a long conversation" in prompt:
            return "IDs: []"  # unusable: falls back to the local selector
        return "ok"

    long = json.loads(json.dumps(MINI))
    for session in ("session_1", "session_3"):
        for turn in long[0]["conversation"][session]:
            turn["text"] += " We talked about it for a long while afterwards." * 6
    convs = load_locomo(locomo_fixture(tmp_path, long))
    reports: dict = {}
    outcomes, _ = run_bench(
        "mini",
        convs,
        ["librarian-llm", "bm25"],
        budget=500,
        model=ScriptedChatModel(script=flaky),
        indexing_reports=reports,
    )
    rows = summary_rows(outcomes)
    llm = next(r for r in rows if r["strategy"] == "librarian-llm" and r["category"] == "all")
    assert llm["fallback_rate"] == 1.0 and llm["llm_selection_rate"] == 0.0
    assert llm["context_success_llm"] is None
    assert "empty id list" in next(iter(llm["fallback_reasons"]))
    assert reports["librarian-llm"]["by_status"].get("fallback", 0) >= 1
    assert reports["librarian-llm"]["summary_failure_rate"] == 1.0
    assert "summary service down" in next(iter(reports["librarian-llm"]["failure_reasons"]))
    table = format_llm_health(rows, reports)
    assert re.search(r"\| librarian-llm \| \d+% \| - \| 0% \| - \| - \| 100% \|", table)
    assert "bm25" not in table  # no model involved


def test_memory_strategies_run_on_the_same_budget(tmp_path):
    long = json.loads(json.dumps(MINI))
    for turn in long[0]["conversation"]["session_1"]:
        turn["text"] += " We kept talking about the weekend plans and the weather." * 12
    convs = load_locomo(locomo_fixture(tmp_path, long))
    outcomes, _ = run_bench(
        "mini", convs, ["running-summary", "librarian+summary", "last-n"], budget=300
    )
    rows = {r["strategy"]: r for r in summary_rows(outcomes) if r["category"] == "all"}
    assert set(rows) == {"running-summary", "librarian+summary", "last-n"}
    for row in rows.values():
        assert row["context_tokens"] <= 300 + 60  # the same budget for everyone
    # the cat fact only survives in the running summary: contained, not recalled
    summary = [
        o for o in outcomes if o.strategy == "running-summary" and o.category == "single-hop"
    ]
    assert summary and summary[0].contained
