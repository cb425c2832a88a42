"""The ``phenomena`` dataset: sizes, splits, and that every question is what it claims.

Each check states a property of the generated data, over both default splits (6 + 6
conversations, 300 questions), so a change to the text banks that breaks a phenomenon
(a paraphrase that reuses a word, an update that says "changed" while marked implicit,
a gold answer the evidence does not state) fails here.
"""

from __future__ import annotations

import datetime
import json
import re
import statistics
from functools import cache

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian._engine.text import CHANGE_CUES, content_terms
from langgraph_librarian.cli import main
from langgraph_librarian.tokens import count_tokens
from librarian_bench.datasets.phenomena import (
    CATEGORIES,
    MESSAGE_LENGTHS,
    QUESTIONS_PER_CATEGORY,
    SPLITS,
    PhenomenonQuestion,
    conversation_seed,
    generate_conversation,
    generate_dataset,
)

MONTHS = [datetime.date(2025, m, 1).strftime("%B") for m in range(1, 13)]
NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "six": 6, "eight": 8}
TAIL_MESSAGES = 6  # the last three turns never hold evidence


@cache
def split(name: str, length: str = "long"):
    return tuple(generate_dataset(name, message_length=length))


def questions(name: str):
    for conv in split(name):
        by_id = {m.id: m for m in conv.messages}
        for q in conv.questions:
            assert isinstance(q, PhenomenonQuestion)
            yield conv, by_id, q


def text_of(by_id, ids) -> str:
    return "\n".join(message_text(by_id[i]) for i in ids)


def is_prose(message) -> bool:
    return isinstance(message, HumanMessage) or (
        isinstance(message, AIMessage) and not message.tool_calls
    )


def shape(value: str) -> str:
    """'£1,250' -> '£9', 'row B, seat 12' -> 'a a, a 9': the kind of a value."""
    return re.sub(r"[A-Za-z]+", "a", re.sub(r"\d[\d,.]*", "9", value))


def test_same_seed_same_conversation_other_seed_other_conversation():
    a = generate_conversation("s1", conv_id="c")
    b = generate_conversation("s1", conv_id="c")
    assert [(m.id, type(m), m.content) for m in a.messages] == [
        (m.id, type(m), m.content) for m in b.messages
    ]
    assert [vars(q) for q in a.questions] == [vars(q) for q in b.questions]
    assert [m.tool_calls for m in a.messages if isinstance(m, AIMessage)] == [
        m.tool_calls for m in b.messages if isinstance(m, AIMessage)
    ]
    c = generate_conversation("s2", conv_id="c")
    assert [m.content for m in a.messages] != [m.content for m in c.messages]
    # The whole split, too (string seeds are hashed stably, not with hash()).
    assert [m.content for m in generate_dataset("dev")[0].messages] == [
        m.content for m in split("dev")[0].messages
    ]


def test_splits_share_no_seed_conversation_or_question():
    seeds = {s: {conversation_seed(s, 7, k) for k in range(6)} for s in SPLITS}
    assert not seeds["dev"] & seeds["heldout"]
    assert len(seeds["dev"]) == len(seeds["heldout"]) == 6
    dev, held = split("dev"), split("heldout")
    assert not {c.id for c in dev} & {c.id for c in held}

    def user_texts(convs):
        return {m.content for c in convs for m in c.messages if isinstance(m, HumanMessage)}

    assert not user_texts(dev) & user_texts(held)

    def asked(name):
        return {(q.text, q.answer, text_of(by_id, q.evidence)) for _, by_id, q in questions(name)}

    assert not asked("dev") & asked("heldout")
    # Same distribution: the same phenomena, in the same numbers.
    for name in SPLITS:
        counts = {c: 0 for c in CATEGORIES}
        for _, _, q in questions(name):
            counts[q.category] += 1
        assert counts == {c: 6 * n for c, n in QUESTIONS_PER_CATEGORY.items()}


def test_one_split_at_a_time():
    for bad in ("both", "all", "test", ""):
        with pytest.raises(ValueError, match="dev' or 'heldout"):
            generate_dataset(bad)
    with pytest.raises(ValueError, match="long' or 'short"):
        generate_conversation(1, message_length="medium")


@pytest.mark.parametrize("name", SPLITS)
def test_long_conversations_have_the_stated_sizes(name):
    convs = split(name)
    assert len(convs) == 6 and sum(len(c.questions) for c in convs) == 150
    tokens = [count_tokens(c.messages) for c in convs]
    assert all(45_000 <= t <= 70_000 for t in tokens), tokens
    assert 50_000 <= statistics.mean(tokens) <= 70_000, tokens
    low, high = MESSAGE_LENGTHS["long"]
    for conv in convs:
        assert 76 <= len(conv.messages) <= 90
        assert len({m.id for m in conv.messages}) == len(conv.messages)
        words = [len(m.content.split()) for m in conv.messages if is_prose(m)]
        assert low <= min(words) and max(words) <= high
        assert statistics.mean(words) >= 450  # skewed long, as documented
        assert any(isinstance(m, HumanMessage) for m in conv.messages)


