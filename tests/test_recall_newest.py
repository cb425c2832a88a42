"""A scope with more records than ``max_candidates``: recall reads the newest, on every store.

``InMemoryStore`` answers a search oldest first, SQLite and PostgreSQL newest first; a
scope past ``max_candidates`` used to lose its newest records on ``InMemoryStore``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore

from helpers import open_store
from langgraph_librarian.recall import ScopeMemory
from langgraph_librarian.recall import _memory as memory_module

KEPT = 12
OLD_NOTES = 30
NEWEST = "My daughter's name is Zuzanna."


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: Any, tmp_path: Any, monkeypatch: Any) -> Iterator[BaseStore]:
    # Pages of 5 records: reading the scope takes several pages on every store.
    monkeypatch.setattr(memory_module, "SEARCH_PAGE", 5)
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None
    with open_store(request.param, tmp_path, dsn) as opened:
        yield opened


def filled(store: BaseStore) -> ScopeMemory:
    memory = ScopeMemory(store, namespace=("newest", uuid.uuid4().hex), max_candidates=KEPT)
    for n in range(OLD_NOTES):
        memory.remember("u", f"Shopping note {n}: bought {n % 7 + 1} lemons at stall {n}.")
    memory.remember("u", NEWEST)
    return memory


def expected_texts() -> list[str]:
    old = [f"Shopping note {n}: bought {n % 7 + 1} lemons at stall {n}." for n in range(OLD_NOTES)]
    return [*old, NEWEST][-KEPT:]


def test_records_are_the_newest_in_time_order(store):
    memory = filled(store)
    assert [r.text for r in memory.records("u")] == expected_texts()
    result = memory.recall("u", "What is my daughter's name?")
    assert result.status == "recalled"
    assert NEWEST in [r.text for r in result.records]


async def test_async_records_are_the_newest_in_time_order(store):
    memory = filled(store)
    assert [r.text for r in await memory.arecords("u")] == expected_texts()
    result = await memory.arecall("u", "What is my daughter's name?")
    assert NEWEST in [r.text for r in result.records]


def test_a_rewritten_record_counts_as_new_on_a_store_without_order():
    """As SQLite and PostgreSQL order by ``updated_at``, a record written again is new."""
    store = InMemoryStore()
    memory = filled(store)
    oldest_kept = memory.records("u")[0].text
    (item,) = [
        found
        for found in store.search(memory.scope_namespace("u"), limit=100)
        if found.value["text"].startswith("Shopping note 0:")
    ]
    store.put(tuple(item.namespace), item.key, item.value, index=False)  # written again
    texts = [r.text for r in memory.records("u")]
    assert item.value["text"] in texts and oldest_kept not in texts


def test_which_stores_order_their_search():
    from langgraph_librarian.recall._store import orders_newest_first

    assert not orders_newest_first(InMemoryStore())
    assert orders_newest_first(SqliteStore.__new__(SqliteStore))
    assert orders_newest_first(PostgresStore.__new__(PostgresStore))
