"""What a weak indexer writes that is not a summary of the message, and what still is.

A review replayed scripted weak-model answers through the validator and found ten
kinds of bad summary that were stored: an answer to the user's question, numbers
taken from inside a code, an invented name opening a sentence or bullet, weekday
abbreviations, a summary in another language, an obeyed prompt injection, an invented
dialogue, a summary cut mid-word, a running summary that echoes the previous one; and
good German summaries that were rejected. Each rule has a test of what it rejects and
of the good summaries it must keep.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.index.summarize import DEFAULT_SUMMARY_PROMPT, summary_problem


def problem(summary: str, source: str) -> str | None:
    return summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT)


def _index(source: str, answer: str):
    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script=answer),
        short_message_threshold=10,
        embeddings=None,
        retry_backoff=0,
    )
    return update_index([HumanMessage(source, id="m1")], [], config)


# -- 2. numbers are whole tokens, not pieces of a code ----

ORDER = (
    "Please check order A-4521 for me: it never arrived, and the tracking page has shown "
    "nothing since Monday."
)


@pytest.mark.parametrize(
    "answer",
    [
        "Order A-4521 never arrived; 45 items are missing.",
        "Order A-4521 has not arrived; tracking stuck since Monday, 21 days late.",
        "Order A-45 never arrived; tracking shows nothing since Monday.",
    ],
)
def test_a_number_inside_a_code_of_the_message_is_not_a_fact(answer):
    assert problem(answer, ORDER) is not None


@pytest.mark.parametrize(
    "summary",
    [
        "Order A-4521 never arrived; no tracking updates since Monday.",
        "Asks to check order A4521: not delivered, tracking empty since Monday.",
    ],
)
def test_the_code_itself_is_fine(summary):
    assert problem(summary, ORDER) is None


def test_digits_of_a_code_stay_grounded_for_the_code():
    source = "The flight got changed: we're now on TP 1341 leaving Lisbon at 11:50."
    assert problem("Now on flight TP1341 from Lisbon at 11:50.", source) is None
    assert problem("Now on flight TP 1341, leaving Lisbon at 11:50.", source) is None


# -- 4. weekday and month abbreviations ----

MEETING = "The design review is on Thu at 10:30 and the launch is on Sep 3."
MEETING_FULL = "The design review is on Thursday at 10:30 and the launch is on September 3."


@pytest.mark.parametrize(
    ("source", "summary"),
    [
        (MEETING, "Design review Thursday 10:30; launch September 3."),
        (MEETING_FULL, "Design review Thu 10:30; launch Sep 3."),
        (MEETING_FULL, "Design review Thurs. 10:30, launch Sept 3."),
        (MEETING, "Design review on Thu at 10:30, launch on Sep 3."),
    ],
)
def test_an_abbreviation_and_the_full_name_ground_each_other(source, summary):
    assert problem(summary, source) is None


@pytest.mark.parametrize(
    ("source", "answer"),
    [
        (MEETING, "Design review Fri 10:30; launch Sep 3."),
        (MEETING_FULL, "Design review on Fri at 10:30; launch September 3."),
        (MEETING_FULL, "Design review Thursday 10:30; launch Oct 3."),
        (MEETING, "Design review Thu 10:30; launch on Sat, Sep 3."),
    ],
)
def test_a_weekday_or_month_the_message_never_names_is_invented(source, answer):
    assert problem(answer, source) is not None


def test_sun_and_sat_as_words_are_not_weekdays():
    source = "We sat on the terrace for the whole afternoon and the review went well."
    assert problem("Sat on the terrace all afternoon; the review went well.", source) is None


# -- 10. thousands separators ----

BUDGET = "The budget is {} euros now, and the hotel is booked."
NEW_BUDGET = "Budget now {} euros; hotel booked."


@pytest.mark.parametrize(
    ("said", "summarized"),
    [
        ("4500", "4,500"),
        ("4500", "4.500"),
        ("4500", "4 500"),
        ("4,500", "4500"),
        ("4 500", "4500"),
        ("4.500", "4,500"),
        ("12.345,50", "12345.50"),
        ("12,345.50", "12.345,50"),
        ("1.8", "1.8"),
    ],
)
def test_thousands_separators_match_either_way(said, summarized):
    assert problem(NEW_BUDGET.format(summarized), BUDGET.format(said)) is None


@pytest.mark.parametrize(
    ("said", "summarized"),
    [("4500", "4,600"), ("4,500", "450"), ("4 500", "500"), ("4.500", "45")],
)
def test_a_different_amount_is_still_invented(said, summarized):
    assert problem(NEW_BUDGET.format(summarized), BUDGET.format(said)) is not None
