"""The offline selector: hybrid lexical + embedding ranking with dependency expansion."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from operator import attrgetter

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._messages import message_text
from langgraph_librarian._text import content_terms
from langgraph_librarian._vectors import vector_matrix
from langgraph_librarian.embeddings import embedding_model_id
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.select.lexical import BM25Index, bm25_index_for
from langgraph_librarian.select.result import Selection

__all__ = ["LocalSelector"]

RELATIVE_CUTOFF = 0.35
"""Keep candidates scoring at least this share of the best one."""
_RESERVE_CUTOFF = 0.2
"""Reserve candidates (for an unused budget) score at least this share of the best one."""
SEMANTIC_WEIGHT = 0.4
"""Share of the fused score given to embedding similarity when vectors exist."""
_SUMMARY_EMBEDDED_TOKENS = 250
"""Messages longer than this (about 1,000 characters) are embedded by their summary."""
_LONG_SEMANTIC_FACTOR = 0.5
"""Semantic weight kept for such messages."""
_MIN_SEMANTIC_SPREAD = 0.2
"""Cosine similarity above the median that earns full semantic weight."""
_EXPANSION_POOL = 60
"""How many top-ranked candidates dependency expansion looks at."""
_SHORT_MESSAGE_WORDS = 60
"""A selected message this short brings its neighbours (the question it answers...)."""
_NEIGHBOUR_FACTOR = 0.5
_LINK_FACTOR = 0.95
"""An earlier statement a selected change refers to ranks just below the change."""
_SUPERSEDE_FACTOR = 1.02
"""A later change ranks just above the statement it changes (the latest value wins)."""
_LINK_ROUNDS = 3
_BRIDGE_SEEDS = 3
"""Top matches whose names may bridge to other messages."""
_BRIDGE_FACTOR = 0.8
"""A bridged message ranks at most this share of the top match's score."""
_BRIDGE_MIN_DF, _BRIDGE_DF_SHARE = 5, 0.003
"""A bridging name occurs in at most max(5, 0.3% of passages) passages."""
_NAME = re.compile(r"\b[A-Z][a-zà-ÿ]+(?:[- ][A-Z][a-zà-ÿ]+)*")
_RECENCY_BONUS = 0.01


def _doc_text(entry: IndexEntry, message: BaseMessage) -> str:
    text = message_text(message)
    parts = [text]
    if entry.name:
        parts.append(entry.name.replace("_", " "))
    if entry.status == "summarized" and entry.summary and entry.summary not in text:
        parts.append(entry.summary)
    return "\n".join(parts)


_DOC_KEY = attrgetter("content_hash", "status", "summary")


def _doc_keys(entries: Sequence[IndexEntry]) -> list[tuple[str, str, str]]:
    """Identity of each :func:`_doc_text` result, for the lexical cache.

    The text depends on the content and, once a model summary arrives, on the summary
    too: a message first scored while pending must be re-read when it is summarized.
    Tuples of the entries' own strings (built in C by ``attrgetter``), so hashing reuses
    the strings' cached hashes.
    """
    return list(map(_DOC_KEY, entries))


@dataclass
class _Scored:
    fused: np.ndarray
    lexical: BM25Index
    best_passage: np.ndarray


