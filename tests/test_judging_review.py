"""Wrong summaries a review of the summary checks found accepted, and their fixes.

Each case has the review's example and one worded otherwise; the faithful summaries
beside them must stay accepted (a faithful summary rejected costs a model call's work,
a wrong one accepted poisons the index or the running summary).
"""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from fakes import ScriptedChatModel
from langgraph_librarian.index._validate import statement_problem
from langgraph_librarian.index.summarize import DEFAULT_SUMMARY_PROMPT, summary_problem
from langgraph_librarian.memory import summarize_messages
from langgraph_librarian.memory._facts import gist_problem


def problem(summary: str, message: str) -> str | None:
    return summary_problem(summary, message, DEFAULT_SUMMARY_PROMPT, role="human")


# -- a number goes with its own noun, not with a number of another noun ----------------


@pytest.mark.parametrize(
    ("message", "wrong"),
    [
        # The review's: "9 and 14" is a date and a count, not a range.
        ("We arrive on October 9 and 14 people are coming.", "9 people arrive on October 14."),
        (
            "The workshop starts on March 3 and 25 engineers signed up.",
            "3 engineers signed up for the workshop starting March 25.",
        ),
        (
            "The sale ends on June 2 and 30 items are left.",
            "2 items are left; the sale ends June 30.",
        ),
    ],
)
def test_numbers_of_two_nouns_are_no_range(message, wrong):
    assert "gives" in (problem(wrong, message) or "") or "dates" in (problem(wrong, message) or "")


@pytest.mark.parametrize(
    ("message", "faithful"),
    [
        ("We arrive on October 9 and 14 people are coming.", "14 people arrive on October 9."),
        ("We're in Lisbon from October 9 to 14, with 3 kids.", "Lisbon, October 9 to October 14."),
        ("The class meets on March 3 and 10 at 6pm.", "Class on March 3 and March 10 at 6pm."),
        ("Tickets cost 20 or 25 euros depending on the seat.", "Tickets: 20 to 25 euros."),
        ("We expect from 10 to 14 people, 3 days.", "From 10 people to 14 people, for 3 days."),
        ("The tour takes between 4 and 6 hours.", "The tour takes between 4 hours and 6 hours."),
    ],
)
def test_ranges_and_lists_of_one_noun_are_kept(message, faithful):
    assert problem(faithful, message) is None


@pytest.mark.parametrize(
    ("message", "wrong"),
    [
        # The review's: the summary's range takes the message's number of days.
        ("We expect from 10 to 14 people, 3 days.", "From 3 people to 14 people, 3 days."),
        (
            "The tour takes between 4 and 6 hours, for 12 guests.",
            "The tour takes between 12 hours and 6 hours, for 12 guests.",
        ),
    ],
)
def test_a_summary_range_takes_no_number_of_another_noun(message, wrong):
    assert "gives" in (problem(wrong, message) or "")


def test_a_change_written_as_a_range_is_kept():
    messages = [HumanMessage("We were 10 for the dinner, now we're 14 people."), AIMessage("OK.")]
    answer = "- Dinner guests went from 10 people to 14 people."
    assert gist_problem(answer, messages) is None


# -- an outcome the message states the other way ---------------------------------------


@pytest.mark.parametrize(
    ("message", "wrong"),
    [
        # The review's two.
        ("The loan application went through last week.", "The loan application was rejected."),
        ("My brother started smoking again last year.", "User's brother quit smoking last year."),
        # Worded otherwise.
        ("The merger was completed in May.", "The merger was cancelled in May."),
        ("My sister took up running in March.", "User's sister quit running in March."),
        ("I started running in March.", "User stopped running in March."),
        ("The product launch happened in June.", "The product launch was cancelled in June."),
    ],
)
def test_an_outcome_the_message_states_the_other_way_is_rejected(message, wrong):
    assert "opposite" in (problem(wrong, message) or "")


@pytest.mark.parametrize(
    ("message", "faithful"),
    [
        ("The laptop broke after two weeks.", "The laptop failed after two weeks."),
        ("My visa application was turned down.", "User's visa application was rejected."),
        ("I flunked the driving test.", "User failed the driving test."),
        (
            "The concert was called off because of the storm.",
            "The concert was cancelled because of the storm.",
        ),
        ("The deal fell through at the last minute.", "The deal failed at the last minute."),
        # An event that went ahead and one that went wrong: the summary may report either.
        (
            "My laptop started making noises last week and then died.",
            "User's laptop failed last week.",
        ),
        ("I left my job in May to start a bakery.", "User quit the job in May to start a bakery."),
    ],
)
def test_an_outcome_the_message_says_otherwise_is_kept(message, faithful):
    assert problem(faithful, message) is None


