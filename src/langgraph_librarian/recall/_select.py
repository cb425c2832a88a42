"""Selecting scope memory with the Librarian's selectors (sync and async).

Recall uses the configured selector (``LocalSelector`` offline, ``LLMSelector`` when a
selector model is configured); the search tool ranks with the local engine only, so
a search never costs a model call.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

import numpy as np
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._engine.failures import embedding_failures
from langgraph_librarian._engine.text import content_terms, split_sentences, tokenize
from langgraph_librarian._engine.view import turn_view
from langgraph_librarian._librarian.turn import make_selector
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.embeddings import resolve_embeddings
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.recall._records import MemoryRecord, records_as_history
from langgraph_librarian.select._evidence import (
    EVIDENCE_FLOOR,
    Evidence,
    is_echo,
    is_filler,
    is_question,
    repeat_key,
)
from langgraph_librarian.select.local import LocalSelector
from langgraph_librarian.select.result import Selection

__all__ = ["Ranked", "arank", "aselect_ranked", "rank", "select_ranked"]


_STEP = "scope_recall"
"""``metadata["librarian_step"]`` of the selector's model call during recall."""


def _ordered(records: Sequence[MemoryRecord], ids: Sequence[int]) -> list[MemoryRecord]:
    return [records[i] for i in dict.fromkeys(ids) if 0 <= i < len(records)]


@dataclass
class Ranked:
    """What recall's selection found: the records, best first, and why.

    Attributes:
        records: The chosen records, most relevant first.
        strategy: The selector that chose them (``"local"``, ``"llm"``...), or
            ``"floor"`` when nothing in the scope reached the relevance floor.
        relevance: The best record's evidence (standard deviations above chance; see
            :meth:`LocalSelector.evidence`), ``None`` when the scope is empty.
        floor: What the best record's similarity had to reach for this scope's size.
        model_picks: The records the selector model chose itself (``[]`` when it
            answered that nothing applies), ``None`` without a model's selection. The
            other records of a model selection are the offline engine's picks kept next
            to the model's (``selector_keeps_local``), each held to the relevance floor.
        embedding_error: The embedding model's failure (``"Type: message"``), when it
            failed and the records were ranked lexically; ``None`` otherwise.
    """

    records: list[MemoryRecord]
    strategy: str
    relevance: float | None = None
    floor: float | None = None
    model_picks: list[MemoryRecord] | None = None
    embedding_error: str | None = None
    """What the selector model picked itself (``[]``: it answered that nothing applies);
    ``None`` when no model selected (the offline engine, or its fallback)."""


def _floor_filter(
    records: Sequence[MemoryRecord],
    ids: Sequence[int],
    evidence: Evidence,
    linked: Collection[int] = (),
) -> list[int]:
    """``ids`` that bear on the query, the other half of their exchanges, and the later
    changes of what they state (``linked``).

    A record under the floor stays when it is the reply to a bearing user message or
    the user message a bearing reply answers, in the same thread, or when the selector
    reached it through its best matches (``Selection.linked_ids``): a change of a
    selected statement ("switched me from metformin to gliclazide" for "on metformin"),
    a later mention of a name the match holds ("Pulled the Sungold plants ... Replaced
    with Crimson Crush"), the dateline of the match's sitting. The current value
    matters most and rarely shares the question's words. Echoes and filler never do.
    """
    scores = evidence.scores()
    bearing = {i for i in ids if scores[i] >= EVIDENCE_FLOOR} | {
        i for i in linked if evidence.usable[i]
    }

    def partner(i: int) -> bool:
        # The reply to a bearing question, or the question a bearing reply answers.
        before, after = i - 1, i + 1
        here = records[i]
        if here.role == "ai" and before in bearing:
            return records[before].role == "human" and records[before].thread_id == here.thread_id
        if here.role == "human" and after in bearing:
            return records[after].role == "ai" and records[after].thread_id == here.thread_id
        return False

    return [i for i in ids if i in bearing or (evidence.usable[i] and partner(i))]


