"""One indexing pass: reconcile, summarize what is new, embed it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.embeddings import embedding_model_id, resolve_embeddings
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.index.reconcile import Reconciled, reconciled
from langgraph_librarian.index.summarize import LLMSummarizer, local_entry, make_entry
from langgraph_librarian.select.local import LocalSelector

__all__ = ["aupdate_index", "update_index"]


IndexProgress = Callable[[int, int], None]
"""``progress(done, total)``: steps of an indexing pass done so far, of ``total``.

A step is one model summary or one message embedded (local summaries take
microseconds and are not counted). Called once at the start with ``done=0``, after
each chunk of summaries and each embedding batch, and once with ``done == total``
at the end (also when ``total`` is 0).
"""


class _Steps:
    """Counts an indexing pass's slow steps for an optional progress callback."""

    def __init__(self, progress: IndexProgress | None, total: int) -> None:
        self.progress = progress
        self.total = total
        self.done = 0
        if progress is not None:
            progress(0, total)

    def chunk_size(self, config: LibrarianConfig, n: int) -> int:
        # Without a callback, one call keeps every model call in flight together; with
        # one, chunks of a few rounds of concurrency report often and lose little.
        return max(4 * config.max_concurrency, 32) if self.progress is not None else max(n, 1)

    def advance(self, count: int) -> None:
        self.done = min(self.total, self.done + count)
        if self.progress is not None and count and self.done < self.total:
            self.progress(self.done, self.total)

    def finish(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total)


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
        **config.call_policy.arguments(),
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


class _Reporting(Embeddings):
    """``embeddings`` under the same model id, embedding in batches and reporting each
    batch as progress through the new messages (a long history's passages take a while)."""

    _BATCH = 64

    def __init__(self, embeddings: Embeddings, steps: _Steps, messages: int) -> None:
        self._inner = embeddings
        self._steps = steps
        self._messages = messages
        self.model_id = embedding_model_id(embeddings)

    def __getattr__(self, name: str) -> Any:  # passage_words, semantic_weight, ...
        if name.startswith("__") or name == "_inner":  # copy/pickle probe before __init__
            raise AttributeError(name)
        return getattr(self._inner, name)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        reported = 0
        for start in range(0, len(texts), self._BATCH):
            out.extend(self._inner.embed_documents(texts[start : start + self._BATCH]))
            done = self._messages * len(out) // max(len(texts), 1)
            self._steps.advance(done - reported)
            reported = done
        return out

    def embed_documents_array(self, texts: list[str]) -> np.ndarray:
        """The inner model's float32 rows, by its own array method when it has one."""
        as_array = getattr(self._inner, "embed_documents_array", None)
        parts: list[np.ndarray] = []
        reported = 0
        for start in range(0, len(texts), self._BATCH):
            batch = texts[start : start + self._BATCH]
            rows = as_array(batch) if as_array is not None else self._inner.embed_documents(batch)
            parts.append(np.asarray(rows, dtype=np.float32).reshape(len(batch), -1))
            done = self._messages * (start + len(batch)) // max(len(texts), 1)
            self._steps.advance(done - reported)
            reported = done
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.concatenate(parts)

    def embed_query(self, text: str) -> list[float]:
        return self._inner.embed_query(text)


def _warm(
    embeddings: Embeddings | None,
    messages: Sequence[BaseMessage],
    fresh: list[IndexEntry],
    update: IndexUpdate,
    steps: _Steps,
) -> None:
    """Embed the new messages' passages for the local selector, after the reply.

    The selector scores a message by its best passage and keeps the passage vectors in
    a per-process cache; embedding them here (off the user's turn when indexing runs in
    the background) means the next selection only embeds its query. Entries carry no
    vector of their own: selection never read them, and they tripled an entry's size in
    every checkpoint and store.
    """
    if embeddings is None or not fresh:
        return
    reporting = _Reporting(embeddings, steps, len(fresh))
    try:
        LocalSelector(embeddings=reporting).warm(messages, update.entries)
    except Exception as exc:  # embeddings are an optimisation: index without them
        update.errors.append(f"embedding failed: {type(exc).__name__}: {exc}"[:300])


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
    update.entries = list(filter(None, slots))  # (in C; an entry is always true)
    return fresh


