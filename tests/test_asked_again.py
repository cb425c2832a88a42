"""A longer message that asks the question again among other news hands its score to
the reply after it, as a message that only repeats the question does; a greeting naming
the same people and day asks nothing again."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.text import content_terms
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select._evidence import asked_names, echoed_sentence


def _select(history: list, question: str) -> list[int]:
    full = [*history, HumanMessage(question, id="q")]
    entries = update_index(full, [], LibrarianConfig(embeddings=None)).entries[:-1]
    return LocalSelector().select(question, full, entries).ids


def _history(asking: str) -> list:
    history = [
        HumanMessage(asking, id="m0"),
        AIMessage("Try 'Circe' by Madeline Miller: gripping, and short chapters.", id="m1"),
    ]
    for n in range(2, 40, 2):
        history.append(HumanMessage(f"I read a book review about flights on day {n}.", id=f"m{n}"))
        history.append(AIMessage(f"Reviews of books about flights are fun {n}.", id=f"m{n + 1}"))
    return history


def test_the_reply_to_a_question_asked_again_among_other_news_is_selected():
    # Over 60 words: no short question, whose reply ranks with it anyway.
    history = _history(
        "The packing is nearly done and the taxi is booked for six in the morning, so "
        "that part is sorted. Any book recommendations for the flight? My sister is "
        "watering the plants while we are away, and the neighbours will take the post in. "
        "The hotel confirmed the late check-in, the car park is prepaid for the whole week "
        "and the insurance documents are printed and in the blue folder with the passports."
    )
    ids = _select(history, "Which book was recommended for my flight?")
    assert 1 in ids
    assert ids.index(1) == ids.index(0) + 1 or ids.index(1) < ids.index(0)


def test_a_greeting_naming_the_same_people_and_day_asks_nothing_again():
    question = "What achievement did John share with Tim in January 2024?"
    terms, names = frozenset(content_terms(question)), asked_names(question)
    assert names >= {"john", "tim", "2024"}
    assert not echoed_sentence("(2 January 2024) Tim: Hi John, how's it going?", terms, names)
    assert echoed_sentence(
        "You, Jon? What do you have going for your dance studio?",
        frozenset(content_terms("What does Jon's dance studio offer?")),
        asked_names("What does Jon's dance studio offer?"),
    )