# -- pounds go with their own number -----------------------------------------------------


@pytest.mark.parametrize(
    ("message", "wrong"),
    [
        # The review's: the message weighs something, elsewhere.
        ("I weigh 180 lbs and the bike costs 400 euros.", "User weighs 180 lbs; bike: 400 pounds."),
        (
            "My dog weighs 30 kg and the vet bill was 250 euros.",
            "Vet bill for the 30 kg dog: 250 pounds.",
        ),
    ],
)
def test_pounds_of_an_amount_are_money(message, wrong):
    assert "GBP" in (problem(wrong, message) or "")


@pytest.mark.parametrize(
    ("message", "faithful"),
    [
        (
            "I lost 5 lbs and paid 40 dollars for the scale.",
            "User lost 5 pounds; scale: 40 dollars.",
        ),
        ("I weigh 180 and the bike costs 400 euros.", "User weighs 180 pounds; bike 400 euros."),
    ],
)
def test_pounds_of_a_weight_are_a_weight(message, faithful):
    assert problem(faithful, message) is None


# -- a running summary of a message in another language keeps its names --------------


def _fold(messages: list[BaseMessage], answer: str) -> tuple[str, list[str]]:
    result = summarize_messages(
        messages, "", model=ScriptedChatModel(script=answer), max_summary_tokens=300
    )
    return result.method, result.notes


@pytest.mark.parametrize(
    ("said", "wrong"),
    [
        # The review's.
        (
            "Ich heiße Sam Becker, bin 34 Jahre alt und wohne in Hamburg.",
            "- The user is 34 years old.",
        ),
        (
            "Je m'appelle Claire Dubois, j'ai 41 ans et j'habite à Lyon.",
            "- The user is 41 years old.",
        ),
        (
            "Me llamo Ana Ruiz y vivo en Sevilla desde 2019.",
            "- The user has lived there since 2019.",
        ),
    ],
)
def test_a_gist_keeps_the_names_of_a_message_in_another_language(said, wrong):
    method, notes = _fold([HumanMessage(said), AIMessage("OK.")], wrong)
    assert method == "extractive" and "drops what the user said" in " ".join(notes)


@pytest.mark.parametrize(
    ("said", "faithful"),
    [
        (
            "Ich heiße Sam Becker, bin 34 Jahre alt und wohne in Hamburg.",
            "- User Sam Becker, 34, lives in Hamburg.",
        ),
        # German nouns are capitalised: "Nähe", "Lehrerin" are no names.
        (
            "Ich wohne in der Nähe von Köln und arbeite als Lehrerin.",
            "- User lives near Köln and works as a teacher.",
        ),
        (
            "Je m'appelle Claire Dubois, j'ai 41 ans et j'habite à Lyon.",
            "- Claire Dubois, 41, Lyon.",
        ),
    ],
)
def test_a_gist_of_a_message_in_another_language_with_its_names_is_kept(said, faithful):
    method, notes = _fold([HumanMessage(said), AIMessage("OK.")], faithful)
    assert method == "llm", notes


# -- bounded judging ---------------------------------------------------------------------


def test_a_bloated_gist_is_rejected_before_it_is_judged():
    messages = [HumanMessage("I'm allergic to peanuts, and I live in Porto."), AIMessage("Noted.")]
    bloated = "\n".join(["- Allergic to peanuts; lives in Porto."] * 600)
    assert "characters" in (gist_problem(bloated, messages) or "")
    assert gist_problem("- Allergic to peanuts; lives in Porto.", messages) is None


def test_a_long_gist_against_a_long_fold_is_judged_in_bounded_time():
    """66 s before the cap and the per-message reading (each statement read the whole
    source again for its outcome words and clauses)."""
    source = " ".join(f"The offsite plan {i} went well on day {i}." for i in range(800))
    within = "\n".join(f"- Plan {i} on day {i}." for i in range(3000))
    start = time.perf_counter()
    gist_problem(within, [HumanMessage(source)])
    assert time.perf_counter() - start < 6


def test_outcome_claims_read_the_message_once():
    """43 s before: each outcome clause of the summary read every sentence again."""
    source = " ".join(f"The plan {i} went well and we talked on day {i}." for i in range(1500))
    summary = "; ".join(f"plan{i} was cancelled" for i in range(400))
    start = time.perf_counter()
    statement_problem(summary, source)
    assert time.perf_counter() - start < 8