def _total_steps(local: list[int], remote: list[int], embeddings: Embeddings | None) -> int:
    # Summaries from a model, then (with embeddings) the new messages' passages.
    return len(remote) + (len(local) + len(remote) if embeddings is not None else 0)


def update_index(
    messages: Sequence[BaseMessage],
    entries: Sequence[IndexEntry],
    config: LibrarianConfig,
    *,
    run_config: RunnableConfig | None = None,
    progress: IndexProgress | None = None,
) -> IndexUpdate:
    """Bring ``entries`` up to date with ``messages`` (sync; model calls in a thread pool).

    Args:
        messages: The conversation, in order.
        entries: The current index (may be empty, stale or from another run; matched
            to the messages by identity).
        config: Indexer model, embeddings, concurrency, timeouts.
        run_config: The caller's run config (callbacks, tags); summaries made by a model
            run as its child runs, tagged so they never stream as the agent's tokens.
        progress: Optional ``progress(done, total)`` callback for long passes (bulk
            indexing an existing history); see :data:`IndexProgress`.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> update = update_index(
        ...     [HumanMessage("The budget is 12,000 dollars.", id="m1")], [],
        ...     LibrarianConfig(embeddings=None), progress=lambda done, total: None,
        ... )
        >>> update.new_count
        1
    """
    start = time.perf_counter()
    update = IndexUpdate()
    rec = reconciled(messages, entries)
    local, remote = _split(messages, rec, config)
    embeddings = resolve_embeddings(config)
    steps = _Steps(progress, _total_steps(local, remote, embeddings))
    outcomes: list[object] = []
    if remote:
        summarizer = _summarizer(config)
        size = steps.chunk_size(config, len(remote))
        for first in range(0, len(remote), size):
            chunk = remote[first : first + size]
            outcomes.extend(summarizer.summarize([messages[p] for p in chunk], run_config))
            steps.advance(len(chunk))
    fresh = _assemble(messages, rec, config, local, remote, outcomes, update)
    _warm(embeddings, messages, fresh, update, steps)
    steps.finish()
    update.latency_ms = round((time.perf_counter() - start) * 1000, 3)
    return update


def _assembled(
    messages: Sequence[BaseMessage],
    rec: Reconciled,
    config: LibrarianConfig,
    local: list[int],
    remote: list[int],
    outcomes: list[object],
    update: IndexUpdate,
    steps: _Steps,
) -> None:
    fresh = _assemble(messages, rec, config, local, remote, outcomes, update)
    _warm(resolve_embeddings(config), messages, fresh, update, steps)


async def aupdate_index(
    messages: Sequence[BaseMessage],
    entries: Sequence[IndexEntry],
    config: LibrarianConfig,
    *,
    run_config: RunnableConfig | None = None,
    progress: IndexProgress | None = None,
) -> IndexUpdate:
    """Async twin of :func:`update_index` (model calls concurrent under a semaphore)."""
    start = time.perf_counter()
    update = IndexUpdate()
    rec = await asyncio.to_thread(reconciled, messages, entries)
    local, remote = _split(messages, rec, config)
    embeddings = resolve_embeddings(config)
    steps = _Steps(progress, _total_steps(local, remote, embeddings))
    outcomes: list[object] = []
    if remote:
        summarizer = _summarizer(config)
        size = steps.chunk_size(config, len(remote))
        for first in range(0, len(remote), size):
            chunk = remote[first : first + size]
            outcomes.extend(await summarizer.asummarize([messages[p] for p in chunk], run_config))
            steps.advance(len(chunk))
    # Extractive summaries and passage vectors are CPU work: a worker thread, not the
    # event loop (a 600-message history held the loop for 300-500 ms).
    assembling = (messages, rec, config, local, remote, outcomes, update, steps)
    await asyncio.to_thread(_assembled, *assembling)
    steps.finish()
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
    return list(filter(None, slots))  # (in C; an entry is always true)
