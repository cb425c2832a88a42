"""The offline selector's ranking rules, on small hand-made conversations."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from helpers import FILLER
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector


def chat(*texts: str) -> list:
    out = []
    for i, text in enumerate(texts):
        cls = HumanMessage if i % 2 == 0 else AIMessage
        out.append(cls(f"{text} {FILLER * 4}", id=f"m{i}"))
    return out


def select(messages, question: str):
    history = [*messages, HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    return LocalSelector().select(question, history, entries).ids


def test_a_later_change_outranks_the_statement_it_changes():
    messages = chat(
        "We agreed that the launch deadline for Project Coral Summit is November 6.",
        "Noted, November 6 for the launch of Project Coral Summit.",
        "The Project Coral Summit deadline moved from November 6 to April 24.",
        "Ok.",
        "Unrelated: the office plants need water.",
        "Sure.",
        "Heads up: the Coral Summit deadline moved again, to September 15.",
    )
    ids = select(messages, "When is the launch deadline for Project Coral Summit?")
    assert ids.index(6) < ids.index(0)  # the latest change first...
    assert ids.index(2) < ids.index(0)  # ...and every change above the original
    assert 0 in ids  # the original stays, for "how did it change" questions


def test_a_change_to_another_instance_is_not_promoted():
    messages = chat(
        "We agreed that the launch deadline for Project Coral Summit is November 6.",
        "Noted.",
        "Heads up: the Project Amber Canyon budget moved from 10,000 to 12,000 dollars.",
        "Ok.",
    )
    ids = select(messages, "When is the launch deadline for Project Coral Summit?")
    assert ids[0] == 0
    assert 2 not in ids[:1]


def test_bm25_scores_after_appends_equal_a_fresh_index():
    """Term arrays are extended as documents arrive; scores must match a rebuild."""
    import numpy as np

    from langgraph_librarian.select.lexical import BM25Index

    texts = [
        f"note {i}: the visa figure is {i * 7} and the hotel is near gate {i}" for i in range(30)
    ]
    texts += [f"filler about catering number {i}" for i in range(10)]
    grown = BM25Index()
    for i, text in enumerate(texts[:12]):
        grown.add(i, text)
    grown.scores("what is the visa figure near the hotel?")  # caches the term arrays
    for i, text in enumerate(texts[12:], start=12):
        grown.add(i, text)
        if i % 5 == 0:
            grown.scores("visa figure")
    fresh = BM25Index()
    for i, text in enumerate(texts):
        fresh.add(i, text)
    for query in ["what is the visa figure near the hotel?", "catering number", "gate 17"]:
        assert np.allclose(grown.scores(query), fresh.scores(query))
