"""The chunked index layout of ``LangGraphIndexStore`` on real backends.

Random histories of appends, edits, deletions and writes by another worker: after every
save, a fresh reader (another process, no cache) and the writer itself read back exactly
the saved index, and no item outside the manifest's chunks is left behind. Two workers'
overlapping turns may lose the earlier turn's update (re-indexed later), never leave an
index no worker can read. Run on an
in-memory store, a real SQLite file and a real PostgreSQL (which fails, never skips, in
CI when it is unreachable).
"""

from __future__ import annotations

import dataclasses
import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore

from langgraph_librarian import IndexEntry, LangGraphIndexStore
from langgraph_librarian.stores.langgraph_store import CHUNK_SIZE


def entry(n: int, text: str = "") -> IndexEntry:
    return IndexEntry(
        id=n, role="human", summary=f"s{n}{text}", message_id=f"m{n}", content_hash=f"h{n}{text}"
    )


def renumbered(entries: list[IndexEntry]) -> list[IndexEntry]:
    return [e if e.id == n else dataclasses.replace(e, id=n) for n, e in enumerate(entries)]


def keys(backing: BaseStore, namespace: tuple[str, ...]) -> set[str]:
    return {item.key for item in backing.search(namespace, limit=10_000)}


def exercise(backing: BaseStore, namespace: tuple[str, ...], seed: int, steps: int) -> None:
    rng = random.Random(seed)
    mine = LangGraphIndexStore(backing, namespace)
    session = f"s-{uuid.uuid4().hex[:8]}"
    entries = [entry(n) for n in range(rng.choice([0, 5, 100, CHUNK_SIZE, 300]))]
    mine.save(session, entries)
    for step in range(steps):
        writer = mine
        entries = list(mine.load(session) or [])
        action = rng.random()
        if action < 0.6:  # a turn: a few new entries
            entries += [entry(len(entries) + k, f"-{step}") for k in range(rng.randint(1, 5))]
        elif action < 0.7 and entries:  # an edit in place
            n = rng.randrange(len(entries))
            entries[n] = entry(n, f"-edit{step}")
        elif action < 0.8 and entries:  # a deletion in the middle (RemoveMessage)
            del entries[rng.randrange(len(entries))]
            entries = renumbered(entries)
        elif action < 0.85:  # the history cut short, or replaced
            entries = entries[: rng.randint(0, len(entries))]
        elif action < 0.9:  # a bulk append (a long pasted history)
            entries += [entry(len(entries) + k, f"-{step}") for k in range(CHUNK_SIZE + 7)]
        else:  # another worker's turn
            writer = LangGraphIndexStore(backing, namespace)
            entries = [*(writer.load(session) or []), entry(len(entries), f"-w{step}")]
        writer.save(session, entries)
        assert LangGraphIndexStore(backing, namespace).load(session) == entries
        assert mine.load(session) == entries
        manifest = backing.get(namespace, f"{session}#m")
        assert manifest is not None
        chunks = manifest.value["chunks"]
        stored = {k for k in keys(backing, namespace) if k.startswith(f"{session}#")}
        assert stored == {f"{session}#{n}" for n in range(len(chunks))} | {f"{session}#m"}
        for n in range(len(chunks)):
            item = backing.get(namespace, f"{session}#{n}")
            assert item is not None and 0 < len(item.value["entries"]) <= CHUNK_SIZE
    mine.delete(session)
    assert mine.load(session) is None


@contextmanager
def sqlite_store(path: str) -> Iterator[SqliteStore]:
    with SqliteStore.from_conn_string(path) as store:
        store.setup()
        yield store


@pytest.mark.parametrize("seed", range(4))
def test_layout_in_memory(seed: int) -> None:
    exercise(InMemoryStore(), ("librarian", "index"), seed, 60)


@pytest.mark.parametrize("seed", range(2))
def test_layout_on_sqlite(tmp_path: Any, seed: int) -> None:
    with sqlite_store(str(tmp_path / "index.sqlite")) as backing:
        exercise(backing, ("librarian", "index"), seed, 40)


@pytest.mark.postgres
@pytest.mark.parametrize("seed", range(2))
def test_layout_on_postgres(postgres_dsn: str, seed: int) -> None:
    with PostgresStore.from_conn_string(postgres_dsn) as backing:
        backing.setup()
        exercise(backing, ("librarian-test", f"layout-{uuid.uuid4().hex}"), seed, 40)