@dataclass
class _Layout:
    """Records laid out for the selectors (:func:`records_as_history`) and the way back."""

    messages: list[BaseMessage]
    entries: list[IndexEntry]
    slots: list[int]
    breaks: list[int]

    @classmethod
    def of(cls, records: Sequence[MemoryRecord]) -> _Layout:
        messages, entries, slots = records_as_history(records)
        return cls(messages, entries, slots, [p for p, i in enumerate(slots) if i < 0])

    def ids(self, positions: Sequence[int]) -> list[int]:
        """Record indexes of selected positions (breaks and unknown positions dropped)."""
        n = len(self.slots)
        return [self.slots[p] for p in positions if 0 <= p < n and self.slots[p] >= 0]

    def selection(self, selection: Selection) -> Selection:
        return replace(
            selection,
            ids=self.ids(selection.ids),
            reserve_ids=self.ids(selection.reserve_ids),
            linked_ids=self.ids(selection.linked_ids),
            expanded_ids=self.ids(selection.expanded_ids),
            model_ids=self.ids(selection.model_ids),
            kept_local_ids=self.ids(selection.kept_local_ids),
            exchange_ids=self.ids(selection.exchange_ids),
        )

    def evidence(self, evidence: Evidence) -> Evidence:
        if not self.breaks:
            return evidence
        keep = np.flatnonzero(np.asarray(self.slots) >= 0)
        corroborated = evidence.corroborated
        return Evidence(
            evidence.semantic[keep],
            evidence.lexical[keep],
            evidence.usable[keep],
            evidence.strong[keep],
            evidence.measured,
            None if corroborated is None else corroborated[keep],
        )


def held_to_floor(config: LibrarianConfig) -> bool:
    """The offline selector is held to the floor; a model selector judges meaning itself
    (and may answer that nothing applies)."""
    return config.selector is None and config.uses_local_selector


def select_ranked(
    records: Sequence[MemoryRecord],
    query: str,
    config: LibrarianConfig,
    parent: RunnableConfig | None = None,
) -> Ranked:
    """The records the configured selector picks for ``query``, best first.

    Nothing is picked when no record bears on the question (a rare word of the question
    with another of its words, a shared rare word among few records, or a similarity
    above what the best of that many unrelated records reaches by chance:
    :func:`~langgraph_librarian.select._evidence.scope_floor`): a question about
    something the scope never discussed recalls nothing rather than the nearest
    records. The local selector is held to the floor, and its picks one by one; a model
    selector's picks are its own.
    """
    if not records:
        return Ranked([], "none")
    laid = _Layout.of(records)
    messages, entries, breaks = laid.messages, laid.entries, laid.breaks
    local = _local(config)
    # An embedding model that fails leaves the ranking lexical (LocalSelector._embedded).
    # One view of the laid-out records for the whole selection (its steps each ask).
    with embedding_failures() as failed, turn_view(messages):
        vector = local._query_vector(query)
        if held_to_floor(config):
            # One scoring pass gives both the selection and the evidence it is held to.
            selection, evidence = local.weigh(
                query, messages, entries, query_vector=vector, exclude=breaks
            )
        else:
            evidence = local.evidence(query, messages, entries, vector)
            # The selector's own model call runs as a child of ``parent``, tagged.
            selection = make_selector(config, _STEP).select(
                query, messages, entries, exclude=breaks, config=parent
            )
        ranked = _ranked(records, laid.selection(selection), laid.evidence(evidence), query)
        return _with_failures(ranked, failed)


def _with_failures(ranked: Ranked, failed: list[str]) -> Ranked:
    if failed:
        ranked.embedding_error = "; ".join(failed)
    return ranked


async def aselect_ranked(
    records: Sequence[MemoryRecord],
    query: str,
    config: LibrarianConfig,
    parent: RunnableConfig | None = None,
) -> Ranked:
    """Async twin of :func:`select_ranked`."""
    if not records:
        return Ranked([], "none")
    laid = _Layout.of(records)
    messages, entries, breaks = laid.messages, laid.entries, laid.breaks
    local = _local(config)
    with embedding_failures() as failed, turn_view(messages):
        vector = await local._aquery_vector(query)
        if held_to_floor(config):
            selection, evidence = local.weigh(
                query, messages, entries, query_vector=vector, exclude=breaks
            )
        else:
            evidence = local.evidence(query, messages, entries, vector)
            selection = await make_selector(config, _STEP).aselect(
                query, messages, entries, exclude=breaks, config=parent
            )
        ranked = _ranked(records, laid.selection(selection), laid.evidence(evidence), query)
        return _with_failures(ranked, failed)


_LOCAL_STRATEGIES = frozenset({"local", "local_fallback"})
"""Selections made by the offline engine (alone, or after a selector model failed)."""


_Places = dict[tuple[str, int], int]
"""Where each record of a thread sits in the records: (thread id, sequence) -> index."""


