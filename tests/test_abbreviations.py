"""Weekday, month and time-unit abbreviations match their full words; those that are
also ordinary words or names do only where their case and context date them."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from helpers import FILLER
from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.text import content_terms
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("Thurs", "Thursday"),
        ("tues", "Tuesday"),
        ("Fri", "Friday"),
        ("Weds", "Wednesday"),
        ("Sept", "September"),
        ("Sep", "September"),
        ("Feb", "February"),
        ("Aug", "August"),
        ("Oct", "October"),
        ("Nov", "November"),
        ("Dec", "December"),
        ("wk", "week"),
        ("wks", "weeks"),
        ("hrs", "hours"),
        ("mins", "minutes"),
        ("yrs", "years"),
    ],
)
def test_an_unambiguous_abbreviation_stems_as_its_word(short, full):
    assert content_terms(short) == content_terms(full)


@pytest.mark.parametrize(
    ("text", "full"),
    [
        ("gym on Thu", "thursday"),
        ("Sat 14 June", "saturday"),
        ("Sun, 3 May", "sunday"),
        ("open Mon-Fri", "monday"),
        ("Sat/Sun", "sunday"),
        ("Sat and Sun", "saturday"),
        ("next Wed", "wednesday"),
        ("since Jan", "january"),
        ("Jan 2025", "january"),
        ("5 Mar", "march"),
        ("Apr 3", "april"),
        ("the 12th Jun", "june"),
    ],
)
def test_an_ambiguous_abbreviation_is_read_where_its_context_dates_it(text, full):
    assert content_terms(full)[0] in content_terms(text)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I sat down at last", "sat"),
        ("the sun was out all day", "sun"),
        ("Sun was out all day", "sun"),
        ("they wed in a barn", "wed"),
        ("c'mon, Mon 3 is fine", "mon"),
        ("Jan said she would come", "jan"),
        ("Thu told me about it", "thu"),
        ("met Thu on Tuesday", "thu"),
        ("one slip could mar the finish", "mar"),
        ("SAT scores came back", "sat"),
        ("HR said yes", "hr"),
    ],
)
def test_an_ambiguous_abbreviation_stays_a_word_elsewhere(text, kept):
    assert kept in content_terms(text)


def _chat(*texts: str) -> list:
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(f"{text} {FILLER * 2}", id=f"m{i}")
        for i, text in enumerate(texts)
    ]


def _select(messages: list, question: str) -> list[int]:
    history = [*messages, HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    return LocalSelector().select(question, history, entries).ids


def test_a_question_in_full_words_finds_a_message_in_abbreviations():
    messages = _chat(
        "Plan: physio Thurs 4pm, then swim. Dentist moved to Sept.",
        "Noted.",
        "The boiler service is booked with the usual engineer.",
        "Sure.",
        "Our book club read a thriller this month.",
        "Ok.",
    )
    assert _select(messages, "What do I have on Thursday afternoon?")[0] == 0
    assert _select(messages, "When is the dentist appointment in September?")[0] == 0


def test_a_question_in_abbreviations_finds_a_message_in_full_words():
    messages = _chat(
        "The boiler service is booked with the usual engineer.",
        "Noted.",
        "Yoga class every Saturday morning at the community hall.",
        "Sure.",
        "I sat on the sofa and read for an hour.",
        "Ok.",
    )
    assert _select(messages, "What's on for Sat 14?")[0] == 2