def overlapping_turns(backing: BaseStore, namespace: tuple[str, ...], size: int) -> None:
    """Two workers read the same index, then each saves its own turn (the later wins)."""
    LangGraphIndexStore(backing, namespace).save("t", [entry(n) for n in range(size)])
    first, second = LangGraphIndexStore(backing, namespace), LangGraphIndexStore(backing, namespace)
    ours, theirs = first.load("t"), second.load("t")
    first.save("t", [*ours, entry(size, "a"), entry(size + 1, "a")])
    second.save("t", [*theirs, entry(size, "b")])
    expected = [*theirs, entry(size, "b")]
    for reader in (LangGraphIndexStore(backing, namespace), first, second):
        assert reader.load("t") == expected


@pytest.mark.parametrize("size", [2, 127, 128, 130, 300])
def test_overlapping_turns_leave_a_readable_index(size: int) -> None:
    # A lost update (the earlier turn's entries are re-indexed later) is the worst an
    # overlap may cost: the stored index must stay readable by every worker.
    overlapping_turns(InMemoryStore(), ("librarian", "index"), size)


@pytest.mark.postgres
def test_overlapping_turns_on_postgres(postgres_dsn: str) -> None:
    with PostgresStore.from_conn_string(postgres_dsn) as backing:
        backing.setup()
        overlapping_turns(backing, ("librarian-test", f"overlap-{uuid.uuid4().hex}"), 130)


def edit_meets_append(backing: BaseStore, namespace: tuple[str, ...]) -> list[IndexEntry]:
    """One worker changes an entry of the first chunk (a summary finished in the
    background) while another appends a turn: each keeps the chunk it did not touch under
    the token it knew, so the manifest names a first chunk that was rewritten."""
    entries = [entry(n) for n in range(130)]
    LangGraphIndexStore(backing, namespace).save("t", entries)
    editor, appender = (
        LangGraphIndexStore(backing, namespace),
        LangGraphIndexStore(backing, namespace),
    )
    edited, appended = editor.load("t"), appender.load("t")
    edited[5] = entry(5, "summarized")
    editor.save("t", edited)
    appender.save("t", [*appended, entry(130)])
    return [*edited, entry(130)]


def test_an_edit_meeting_an_append_leaves_an_index_every_worker_reads() -> None:
    backing, namespace = InMemoryStore(), ("librarian", "index")
    merged = edit_meets_append(backing, namespace)
    # What is stored is both workers' changes: every reader gets it (no error), and the
    # next save by any worker writes a consistent layout again.
    reader = LangGraphIndexStore(backing, namespace)
    assert reader.load("t") == merged
    reader.save("t", [*merged, entry(131)])
    assert LangGraphIndexStore(backing, namespace).load("t") == [*merged, entry(131)]


def test_an_edit_meeting_an_append_async() -> None:
    import asyncio

    backing, namespace = InMemoryStore(), ("librarian", "index")
    merged = edit_meets_append(backing, namespace)
    assert asyncio.run(LangGraphIndexStore(backing, namespace).aload("t")) == merged


@pytest.mark.postgres
def test_an_edit_meeting_an_append_on_postgres(postgres_dsn: str) -> None:
    namespace = ("librarian-test", f"edit-{uuid.uuid4().hex}")
    with PostgresStore.from_conn_string(postgres_dsn) as backing:
        backing.setup()
        merged = edit_meets_append(backing, namespace)
        assert LangGraphIndexStore(backing, namespace).load("t") == merged
        LangGraphIndexStore(backing, namespace).delete("t")


def test_a_shrink_meeting_an_append_leaves_an_index_every_worker_reads() -> None:
    # One worker's history lost messages (the index shrinks to one chunk and its later
    # chunks are deleted) while another appends to the longer one it read.
    backing, namespace = InMemoryStore(), ("librarian", "index")
    LangGraphIndexStore(backing, namespace).save("t", [entry(n) for n in range(300)])
    shrinker, appender = (
        LangGraphIndexStore(backing, namespace),
        LangGraphIndexStore(backing, namespace),
    )
    shrunk, appended = shrinker.load("t"), appender.load("t")
    shrinker.save("t", renumbered(shrunk[:60] + shrunk[200:230]))
    appender.save("t", [*appended, entry(300)])
    reader = LangGraphIndexStore(backing, namespace)
    loaded = reader.load("t")  # no error: chunks as stored, the deleted one as empty
    assert loaded is not None and entry(300) in loaded
    reader.save("t", loaded)
    assert LangGraphIndexStore(backing, namespace).load("t") == loaded


