"""The lexical index of an edited, regenerated or forked history keeps its prefix.

A history whose last messages differ from those the thread's index was built over (the
user edits or regenerates the last message, a LangGraph fork of a checkpoint) used to
rebuild the whole BM25 index: 2.4 s a question at 5,000 long messages. The documents
before the first that differs are now copied (``BM25Index.prefix``). A copy plus the
new documents must be the index a fresh build makes, in every field a reader uses.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select.lexical import BM25Index

_NAMES = ["Maya", "Jonas", "Ivo", "Priya"]
_SENTENCES = [
    "The budget for Project {p} is ${n},500, and finance signed it off.",
    "We moved the {p} service from port {n} to port {m} because of a conflict.",
    "I looked at venues for the {p} retreat, but nothing is decided.",
    "Noted.",
    "On 12 March we met {q} at the station, it was raining.",
    "Change of plans: the {p} launch is now on {n} May instead.",
    "My sister {q} is allergic to sesame, so no tahini please.",
    "Can you remind me what {q} said about the {p} deadline?",
    "Thanks, that helps a lot!",
    "Took my {n} mg this morning.",
]
_WORDS = ["Willow", "Heron", "Atlas", "Comet", "Orchid", "Juniper", "Harbor"]


def _text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        parts.append(
            rng.choice(_SENTENCES).format(
                p=rng.choice(_WORDS),
                q=rng.choice(_NAMES),
                n=rng.randint(1, 99),
                m=rng.randint(100, 999),
            )
        )
    text = " ".join(parts)
    if rng.random() < 0.3:
        text = f"{rng.choice(_NAMES)}: {text}"
    return text


class _Hash(Embeddings):
    """Deterministic vectors from the text's words (no model needed)."""

    def _one(self, text: str) -> list[float]:
        vector = np.zeros(16)
        for word in text.lower().split():
            vector[hash(word) % 16] += 1.0
        return vector.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def _built(docs: list[tuple[str, str | None]]) -> BM25Index:
    index = BM25Index()
    for n, (text, speaker) in enumerate(docs):
        index.add(("k", n, text), text, speaker)
    return index


def _same(one: BM25Index, other: BM25Index, queries: list[str]) -> None:
    assert one.keys == other.keys
    assert one._postings._rows == other._postings._rows
    assert one._postings._weights == other._postings._weights
    for name in (
        "_lengths",
        "_length_totals",
        "_owner",
        "passage_terms",
        "passage_values",
        "_has_value",
        "_has_date",
        "passage_has_change",
        "doc_has_change",
        "_passages",
        "_template",
        "_template_first",
        "_template_ids",
        "_slot_postings",
        "_value_postings",
        "_filler",
        "_dateline",
        "_speaker",
        "_speaker_ids",
        "_speaker_names",
        "_word_passage",
        "_words",
        "_word_first",
        "_answers",
        "_asking",
    ):
        assert getattr(one, name) == getattr(other, name), name
    for query in queries:
        for exchanges in (False, True):
            a = one.score_passages(query, exchanges=exchanges)
            b = other.score_passages(query, exchanges=exchanges)
            assert np.allclose(a[0], b[0]) and (a[1] == b[1]).all(), query
    model = _Hash()
    a_vec, a_own = one.passage_vectors(model, "hash", 30)
    b_vec, b_own = other.passage_vectors(model, "hash", 30)
    assert np.allclose(a_vec, b_vec) and (a_own == b_own).all()
    assert one.vocabulary() == other.vocabulary()
    assert [one.doc_asks(d) for d in range(len(one))] == [
        other.doc_asks(d) for d in range(len(other))
    ]


@pytest.mark.parametrize("seed", range(6))
def test_a_prefix_plus_new_documents_is_a_fresh_index(seed: int) -> None:
    rng = random.Random(seed)
    docs = [(_text(rng), rng.choice([None, None, "maya", "jonas"])) for _ in range(60)]
    queries = [
        "What is the budget for Project Willow?",
        "which port",
        "sesame allergy Priya",
        "What did Maya say about the Heron deadline budget?",
    ]
    full = _built(docs)
    full.passage_vectors(_Hash(), "hash", 30)  # vectors made before the cut are kept too
    for _ in range(4):
        full.doc_asks(rng.randrange(len(docs)))
    before = _built(docs)
    for k in (0, 1, rng.randrange(2, 59), 59, 60):
        new = [(_text(rng), rng.choice([None, "priya"])) for _ in range(rng.randint(0, 5))]
        cut = full.prefix(k)
        for n, (text, speaker) in enumerate(new, start=k):
            cut.add(("k", n, text), text, speaker)
        _same(cut, _built([*docs[:k], *new]), queries)
    _same(full, before, queries)  # the index cut from is unchanged


def _history(texts: list[str], prefix: str = "m") -> list:
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(text, id=f"{prefix}{i}")
        for i, text in enumerate(texts)
    ]


def test_a_regenerated_last_message_selects_as_a_fresh_process_would(monkeypatch) -> None:
    rng = random.Random(9)
    texts = [_text(rng) for _ in range(120)]
    question = "What did Priya say about the Willow deadline, and the sesame?"
    selector = LocalSelector()
    cuts: list[int] = []
    prefix = BM25Index.prefix

    def counted(index: BM25Index, docs: int) -> BM25Index:
        cuts.append(docs)
        return prefix(index, docs)

    monkeypatch.setattr(BM25Index, "prefix", counted)

    def select(history: list) -> list[int]:
        entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
        return selector.select(question, history, entries).ids

    regenerated = [*texts[:-1], "Regenerated: the Willow launch is now on 3 May."]
    select([*_history(texts), HumanMessage(question, id="q")])  # the thread's index
    again = select([*_history(regenerated), HumanMessage(question, id="q")])
    assert cuts and max(cuts) >= 110  # the index was cut near its end, not rebuilt
    # Another conversation (another first message id): nothing cached is shared.
    fresh = select([*_history(regenerated, "f"), HumanMessage(question, id="q")])
    assert again == fresh
