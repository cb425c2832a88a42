"""BM25 over message text with an incremental, process-wide cache.

Each turn usually appends a few messages to the same history, so the postings of a
history are cached by the identity keys of its messages and extended in place when
the new history starts with a cached one. A history of 10,000 messages then costs a
dictionary lookup per query term instead of re-tokenizing everything.
"""

from __future__ import annotations

import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from langgraph_librarian.text import content_terms

__all__ = ["BM25Index", "bm25_index_for"]

_K1 = 1.2
_B = 0.75


class BM25Index:
    """Okapi BM25 over a growing list of documents (stemmed, stop words removed)."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._lengths: list[int] = []
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: str, text: str) -> None:
        """Append one document."""
        doc = len(self.keys)
        counts = Counter(content_terms(text))
        for term, tf in counts.items():
            self._postings.setdefault(term, []).append((doc, tf))
            self._arrays.pop(term, None)
        self.keys.append(key)
        self._lengths.append(sum(counts.values()))

    def _array(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        cached = self._arrays.get(term)
        if cached is not None:
            return cached
        postings = self._postings.get(term)
        if not postings:
            return None
        docs = np.fromiter((d for d, _ in postings), dtype=np.int64, count=len(postings))
        tfs = np.fromiter((t for _, t in postings), dtype=np.float64, count=len(postings))
        self._arrays[term] = (docs, tfs)
        return docs, tfs

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (zeros when nothing matches)."""
        n = len(self.keys)  # snapshot: another thread may be appending
        result = np.zeros(n, dtype=np.float64)
        if n == 0:
            return result
        lengths = np.asarray(self._lengths[:n], dtype=np.float64)
        avg = float(lengths.mean()) or 1.0
        norm = _K1 * (1.0 - _B + _B * lengths / avg)
        for term, qtf in Counter(content_terms(query)).items():
            arrays = self._array(term)
            if arrays is None:
                continue
            docs, tfs = arrays
            if len(docs) and docs[-1] >= n:
                keep = docs < n
                docs, tfs = docs[keep], tfs[keep]
            df = len(docs)
            if df == 0:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            result[docs] += qtf * idf * tfs * (_K1 + 1.0) / (tfs + norm[docs])
        return result


_CACHE: OrderedDict[tuple[int, int], BM25Index] = OrderedDict()
_CACHE_SIZE = 32
_LOCK = threading.Lock()


def bm25_index_for(keys: Sequence[str], text_of: Callable[[int], str]) -> BM25Index:
    """A BM25 index over documents ``0..len(keys)-1``, reusing a cached one when possible.

    ``keys`` identify the documents' texts (content hashes): equal keys are assumed
    to mean equal texts. ``text_of(i)`` is only called for documents not yet in a
    cached index, so a turn that appends two messages tokenizes two messages.
    """
    fingerprint = (len(keys), hash(tuple(keys)))
    with _LOCK:
        hit = _CACHE.get(fingerprint)
        if hit is not None:
            _CACHE.move_to_end(fingerprint)
            return hit
        # The common case: the previous turn's history plus a few new messages.
        base: BM25Index | None = None
        base_fp: tuple[int, int] | None = None
        for fp, index in reversed(_CACHE.items()):
            m = len(index)
            if m <= len(keys) and index.keys == list(keys[:m]):
                base, base_fp = index, fp
                break
        if base is not None and base_fp is not None:
            del _CACHE[base_fp]
        else:
            base = BM25Index()
        for i in range(len(base), len(keys)):
            base.add(keys[i], text_of(i))
        _CACHE[fingerprint] = base
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
        return base