def _places(records: Sequence[MemoryRecord]) -> _Places:
    """Built once per ranking (a dict over every record of the scope)."""
    return {(r.thread_id, r.seq): i for i, r in enumerate(records) if r.thread_id}


def _answers_for_echoes(
    records: Sequence[MemoryRecord], ids: Sequence[int], query: str, at: _Places
) -> list[int]:
    """``ids`` with each earlier copy of the question (an echo, asked in another thread)
    replaced by the reply that followed it in its thread, or left out when there is none
    (or it is already there): the question answers nothing, its answer may."""
    terms = frozenset(content_terms(query))
    key = repeat_key(query)
    out: list[int] = []
    for i in ids:
        here = records[i] if 0 <= i < len(records) else None
        if here is None or not (repeat_key(here.text) == key or is_echo(here.text, terms)):
            out.append(i)
            continue
        j = at.get((here.thread_id, here.seq + 1)) if here.thread_id else None
        if j is not None and records[j].role != here.role and not is_filler(records[j].text):
            out.append(j)
    return list(dict.fromkeys(out))


def _ranked(
    records: Sequence[MemoryRecord], selection: Selection, evidence: Evidence, query: str = ""
) -> Ranked:
    """The selection in records, the local one held to the floor (all of it, when
    nothing bears on the query: ``"floor"``); a model's picks are its own, but for an
    earlier copy of the question, which gives way to its answer.

    A model selector that failed returns the local selection (``"local_fallback"``): it
    is held to the floor like the offline selector's, or an outage of the provider would
    recall unrelated records into every turn. The offline engine's picks that a model's
    selection keeps next to the model's own (``selector_keeps_local``) are held to the
    floor too: when the model answers that nothing applies, only offline picks that
    bear on the question by themselves remain.
    """
    held = selection.strategy in _LOCAL_STRATEGIES
    if held and not evidence.bears():
        return Ranked([], "floor", evidence.best(), evidence.floor())
    # The next-best candidates come after the selection, as in a Librarian turn: the
    # byte bound takes them only while room is left (lists and aggregates gain).
    # The exchanges kept by structure are context for a turn, not records that bear on
    # the question: recall pairs records by its own rules (a review found a user's
    # "lol my cat..." recalled before a reply that bore on the question).
    exchanges = set(selection.exchange_ids)
    ids = [*(i for i in selection.ids if i not in exchanges), *selection.reserve_ids]
    at = _places(records)
    model: list[int] | None = None
    if held:
        ids = _floor_filter(records, ids, evidence, selection.linked_ids)
        ids.extend(_also_bearing(records, evidence, ids))
        # Last: they take only the room every record above left, and displace none.
        ids.extend(_follow_ups(records, evidence, ids, at))
    elif selection.strategy == "llm":
        model = _answers_for_echoes(records, selection.model_ids, query, at)
        chosen = set(selection.model_ids)
        # The model's picks the offline ranking did not have come last, as in a turn.
        listed = set(ids)
        ids.extend(i for i in selection.model_ids if i not in listed)
        offline = [i for i in ids if i not in chosen]
        bearing = set(_floor_filter(records, offline, evidence)) if evidence.bears() else set()
        ids = [i for i in ids if i in chosen or i in bearing]
    ids = _answers_for_echoes(records, ids, query, at)
    if held:
        ids = _replies_first(records, evidence, ids, at)
    return Ranked(
        _ordered(records, ids),
        selection.strategy,
        evidence.best(),
        evidence.floor(),
        None if model is None else _ordered(records, model),
    )


def _only_asks(text: str) -> bool:
    """A message that asks and states nothing: questions, with exclamations at most
    ("Wow, that rocks! What's the main idea of your art?")."""
    sentences = split_sentences(text)
    return any(s.endswith("?") for s in sentences) and all(
        s.endswith(("?", "!")) for s in sentences
    )


def _replies_first(
    records: Sequence[MemoryRecord], evidence: Evidence, ids: Sequence[int], at: _Places
) -> list[int]:
    """``ids`` with the reply to each record that only asks placed just before it.

    A question matches a question about the same subject by its words ("Got any
    paintings to show?" for "What has Melanie painted?") and states nothing; what was
    said in reply ("Here's the horse I painted last week.") is the evidence it leads
    to, and often shares none of the question's words. The reply takes the question's
    place in the ranking, and the question follows it as its context: under the byte
    bound a matching question no longer costs its own answer. An earlier copy of the
    question itself is handled by :func:`_answers_for_echoes`.
    """
    out: list[int] = []
    for i in ids:
        here = records[i]
        j = at.get((here.thread_id, here.seq + 1)) if here.thread_id else None
        if (
            j is not None
            and records[j].role != here.role
            and evidence.usable[j]
            and _only_asks(here.text)
        ):
            out.append(j)
        out.append(i)
    return list(dict.fromkeys(out))


