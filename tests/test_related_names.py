"""A question's common noun does not expand into a name of the history that merely
holds it ("bank" -> "Northbank"): the static model builds an unknown name's vector from
its pieces, so the two look related."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from helpers import FILLER
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.embeddings import StaticEmbeddings
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select._related import related_words
from langgraph_librarian.select.lexical import BM25Index


def _index(*texts: str) -> BM25Index:
    index = BM25Index()
    for i, text in enumerate(texts):
        index.add(f"m{i}", text)
    return index


def test_a_common_noun_brings_no_name_that_holds_it():
    model = StaticEmbeddings()
    index = _index(
        "We met for coffee at Northbank after work, the place by the river.",
        "I opened a savings account with my bank last week.",
        "The riverbank was flooded after the storm.",
    )
    related = related_words(model, model.model_id, "Which bank did I open it with?", index.head(3))
    assert "northbank" not in related
    assert "riverbank" in related  # a word, written in lower case: still related


def test_a_name_only_opening_sentences_or_asked_as_a_name_still_relates():
    model = StaticEmbeddings()
    index = _index(
        "Northbank was busy again.",  # a capital opening a sentence says nothing
        "Drinks at Northbank on Friday with the team.",
    )
    asked_as_name = related_words(model, model.model_id, "What did Bank say?", index.head(2))
    assert "northbank" in asked_as_name
    only_first = related_words(model, model.model_id, "which bank is it?", index.head(1))
    assert "northbank" in only_first


def test_a_place_named_like_the_question_word_is_not_selected():
    model = StaticEmbeddings()
    texts = [
        "The lender rang back: the mortgage offer is approved at 4.1 percent.",
        "Noted.",
        "Drinks at Northbank on Friday with the team, then the late train.",
        "Sure.",
        "Our walk along the Northbank path was lovely in the sun.",
        "Ok.",
        "The plumber fixed the leak under the sink.",
        "Fine.",
    ]
    messages = [
        (HumanMessage if i % 2 == 0 else AIMessage)(f"{text} {FILLER * 2}", id=f"m{i}")
        for i, text in enumerate(texts)
    ]
    question = "What did the bank say about the mortgage?"
    history = [*messages, HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=model)).entries[:-1]
    ids = LocalSelector(embeddings=model).select(question, history, entries).ids
    assert ids[0] == 0
    assert 2 not in ids and 4 not in ids
