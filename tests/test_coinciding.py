"""A question relating two events in time brings the message dating the other one."""

from __future__ import annotations

import re

import numpy as np
import pytest

from helpers import FILLER, alternating, asked_after
from langgraph_librarian.select import LocalSelector, local
from langgraph_librarian.select._calendar import DaySpan, day_spans, days_apart, month_of
from langgraph_librarian.select.local import _TWO_EVENTS


def _day(month: int, day: int) -> int:
    return (0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335)[month - 1] + day


def _one(month: int, day: int, year: int = 0) -> DaySpan:
    return DaySpan(_day(month, day), _day(month, day), year)


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("The play is Saturday June 14 at 6pm.", [_one(6, 14)]),
        ("Dentist on the 3rd of March, then lunch.", [_one(3, 3)]),
        ("We're away June 10-19 this year.", [DaySpan(_day(6, 10), _day(6, 19))]),
        ("Away 28–30 Sept. at the coast.", [DaySpan(_day(9, 28), _day(9, 30))]),
        ("Sept. 3rd and Jun. 14 are booked.", [_one(9, 3), _one(6, 14)]),
        ("Graduation is 14 June 2025.", [_one(6, 14, 2025)]),
        (
            "Leaving Tuesday 10 June and returning Thursday 19 June.",
            [_one(6, 10), _one(6, 19), DaySpan(_day(6, 10), _day(6, 19))],
        ),
        # a range word across a month's end, and across the year's
        (
            "Out from July 28 until August 5.",
            [_one(7, 28), _one(8, 5), DaySpan(_day(7, 28), _day(8, 5))],
        ),
        ("Dec 28 to Jan 3 at Gran's.", [_one(12, 28), _one(1, 3), DaySpan(_day(12, 28), 369)]),
        # two days without a range word are two days
        ("Recital June 14; tickets went on sale June 2.", [_one(6, 14), _one(6, 2)]),
        # a number that is no day of the month beside it
        ("We won 3-1 May 5th.", [_one(5, 5)]),
        ("Final score 2-1 June 14.", [_one(6, 14)]),
        ("The ticket was £30 June 5 at the door.", [_one(6, 5)]),
        ("Room 12 May 3rd.", [_one(5, 3)]),
        ("Tickets are $25 May 2024 prices.", []),
        ("You may 3D-print it, or mar the finish.", []),  # the verbs, not the months
        ("Cutover on the 10th at 7am.", []),  # no month: no day
        ("Version 3.11 shipped; 4 of us went.", []),
        ("Standup moved to June 10:30 slot.", []),
        ("February 30 is no day.", []),
    ],
)
def test_the_days_a_text_names(text, spans):
    assert list(day_spans(text)) == spans


def test_days_apart_and_months():
    assert days_apart((DaySpan(10, 10),), (DaySpan(12, 20),)) == 2
    assert days_apart((DaySpan(10, 30),), (DaySpan(12, 14),)) == 0  # overlap
    assert days_apart((DaySpan(365, 365),), (DaySpan(1, 1),)) == 2  # around the year's end
    assert days_apart((DaySpan(10, 10, 2023),), (DaySpan(11, 11, 2024),)) > 366
    assert days_apart((DaySpan(10, 10, 2023),), (DaySpan(11, 11),)) == 1  # one year unsaid
    assert days_apart((), (DaySpan(1, 1),)) > 366
    assert [month_of(d) for d in (0, 1, 31, 32, 60, 61, 366, 367)] == [12, 1, 1, 2, 2, 3, 12, 1]


def test_what_relates_two_events():
    for question in (
        "What do I have on the morning after the school play?",
        "Will my sister be in town for the play?",
        "Does the party clash with anything?",
        "Will I be able to make the show?",
        "Will Jules be around to play the block party?",
        "Who feeds the cat while we're away?",
        "Am I going to miss the final?",
    ):
        assert _TWO_EVENTS.search(question), question
    for question in (
        "When is the school play?",
        "What did the dentist say?",
        "What did the vet say after the surgery?",  # one event
        "What was I able to fix on the bike?",
        "Which hotels in Porto were available?",
        "What did Miss Patel say?",
        "How did I feel while running?",
    ):
        assert not _TWO_EVENTS.search(question), question