def test_short_messages_variant():
    low, high = MESSAGE_LENGTHS["short"]
    for conv in split("heldout", "short"):
        words = [len(m.content.split()) for m in conv.messages if is_prose(m)]
        assert low <= min(words) and max(words) <= high
        assert count_tokens(conv.messages) < 10_000
        assert len(conv.questions) == 25


@pytest.mark.parametrize("name", SPLITS)
def test_evidence_exists_and_comes_before_the_last_turns(name):
    tool_evidence = 0
    for conv, by_id, q in questions(name):
        position = {m.id: i for i, m in enumerate(conv.messages)}
        assert q.evidence and len(set(q.evidence)) == len(q.evidence), q
        for message_id in q.evidence + q.distractors:
            assert message_id in by_id
            # Evidence precedes the question (asked after the last message) and is never in
            # the turns every strategy keeps anyway.
            assert position[message_id] < len(conv.messages) - TAIL_MESSAGES
        assert len(q.statements) == len(q.evidence)
        for message_id, statement in zip(q.evidence, q.statements, strict=True):
            assert statement in message_text(by_id[message_id])
            message = by_id[message_id]
            if isinstance(message, ToolMessage):
                tool_evidence += 1
                call = conv.messages[position[message_id] - 1]
                assert isinstance(call, AIMessage)
                assert call.tool_calls[0]["id"] == message.tool_call_id
    assert tool_evidence >= 6  # facts that only a tool result states


@pytest.mark.parametrize("name", SPLITS)
def test_gold_answers_are_stated_or_derived_from_the_evidence(name):
    for _, by_id, q in questions(name):
        evidence = text_of(by_id, q.evidence).lower()
        for part in q.support:
            assert part.lower() in evidence, (q.text, part)
        if q.category != "temporal":
            for part in q.answer.split("; "):
                assert part.lower() in evidence, (q.text, part)
            continue
        rule = q.derivation
        assert rule is not None
        for written, day in zip(q.support, rule.dates, strict=False):
            # The anchor as written names the date the rule uses.
            assert str(day.day) in written and MONTHS[day.month - 1] in written
        if rule.rule == "plus_days":
            result = rule.dates[0] + datetime.timedelta(days=rule.days)
            assert q.answer == f"{result.day} {MONTHS[result.month - 1]}"
            if len(q.support) == 2:  # the offset is stated in a second message
                count, unit = q.support[1].split()
                n = NUMBER_WORDS[count] if unit == "weeks" else int(count)
                assert abs(rule.days) == n * (7 if unit == "weeks" else 1)
        elif rule.rule == "days_between":
            assert q.answer == f"{abs((rule.dates[1] - rule.dates[0]).days)} days"
        else:
            first = min(range(2), key=lambda i: rule.dates[i])
            assert q.answer.lower() in message_text(by_id[q.evidence[first]]).lower()
            assert q.answer.lower() not in message_text(by_id[q.evidence[1 - first]]).lower()


def test_every_phenomenon_in_every_conversation_of_each_split():
    for name in SPLITS:
        for conv in split(name):
            counts = {c: sum(q.category == c for q in conv.questions) for c in CATEGORIES}
            assert counts == QUESTIONS_PER_CATEGORY


@pytest.mark.parametrize("name", SPLITS)
def test_distractors_state_the_same_kind_of_value_in_the_same_words(name):
    seen = 0
    for _, by_id, q in questions(name):
        if q.category != "distractor":
            continue
        seen += 1
        assert len(q.distractors) in (2, 3) and len(q.decoys) == len(q.distractors)
        assert not set(q.distractors) & set(q.evidence)
        asked = set(content_terms(q.text))
        shared = {t for k in q.keywords for t in content_terms(k)}
        assert shared and shared <= asked
        assert shared <= set(content_terms(text_of(by_id, q.evidence)))
        for message_id, decoy in zip(q.distractors, q.decoys, strict=True):
            near = message_text(by_id[message_id])
            assert decoy in near and decoy != q.answer
            assert shape(decoy) == shape(q.answer), (decoy, q.answer)
            assert shared <= set(content_terms(near)), (q.text, near)
    assert seen == 24


@pytest.mark.parametrize("name", SPLITS)
def test_updates_are_in_order_and_half_of_them_carry_no_change_cue(name):
    implicit = total = 0
    for conv, by_id, q in questions(name):
        if q.category != "updated":
            continue
        total += 1
        order = [m.id for m in conv.messages]
        chain = [*q.distractors, *q.evidence]  # oldest version first, the answer last
        assert [order.index(i) for i in chain] == sorted(order.index(i) for i in chain)
        assert 1 <= len(q.distractors) <= 3 and q.answer not in q.decoys
        for message_id, old in zip(q.distractors, q.decoys, strict=True):
            assert old in message_text(by_id[message_id])
        latest = q.statements[-1]
        # Implicit: no cue at all; explicit: the change is said outright.
        assert bool(CHANGE_CUES.search(latest)) is not q.implicit, latest
        implicit += q.implicit
    assert total == 24 and implicit >= total / 2