class LocalSelector:
    """Ranks index entries for a query without calling a model.

    Lexical relevance is BM25 over passages of each message's full text (a message
    scores by its best passage, so one stating sentence inside a long message is
    found). When entries carry embedding vectors and an ``embeddings`` model embeds
    the query, cosine similarity is fused in. The ranking is cut adaptively (a share
    of the best score, at most ``max_selected``) and expanded along dependencies:

    - a later message whose matching passage changes what a selected passage stated
      (same query terms, a change cue such as "instead" or "moved to"), and the
      earlier statement a selected change refers to;
    - the neighbours of a selected message too short to stand alone (the question
      an answer replies to).

    Tool exchanges are kept whole later, by hydration. The returned ids are ordered
    by priority, so a token budget drops the least relevant first.

    Args:
        max_selected: Upper bound on primary selections for one query.
        embeddings: Embeds the query; only entries whose ``vector`` was made by the
            same model (``vector_model``) are compared with it (the indexer records
            the model when given the same embeddings).
    """

    def __init__(self, *, max_selected: int = 16, embeddings: Embeddings | None = None) -> None:
        self.max_selected = max_selected
        self.embeddings = embeddings
        self._query_model = embedding_model_id(embeddings) if embeddings is not None else None

    # -- scoring --------------------------------------------------------------------

    def _score(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        query_vector: Sequence[float] | None,
    ) -> _Scored:
        keys = _doc_keys(entries)
        index = bm25_index_for(keys, lambda i: _doc_text(entries[i], messages[entries[i].id]))
        raw, best = index.score_passages(query)
        top = float(raw.max()) if raw.size else 0.0
        fused = raw / top if top > 0 else raw
        semantic = self._semantic(query_vector, entries, self._query_model)
        if semantic is not None:
            # A long message is embedded through its summary (a small model reads about
            # 256 tokens): its vector speaks for a few sentences, not the whole text.
            weight = np.full(len(entries), SEMANTIC_WEIGHT)
            tokens = np.fromiter(
                (e.original_tokens for e in entries), dtype=np.float64, count=len(entries)
            )
            weight[tokens > _SUMMARY_EMBEDDED_TOKENS] *= _LONG_SEMANTIC_FACTOR
            fused = (1 - weight) * fused + weight * semantic
        if len(entries) > 1:
            # Among equally relevant messages the later one is the current truth.
            positions = np.fromiter((e.id for e in entries), dtype=np.float64, count=len(entries))
            fused = fused + _RECENCY_BONUS * (fused > 0) * positions / max(positions.max(), 1.0)
        return _Scored(fused, index, best)

    @staticmethod
    def _semantic(
        query_vector: Sequence[float] | None,
        entries: Sequence[IndexEntry],
        query_model: str | None = None,
    ) -> np.ndarray | None:
        if query_vector is None:
            return None
        q = np.asarray(query_vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0:
            return None
        q = q / norm
        # Only vectors of the query's model (same id, and the same length: entries
        # stored before ids were recorded have none) are comparable with it.
        encoded_length = 4 * -(-2 * q.shape[0] // 3)
        idx = [
            i
            for i, e in enumerate(entries)
            if e.vector
            and len(e.vector) == encoded_length
            and (query_model is None or e.vector_model in (None, query_model))
        ]
        if len(idx) < max(1, len(entries) // 2):
            return None
        vectors = [entries[i].vector or "" for i in idx]
        matrix = vector_matrix(
            [
                f"{entries[i].vector_model}:{entries[i].content_hash}:{v[:16]}"
                for i, v in zip(idx, vectors, strict=True)
            ],
            vectors,
        )
        sims = np.zeros(len(entries), dtype=np.float32)
        sims[idx] = matrix @ q
        # Similarity only counts where it stands out from the typical entry, and a
        # top that barely stands out (a model that does not know the language, a
        # query about nothing in the history) is not stretched to full weight.
        floor = float(np.median(sims[idx]))
        top = float(sims.max())
        if top <= floor:
            return np.zeros(len(entries), dtype=np.float64)
        spread = max(top - floor, _MIN_SEMANTIC_SPREAD)
        result: np.ndarray = np.clip((sims - floor) / spread, 0.0, 1.0).astype(np.float64)
        return result

    def scores(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        query_vector: Sequence[float] | None = None,
    ) -> np.ndarray:
        """Fused relevance (about 0..1) of every entry, aligned with ``entries``."""
        if not entries:
            return np.zeros(0)
        return self._score(query, messages, entries, query_vector).fused

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
        if not entries:
            return []
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
        config: RunnableConfig | None = None,
    ) -> Selection:
        """Select entries for ``query``; positions in ``exclude`` are never returned.

        ``config`` is accepted for the :class:`~langgraph_librarian.select.Selector`
        protocol; the local selector makes no model calls.
        """
        return self._select(query, messages, entries, exclude, self._query_vector(query))

    async def aselect(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        config: RunnableConfig | None = None,
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
        excluded = set(exclude)
        if not entries:
            return Selection(ids=[], reasoning="empty index", strategy="local")
        scored = self._score(query, messages, entries, query_vector)
        fused = scored.fused
        positive = np.flatnonzero(fused > 0)
        by_score = positive[np.argsort(-fused[positive], kind="stable")]
        order = [int(i) for i in by_score if entries[i].id not in excluded]
        if not order:
            return Selection(
                ids=[],
                reasoning="no index entry is related to the query",
                strategy="local",
                candidates=len(entries),
            )
        top = float(fused[order[0]])
        primary = [i for i in order[: self.max_selected] if fused[i] >= RELATIVE_CUTOFF * top]
        priority: dict[int, float] = {i: float(fused[i]) for i in primary}
        linked = self._linked(query, priority, order[:_EXPANSION_POOL], scored, entries)
        for i, score in linked.items():
            priority[i] = max(priority.get(i, 0.0), score)
        bridged = self._bridged(query, order, scored, entries, messages, excluded)
        for i, score in bridged.items():
            priority[i] = max(priority.get(i, 0.0), score)
        position_to_slot = {e.id: i for i, e in enumerate(entries)}
        neighbours: dict[int, float] = {}
        for i in primary:
            if len(message_text(messages[entries[i].id]).split()) >= _SHORT_MESSAGE_WORDS:
                continue
            for near in (entries[i].id - 1, entries[i].id + 1):
                slot = position_to_slot.get(near)
                if slot is not None and near not in excluded and slot not in priority:
                    neighbours[slot] = max(neighbours.get(slot, 0.0), _NEIGHBOUR_FACTOR * fused[i])
        for i, score in neighbours.items():
            priority.setdefault(i, score)
        ranked = sorted(priority, key=lambda i: (-priority[i], -entries[i].id))
        ids = [entries[i].id for i in ranked]
        # Next-best candidates, for a budget the selection leaves unused: questions whose
        # evidence is spread thin (lists, aggregates) gain from them; an unbounded
        # context never takes them.
        floor = _RESERVE_CUTOFF * top
        reserve: list[int] = []
        for i in order:  # best first: stop at the floor
            if fused[i] < floor or len(reserve) >= self.max_selected:
                break
            if i not in priority:
                reserve.append(entries[i].id)
        expanded = [entries[i].id for i in ranked if i not in set(primary)]
        reasoning = (
            f"passage-level hybrid ranking over {len(entries)} entries: {len(primary)} at or "
            f"above {RELATIVE_CUTOFF:.0%} of the best score; {len(linked)} linked as earlier "
            f"statements or later changes; {len(neighbours)} neighbours of short messages"
        )
        return Selection(
            ids=ids,
            reasoning=reasoning,
            strategy="local",
            candidates=len(entries),
            expanded_ids=expanded,
            reserve_ids=reserve,
        )

    @staticmethod
    def _bridged(
        query: str,
        order: list[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> dict[int, float]:
        """Messages about a rare name that the best matches mention (a bridge entity).

        "Where has my physio moved to?" finds "Farah has just moved to Annecy"; the
        message that says who Farah is ("my physiotherapist, Farah") shares no word with
        the question, only the name with the first find. Names in the best passages
        of the top few matches, when rare in the conversation (a name on every line,
        such as a speaker's, links nothing), become a second query; its best matches
        rank a little below the top match.
        """
        query_terms = set(content_terms(query))
        index, best, fused = scored.lexical, scored.best_passage, scored.fused
        rare = max(_BRIDGE_MIN_DF, int(_BRIDGE_DF_SHARE * index.passage_count))
        names: set[str] = set()
        for slot in order[:_BRIDGE_SEEDS]:
            pid = int(best[slot])
            if pid < 0:
                continue
            text = index.passage_text(pid, _doc_text(entries[slot], messages[entries[slot].id]))
            for name in _NAME.findall(text):
                names.update(
                    term
                    for term in content_terms(name)
                    if term not in query_terms
                    and len(term) > 2
                    and index.passage_frequency(term) <= rare
                )
        if not names:
            return {}
        raw, _ = index.score_passages(" ".join(sorted(names)))
        top = float(raw.max()) if raw.size else 0.0
        if top <= 0:
            return {}
        seed = float(fused[order[0]])
        found: dict[int, float] = {}
        for slot in np.argsort(-raw, kind="stable")[: 2 * _BRIDGE_SEEDS]:
            if raw[slot] > 0 and entries[slot].id not in excluded:
                found[int(slot)] = _BRIDGE_FACTOR * seed * float(raw[slot]) / top
        return found

    @staticmethod
    def _linked(
        query: str,
        seeds: dict[int, float],
        pool: list[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
    ) -> dict[int, float]:
        """Statements and changes about the same thing as a selected passage.

        A later message with a passage that changes what a selected passage stated
        (enough of the same query terms, and a change cue) is the current truth: it
        ranks just above the statement it changes, even when it scored lower on its
        own, so a tight budget keeps the latest value rather than the superseded one.
        Changes of changes follow (the latest of a chain ranks first). An earlier
        statement that a selected change refers to ranks just below it. ``seeds`` maps
        the selected slots to their priorities.
        """
        query_terms = set(content_terms(query))
        index, best, fused = scored.lexical, scored.best_passage, scored.fused
        last = max((entries[slot].id for slot in pool), default=1) or 1
        priority = dict(seeds)
        linked: dict[int, float] = {}

        def matched(slot: int) -> tuple[frozenset[str], bool]:
            pid = int(best[slot])
            if pid < 0:
                return frozenset(), False
            return index.passage_terms[pid] & query_terms, index.passage_has_change[pid]

        def relation(slot: int, terms: frozenset[str], need: int) -> tuple[bool, bool]:
            """(some passage shares enough terms, one of those states a change)."""
            shares = changes = False
            for pid in index.doc_passages(slot):
                if len(index.passage_terms[pid] & terms) >= need:
                    shares = True
                    changes = changes or index.passage_has_change[pid]
            return shares, changes

        # First the selected seeds; then, for chains, only the changes just promoted
        # (a change of a change), looking forward only.
        frontier = sorted(priority, key=lambda s: -priority[s])
        for round_ in range(_LINK_ROUNDS):
            promoted: list[int] = []
            for seed in frontier:
                terms, seed_changes = matched(seed)
                if len(terms) < 2 and len(query_terms) >= 2:
                    continue
                need = max(1, (2 * len(terms) + 2) // 3)
                for slot in pool:
                    if slot == seed:
                        continue
                    later = entries[slot].id > entries[seed].id
                    if not later and (round_ > 0 or not seed_changes):
                        continue
                    shares, changes = relation(slot, terms, need)
                    if not shares or (later and not changes):
                        continue
                    if later:
                        # Of several changes, the latest ranks first.
                        recency = _RECENCY_BONUS * entries[slot].id / last
                        score = _SUPERSEDE_FACTOR * priority[seed] + recency
                    else:
                        # Several earlier messages a change may refer to tie here: the
                        # more relevant one on its own (a statement of the value, not a
                        # mention of the topic) goes first.
                        score = _LINK_FACTOR * priority[seed] + _RECENCY_BONUS * float(fused[slot])
                    if score > max(priority.get(slot, 0.0), float(fused[slot])):
                        priority[slot] = linked[slot] = score
                        if later:
                            promoted.append(slot)
            if not promoted:
                break
            frontier = promoted
        return linked
