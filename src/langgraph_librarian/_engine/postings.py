"""Term postings for BM25-style scoring: the lexical core of message and tool search.

The local selector scores passages of messages (``select/lexical.py``) and the tool
librarian scores tool texts (``tools/_lexical.py``) the Okapi way: a term's weight in a
row saturates with its count and is normalized by the row's length, and rare terms
count more (Robertson idf). Both keep the same structure: postings that only grow (rows
are appended, never rewritten), read as numpy arrays that are extended by their new tail
instead of rebuilt, so a turn that adds two messages converts two messages' postings.
What each search does with the arrays (best passage, coverage with fuzzy matches) stays
with it.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from langgraph_librarian._engine.vectors import appended

__all__ = ["Postings", "robertson_idf"]


def robertson_idf(rows: int, df: int) -> float:
    """``log(1 + (N - df + 0.5) / (df + 0.5))``: never negative, highest for rare terms."""
    return math.log(1.0 + (rows - df + 0.5) / (df + 0.5))


class Postings:
    """``term -> (rows, weights)``, appended row by row, read as numpy arrays.

    Args:
        weight_dtype: The dtype of the weights array (term counts, or weighted counts).
    """

    def __init__(self, weight_dtype: Any = np.float64) -> None:
        self._dtype = weight_dtype
        self._rows: dict[str, list[int]] = {}
        self._weights: dict[str, list[float]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __contains__(self, term: object) -> bool:
        return term in self._rows

    def new_terms(self, terms: Iterable[str]) -> list[str]:
        """Those of ``terms`` no row holds yet, in order (``term not in self`` for each,
        without a method call per term: indexing asks it of every passage's terms)."""
        rows = self._rows
        return [term for term in terms if term not in rows]

    def add(self, row: int, counts: Mapping[str, float]) -> None:
        """Record ``row``'s terms (rows must be added in increasing order).

        Weights are written before rows, so a reader in another thread that sees a row
        also sees its weight (readers take ``len(rows)`` as their snapshot).
        """
        for term, count in counts.items():
            rows = self._rows.get(term)
            if rows is None:
                self._weights[term] = [count]
                self._rows[term] = [row]
            else:
                self._weights[term].append(count)
                rows.append(row)

    def prefix(self, rows: int) -> Postings:
        """A new postings object holding only the rows numbered below ``rows`` (this one
        is left as it is: readers of its longer rows keep them)."""
        cut = Postings(self._dtype)
        for term, held in self._rows.items():
            k = bisect.bisect_left(held, rows)
            if k:
                cut._rows[term] = held[:k]
                cut._weights[term] = self._weights[term][:k]
                cached = self._arrays.get(term)
                if cached is not None:  # copies: the cut grows its own (see appended)
                    cut._arrays[term] = (cached[0][:k].copy(), cached[1][:k].copy())
        return cut

    def df(self, term: str, below: int | None = None) -> int:
        """The number of rows that contain ``term`` (of the rows numbered below ``below``)."""
        rows = self._rows.get(term)
        if not rows:
            return 0
        if below is None or rows[-1] < below:
            return len(rows)
        return bisect.bisect_left(rows, below)

    def arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows as int64, weights) of ``term``, or ``None`` when no row has it.

        Postings only grow, so only the tail added since the last read is converted:
        a term every turn repeats is not re-read whole each turn.
        """
        rows = self._rows.get(term)
        if not rows:
            return None
        n = len(rows)  # one snapshot for both columns: another thread may be appending
        cached = self._arrays.get(term)
        done = 0 if cached is None else len(cached[0])
        if cached is not None and done >= n:
            return cached
        new_rows = np.fromiter(rows[done:n], dtype=np.int64, count=n - done)
        weights = self._weights[term]
        new_weights = np.fromiter(weights[done:n], dtype=self._dtype, count=n - done)
        # (in place of buffers with room: a term every message holds grew by a copy of
        # its whole posting list each turn)
        rows_array = appended(None if cached is None else cached[0], new_rows)
        weights_array = appended(None if cached is None else cached[1], new_weights)
        self._arrays[term] = (rows_array, weights_array)
        return rows_array, weights_array