@pytest.mark.parametrize("name", SPLITS)
def test_indirect_and_spread_need_both_messages(name):
    for _, by_id, q in questions(name):
        if q.category not in ("indirect", "spread"):
            continue
        assert len(q.evidence) == 2
        if q.bridge:  # the key that links the two messages is not in the question
            assert q.bridge.lower() not in q.text.lower()
            for message_id in q.evidence:
                assert q.bridge.lower() in message_text(by_id[message_id]).lower()
        else:  # a two-part answer: one part in each message
            parts = q.answer.split("; ")
            assert len(parts) == 2
            for part, message_id in zip(parts, q.evidence, strict=True):
                assert part in message_text(by_id[message_id])
        if q.category == "indirect":
            assert q.bridge and q.answer not in message_text(by_id[q.evidence[0]])


# Documented bound: a paraphrase question shares no content term (content_terms: stemmed,
# stop words dropped) with the sentence that states its answer. Counting every term of the
# whole evidence message (filler included), a paraphrase question finds on average at most
# 30% of its terms there, while every other phenomenon finds at least 45%.
PARAPHRASE_MEAN_BOUND = 0.30
OTHERS_MEAN_FLOOR = 0.45


def test_paraphrase_questions_share_few_words_with_their_evidence():
    share: dict[str, list[float]] = {c: [] for c in CATEGORIES}
    for name in SPLITS:
        for _, by_id, q in questions(name):
            asked = set(content_terms(q.text))
            assert len(asked) >= 2
            message = set(content_terms(text_of(by_id, q.evidence)))
            share[q.category].append(len(asked & message) / len(asked))
            if q.category == "paraphrase":
                stated = set(content_terms(" ".join(q.statements)))
                assert not asked & stated, (q.text, q.statements)
    assert statistics.mean(share["paraphrase"]) <= PARAPHRASE_MEAN_BOUND
    for category in CATEGORIES:
        if category != "paraphrase":
            assert statistics.mean(share[category]) >= OTHERS_MEAN_FLOOR, category


def test_assistant_turns_and_tool_calls_take_part():
    for conv in split("heldout"):
        calls = [m for m in conv.messages if isinstance(m, AIMessage) and m.tool_calls]
        results = [m for m in conv.messages if isinstance(m, ToolMessage)]
        assert calls and len(calls) == len(results)
    by_ai = sum(
        isinstance(by_id[e], AIMessage) for _, by_id, q in questions("heldout") for e in q.evidence
    )
    assert by_ai >= 5  # some facts are stated (restated) by the assistant


def _bench_json(capsys, *argv: str) -> dict:
    assert main(["bench", "--dataset", "phenomena", "--quiet", "--json", *argv]) == 0
    out = capsys.readouterr().out
    return json.loads(out[out.index('{\n "meta"') :])


def test_bench_runs_every_offline_strategy_on_one_split(capsys):
    report = _bench_json(
        capsys,
        *("--split", "dev", "--message-length", "short", "--limit", "6", "--no-embeddings"),
        *("--strategies", "brute-force", "last-n", "bm25", "librarian-lexical", "librarian"),
        *("running-summary", "librarian+summary"),
    )
    assert report["meta"]["dataset"] == "phenomena-dev" and report["meta"]["split"] == "dev"
    rows = [r for r in report["summary"] if r["category"] == "all"]
    assert {r["strategy"] for r in rows} >= {"brute-force", "bm25", "librarian-lexical"}
    brute = next(r for r in rows if r["strategy"] == "brute-force")
    assert brute["context_success"] == 1.0 and brute["questions"] == 6


def test_bench_defaults_to_the_heldout_split(capsys):
    report = _bench_json(capsys, "--limit", "2", "--strategies", "last-n")
    assert report["meta"]["dataset"] == "phenomena-heldout"
    assert report["meta"]["split"] == "heldout" and report["meta"]["message_length"] == "long"


@pytest.mark.embeddings
def test_bench_with_embedding_strategies(capsys):
    argv = ["--split", "dev", "--message-length", "short", "--limit", "3"]
    report = _bench_json(capsys, *argv, "--strategies", "vector", "librarian")
    assert {r["strategy"] for r in report["summary"]} == {"vector", "librarian"}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--dataset", "phenomena", "--split", "both"], "--split takes dev or heldout"),
        (["--split", "dev"], "--split applies to --dataset phenomena only"),
        (["--dataset", "locomo", "--split", "dev"], "--split applies to --dataset phenomena"),
        (["--dataset", "phenomena", "--message-length", "x"], "--message-length takes long"),
        (["--message-length", "short"], "--message-length applies to --dataset phenomena"),
    ],
)
def test_bad_phenomena_options_give_one_error_line(argv, expected, capsys, monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("the run started before the bad input was reported")

    monkeypatch.setattr("librarian_bench.runner.run_bench", boom)
    assert main(["bench", *argv]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("librarian: error:")]
    assert len(lines) == 1 and expected in lines[0] and "Traceback" not in err
