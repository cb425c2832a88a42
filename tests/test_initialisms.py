"""A phrase of the question the history writes as its initials ("physical therapy" ->
"PT") brings them into the lexical query."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from helpers import FILLER, bm25_head
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select._related import INITIALISM_WEIGHT, initialisms


def test_the_initials_the_history_writes_in_capitals():
    head = bm25_head(
        "Had my last PT session yesterday, I graduated!",
        "We drove through NYC on the way back.",
    )
    assert initialisms("When did Jonah finish physical therapy?", head) == {"pt": INITIALISM_WEIGHT}
    assert initialisms("How was John's trip to New York City?", head) == {"nyc": INITIALISM_WEIGHT}


def test_letters_in_lower_case_are_no_initialism():
    # "pt" and "er" are written in lower case here: a typo, a word, not an abbreviation.
    head = bm25_head("i'll pt it on the list", "the er in her name")
    assert initialisms("When did Jonah finish physical therapy?", head) == {}
    assert initialisms("Where is the emergency room?", head) == {}


def test_a_name_beside_a_word_stop_words_and_words_the_question_has_are_no_phrase():
    head = bm25_head("Watched TV all night.", "The PT said so.", "BTW the bus is late.")
    # "Tim visiting" mixes a name and a word; "the" is a stop word.
    assert initialisms("Which country was Tim visiting?", head) == {}
    assert initialisms("By the way, who was there?", head) == {}
    # The question writes the letters itself: nothing to add.
    assert initialisms("Did the PT mention physical therapy?", head) == {}


def _ranking(question: str) -> list[int]:
    facts = [
        "I need to finish the quarterly report by Friday.",
        "Ok.",
        f"{FILLER} My wrist is finally better, had my last PT session Tuesday. {FILLER}",
        "Congratulations!",
        f"{FILLER} The kids finished their art project at school. {FILLER}",
        "Nice.",
        "We started watching a new show about the ocean.",
    ]
    messages = [
        (HumanMessage if i % 2 == 0 else AIMessage)(text, id=f"m{i}")
        for i, text in enumerate(facts)
    ]
    history = [*messages, HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    return [p for p, _ in LocalSelector(embeddings=None).rank(question, history, entries)]


def test_the_message_that_writes_the_initials_is_found(monkeypatch):
    question = "When did I finish physical therapy?"
    assert 2 in _ranking(question)[:2]
    from langgraph_librarian.select import local

    monkeypatch.setattr(local, "initialisms", lambda query, index: {})
    assert 2 not in _ranking(question)


def test_letters_mostly_written_as_a_word_or_in_a_shouting_line_are_no_initialism():
    # "us" is written once as "the US" and many times as a word.
    head = bm25_head("Back in the US now.", "Let us know.", "He told us.", "Join us!")
    assert initialisms("What did the urban sketchers draw?", head) == {}
    # A line in capitals writes every word in capitals.
    head = bm25_head("WE GOT THE CAR TODAY!!", "The car is red.")
    assert initialisms("Did the carpool arrive with Rosa?", head) == {}
    assert initialisms("Was the cheap airline refund approved?", bm25_head("WE GOT THE CAR")) == {}


def test_the_run_that_opens_the_question_is_not_read():
    # "Describe Jonah's": the first capital is the sentence's, not a name's.
    head = bm25_head("DJ set tonight at the club, DJ Jonah!")
    assert initialisms("Describe Jonah's plans.", head) == {}
    assert initialisms("Did Kit hear the Disc Jockey on Friday?", head) == {"dj": INITIALISM_WEIGHT}
