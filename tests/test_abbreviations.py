"""A few weekday and time-unit abbreviations match their full words in any case and on
every side (question, history, tool search); those that are also words, names or code
("Sat", "Jan", "sep=", "oct(8)", "fri frakt") stay as written."""

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
        ("thurs", "thursday"),
        ("THURS", "Thursday"),
        ("tues", "Tuesday"),
        ("Weds", "Wednesday"),
        ("wk", "week"),
        ("wks", "weeks"),
        ("hrs", "hours"),
        ("yrs", "years"),
    ],
)
def test_an_unambiguous_abbreviation_stems_as_its_word(short, full):
    assert content_terms(short) == content_terms(full)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I sat down at last", "sat"),
        ("the sun was out all day", "sun"),
        ("Sun was out all day", "sun"),
        ("they wed in a barn", "wed"),
        ("C'Mon 3 times", "mon"),
        ("Jan said she would come", "jan"),
        ("Thu told me about it", "thu"),
        ("met Thu on Tuesday", "thu"),
        ("one slip could mar the finish", "mar"),
        ("SAT scores came back", "sat"),
        ("HR said yes", "hr"),
        # Names beside "and", "or", "to", "by", "from", "after", a hyphen or a number.
        ("Tom and Jan went hiking", "jan"),
        ("I gave the keys to Jan", "jan"),
        ("a painting by Jan", "jan"),
        ("a letter from Jan", "jan"),
        ("I talked to Thu about the budget", "thu"),
        ("Jan and Maria went", "jan"),
        ("Jan or Mona will call", "jan"),
        ("Jan to Marseille", "jan"),
        ("Kenji and Jun cooked", "jun"),
        ("Min-Jun called", "jun"),
        ("Seo-Jun called", "jun"),
        ("Ji-Sun called", "sun"),
        ("after Sun left the room", "sun"),
        ("Java came from Sun Microsystems", "sun"),
        ("In 2009 Sun was bought", "sun"),
        ("Oracle bought Sun, 2010", "sun"),
        ("Mar, 25, is my cousin", "mar"),
        ("Room 5 Sun Street", "sun"),
        # Code and other languages.
        ("df = pd.read_csv(path, sep=',')", "sep"),
        ("pd.read_csv(path, Sep=';')", "sep"),
        ("print(oct(8))", "oct"),
        ("use dec to decrement the counter", "dec"),
        ("data aug with random crops", "aug"),
        ("Aug pipeline ready", "aug"),
        ("le tue foto sono belle", "tue"),
        ("fri frakt", "fri"),
        ("Fri frakt over 500 kr", "fri"),
        ("God jul!", "jul"),
        ("God Jul!", "jul"),
        ("il a sept ans", "sept"),
        # Not read even where a date is meant: context decides too often wrongly.
        ("gym on Thu", "thu"),
        ("Sat 14 June", "sat"),
        ("Oct 3", "oct"),
    ],
)
def test_an_ambiguous_abbreviation_stays_a_word_elsewhere(text, kept):
    assert kept in content_terms(text)


def test_min_and_mins_match():
    assert content_terms("the bus takes 25 min") == content_terms("the bus takes 25 mins")


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
        "Plan: physio Thurs 4pm, then swim for two hrs.",
        "Noted.",
        "The boiler service is booked with the usual engineer.",
        "Sure.",
        "Our book club read a thriller this month.",
        "Ok.",
    )
    assert _select(messages, "What do I have on Thursday afternoon?")[0] == 0
    assert _select(messages, "How many hours do I swim?")[0] == 0


def test_a_question_in_abbreviations_finds_a_message_in_full_words():
    messages = _chat(
        "The boiler service is booked with the usual engineer.",
        "Noted.",
        "Yoga class every Thursday morning at the community hall.",
        "Sure.",
        "I sat on the sofa and read for an hour.",
        "Ok.",
    )
    assert _select(messages, "What's on for Thurs?")[0] == 2
    assert _select(messages, "What's on for THURS?")[0] == 2


def test_a_name_that_looks_like_a_month_still_finds_its_message():
    messages = _chat(
        "Tom and Jan recommended the night food tour in Lisbon.",
        "Noted.",
        "Tom recommended the castle, but it was closed.",
        "Sure.",
        "Maria recommended the tram ride along the coast.",
        "Ok.",
        "The boiler service is booked.",
        "Fine.",
    )
    assert _select(messages, "What did Jan recommend?")[0] == 0


def test_a_code_argument_does_not_bring_a_tool_for_the_month():
    from langchain_core.tools import tool

    from langgraph_librarian.tools import ToolIndex

    @tool
    def csv_load(path: str, sep: str = ",") -> str:
        """Load a CSV file into a table; sep sets the column separator."""
        return ""

    @tool
    def calendar_month(month: str) -> str:
        """List the calendar events planned for a given month."""
        return ""

    @tool
    def image_aug(path: str) -> str:
        """Apply aug transforms (random crops, flips) to an image dataset."""
        return ""

    @tool
    def sales_report(period: str) -> str:
        """Summarise the sales figures for a reporting period."""
        return ""

    index = ToolIndex([csv_load, calendar_month, image_aug, sales_report], embeddings=None)
    assert "csv_load" not in index.search("what's on my calendar in September").names
    assert "image_aug" not in index.search("sales in August").names
