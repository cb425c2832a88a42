"""Related words come from the history's own words (the packaged static model)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from helpers import FILLER
from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.text import content_terms
from langgraph_librarian.embeddings import StaticEmbeddings
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select._related import MIN_SIMILARITY, related_words
from langgraph_librarian.select.lexical import BM25Index

MODEL = StaticEmbeddings()


def _stems(related: dict[str, float]) -> set[str]:
    return {term for word in related for term in content_terms(word)}


def _index(*texts: str) -> BM25Index:
    index = BM25Index()
    for i, text in enumerate(texts):
        index.add(f"m{i}", text)
    return index


def test_a_question_word_brings_the_history_words_near_it_weighted_by_similarity():
    index = _index(
        "We are spending the holiday in Lisbon this year.",
        "Remember to water the plants on the balcony.",
    )
    related = related_words(MODEL, MODEL.model_id, "Where is our vacation?", index.head(2))
    # "holiday" is only 0.55 from "vacation": below the fixed vocabulary's old 0.65 bar,
    # but one of the few words this history uses.
    assert "holiday" in related
    assert MIN_SIMILARITY <= related["holiday"] < 0.65
    # A word the history never uses is never a related word (it could match nothing).
    assert "vacations" not in related and "trip" not in related
    assert "vacat" not in _stems(related)  # the question's own word is not "related"


def test_words_of_later_messages_count_only_for_a_reader_of_those_messages():
    index = _index("Remember to water the plants on the balcony.", "Sure.")
    query = "Where is our vacation?"
    assert "holiday" not in related_words(MODEL, MODEL.model_id, query, index.head(2))
    index.add("m2", "We are spending the holiday in Lisbon this year.")
    # The question word's matches are extended with the new word (computed before)...
    assert "holiday" in related_words(MODEL, MODEL.model_id, query, index.head(3))
    # ...and a reader of the first two messages still does not see it.
    assert "holiday" not in related_words(MODEL, MODEL.model_id, query, index.head(2))


def test_weekday_and_month_names_are_never_related_words():
    index = _index(
        "On Monday the gym was packed; by Sunday it was empty again.",
        "Our weekend plans fell through in June.",
    )
    related = related_words(MODEL, MODEL.model_id, "What did we do last week?", index.head(2))
    assert "weekend" in related
    assert not {"monday", "sunday", "june"} & set(related)


def test_a_message_naming_the_thing_in_other_words_ranks_first():
    # Each fact sits in the middle of a long message; the question's "cat" is the
    # history's "kitten" (0.59, below the old fixed vocabulary's 0.65 bar), and the
    # other messages name pets too.
    facts = [
        "The vet says the neighbours' puppy is called Rufus.",
        "Ok.",
        "After much debate the kitten is officially Miso.",
        "Right.",
        "The pet shop goldfish we bought is called Bubbles.",
        "Noted.",
        "My sister's new pet parrot is called Captain.",
    ]
    messages = [
        (HumanMessage if i % 2 == 0 else AIMessage)(
            f"{FILLER * 2} {fact} {FILLER * 2}" if len(fact) > 10 else fact, id=f"m{i}"
        )
        for i, fact in enumerate(facts)
    ]
    question = "What name did we give our cat?"
    history = [*messages, HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    ids = LocalSelector(embeddings=MODEL).select(question, history, entries).ids
    assert ids[0] == 2


def test_a_full_word_table_starts_anew_and_still_answers(monkeypatch):
    from langgraph_librarian.select import _related

    monkeypatch.setattr(_related, "_TABLE_WORDS", 6)
    model_id = "static-small-table-test"  # a table of its own
    first = _index("We are spending the holiday in Lisbon this year.")
    second = _index("Our kitten sleeps on the radiator all afternoon.")
    assert "holiday" in related_words(MODEL, model_id, "Where is our vacation?", first.head(1))
    # The second history's words overflow the table: it starts anew with them.
    assert "kitten" in related_words(MODEL, model_id, "Where does the cat sleep?", second.head(1))
    assert _related._TABLES[model_id].generation == 2
    # The first history's words are taken again when it is asked about.
    assert "holiday" in related_words(MODEL, model_id, "Where is our vacation?", first.head(1))


def test_a_history_larger_than_the_word_table_does_not_start_it_anew_every_question(
    monkeypatch,
):
    from langgraph_librarian.select import _related

    monkeypatch.setattr(_related, "_TABLE_WORDS", 6)
    model_id = "static-outgrown-table-test"
    index = _index("We are spending the holiday in Lisbon this year with friends.")
    question = "Where is our vacation?"
    assert "holiday" in related_words(MODEL, model_id, question, index.head(1))
    index.add("m1", "Our kitten sleeps on the radiator all afternoon.")
    assert "kitten" in related_words(MODEL, model_id, "Where does the cat sleep?", index.head(2))
    assert "holiday" in related_words(MODEL, model_id, question, index.head(2))
    assert _related._TABLES[model_id].generation == 1
