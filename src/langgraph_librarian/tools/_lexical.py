"""Lexical half of the tool search: idf-weighted term coverage with fuzzy word matching.

A tool's score for a query is the idf-weighted share of the query's terms that the
tool's text contains (name, description, argument names and argument descriptions),
each term's contribution saturated and length-normalized the BM25 way, so one
occurrence in a tool text of average length counts 1. A term's contribution saturates
at ``k1 + 1`` (2.2) times its share, so scores run from 0 to below 2.2: a word of a tool's
name, counted three times (see ``ToolIndex``), counts about 1.6 on its own; the share
keeps scores comparable across queries.

Words are lower-cased, accent-folded and stemmed. A query word the catalog never uses
is matched by character trigrams to the catalog's own words, so typos ("calender"),
accents ("hôtel") and cognates ("calendrier") still count, weighted by how alike the
words are; and by edits (Damerau-Levenshtein), so swapped or missed letters that break
trigrams ("tikcet", "chek") count too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import numpy as np

from langgraph_librarian._engine.postings import Postings, robertson_idf
from langgraph_librarian._engine.text import STOPWORDS, fold_accents, stem_terms, tokenize
from langgraph_librarian._engine.text import edits1 as _edits1

__all__ = ["LexicalScorer", "fold_accents", "lexical_terms"]

_K1 = 1.2
_B = 0.5
_MIN_SIMILARITY = 0.5
"""Dice similarity of padded trigrams below which two words are unrelated."""
_MAX_FUZZY = 3
_EDIT_ONE = 4
"""Unknown query words of this many letters or more also match catalog words one edit
away (Damerau-Levenshtein: a letter left out, added, changed, or two swapped)."""
_EDIT_LONGEST = 24
"""No edits are looked up for a longer word (a pasted token, a hash): its one-edit
variants number about 54 times its length, each as long as it."""
_EDIT_TWO = 7
"""... and, from this many letters, two edits away."""
_EDIT_TWO_CHECKS = 32
"""Catalog words checked at most for two edits (those sharing the most trigrams), and
only for a word nothing else matched."""
_EDIT_COST = 1.5
"""An edit costs 1.5 letters of the word's length: a match one edit away counts
``1 - 1.5 / length`` (0.625 for 4 letters, 0.75 for 6), two edits ``1 - 3 / length``;
at 1.0, short words one edit from an unrelated catalog word counted too much (one request
of the independent situations check lost its first place; docs/tools.md)."""
_NUMBER_WEIGHT = 0.5
"""A number the catalog never mentions counts this share of an unknown word's idf in
the coverage (it matches nothing)."""
_MAX_NEIGHBORS = 5
"""Catalog words, close in meaning, a query word may also stand for."""
_NEIGHBOR_CACHE = 20_000
"""Query words whose neighbors are remembered (oldest forgotten first)."""


def _split_words(text: str) -> list[str]:
    return [
        t
        for t in tokenize(fold_accents(text))
        if t not in STOPWORDS and (len(t) > 1 or t.isdigit())
    ]


_words = lru_cache(maxsize=65536)(_split_words)
""":func:`_split_words` of catalog texts, memoized (read again when the index compacts).
Queries are split each time: kept here, distinct long requests pinned about 21 KB each."""


def lexical_terms(text: str) -> list[str]:
    """The stemmed, accent-folded content terms the lexical scorer uses for ``text``."""
    return stem_terms(_words(text))


def _unit(vectors: np.ndarray) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.maximum(np.linalg.norm(array, axis=-1, keepdims=True), 1e-9)
    return np.asarray(array / norms, dtype=np.float32)


def _damerau(a: str, b: str, limit: int | None = None) -> int:
    """Optimal-string-alignment distance (Damerau-Levenshtein, each substring edited
    once); with ``limit``, any distance above it may be answered as ``limit + 1``."""
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if limit is not None and min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return previous[len(b)]


def _trigrams(word: str) -> set[str]:
    padded = f"^{word}$"
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


class LexicalScorer:
    """Postings over row numbers (the rows of the tool index's vector matrix).

    ``add(row, weighted_texts)`` indexes one tool; ``scores(query, n_rows)`` returns a
    float32 array of coverage scores, one per row. Rows are never reused: when the
    index compacts its matrix it rebuilds the scorer.
    """

    def __init__(
        self,
        word_vectors: Callable[[list[str]], np.ndarray] | None = None,
        *,
        neighbor_similarity: float = 0.35,
        light_words: frozenset[str] = frozenset(),
        light_weight: float = 1.0,
    ) -> None:
        self._word_vectors = word_vectors
        # Query words that count ``light_weight`` times their idf (the verbs tool names
        # share: "write" in "write me a poem" says less about the tool than "poem").
        self._light = frozenset(stem_terms(sorted(light_words)))
        self._light_weight = light_weight
        self.neighbor_similarity = neighbor_similarity
        self._vocabulary: list[str] = []  # catalog words with a row in _vocab_matrix
        self._vocab_matrix = np.zeros((0, 0), dtype=np.float32)
        self._neighbor_cache: dict[str, list[tuple[str, float]]] = {}
        self._postings = Postings(np.float32)  # term -> (rows, weighted counts)
        self._lengths: list[float] = []
        self._length_array: np.ndarray | None = None
        self._surface: dict[str, str] = {}  # catalog word -> its stem
        self._gram_count: dict[str, int] = {}  # catalog word -> number of its trigrams
        self._by_trigram: dict[str, set[str]] = {}
        # unknown query word -> its look-alikes (cleared when the vocabulary grows)
        self._similar_cache: dict[str, list[tuple[str, float]]] = {}
        self._live = 0

    def add(self, row: int, texts: list[tuple[str, float]]) -> None:
        """Index the row's texts; each text's terms count ``weight`` times."""
        tf: dict[str, float] = {}
        for text, weight in texts:
            words = _words(text)
            for word, stem in zip(words, stem_terms(words), strict=True):
                tf[stem] = tf.get(stem, 0.0) + weight
                if word not in self._surface and not word.isdigit():
                    self._surface[word] = stem
                    if self._similar_cache:
                        self._similar_cache.clear()
                    grams = _trigrams(word)
                    self._gram_count[word] = len(grams)
                    for gram in grams:
                        self._by_trigram.setdefault(gram, set()).add(word)
        while len(self._lengths) <= row:
            self._lengths.append(0.0)
        self._lengths[row] = float(sum(tf.values()))
        self._length_array = None
        self._postings.add(row, tf)
        self._live += 1

    def forget(self, row: int) -> None:
        """Count one row fewer (its postings stay until the next rebuild; the index masks it)."""
        self._live = max(0, self._live - 1)
        if row < len(self._lengths):
            self._lengths[row] = 0.0
            self._length_array = None

    def _similar(self, word: str) -> list[tuple[str, float]]:
        found = self._similar_cache.get(word)
        if found is None:
            found = self._look_alikes(word)
            if len(self._similar_cache) >= _NEIGHBOR_CACHE:
                self._similar_cache.pop(next(iter(self._similar_cache)))
            self._similar_cache[word] = found
        return list(found)  # the caller extends its copy

    def _look_alikes(self, word: str) -> list[tuple[str, float]]:
        """Catalog stems that look like ``word``, best first: by trigram Dice similarity,
        and by edits for swapped or missed letters that break trigrams ("tikcet",
        "chek"): one edit for words of 4 letters or more (every such catalog word), two
        for 7 or more when nothing else matched (among the catalog words sharing the most
        trigrams), counted ``1 - 1.5 * edits / length``."""
        grams = _trigrams(word)
        shared: Counter[str] = Counter()
        for gram in grams:
            for other in self._by_trigram.get(gram, ()):
                shared[other] += 1
        best: dict[str, float] = {}

        def keep(other: str, sim: float) -> None:
            stem = self._surface[other]
            if sim >= _MIN_SIMILARITY and sim > best.get(stem, 0.0):
                best[stem] = sim

        for other, common in shared.items():
            keep(other, 2 * common / (len(grams) + self._gram_count[other]))

        if _EDIT_ONE <= len(word) <= _EDIT_LONGEST and word.isalpha():
            # One edit: every string one edit away, looked up (a few hundred lookups,
            # whatever the catalog's size).
            for other in _edits1(word):
                if other in self._surface:
                    keep(other, 1.0 - _EDIT_COST / max(len(word), len(other)))
            if len(word) >= _EDIT_TWO and not best:  # two edits: only when nothing else
                close = [
                    (common, other)
                    for other, common in shared.items()
                    if common >= 2 and abs(len(other) - len(word)) <= 2
                ]
                close.sort(key=lambda c: -c[0])
                for _, other in close[:_EDIT_TWO_CHECKS]:
                    if _damerau(word, other, limit=2) == 2:
                        keep(other, 1.0 - 2 * _EDIT_COST / max(len(word), len(other)))
        return sorted(best.items(), key=lambda kv: -kv[1])[:_MAX_FUZZY]

    def knows(self, word: str) -> bool:
        """Whether ``word`` (accent-folded, lower-cased) occurs in the catalog."""
        stems = stem_terms([word])
        return bool(stems) and stems[0] in self._postings

    def _neighbors(self, words: list[str], scale: float) -> list[list[tuple[str, float]]]:
        """Per query word: catalog stems whose word vectors are close (similarity * scale)."""
        if self._word_vectors is None or not self._surface or scale <= 0 or not words:
            return [[] for _ in words]
        if len(self._vocabulary) < len(self._surface):
            known = set(self._vocabulary)
            new = [w for w in self._surface if w not in known]
            vectors = _unit(self._word_vectors(new))
            self._vocab_matrix = (
                vectors if not self._vocabulary else np.vstack([self._vocab_matrix, vectors])
            )
            self._vocabulary.extend(new)
            self._neighbor_cache.clear()
        missing = [w for w in dict.fromkeys(words) if w not in self._neighbor_cache]
        if missing:
            wanted = _unit(self._word_vectors(missing))
            for j, word in enumerate(missing):
                # One einsum per word rather than one BLAS product for all: BLAS threads
                # waking on a busy two-core machine cost milliseconds (docs/tools.md).
                column = np.einsum("ij,j->i", self._vocab_matrix, wanted[j])
                close = np.flatnonzero(column >= self.neighbor_similarity)
                best: dict[str, float] = {}
                for i in close[np.argsort(-column[close])][: _MAX_NEIGHBORS * 2]:
                    other = self._vocabulary[i]
                    stem = self._surface[other]
                    if other != word and stem not in best:
                        best[stem] = float(column[i])
                if len(self._neighbor_cache) >= _NEIGHBOR_CACHE:
                    self._neighbor_cache.pop(next(iter(self._neighbor_cache)))
                self._neighbor_cache[word] = list(best.items())[:_MAX_NEIGHBORS]
        return [[(stem, sim * scale) for stem, sim in self._neighbor_cache[w]] for w in words]

    def idf(self, term: str) -> float:
        """Robertson idf of a catalog term (a term no tool uses gets the rarest idf)."""
        n = max(self._live, 1)
        return robertson_idf(n, min(self._postings.df(term), n))

    def scores(
        self,
        query: str,
        n_rows: int,
        *,
        neighbor_weight: float = 0.0,
        translations: Mapping[str, Sequence[tuple[str, float]]] | None = None,
    ) -> np.ndarray:
        """Coverage score of every row for ``query`` (zeros when nothing matches).

        With ``neighbor_weight > 0`` (and word vectors), each query word also matches
        catalog words close to it in meaning, counted ``similarity * neighbor_weight``.
        ``translations`` maps a query word (accent-folded, lower-cased) to English
        words it stands for and their weights: they count like the word itself, times
        the weight, and their neighbors count too.
        """
        out = np.zeros(n_rows, dtype=np.float32)
        words = list(dict.fromkeys(_split_words(query)))
        if not words or not self._live:
            return out
        if self._length_array is None or len(self._length_array) != len(self._lengths):
            self._length_array = np.asarray(self._lengths, dtype=np.float32)
        lengths = self._length_array
        average = float(lengths.sum()) / max(self._live, 1) or 1.0
        weights: list[tuple[float, list[tuple[str, float]]]] = []
        seen_stems: set[str] = set()
        kept: list[tuple[str, str]] = []
        for word, stem in zip(words, stem_terms(words), strict=True):
            if stem in seen_stems:
                continue
            seen_stems.add(stem)
            kept.append((word, stem))
        translated = (
            {
                word: [(w, weight) for w, weight in translations.get(word, ()) if w != word]
                for word, _ in kept
            }
            if translations
            else {}
        )
        english = list(dict.fromkeys(w for pairs in translated.values() for w, _ in pairs))
        english_stems = dict(zip(english, stem_terms(english), strict=True))
        close_english = dict(zip(english, self._neighbors(english, neighbor_weight), strict=True))
        neighbors = self._neighbors([w for w, _ in kept], neighbor_weight)
        for (word, stem), close in zip(kept, neighbors, strict=True):
            if stem in self._postings:
                alternatives = [(stem, 1.0)]
                idf = self.idf(stem)
            elif word.isdigit():
                # A number the catalog never mentions matches no tool, but it is part of
                # the request all the same: a tool that matches only the other word of
                # "what's 17 times 23" covers part of it, not all of it. Half an unknown
                # word: a number is most often an argument's value ("convert 100 usd").
                alternatives = []
                idf = self.idf("") * _NUMBER_WEIGHT
            else:
                alternatives = self._similar(word)
                idf = max((self.idf(s) for s, _ in alternatives), default=self.idf(""))
            seen = {s for s, _ in alternatives}
            alternatives += [(s, sim) for s, sim in close if s not in seen]
            for other, weight in translated.get(word, ()):
                other_stem = english_stems[other]
                found = [(other_stem, weight)] if other_stem in self._postings else []
                for s, sim in found + [(s, sim * weight) for s, sim in close_english[other]]:
                    if s not in seen:
                        seen.add(s)
                        alternatives.append((s, sim))
                if found and stem not in self._postings:
                    idf = max(idf, self.idf(other_stem))
            if stem in self._light:
                idf *= self._light_weight
            weights.append((idf, alternatives))
        total = sum(w for w, _ in weights)
        if total <= 0:
            return out
        for idf, alternatives in weights:
            best = np.zeros(n_rows, dtype=np.float32) if len(alternatives) > 1 else None
            for term, similarity in alternatives:
                arrays = self._postings.arrays(term)
                if arrays is None:
                    continue
                rows, tf = arrays
                keep = rows < n_rows
                rows, tf = rows[keep], tf[keep]
                norm = _K1 * (1 - _B + _B * lengths[rows] / average)
                gain = (tf * (_K1 + 1) / (tf + norm)) * (similarity * idf / total)
                if best is None:
                    out[rows] += gain
                else:
                    best[rows] = np.maximum(best[rows], gain)  # rows of a posting are unique
            if best is not None:
                out += best
        return out