_PLANS = [
    f"{FILLER} Mila got the lead in the school play, it's on Saturday 14 June at 6pm.",
    "Wonderful, congratulations to her!",
    f"{FILLER} Booked the dentist for Sunday 15 June at 9, finally.",
    "Good, that tooth has bothered you for weeks.",
    f"{FILLER} Our anniversary dinner is booked for 2 August at Chez Marie.",
    "Lovely choice.",
    f"{FILLER} The boiler service is due sometime in spring, I keep forgetting.",
    "I can remind you.",
    f"{FILLER} The car goes in for its service on 24 June, ten days after the play.",
    "Noted.",
]


def _select(question: str, *extra: str, max_selected: int = 1) -> list[int]:
    history, entries = asked_after(alternating([*_PLANS, *extra]), question)
    selector = LocalSelector(embeddings=None, max_selected=max_selected)
    return selector.select(question, history, entries).ids


def _brought(texts: list[str], question: str, order: list[int] | None = None) -> list[int]:
    """What ``_coinciding`` brings for ``question`` with ``order`` (default: the
    selector's own ranking) and the first message as the one best match."""
    history, entries = asked_after(alternating(texts), question)
    selector = LocalSelector(embeddings=None)
    scored = selector._score(question, history, entries, None)
    if order is None:
        order = [int(i) for i in np.argsort(-scored.fused)]
        assert order[0] == 0
    found = selector._coinciding(question, order, {0}, scored, entries, set())
    return [slot for slot, _ in found]


def test_the_day_after_brings_what_is_dated_then():
    # The dentist shares no word with the question: only its date links it to the play.
    ids = _select("What have I got on the morning after the school play?")
    assert ids[:2] == [0, 2]  # right after the match
    assert 4 not in ids  # seven weeks later
    assert 8 not in ids  # ten days later: not near


def test_what_it_brings_ranks_right_below_the_match():
    # The car service names the play too ("ten days after the play") and is a second
    # match; the dentist, brought by the play's date, comes before it.
    ids = _select("What have I got on the morning after the school play?", max_selected=2)
    assert 8 in ids
    assert ids.index(2) < ids.index(8)


def test_ten_days_away_is_not_near():
    texts = [
        f"{FILLER} Mila got the lead in the school play, it's on Saturday 14 June at 6pm.",
        "Wonderful!",
        f"{FILLER} The car goes in for its service on 24 June at the garage.",
        "Noted.",
    ]
    question = "What have I got on the morning after the school play?"
    assert _brought(texts, question, order=[0]) == []
    texts[2] = texts[2].replace("24 June", "20 June")
    assert _brought(texts, question, order=[0]) == [2]


def test_the_day_after_is_the_nearest_day_not_the_best_words():
    # The fitting shares "Mila" with the question and is five days away; the dentist
    # is the morning after.
    fitting = f"{FILLER} Mila has her costume fitting on Monday 9 June after school."
    ids = _select("What have I got on the morning after Mila's school play?", fitting, "Ok.")
    assert 2 in ids
    assert 10 not in ids


def test_for_a_clash_the_best_scored_near_day_comes():
    visit = f"{FILLER} Grandma Rosa flies in on Friday 20 June and home on 2 July."
    ids = _select("Will Grandma Rosa be in town for the school play?", visit, "Lovely.")
    assert 0 in ids and 10 in ids


def test_without_a_relation_in_time_nothing_is_brought():
    assert 2 not in _select("When is the school play?")
    assert 2 not in _select("What did Mila say after the school play?")


def test_without_the_rule_the_dentist_is_not_selected(monkeypatch):
    monkeypatch.setattr(local, "_TWO_EVENTS", re.compile(r"(?P<next>(?!))"))
    assert 2 not in _select("What have I got on the morning after the school play?")


def test_a_transcript_dateline_dates_no_event(monkeypatch):
    # Every line opens with the day it was said: that is when it was said, not a day it
    # names, so the sitting's other lines are not "near the play".
    lines = [
        f"(14 June 2025) Ana: The school play went really well, Mila was great. {FILLER}",
        "(14 June 2025) Ben: So glad!",
        "(15 June 2025) Ben: The garden needs weeding, I started on the roses today.",
        "(15 June 2025) Ana: Good luck with it.",
    ]
    for day in range(1, 21):
        lines.append(f"({day} March 2025) Ben: Week {day} at work was busy with reports.")
        lines.append(f"({day} March 2025) Ana: Hang in there, item {day}.")
    question = "What did Ana do the morning after the school play?"
    assert _brought(lines, question) == []
    monkeypatch.setattr(local, "without_dateline", lambda text: text)  # datelines as days
    assert _brought(lines, question) in ([1], [2])