def test_a_settled_load_repairs_the_manifest_for_every_worker(caplog: Any) -> None:
    # The appender's own cache matches the stale manifest it wrote: without a repair it
    # would never see the edit and every other worker would settle on every load.
    backing, namespace = InMemoryStore(), ("librarian", "index")
    merged = edit_meets_append(backing, namespace)
    appender_view = LangGraphIndexStore(backing, namespace)
    with caplog.at_level("WARNING", logger="langgraph_librarian"):
        assert LangGraphIndexStore(backing, namespace).load("t") == merged  # settles once
        assert caplog.text.count("differ from the manifest") == 1
        caplog.clear()
        for _ in range(3):
            assert LangGraphIndexStore(backing, namespace).load("t") == merged
            assert appender_view.load("t") == merged
    assert "differ from the manifest" not in caplog.text


def test_a_gone_chunk_is_named_again_by_the_next_save_even_if_nothing_changed() -> None:
    backing, namespace = InMemoryStore(), ("librarian", "index")
    entries = [entry(n) for n in range(300)]
    LangGraphIndexStore(backing, namespace).save("t", entries)
    backing.delete(namespace, "t#1")
    worker = LangGraphIndexStore(backing, namespace)
    loaded = worker.load("t")
    assert loaded == entries[:128] + entries[256:]
    worker.save("t", loaded)  # the same entries: the manifest is still written
    assert LangGraphIndexStore(backing, namespace).load("t") == loaded


def test_delete_removes_chunks_a_stale_manifest_no_longer_names() -> None:
    import asyncio

    for asynchronous in (False, True):
        backing, namespace = InMemoryStore(), ("librarian", "index")
        store = LangGraphIndexStore(backing, namespace)
        store.save("t", [entry(n) for n in range(300)])  # chunks t#0..t#2
        manifest = backing.get(namespace, "t#m").value
        # A stale manifest of two chunks won (its worker had read a shorter index).
        backing.put(namespace, "t#m", {**manifest, "chunks": manifest["chunks"][:2]})
        if asynchronous:
            asyncio.run(store.adelete("t"))
        else:
            store.delete("t")
        assert keys(backing, namespace) == set()


def test_a_corrupt_row_in_a_sqlite_store_is_an_index_store_error(tmp_path: Any) -> None:
    import sqlite3

    from langgraph_librarian import IndexStoreError

    path = str(tmp_path / "index.sqlite")
    entries = [
        IndexEntry(id=i, message_id=f"m{i}", role="human", summary=f"fact {i}") for i in range(5)
    ]
    with sqlite_store(path) as backing:
        LangGraphIndexStore(backing).save("thread-1", entries)
    with sqlite3.connect(path) as conn:
        conn.execute("update store set value = '{not json' where prefix like 'librarian%'")
    with sqlite_store(path) as backing:
        index_store = LangGraphIndexStore(backing)
        with pytest.raises(IndexStoreError, match="thread-1"):
            index_store.load("thread-1")


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_an_index_of_a_newer_format_is_refused_not_overwritten(mode: str) -> None:
    # Found by a newcomer trial: a manifest written by a newer release was read and
    # rewritten in this release's format, silently dropping what the newer one stored
    # (two releases share a store during a rolling upgrade). FileIndexStore refused it.
    from langgraph_librarian import IndexStoreError

    backend = InMemoryStore()
    LangGraphIndexStore(backend).save("s", [entry(0), entry(1)])
    key = ("librarian", "index")
    newer = {**backend.get(key, "s#m").value, "format": 99, "extra": "kept"}
    backend.put(key, "s#m", newer, index=False)
    fresh = LangGraphIndexStore(backend)  # another worker: no cached layout
    with pytest.raises(IndexStoreError, match="newer langgraph-librarian"):
        if mode == "async":
            await fresh.aload("s")
        else:
            fresh.load("s")
    with pytest.raises(IndexStoreError, match="does not overwrite"):
        if mode == "async":
            await LangGraphIndexStore(backend).asave("s", [entry(0)])
        else:
            LangGraphIndexStore(backend).save("s", [entry(0)])
    assert backend.get(key, "s#m").value == newer
    backend.put(key, "s#m", {**newer, "format": "2"}, index=False)
    with pytest.raises(IndexStoreError, match="corrupt index"):
        LangGraphIndexStore(backend).load("s")
