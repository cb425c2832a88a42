"""Helpers shared by the scoped-recall tests (stores that fail or count, a tag recorder).

Imported by the other ``test_recall_*`` modules; the tests here check the helpers
themselves, so a broken helper cannot make another test pass vacuously.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langgraph.store.base import Op, Result, SearchOp
from langgraph.store.memory import InMemoryStore


class StoreDown(ConnectionError):
    """What the flaky store raises (a network-ish outage)."""


class FlakyStore(InMemoryStore):
    """An ``InMemoryStore`` that raises :class:`StoreDown` while ``down`` is set.

    It also counts the batches it ran and the searches among them.
    """

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.error: BaseException = StoreDown("store unreachable")
        self.batches = 0
        self.searches = 0
        self._count_lock = threading.Lock()

    def _check(self, ops: Iterable[Op]) -> list[Op]:
        ops = list(ops)
        with self._count_lock:
            self.batches += 1
            self.searches += sum(1 for op in ops if isinstance(op, SearchOp))
        if self.down:
            raise self.error
        return ops

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return super().batch(self._check(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await super().abatch(self._check(ops))


class TagRecorder(BaseCallbackHandler):
    """Records tags and metadata of every chat model start."""

    def __init__(self) -> None:
        self.starts: list[tuple[list[str], dict[str, Any]]] = []

    def on_chat_model_start(self, serialized, messages, *, tags=None, metadata=None, **kwargs):
        self.starts.append((list(tags or []), dict(metadata or {})))


def test_flaky_store_fails_only_while_down():
    store = FlakyStore()
    store.put(("a",), "k", {"v": 1})
    store.down = True
    with pytest.raises(StoreDown):
        store.get(("a",), "k")
    store.down = False
    assert store.get(("a",), "k").value == {"v": 1}
    assert store.batches == 3


async def test_flaky_store_fails_async_too():
    store = FlakyStore()
    store.down = True
    with pytest.raises(StoreDown):
        await store.asearch(("a",))
    assert store.searches == 1
