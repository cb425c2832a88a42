"""Words related in meaning to a question's words, from a static word-vector model.

A question and the message that answers it often name one thing with different words
("aircraft" / "plane", "dog" / "puppy"). A model that sums word vectors (the packaged
static model) holds a vector per word, and words close in that space are related:
each question word that is a whole word of the model's vocabulary brings its nearest
words (cosine at least :data:`MIN_SIMILARITY`, at most :data:`PER_WORD`; none for the
:data:`SKIP_COMMON` most frequent words) into the lexical query, at
:data:`RELATED_WEIGHT` of a question word's weight. Passages are scored by the
question's words and these together, so a passage naming the thing in other words is
found by BM25, not only by the (weak) sentence vector.

The vocabulary is embedded once per model and process (about 20,000 words); a
question word's neighbours are computed once and kept.
"""

from __future__ import annotations

import gzip
import threading
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_librarian._engine.text import STOPWORDS, content_terms, tokenize
from langgraph_librarian._engine.vectors import unit_vectors

__all__ = ["MIN_SIMILARITY", "PER_WORD", "RELATED_WEIGHT", "related_words"]

MIN_SIMILARITY = 0.65
"""Cosine a vocabulary word needs with a question word to count as related."""
PER_WORD = 12
"""At most this many related words per question word."""
RELATED_WEIGHT = 0.5
"""A related word weighs this much in the query (a question word weighs 1)."""
_VOCABULARY = (
    Path(__file__).resolve().parent.parent / "_engine" / "model_data" / "minilm-vocab.txt.gz"
)
SKIP_COMMON = 300
"""The most frequent words ("long", "way", "many") bring no related words: their
neighbours are other frequent words, noise for the query."""
_FIRST_WORD = 1996
"""Id of "the" in BERT's uncased vocabulary: from here on words are in frequency order."""
_CACHE_WORDS = 50_000
"""Question words whose neighbours are kept, per model."""


class _Related:
    def __init__(self, embeddings: Embeddings) -> None:
        with gzip.open(_VOCABULARY, "rt", encoding="utf-8") as handle:
            vocabulary = [line.strip() for line in handle]
        self.words = [
            w
            for w in vocabulary
            if len(w) > 2 and w.isalpha() and w.isascii() and w not in STOPWORDS
        ]
        self.row = {w: i for i, w in enumerate(self.words)}
        self.common = frozenset(vocabulary[_FIRST_WORD : _FIRST_WORD + SKIP_COMMON])
        self.matrix = unit_vectors(embeddings, self.words)
        self.neighbours: dict[str, list[tuple[str, float]]] = {}
        self.lock = threading.Lock()

    def of(self, words: list[str]) -> list[list[tuple[str, float]]]:
        """Each word's related words, best first (computed once per word)."""
        cache = self.neighbours
        fresh = [w for w in dict.fromkeys(words) if w not in cache]
        known = [w for w in fresh if w in self.row]
        found: dict[str, list[tuple[str, float]]] = {w: [] for w in fresh}
        if known and self.matrix.shape[0] > PER_WORD + 1:
            for word in known:
                # One matrix-vector product per word: faster here than one product
                # with a few columns.
                row = self.row[word]
                sims = self.matrix @ self.matrix[row]
                top = np.argpartition(-sims, PER_WORD + 1)[: PER_WORD + 1]
                top = top[np.argsort(-sims[top], kind="stable")]
                found[word] = [
                    (self.words[j], float(sims[j]))
                    for j in top.tolist()
                    if j != row and sims[j] >= MIN_SIMILARITY
                ]
        if found:
            with self.lock:
                if len(cache) + len(found) > _CACHE_WORDS:
                    cache.clear()
                cache.update(found)
        return [found[w] if w in found else cache.get(w, []) for w in words]


_MODELS: dict[str, _Related] = {}
_LOCK = threading.Lock()


def related_words(embeddings: Embeddings, model: str, query: str) -> dict[str, float]:
    """Words related to the query's words (not already among its terms) -> their weight."""
    with _LOCK:
        related = _MODELS.get(model)
        if related is None:
            related = _MODELS[model] = _Related(embeddings)
    terms = set(content_terms(query))
    out: dict[str, float] = {}
    common = related.common
    words = [w for w in dict.fromkeys(tokenize(query)) if w not in STOPWORDS and w not in common]
    for neighbours in related.of(words):
        for other, _ in neighbours:
            stems = content_terms(other)
            if stems and stems[0] not in terms:
                terms.add(stems[0])
                out[other] = RELATED_WEIGHT
    return out
