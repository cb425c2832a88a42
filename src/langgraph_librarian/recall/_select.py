"""Selecting scope memory with the Librarian's selectors (sync and async).

Recall uses the configured selector (``LocalSelector`` offline, ``LLMSelector`` when a
selector model is configured); the search tool ranks with the local engine only, so
a search never costs a model call.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.runnables import RunnableConfig

from langgraph_librarian._pipeline import make_selector
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.embeddings import resolve_embeddings
from langgraph_librarian.recall._records import MemoryRecord, records_as_index
from langgraph_librarian.select.local import LocalSelector

__all__ = ["arank", "aselect_ranked", "rank", "select_ranked"]

"""``librarian_step`` metadata of the selector's model call during recall."""


def _ordered(records: Sequence[MemoryRecord], ids: Sequence[int]) -> list[MemoryRecord]:
    return [records[i] for i in dict.fromkeys(ids) if 0 <= i < len(records)]


def select_ranked(
    records: Sequence[MemoryRecord],
    query: str,
    config: LibrarianConfig,
    parent: RunnableConfig | None = None,
) -> tuple[list[MemoryRecord], str]:
    """(records the configured selector picks for ``query``, best first; its strategy)."""
    if not records:
        return [], "none"
    messages, entries = records_as_index(records)
    # The selector's own model call (if any) runs as a child of ``parent``, tagged.
    selection = make_selector(config).select(query, messages, entries, config=parent)
    return _ordered(records, selection.ids), selection.strategy


async def aselect_ranked(
    records: Sequence[MemoryRecord],
    query: str,
    config: LibrarianConfig,
    parent: RunnableConfig | None = None,
) -> tuple[list[MemoryRecord], str]:
    """Async twin of :func:`select_ranked`."""
    if not records:
        return [], "none"
    messages, entries = records_as_index(records)
    selection = await make_selector(config).aselect(query, messages, entries, config=parent)
    return _ordered(records, selection.ids), selection.strategy


def _local(config: LibrarianConfig) -> LocalSelector:
    return LocalSelector(max_selected=config.max_selected, embeddings=resolve_embeddings(config))


def rank(
    records: Sequence[MemoryRecord], query: str, config: LibrarianConfig, limit: int
) -> list[MemoryRecord]:
    """The ``limit`` best records for ``query`` by the local hybrid ranking."""
    if not records:
        return []
    messages, entries = records_as_index(records)
    local = _local(config)
    vector = local.embeddings.embed_query(query) if local.embeddings is not None else None
    ranked = local.rank(query, messages, entries, query_vector=vector)
    return _ordered(records, [position for position, _ in ranked[:limit]])


async def arank(
    records: Sequence[MemoryRecord], query: str, config: LibrarianConfig, limit: int
) -> list[MemoryRecord]:
    """Async twin of :func:`rank` (embeds the query asynchronously)."""
    if not records:
        return []
    messages, entries = records_as_index(records)
    local = _local(config)
    vector = await local.embeddings.aembed_query(query) if local.embeddings is not None else None
    ranked = local.rank(query, messages, entries, query_vector=vector)
    return _ordered(records, [position for position, _ in ranked[:limit]])
