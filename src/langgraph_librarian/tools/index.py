"""ToolIndex: embedding search over a tool catalog, with domain siblings and fallbacks."""

from __future__ import annotations

import itertools
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.tools import BaseTool, StructuredTool

from langgraph_librarian._text import content_terms
from langgraph_librarian.embeddings import default_embeddings

__all__ = ["ToolIndex", "ToolMatch", "ToolRecord", "ToolSearchResult", "infer_domain"]

ToolLike = BaseTool | Callable[..., Any] | dict[str, Any]
MatchReason = Literal["match", "sibling", "name", "domain"]
_DOMAIN_SPLIT = re.compile(r"[_.\-:/]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SIBLING_POOL = 200
"""Top-ranked tools in which domain siblings are looked for first."""


def infer_domain(name: str) -> str:
    """The domain a name implies: ``email_send`` -> ``email``, ``github.list`` -> ``github``."""
    head = _DOMAIN_SPLIT.split(_CAMEL.sub("_", name.strip()), maxsplit=1)[0].lower()
    return head if head and head != name.strip().lower() else "general"


@dataclass
class ToolRecord:
    """A catalog entry.

    Attributes:
        name: Unique tool name.
        description: What the tool does ("" when the tool has none).
        domain: Group of related tools (siblings travel together).
        arguments: Argument names, part of the embedded text.
        tool: The executable tool, when the entry came from a tool or function.
        schema: The JSON schema, when the entry came from a schema dict.
    """

    name: str
    description: str
    domain: str
    arguments: list[str] = field(default_factory=list)
    tool: BaseTool | None = None
    schema: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """What is embedded: ``name: description (arguments: a, b)``."""
        readable = _CAMEL.sub(" ", self.name).replace("_", " ").replace(".", " ")
        args = f" (arguments: {', '.join(self.arguments)})" if self.arguments else ""
        return f"{readable}: {self.description or readable}{args}"

    @property
    def summary(self) -> str:
        """One line for the agent."""
        first = (self.description or "no description").strip().splitlines()[0]
        return first if len(first) <= 160 else first[:157] + "..."


@dataclass
class ToolMatch:
    """A tool returned by a search and why."""

    name: str
    score: float
    reason: MatchReason
    domain: str


@dataclass
class ToolSearchResult:
    """Outcome of :meth:`ToolIndex.search`.

    Attributes:
        matches: Tools to load, best first (direct matches, then domain siblings).
        fallback: ``None`` for a semantic match, else ``"name"``, ``"domain"`` or
            ``"domains"`` (nothing found: ``domains`` lists what exists).
        domains: Domain names with tool counts, when the agent should refine its query.
    """

    matches: list[ToolMatch] = field(default_factory=list)
    fallback: Literal["name", "domain", "domains"] | None = None
    domains: dict[str, int] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.matches]


def _record(item: ToolLike, domain: str | None) -> ToolRecord:
    if isinstance(item, BaseTool):
        tool = item
    elif isinstance(item, dict):
        spec = item.get("function", item) if item.get("type") == "function" else item
        name = spec.get("name") or spec.get("title")
        if not name:
            raise ValueError(f"tool schema without a name: {item!r}")
        params = spec.get("parameters") or spec.get("input_schema") or {}
        args = list((params.get("properties") or {}).keys()) if isinstance(params, dict) else []
        explicit = domain or item.get("domain") or spec.get("domain")
        return ToolRecord(
            str(name),
            str(spec.get("description") or ""),
            str(explicit or infer_domain(str(name))),
            args,
            None,
            dict(item),
        )
    elif callable(item):
        doc = (item.__doc__ or "").strip()
        name = str(getattr(item, "__name__", "tool"))
        # LangChain needs a description; a function without a docstring gets its name.
        tool = StructuredTool.from_function(item, description=doc or name.replace("_", " "))
        if not doc:
            return ToolRecord(
                tool.name,
                "",
                str(domain or infer_domain(tool.name)),
                list(tool.args.keys()),
                tool,
                None,
            )
    else:
        raise TypeError(f"cannot index {type(item).__name__} as a tool")
    metadata = tool.metadata or {}
    explicit = domain or metadata.get("domain")
    try:
        args = list(tool.args.keys())
    except Exception:  # a tool with an unusual schema still gets indexed
        args = []
    return ToolRecord(
        tool.name,
        tool.description or "",
        str(explicit or infer_domain(tool.name)),
        args,
        tool,
        None,
    )


