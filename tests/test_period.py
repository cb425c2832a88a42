"""A question that keeps to a period prefers what was told within it.

"When did Melanie go camping in June?" when she went camping in June and again in July:
the history's datelines say which sitting was in June. A best match dated within the
period (its own dateline or its sitting's) gains half of its score; nothing is cut.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import alternating, asked_after
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select.local import _in_period, _lexical, _period


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("When did Melanie go camping in June?", (0, frozenset({6}))),
        ("What did she paint in May 2023?", (2023, frozenset({5}))),
        ("How many times has Melanie gone to the beach in 2023?", (2023, frozenset())),
        ("Who did I meet during the summer?", (0, frozenset({6, 7, 8}))),
        ("What did we cook in early autumn 2022?", (2022, frozenset({9, 10, 11}))),
        (
            "Which trips did they take in autumn and winter 2023?",
            (2023, frozenset({9, 10, 11, 12, 1, 2})),
        ),
        ("Did she travel in June or July?", (0, frozenset({6, 7}))),
        ("What happened in mid-March, 2024?", (2024, frozenset({3}))),
        ("In June, where did she go camping?", (0, frozenset({6}))),
        ("During the Summer, what did we do?", (0, frozenset({6, 7, 8}))),
        ("What did we see from June to August?", (0, frozenset({6, 7, 8}))),
        ("Where did he work between November and February?", (0, frozenset({11, 12, 1, 2}))),
        ("What did she read in late 2022?", (2022, frozenset())),
        ("What did we eat in summer 2023 with the kids?", (2023, frozenset({6, 7, 8}))),
        ("How many came in June, 2000 people or more?", (0, frozenset({6}))),
        ("What happened during the fall of Rome?", None),
        ("What goes in the spring roll recipe?", None),
        ("Who was in June's class?", None),
        ("Were there over 2000 people?", None),
        ("What does it cost in 1999 dollars?", None),
        ("Summarize it in 2000 words.", None),
        ("What is in the box?", None),
        ("Do you think in may cases this helps?", None),
        ("What did she say in 20 minutes?", None),
    ],
)
def test_the_period_a_question_keeps_to(question: str, period: object) -> None:
    assert _period(question) == period


def _stamped(lines: list[tuple[str, str]]) -> list:
    return alternating([f"({date}) {text}" for date, text in lines])


_CAMPING = [
    ("3 June 2023", "Melanie: We went camping by the lake with the kids last weekend!"),
    ("3 June 2023", "Caroline: That sounds so peaceful. Did they like it?"),
    ("20 June 2023", "Melanie: I signed up for a pottery class, my first one is Friday."),
    ("20 June 2023", "Caroline: Pottery! Send me pictures of what you make."),
    ("15 July 2023", "Melanie: We went camping in the mountains, the kids loved the stars."),
    ("15 July 2023", "Caroline: Stars in the mountains, how lovely."),
    ("2 August 2023", "Melanie: The garden is finally full of tomatoes."),
    ("2 August 2023", "Caroline: Save me some!"),
]


def _ranked(lines: list[tuple[str, str]], question: str) -> list[str]:
    history, entries = asked_after(_stamped(lines), question)
    scores = LocalSelector().scores(question, history, entries)
    return [history[entries[i].id].id for i in np.argsort(-scores, kind="stable")]


def test_the_match_told_within_the_month_ranks_first() -> None:
    june = _ranked(_CAMPING, "When did Melanie go camping in June?")
    july = _ranked(_CAMPING, "When did Melanie go camping in July?")
    assert june[0] == "m0"
    assert july[0] == "m4"


@pytest.mark.parametrize(
    ("question", "raised"),
    [
        ("When did Melanie go camping in June?", [0, 1, 2, 3]),
        ("When did Melanie go camping in June 2023?", [0, 1, 2, 3]),
        ("When did Melanie go camping in June 2022?", []),
        ("What did Melanie do in 2023?", list(range(8))),
        ("What did Melanie do in summer?", list(range(8))),
        ("What did Melanie do during the winter?", []),
        ("What did Melanie do with the kids?", []),
    ],
)
def test_which_matches_are_told_within_the_period(question: str, raised: list[int]) -> None:
    history, entries = asked_after(_stamped(_CAMPING), question)
    index, _ = _lexical(history, entries)
    fused = np.ones(len(entries))
    got = _in_period(question, fused, index, entries, history)
    assert np.flatnonzero(got > 1).tolist() == raised
    assert np.allclose(got[got > 1], 1.5)


@pytest.mark.parametrize(
    ("stamps", "question", "raised"),
    [
        # ISO datelines.
        (["2023-06-03", "2023-06-03", "2023-07-15", "2023-07-15"], "in June?", [0, 1]),
        # Datelines without a year: within a month of any year, not of a given one.
        (["3 June", "3 June", "15 July", "15 July"], "in June?", [0, 1]),
        (["3 June", "3 June", "15 July", "15 July"], "in June 2023?", []),
    ],
)
def test_datelines_of_other_forms(stamps: list[str], question: str, raised: list[int]) -> None:
    history, entries = asked_after(
        alternating([f"({stamp}) We went camping." for stamp in stamps]), question
    )
    index, _ = _lexical(history, entries)
    got = _in_period(question, np.ones(len(entries)), index, entries, history)
    assert np.flatnonzero(got > 1).tolist() == raised


def test_one_dateline_is_no_habit() -> None:
    lines = ["[Session 1, 3 June 2023] evening", "We went camping.", "Nice.", "Tents!"]
    question = "When did we go camping in June?"
    history, entries = asked_after(alternating(lines), question)
    index, _ = _lexical(history, entries)
    fused = np.ones(len(entries))
    assert np.array_equal(_in_period(question, fused, index, entries, history), fused)


def test_a_dateline_too_far_above_or_beyond_a_break_dates_nothing() -> None:
    far = [
        "[Session 1, 3 June 2023] evening",
        *["More chatter."] * 90,
        "We went camping.",
        "[Session 2, 15 July 2023] morning",
    ]
    broken = [
        "[Session 1, 3 June 2023] evening",
        "We went camping.",
        "",  # scoped recall's break: another thread's records follow
        "We went camping again.",
        "[Session 2, 15 July 2023] morning",
    ]
    question = "When did we go camping in June?"
    far_raised = list(range(81))  # the dateline and the 80 messages below it
    # (The break itself scores 0 in a real ranking; here every message scores 1.)
    for lines, raised in ((far, far_raised), (broken, [0, 1, 2])):
        history, entries = asked_after(alternating(lines), question)
        index, _ = _lexical(history, entries)
        got = _in_period(question, np.ones(len(entries)), index, entries, history)
        ids = [history[entries[i].id].id for i in np.flatnonzero(got > 1)]
        assert ids == [f"m{i}" for i in raised], lines[:3]


def test_a_sitting_dated_once_dates_its_messages() -> None:
    lines = [
        "[Session 1, 3 June 2023] evening",
        "We went camping by the lake with the kids!",
        "That sounds peaceful.",
        "[Session 2, 15 July 2023] morning",
        "We went camping in the mountains this time.",
        "Lovely.",
    ]
    question = "When did we go camping in June?"
    history, entries = asked_after(alternating(lines), question)
    index, _ = _lexical(history, entries)
    got = _in_period(question, np.ones(len(entries)), index, entries, history)
    assert np.flatnonzero(got > 1).tolist() == [0, 1, 2]


def test_without_datelines_nothing_changes() -> None:
    lines = [text for _, text in _CAMPING]
    question = "When did Melanie go camping in June?"
    history, entries = asked_after(alternating(lines), question)
    scores = LocalSelector().scores(question, history, entries)
    # The later camping trip ranks first (the later of equal matches), as before.
    assert history[entries[int(np.argmax(scores))].id].id == "m4"
