"""Which embedding model the local engine uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    from langgraph_librarian.config import LibrarianConfig

__all__ = ["resolve_embeddings"]


def resolve_embeddings(config: LibrarianConfig) -> Embeddings | None:
    """The configured embeddings; ``None`` means lexical-only local selection."""
    return config.embeddings