class ToolIndex:
    """Search a tool catalog by stated intent.

    Tools (LangChain ``BaseTool``s, plain functions, or JSON schemas) are embedded as
    ``name: description (arguments: ...)`` with any LangChain ``Embeddings`` (the
    packaged offline model by default when installed; a lexical scorer otherwise).
    The index is built lazily on the first search and updated incrementally: adding
    tools embeds only the new ones, removing drops rows. Vectors live in one float32
    matrix, so a search is one matrix-vector product whatever the catalog size.

    A search keeps tools whose similarity clears ``threshold`` (at most ``k``), then
    expands domains: a match scoring at least ``domain_threshold``, or two matches in
    one domain, bring that domain's other tools (at most ``max_siblings``). When nothing
    clears the threshold the fallbacks are, in order: a tool named in the query, a
    domain named in the query, and finally the list of domains.

    Example:
        >>> def email_send(to: str, body: str) -> str:
        ...     "Send an email."
        ...     return "sent"
        >>> index = ToolIndex([email_send], embeddings=None)
        >>> index.search("send an email to John").names
        ['email_send']
    """

    def __init__(
        self,
        tools: Iterable[ToolLike] = (),
        *,
        embeddings: Embeddings | Literal["auto"] | None = "auto",
        threshold: float | None = None,
        domain_threshold: float | None = None,
        max_siblings: int = 8,
    ) -> None:
        self._embeddings = default_embeddings() if embeddings == "auto" else embeddings
        semantic = self._embeddings is not None
        # Defaults measured on the tool benchmark (docs/benchmarks.md) for MiniLM and
        # for the lexical scorer; other embedding models may want other values.
        self.threshold = threshold if threshold is not None else (0.35 if semantic else 0.3)
        self.domain_threshold = (
            domain_threshold if domain_threshold is not None else (0.6 if semantic else 0.75)
        )
        self.max_siblings = max_siblings
        self._records: dict[str, ToolRecord] = {}
        self._rows: list[str] = []  # matrix row -> tool name ("" for a removed row)
        self._dead = 0  # rows of removed tools not yet compacted
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._pending: list[str] = []
        self._postings: dict[str, set[str]] = {}  # lexical: term -> tool names
        self._by_domain: dict[str, dict[str, None]] = {}  # domain -> names (ordered set)
        self._lock = threading.RLock()
        self.add(tools)

    # -- catalog --------------------------------------------------------------------

    def add(self, tools: Iterable[ToolLike] | ToolLike, *, domain: str | None = None) -> list[str]:
        """Add tools (a later tool with an existing name replaces it); returns their names."""
        items = [tools] if isinstance(tools, BaseTool | dict) or callable(tools) else list(tools)
        names: list[str] = []
        with self._lock:
            for item in items:
                record = _record(item, domain)
                if record.name in self._records:
                    self._drop_row(record.name)
                    self._by_domain.get(self._records[record.name].domain, {}).pop(
                        record.name, None
                    )
                self._records[record.name] = record
                self._by_domain.setdefault(record.domain, {})[record.name] = None
                self._pending.append(record.name)
                names.append(record.name)
        return names

    def remove(self, names: Iterable[str] | str) -> None:
        """Remove tools by name (unknown names are ignored)."""
        with self._lock:
            for name in [names] if isinstance(names, str) else list(names):
                record = self._records.pop(name, None)
                if record is not None:
                    self._by_domain.get(record.domain, {}).pop(name, None)
                    self._drop_row(name)
                    if name in self._pending:
                        self._pending.remove(name)

    def _drop_row(self, name: str) -> None:
        for i, row in enumerate(self._rows):
            if row == name:
                self._rows[i] = ""
                self._dead += 1
        for names in self._postings.values():
            names.discard(name)

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, name: object) -> bool:
        return name in self._records

    def get(self, name: str) -> ToolRecord | None:
        """The record for ``name``, or ``None``."""
        return self._records.get(name)

    def records(self) -> list[ToolRecord]:
        """Every record, in insertion order."""
        return list(self._records.values())

    def domains(self) -> dict[str, int]:
        """Domain name -> number of tools."""
        return {d: len(names) for d, names in self._by_domain.items() if names}

    def memory_bytes(self) -> int:
        """Approximate memory held by the vectors."""
        return int(self._matrix.nbytes)

    # -- building -------------------------------------------------------------------

    def _sync(self) -> None:
        """Embed pending tools and compact removed rows (called before a search)."""
        with self._lock:
            if self._dead and self._dead * 4 > len(self._rows):
                keep = [i for i, name in enumerate(self._rows) if name]
                self._matrix = self._matrix[keep] if self._matrix.size else self._matrix
                self._rows = [self._rows[i] for i in keep]
                self._dead = 0
            if not self._pending:
                return
            pending = [n for n in self._pending if n in self._records]
            self._pending = []
            if self._embeddings is None:
                for name in pending:
                    for term in set(content_terms(self._records[name].text)):
                        self._postings.setdefault(term, set()).add(name)
                self._rows.extend(pending)
                return
            vectors = np.asarray(
                self._embeddings.embed_documents([self._records[n].text for n in pending]),
                dtype=np.float32,
            )
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
            self._matrix = vectors if self._matrix.size == 0 else np.vstack([self._matrix, vectors])
            self._rows.extend(pending)

    # -- search ---------------------------------------------------------------------

    def _lexical_scores(self, query: str) -> dict[str, float]:
        """Idf-weighted share of the query's terms a tool's text contains (0..1)."""
        terms = set(content_terms(query))
        if not terms:
            return {}
        n = max(len(self._records), 1)
        idf = {}
        for t in terms:
            df = len(self._postings.get(t, ()))
            idf[t] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        total = sum(idf.values()) or 1.0
        scores: dict[str, float] = {}
        for t in terms:
            for name in self._postings.get(t, ()):
                if name in self._records:
                    scores[name] = scores.get(name, 0.0) + idf[t] / total
        return scores

    def embed_query(self, query: str) -> list[float] | None:
        """The query vector (``None`` for the lexical scorer)."""
        return None if self._embeddings is None else list(self._embeddings.embed_query(query))

    def _ranked(
        self, query: str, query_vector: Sequence[float] | None, limit: int
    ) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """(best ``limit`` tools with scores, best first; score lookup for those and more)."""
        self._sync()
        with self._lock:
            if self._embeddings is None:
                scores = self._lexical_scores(query)
                ranked = sorted(scores.items(), key=lambda kv: -kv[1])[:limit]
                return ranked, scores
            if not self._rows:
                return [], {}
            if query_vector is None:
                query_vector = self._embeddings.embed_query(query)
            q = np.asarray(query_vector, dtype=np.float32)
            q /= max(float(np.linalg.norm(q)), 1e-9)
            sims = self._matrix @ q
            rows = self._rows
            if self._dead:  # removed tools not compacted yet never rank
                sims[[i for i, r in enumerate(rows) if not r]] = -np.inf
        limit = min(limit, len(rows))
        top = (
            np.argpartition(-sims, limit - 1)[:limit] if limit < len(rows) else np.arange(len(rows))
        )
        top = top[np.argsort(-sims[top], kind="stable")]
        ranked = [(rows[i], float(sims[i])) for i in top if rows[i]]
        return ranked, dict(ranked)

    def scores(self, query: str, query_vector: Sequence[float] | None = None) -> dict[str, float]:
        """Similarity of every tool to ``query`` (pass ``query_vector`` to reuse an embedding)."""
        ranked, _ = self._ranked(query, query_vector, max(len(self._rows), 1))
        return dict(ranked)

    def search(
        self,
        query: str,
        *,
        k: int = 5,
        domain: str | None = None,
        query_vector: Sequence[float] | None = None,
    ) -> ToolSearchResult:
        """Tools for a need stated in natural language (see the class docstring)."""
        if not isinstance(query, str) or not query.strip():
            return ToolSearchResult(fallback="domains", domains=self.domains())
        pool = _SIBLING_POOL + k
        if domain:
            wanted = domain.strip().lower()
            ranked, _ = self._ranked(query, query_vector, max(len(self._rows), 1))
            ranked = [(n, sc) for n, sc in ranked if self._records[n].domain.lower() == wanted]
        else:
            ranked, _ = self._ranked(query, query_vector, pool)
        direct = [(n, sc) for n, sc in ranked[:k] if sc >= self.threshold]
        if direct:
            return ToolSearchResult(matches=self._expand(direct, ranked[:pool]))
        return self._fallback(query, domain)

    def _expand(
        self, direct: list[tuple[str, float]], ranked: list[tuple[str, float]]
    ) -> list[ToolMatch]:
        """Add siblings of strong domains: best-ranked members first, then any members."""
        matches = [ToolMatch(n, sc, "match", self._records[n].domain) for n, sc in direct]
        per_domain = Counter(m.domain for m in matches)
        strong = {m.domain for m in matches if m.score >= self.domain_threshold}
        chosen = {m.name for m in matches}
        for dom in dict.fromkeys(m.domain for m in matches):
            if dom not in strong and per_domain[dom] < 2:
                continue
            ranked_members = [(n, sc) for n, sc in ranked if self._records[n].domain == dom]
            # Best-ranked members first; then any members, read lazily (a domain of an
            # integration catalog can hold tens of thousands of tools).
            others = ((n, 0.0) for n in self._by_domain.get(dom, ()))
            added = 0
            for name, score in itertools.chain(ranked_members, others):
                if added >= self.max_siblings:
                    break
                if name in chosen or name not in self._records:
                    continue
                matches.append(ToolMatch(name, score, "sibling", dom))
                chosen.add(name)
                added += 1
        return matches

    def _fallback(self, query: str, domain: str | None) -> ToolSearchResult:
        lowered = query.lower()
        words = set(re.findall(r"[\w.\-:/]+", lowered))
        named = [
            r
            for r in self._records.values()
            if r.name.lower() in words or r.name.lower() == lowered.strip()
        ]
        if named:
            return ToolSearchResult(
                matches=[ToolMatch(r.name, 1.0, "name", r.domain) for r in named], fallback="name"
            )
        domains = self.domains()
        target = (
            domain.strip().lower()
            if domain
            else next((d for d in domains if d.lower() in words), None)
        )
        if target and target in {d.lower() for d in domains}:
            members = [
                self._records[n]
                for d, names in self._by_domain.items()
                if d.lower() == target
                for n in names
            ]
            return ToolSearchResult(
                matches=[
                    ToolMatch(r.name, 0.0, "domain", r.domain)
                    for r in members[: self.max_siblings * 2]
                ],
                fallback="domain",
            )
        return ToolSearchResult(fallback="domains", domains=domains)

    async def asearch(
        self, query: str, *, k: int = 5, domain: str | None = None
    ) -> ToolSearchResult:
        """Async twin of :meth:`search` (runs the embedding in a worker thread)."""
        import asyncio

        return await asyncio.to_thread(self.search, query, k=k, domain=domain)

    def tools(self, names: Sequence[str]) -> list[BaseTool]:
        """Executable tools for ``names`` (schema-only entries and unknown names skipped)."""
        found = [self._records.get(n) for n in names]
        return [r.tool for r in found if r is not None and r.tool is not None]
