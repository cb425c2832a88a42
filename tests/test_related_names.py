"""A question's common noun brings a name of the history that holds it ("bank" ->
"Northbank", "mail" -> "Mailchimp") at half its similarity: the static model builds an
unknown name's vector from its pieces, so the two look related whether the name is what
the question asks for or merely holds the word."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from helpers import FILLER
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.embeddings import StaticEmbeddings
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select._related import MIN_SIMILARITY, related_words
from langgraph_librarian.select.lexical import BM25Index
from langgraph_librarian.select.local import RELATIVE_CUTOFF


def _index(*texts: str) -> BM25Index:
    index = BM25Index()
    for i, text in enumerate(texts):
        index.add(f"m{i}", text)
    return index


def test_a_common_noun_brings_a_name_that_holds_it_at_half_weight():
    model = StaticEmbeddings()
    index = _index(
        "We met for coffee at Northbank after work, the place by the river.",
        "I opened a savings account with my bank last week.",
        "The riverbank was flooded after the storm.",
    )
    related = related_words(model, model.model_id, "Which bank did I open it with?", index.head(3))
    assert 0 < related["northbank"] < MIN_SIMILARITY  # below any plain related word
    assert related["riverbank"] >= MIN_SIMILARITY  # a word, written in lower case


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


def _scored(model, texts, question):
    messages = [
        (HumanMessage if i % 2 == 0 else AIMessage)(f"{text} {FILLER * 2}", id=f"m{i}")
        for i, text in enumerate(texts)
    ]
    history = [*messages, HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=model)).entries[:-1]
    selector = LocalSelector(embeddings=model)
    return selector.select(question, history, entries).ids, selector.scores(
        question, history, entries
    )


def test_a_place_named_like_the_question_word_ranks_below_the_answer():
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
    question = "What did the bank say about the mortgage?"
    ids, scores = _scored(model, texts, question)
    assert ids[0] == 0
    # Under the cut-off a budget keeps: the bar is not the mortgage's lender.
    assert max(scores[2], scores[4]) < RELATIVE_CUTOFF * scores[0]


def test_a_name_holding_the_word_is_found_when_it_is_the_answer():
    model = StaticEmbeddings()
    texts = [
        "Everything goes out through Mailchimp on Friday mornings.",
        "Noted.",
        "The newsletter template got a new header image.",
        "Sure.",
        "The plumber fixed the leak under the sink.",
        "Fine.",
        "I mailed the signed lease back to the agent.",
        "Ok.",
    ]
    ids, scores = _scored(model, texts, "Which mail service do we use?")
    assert 0 in ids
    assert scores[0] >= RELATIVE_CUTOFF * scores.max()