_REFERRING = frozenset(
    [
        *("it", "its", "he", "him", "his", "she", "her", "they", "them", "their"),
        *("this", "that", "these", "those", "there", "also", "too", "instead", "anymore"),
    ]
)
"""Words by which a message goes on about what was said before it ("I moved *it*", "*He*'s
*also* allergic"), rather than opening a subject of its own ("My dentist is Dr. Okafor.")."""


def _refers_back(text: str) -> bool:
    """A statement that goes on about what was said before it; not a new question."""
    return not is_question(text) and not _REFERRING.isdisjoint(tokenize(text))


def _follow_ups(
    records: Sequence[MemoryRecord],
    evidence: Evidence,
    chosen: Sequence[int],
    at: _Places,
    taken: Collection[int] = (),
) -> list[int]:
    """What came right after the chosen records that bear on the query, in their thread.

    A fact is often finished or changed a message later, in words the question does not
    share: "My fig keeps dropping leaves" then, after the reply, "I moved it next to the
    balcony door"; "My son wants a dinosaur party" then "He's also allergic to eggs".
    For each bearing record (best first) this offers the next message of its thread and,
    when that is the other side's reply, the speaker's next message after it, when it
    refers back to what was said (a pronoun, "also", "instead": :func:`_refers_back`). A
    new subject ("My dentist is Dr. Okafor."), a new question, echoes, filler and records
    already ``chosen`` or ``taken`` are not offered. Offered after every ranked record,
    they only take room the byte bound has left, and displace none.
    """
    scores = evidence.scores()
    seen = {*chosen, *taken}
    found = []
    for i in chosen:
        here = records[i]
        if not here.thread_id or scores[i] < EVIDENCE_FLOOR:
            continue
        for step in (1, 2):
            j = at.get((here.thread_id, here.seq + step))
            if j is None:
                break
            if step == 2 and records[j].role != here.role:
                break
            if j not in seen and evidence.usable[j] and _refers_back(records[j].text):
                seen.add(j)
                found.append(j)
    return found


def _also_bearing(
    records: Sequence[MemoryRecord], evidence: Evidence, chosen: Sequence[int]
) -> list[int]:
    """Records the selection left out that bear on the query by themselves (evidence at
    the scope's floor, what the best record had to reach), best first.

    The selection's cut is relative to its best match: a keyword match ("renting") can
    leave out a record that answers by meaning ("bought my own flat"). Offered after the
    selection, they only take room the byte bound has left.
    """
    scores = evidence.scores()
    seen = {repeat_key(records[i].text) for i in chosen}  # repeats appear once
    found = []
    for i in sorted(np.flatnonzero(scores >= evidence.floor()).tolist(), key=lambda i: -scores[i]):
        key = repeat_key(records[i].text)
        if key not in seen:
            seen.add(key)
            found.append(i)
    return found


def _local(config: LibrarianConfig) -> LocalSelector:
    return LocalSelector(max_selected=config.max_selected, embeddings=resolve_embeddings(config))


def rank(
    records: Sequence[MemoryRecord], query: str, config: LibrarianConfig, limit: int
) -> list[MemoryRecord]:
    """The ``limit`` best records for ``query`` by the local hybrid ranking."""
    if not records:
        return []
    laid = _Layout.of(records)
    local = _local(config)
    with embedding_failures():  # a model that fails is asked once: lexical ranking
        vector = local._query_vector(query)
        ranked = local.rank(
            query, laid.messages, laid.entries, query_vector=vector, exclude=laid.breaks
        )
    return _ordered(records, laid.ids([position for position, _ in ranked])[:limit])


async def arank(
    records: Sequence[MemoryRecord], query: str, config: LibrarianConfig, limit: int
) -> list[MemoryRecord]:
    """Async twin of :func:`rank` (embeds the query asynchronously)."""
    if not records:
        return []
    laid = _Layout.of(records)
    local = _local(config)
    with embedding_failures():  # a model that fails is asked once: lexical ranking
        vector = await local._aquery_vector(query)
        ranked = local.rank(
            query, laid.messages, laid.entries, query_vector=vector, exclude=laid.breaks
        )
    return _ordered(records, laid.ids([position for position, _ in ranked])[:limit])
