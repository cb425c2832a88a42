"""Costs of a tool search that grow with the catalog: the score product and the domain list."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from langgraph_librarian.embeddings import load_embeddings
from langgraph_librarian.tools import ToolIndex, _lexical
from langgraph_librarian.tools import index as index_module


def _catalog(n_domains: int, per_domain: int) -> list[dict[str, str]]:
    return [
        {"name": f"d{d}_tool{t}", "description": f"Tool {t} of group {d} for widgets."}
        for d in range(n_domains)
        for t in range(per_domain + d % 3)
    ]


class _CountingDict(dict):  # type: ignore[type-arg]
    """A dict that counts how often every entry is walked."""

    walks = 0

    def items(self) -> Any:
        type(self).walks += 1
        return super().items()


def test_domain_list_is_sorted_once_per_catalog_change() -> None:
    """A low-confidence answer lists domains, largest first: sorting every domain of a
    50,000-tool catalog per answer took 10 ms. The order is kept until the catalog
    changes, and follows it when it does."""
    index = ToolIndex(_catalog(30, 2), embeddings=None)
    first = index.domain_list(["d4"])
    assert next(iter(first)) == "d4" and len(first) == 30
    assert list(first)[1:4] == ["d11", "d14", "d17"]  # 4 tools each, then by name
    index._by_domain = _CountingDict(index._by_domain)
    _CountingDict.walks = 0
    for _ in range(5):
        assert index.domain_list(["d4"]) == first
    assert _CountingDict.walks == 0
    index.add({"name": "d29_extra", "description": "One more."})  # d29 now has 5
    assert next(iter(index.domain_list())) == "d29"
    index.remove(["d29_extra", "d29_tool0", "d29_tool1", "d29_tool2", "d29_tool3"])
    assert "d29" not in index.domain_list()


def test_domain_list_caps_at_forty_with_the_named_first() -> None:
    index = ToolIndex(_catalog(60, 1), embeddings=None)
    listed = index.domain_list(["d59", "unknown", "d0"])
    assert len(listed) == index_module.MAX_DOMAINS_LISTED
    assert list(listed)[:2] == ["d59", "d0"]


def test_scores_are_computed_by_einsum_not_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cosine of every tool is one matrix-vector product, and the query words'
    neighbours one product per word: numpy's einsum streams the matrix on one core,
    where BLAS's threads, competing on a busy two-core machine, made a 50,000-tool
    search 3x slower (docs/tools.md, "Search speed"). The scores are the same."""
    calls: list[str] = []
    real = np.einsum

    def counting(spec: str, *operands: Any, **kwargs: Any) -> Any:
        calls.append(spec)
        return real(spec, *operands, **kwargs)

    index = ToolIndex(_catalog(5, 2), embeddings=load_embeddings("static"))
    index.search("warm up")
    # numpy itself is patched: the index and the lexical scorer both call np.einsum.
    monkeypatch.setattr(np, "einsum", counting)
    cosine, _ = index.score_parts("configure the gizmo widgets of group three")
    assert calls.count("ij,j->i") >= 2  # the tools, and at least one new query word
    q = np.asarray(index.embed_query("configure the gizmo widgets of group three"), np.float32)
    q /= np.linalg.norm(q)
    n = len(index.row_names())
    np.testing.assert_allclose(cosine, index._matrix[:n] @ q, rtol=1e-5, atol=1e-6)


def test_a_pasted_document_as_query_is_read_up_to_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every distinct word a catalog does not know costs a look-alike lookup and a
    neighbor product over the catalog's words: a 20,000-word query on a 50,000-tool
    catalog took 94 s. A query is read up to ``MAX_QUERY_CHARS``; a tool named
    within that bound is still found."""
    index = ToolIndex(_catalog(20, 3), embeddings=None)
    index.search("warm up")
    looked: list[str] = []
    similar = index._lexical._similar

    def counting(word: str) -> Any:
        looked.append(word)
        return similar(word)

    monkeypatch.setattr(index._lexical, "_similar", counting)
    document = " ".join(f"word{i}" for i in range(20_000))
    assert len(document) > 100_000
    index.search(document)
    index.rank(document)
    assert 0 < len(looked) <= 2 * index_module.MAX_QUERY_CHARS // 6
    found = index.search("please load d3_tool1 " + document)
    assert found.fallback == "name" and found.names[0] == "d3_tool1"


def test_queries_are_not_kept_in_the_catalog_words_memo() -> None:
    """The memo of catalog texts' words (65,536 entries, read again when the index
    compacts) also kept every query: about 21 KB for a 2,000-character one, so a
    long-running agent's distinct long requests could pin over a gigabyte (and with
    100 KB queries, before MAX_QUERY_CHARS, about 1 MB each). Queries are split each time."""
    index = ToolIndex(_catalog(5, 2), embeddings=None)
    index.search("warm up")
    before = _lexical._words.cache_info().currsize
    for i in range(20):
        index.search(f"report {i} of the widgets " + "long text " * 150)
    assert _lexical._words.cache_info().currsize == before
