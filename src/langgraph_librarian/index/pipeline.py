"""One indexing pass: reconcile, summarize what is new, embed it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage

from langgraph_librarian._messages import message_text
from langgraph_librarian._vectors import encode_vector
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.embeddings import embedding_model_id, resolve_embeddings
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.index.reconcile import Reconciled, reconcile_index
from langgraph_librarian.index.summarize import LLMSummarizer, local_entry, make_entry

__all__ = ["IndexUpdate", "aupdate_index", "provisional_entries", "update_index"]

_EMBED_CHARS = 1000
_EMBED_BATCH = 64


@dataclass
class IndexUpdate:
    """Outcome of an indexing pass.

    Attributes:
        entries: The complete index, aligned with the messages.
        new_count: Messages summarized in this pass.
        failed_count: Messages whose model summary failed (they got a fallback entry).
        dropped_count: Entries removed because their message was deleted or edited.
        reused_count: Entries copied from identical content (no model call).
        latency_ms: Wall time of the pass.
        errors: Short descriptions of failures (summaries, embeddings).
    """

    entries: list[IndexEntry] = field(default_factory=list)
    new_count: int = 0
    failed_count: int = 0
    dropped_count: int = 0
    reused_count: int = 0
    latency_ms: float = 0.0
    errors: list[str] = field(default_factory=list)


def _summarizer(config: LibrarianConfig) -> LLMSummarizer:
    return LLMSummarizer(
        config.get_indexer_model(),
        prompt=config.summary_prompt,
        max_concurrency=config.max_concurrency,
        timeout=config.model_timeout,
        max_retries=config.max_retries,
        retry_backoff=config.retry_backoff,
    )


def _split(
    messages: Sequence[BaseMessage], rec: Reconciled, config: LibrarianConfig
) -> tuple[list[int], list[int]]:
    """(positions indexed locally, positions needing a model summary)."""
    local: list[int] = []
    remote: list[int] = []
    for position in rec.missing:
        short = len(message_text(messages[position])) < config.short_message_threshold
        (local if short or config.uses_local_indexer else remote).append(position)
    return local, remote


def _local(
    position: int,
    messages: Sequence[BaseMessage],
    rec: Reconciled,
    config: LibrarianConfig,
    status: str | None = None,
) -> IndexEntry:
    return local_entry(
        position,
        messages[position],
        rec.keys[position],
        rec.hashes[position],
        short_threshold=config.short_message_threshold,
        counter=config.token_counter,
        status=status,  # type: ignore[arg-type]
    )


def _embed_texts(entries: Sequence[IndexEntry], messages: Sequence[BaseMessage]) -> list[str]:
    # Small embedding models read ~256 tokens: embed what the index says about a long
    # message (its summary keeps names, numbers and changes), a short one verbatim.
    return [
        (e.summary if len(message_text(messages[e.id])) > _EMBED_CHARS else "")
        or message_text(messages[e.id])[:_EMBED_CHARS]
        or " "
        for e in entries
    ]


def _attach(entries: Sequence[IndexEntry], vectors: Sequence[Sequence[float]], model: str) -> None:
    for entry, vector in zip(entries, vectors, strict=True):
        entry.vector = encode_vector(vector)
        entry.vector_model = model


def _embed(
    embeddings: Embeddings | None,
    fresh: list[IndexEntry],
    messages: Sequence[BaseMessage],
    update: IndexUpdate,
) -> None:
    if embeddings is None or not fresh:
        return
    for start in range(0, len(fresh), _EMBED_BATCH):
        batch = fresh[start : start + _EMBED_BATCH]
        try:
            vectors = embeddings.embed_documents(_embed_texts(batch, messages))
            _attach(batch, vectors, embedding_model_id(embeddings))
        except Exception as exc:  # embeddings are an optimisation: index without them
            update.errors.append(f"embedding failed: {type(exc).__name__}: {exc}"[:300])
            return


async def _aembed(
    embeddings: Embeddings | None,
    fresh: list[IndexEntry],
    messages: Sequence[BaseMessage],
    update: IndexUpdate,
) -> None:
    if embeddings is None or not fresh:
        return
    for start in range(0, len(fresh), _EMBED_BATCH):
        batch = fresh[start : start + _EMBED_BATCH]
        try:
            vectors = await embeddings.aembed_documents(_embed_texts(batch, messages))
            _attach(batch, vectors, embedding_model_id(embeddings))
        except Exception as exc:
            update.errors.append(f"embedding failed: {type(exc).__name__}: {exc}"[:300])
            return


def _assemble(
    messages: Sequence[BaseMessage],
    rec: Reconciled,
    config: LibrarianConfig,
    local: list[int],
    remote: list[int],
    outcomes: Sequence[object],
    update: IndexUpdate,
) -> list[IndexEntry]:
    slots = list(rec.entries)
    fresh: list[IndexEntry] = []
    for position in local:
        slots[position] = _local(position, messages, rec, config)
        fresh.append(slots[position])  # type: ignore[arg-type]
    for position, outcome in zip(remote, outcomes, strict=True):
        summary = getattr(outcome, "summary", None)
        latency = float(getattr(outcome, "latency_ms", 0.0))
        if summary:
            entry = make_entry(
                position,
                messages[position],
                rec.keys[position],
                rec.hashes[position],
                summary,
                "summarized",
                latency,
                config.token_counter,
            )
        else:
            update.failed_count += 1
            update.errors.append(f"message {position}: {getattr(outcome, 'error', 'failed')}"[:300])
            entry = _local(position, messages, rec, config, status="fallback")
        slots[position] = entry
        fresh.append(entry)
    update.new_count = len(fresh)
    update.dropped_count = rec.dropped
    update.reused_count = rec.reused
    update.entries = [e for e in slots if e is not None]
    return fresh


def update_index(
    messages: Sequence[BaseMessage], entries: Sequence[IndexEntry], config: LibrarianConfig
) -> IndexUpdate:
    """Bring ``entries`` up to date with ``messages`` (sync; model calls in a thread pool)."""
    start = time.perf_counter()
    update = IndexUpdate()
    rec = reconcile_index(messages, entries)
    local, remote = _split(messages, rec, config)
    outcomes = _summarizer(config).summarize([messages[p] for p in remote]) if remote else []
    fresh = _assemble(messages, rec, config, local, remote, outcomes, update)
    _embed(resolve_embeddings(config), fresh, messages, update)
    update.latency_ms = round((time.perf_counter() - start) * 1000, 3)
    return update


async def aupdate_index(
    messages: Sequence[BaseMessage], entries: Sequence[IndexEntry], config: LibrarianConfig
) -> IndexUpdate:
    """Async twin of :func:`update_index` (model calls concurrent under a semaphore)."""
    start = time.perf_counter()
    update = IndexUpdate()
    rec = reconcile_index(messages, entries)
    local, remote = _split(messages, rec, config)
    outcomes = await _summarizer(config).asummarize([messages[p] for p in remote]) if remote else []
    fresh = _assemble(messages, rec, config, local, remote, outcomes, update)
    await _aembed(resolve_embeddings(config), fresh, messages, update)
    update.latency_ms = round((time.perf_counter() - start) * 1000, 3)
    return update


def provisional_entries(
    messages: Sequence[BaseMessage], rec: Reconciled, config: LibrarianConfig, before: int
) -> list[IndexEntry]:
    """Complete a reconciled index with local "pending" entries for unindexed messages.

    Used at selection time so that messages the indexer has not reached yet (a
    history sent in one go, background indexing still running) can still be chosen.
    Only positions before ``before`` (the recent turns, always kept, need no entry)
    are filled. These entries are never saved.
    """
    slots = list(rec.entries)
    for position in rec.missing:
        if position < before:
            slots[position] = _local(position, messages, rec, config, status="pending")
    return [e for e in slots if e is not None]
