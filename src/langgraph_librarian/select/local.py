"""The offline selector: hybrid lexical + embedding ranking with dependency expansion."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage

from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.index.extractive import has_change_cue
from langgraph_librarian.messages import message_text
from langgraph_librarian.select.lexical import bm25_index_for
from langgraph_librarian.select.result import Selection
from langgraph_librarian.vectors import decode_vector, vector_matrix

__all__ = ["LocalSelector"]

_RELATIVE_CUTOFF = 0.3
"""Keep candidates scoring at least this share of the best one."""
_EXPANSION_POOL = 60
"""How many top-ranked candidates dependency expansion looks at."""
_SHORT_MESSAGE_CHARS = 80


def _doc_text(entry: IndexEntry, message: BaseMessage) -> str:
    text = message_text(message)
    parts = [text]
    if entry.name:
        parts.append(entry.name.replace("_", " "))
    if entry.status == "summarized" and entry.summary and entry.summary not in text:
        parts.append(entry.summary)
    return "\n".join(parts)


class LocalSelector:
    """Ranks index entries for a query without calling a model.

    Scores are BM25 over each message's full text (stemmed), fused with cosine
    similarity of stored embedding vectors when entries carry them and an
    ``embeddings`` model is given for the query. The ranking is cut adaptively (a
    share of the best score, at most ``max_selected``) and then expanded along
    dependencies: a later message that changes a selected fact, the earlier one a
    selected change refers to, and the neighbour of a selected message too short to
    stand alone. Tool exchanges are kept whole later, by hydration.

    Args:
        max_selected: Upper bound on primary selections for one query.
        embeddings: Embeds the query; entries must carry ``vector``s made by the
            same model (the indexer does this when given the same embeddings).
    """

    def __init__(self, *, max_selected: int = 16, embeddings: Embeddings | None = None) -> None:
        self.max_selected = max_selected
        self.embeddings = embeddings

    # -- scoring --------------------------------------------------------------------

    def _lexical(
        self, query: str, messages: Sequence[BaseMessage], entries: Sequence[IndexEntry]
    ) -> np.ndarray:
        keys = [e.content_hash for e in entries]
        raw = bm25_index_for(keys, lambda i: _doc_text(entries[i], messages[entries[i].id])).scores(
            query
        )
        top = float(raw.max()) if raw.size else 0.0
        return raw / top if top > 0 else raw

    @staticmethod
    def _semantic(
        query_vector: Sequence[float] | None, entries: Sequence[IndexEntry]
    ) -> np.ndarray | None:
        if query_vector is None:
            return None
        with_vectors = [e.vector for e in entries if e.vector]
        if len(with_vectors) < max(1, len(entries) // 2):
            return None
        q = np.asarray(query_vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0:
            return None
        q = q / norm
        sims = np.zeros(len(entries), dtype=np.float32)
        idx = [i for i, e in enumerate(entries) if e.vector]
        matrix = vector_matrix([entries[i].vector or "" for i in idx])
        if matrix.shape[1] != q.shape[0]:
            return None
        sims[idx] = matrix @ q
        floor = max(0.15, float(np.median(sims)))
        top = float(sims.max())
        if top <= floor:
            return np.zeros(len(entries), dtype=np.float64)
        return np.clip((sims - floor) / (top - floor), 0.0, 1.0).astype(np.float64)

    def scores(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        query_vector: Sequence[float] | None = None,
    ) -> np.ndarray:
        """Fused relevance in [0, 1] of every entry (aligned with ``entries``)."""
        if not entries:
            return np.zeros(0)
        lexical = self._lexical(query, messages, entries)
        semantic = self._semantic(query_vector, entries)
        if semantic is None:
            return lexical
        return 0.5 * lexical + 0.5 * semantic

    def rank(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        query_vector: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """``(position, score)`` of every entry with a positive score, best first."""
        fused = self.scores(query, messages, entries, query_vector)
        excluded = set(exclude)
        order = np.argsort(-fused, kind="stable")
        return [
            (entries[i].id, float(fused[i]))
            for i in order
            if fused[i] > 0 and entries[i].id not in excluded
        ]

    # -- selection ------------------------------------------------------------------

    def _query_vector(self, query: str) -> list[float] | None:
        if self.embeddings is None or not query.strip():
            return None
        return list(self.embeddings.embed_query(query))

    async def _aquery_vector(self, query: str) -> list[float] | None:
        if self.embeddings is None or not query.strip():
            return None
        return list(await self.embeddings.aembed_query(query))

    def select(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
    ) -> Selection:
        """Select entries for ``query``; positions in ``exclude`` are never returned."""
        return self._select(query, messages, entries, exclude, self._query_vector(query))

    async def aselect(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
    ) -> Selection:
        """Async twin of :meth:`select` (embeds the query asynchronously)."""
        vector = await self._aquery_vector(query)
        return self._select(query, messages, entries, exclude, vector)

    def _select(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
        query_vector: Sequence[float] | None,
    ) -> Selection:
        ranked = self.rank(query, messages, entries, exclude=exclude, query_vector=query_vector)
        if not ranked:
            return Selection(
                ids=[],
                reasoning="no index entry shares terms with the query",
                strategy="local",
                candidates=len(entries),
            )
        top = ranked[0][1]
        primary = [
            pos for pos, score in ranked[: self.max_selected] if score >= _RELATIVE_CUTOFF * top
        ]
        by_pos = {e.id: e for e in entries}
        expanded = self._expand(primary, ranked[:_EXPANSION_POOL], by_pos, messages, set(exclude))
        ids = primary + [p for p in expanded if p not in primary]
        reasoning = (
            f"hybrid ranking over {len(entries)} entries: {len(primary)} above "
            f"{_RELATIVE_CUTOFF:.0%} of the best score"
            + (f", {len(expanded)} added by dependency expansion" if expanded else "")
        )
        return Selection(
            ids=ids,
            reasoning=reasoning,
            strategy="local",
            candidates=len(entries),
            expanded_ids=[p for p in expanded if p not in primary],
        )

    @staticmethod
    def _expand(
        primary: list[int],
        pool: list[tuple[int, float]],
        by_pos: dict[int, IndexEntry],
        messages: Sequence[BaseMessage],
        exclude: set[int],
    ) -> list[int]:
        """Pull in what selected messages depend on (see the class docstring)."""
        added: list[int] = []
        chosen = set(primary)

        def take(position: int) -> None:
            if position not in chosen and position not in exclude and position in by_pos:
                chosen.add(position)
                added.append(position)

        cue_cache: dict[int, bool] = {}

        def changes(position: int) -> bool:
            if position not in cue_cache:
                cue_cache[position] = has_change_cue(message_text(messages[position]))
            return cue_cache[position]

        for seed in primary:
            seed_terms = set(by_pos[seed].keywords)
            if not seed_terms:
                continue
            for position, _score in pool:
                if position in chosen:
                    continue
                shared = len(seed_terms & set(by_pos[position].keywords))
                if shared < 2:
                    continue
                later_change = position > seed and changes(position)
                earlier_original = position < seed and changes(seed)
                if later_change or earlier_original:
                    take(position)
        for seed in primary:
            if len(message_text(messages[seed])) < _SHORT_MESSAGE_CHARS and seed > 0:
                take(seed - 1)
        return added

    @staticmethod
    def decode(entry: IndexEntry) -> np.ndarray | None:
        """The entry's stored vector, if any."""
        return None if entry.vector is None else decode_vector(entry.vector)
