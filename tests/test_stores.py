from __future__ import annotations

import json
import os

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from langgraph_librarian import FileIndexStore, IndexEntry, IndexStoreError, LangGraphIndexStore
from langgraph_librarian.stores import BaseIndexStore

ENTRIES = [
    IndexEntry(id=0, role="human", summary="Budget is 12k", message_id="m0", content_hash="x"),
    IndexEntry(id=1, role="ai", summary="Noted", original_tokens=3),
]

HOSTILE_IDS = [
    "../../etc/passwd",
    "..",
    ".",
    "/abs/path",
    "C:\\Windows\\system32",
    "a/b\\c",
    "CON",
    "nul",
    "COM1",
    "x" * 5000,
    "名前🙂",
    "line\nbreak",
    "tab\tid",
    "User",
    "user",
    " ",
    "a:b*?<>|",
    "\x00nul-byte",
    "~sha256:deadbeef",
]


def test_protocol_is_runtime_checkable(tmp_path):
    assert isinstance(FileIndexStore(tmp_path), BaseIndexStore)
    assert isinstance(LangGraphIndexStore(InMemoryStore()), BaseIndexStore)


def test_round_trip_and_missing(tmp_path):
    store = FileIndexStore(tmp_path)
    assert store.load("nobody") is None
    store.save("s1", ENTRIES)
    assert store.load("s1") == ENTRIES
    store.delete("s1")
    assert store.load("s1") is None
    store.delete("s1")  # deleting twice is fine


def test_hostile_ids_stay_inside_and_distinct(tmp_path):
    root = tmp_path / "idx"
    store = FileIndexStore(root)
    for n, session in enumerate(HOSTILE_IDS):
        store.save(session, [IndexEntry(id=0, role="human", summary=f"s{n}")])
    files = sorted(root.iterdir())
    assert len(files) == len(HOSTILE_IDS)
    for path in files:
        assert path.parent == root
        assert len(path.name) < 120
    for n, session in enumerate(HOSTILE_IDS):
        assert store.load(session)[0].summary == f"s{n}"
    assert not (tmp_path / "etc").exists()


def test_empty_session_id_is_rejected(tmp_path):
    with pytest.raises(ValueError):
        FileIndexStore(tmp_path).save("", ENTRIES)


def _entry(**changes):
    good = {"id": 0, "role": "human", "summary": "s", "message_id": "m", "content_hash": "h"}
    return json.dumps({"version": 1, "session_id": "s", "entries": [{**good, **changes}]})


CORRUPT_FILES = {
    "empty": b"",
    "not json": b"{not json",
    "truncated": _entry().encode()[:-7],
    "stray byte": _entry().encode().replace(b'"s"', b'"\xff"', 1),
    "utf-8 BOM": b"\xef\xbb\xbf" + _entry().encode(),
    "array root": b"[]",
    "null root": b"null",
    "no entries": json.dumps({"version": 1, "session_id": "s"}).encode(),
    "entries not a list": json.dumps({"version": 1, "session_id": "s", "entries": {}}).encode(),
    "entry not a dict": json.dumps({"version": 1, "session_id": "s", "entries": [1]}).encode(),
    "missing fields": json.dumps(
        {"version": 1, "session_id": "s", "entries": [{"id": 0}]}
    ).encode(),
    "id is a string": _entry(id="1").encode(),
    "id is a bool": _entry(id=True).encode(),
    "negative id": _entry(id=-1).encode(),
    "summary is a number": _entry(summary=5).encode(),
    "tokens is a string": _entry(original_tokens="3").encode(),
    "message_id is a number": _entry(message_id=7).encode(),
    "vector is a list": _entry(vector=[0.1]).encode(),
    "unknown status": _entry(status="weird").encode(),
    "deeply nested": b"[" * 100_000 + b"]" * 100_000,
    "future version": json.dumps({"version": 99, "session_id": "s", "entries": []}).encode(),
    "another session": json.dumps({"version": 1, "session_id": "t", "entries": []}).encode(),
}


@pytest.mark.parametrize("kind", sorted(CORRUPT_FILES))
def test_every_kind_of_corrupt_file_raises_index_store_error(tmp_path, kind):
    store = FileIndexStore(tmp_path)
    path = store.path_for("s")
    path.write_bytes(CORRUPT_FILES[kind])
    with pytest.raises(IndexStoreError) as info:
        store.load("s")
    assert str(path) in str(info.value)
    assert path.read_bytes() == CORRUPT_FILES[kind]  # nothing was overwritten


def test_unreadable_path_raises_index_store_error(tmp_path):
    store = FileIndexStore(tmp_path)
    store.path_for("s").mkdir()  # a directory where the file should be
    with pytest.raises(IndexStoreError, match="cannot read"):
        store.load("s")


def test_surrogate_and_nul_session_ids_round_trip(tmp_path):
    store = FileIndexStore(tmp_path)
    for session in ["lone \udc80 surrogate", "\ud800", "nul\x00byte"]:
        store.save(session, ENTRIES)
        assert store.load(session) == ENTRIES
    assert len(list(tmp_path.glob("*.librarian-index.json"))) == 3


def test_stale_temp_files_from_a_crash_are_removed(tmp_path):
    stale = tmp_path / ".tmp-crashed.librarian-index.json"
    fresh = tmp_path / ".tmp-live-writer.librarian-index.json"
    stale.write_text("{half")
    fresh.write_text("{half")
    hour_ago = os.path.getmtime(stale) - 3600
    os.utime(stale, (hour_ago, hour_ago))
    FileIndexStore(tmp_path).save("s", ENTRIES)
    assert not stale.exists()  # left by a writer that died mid-write
    assert fresh.exists()  # may belong to a writer still running


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    store = FileIndexStore(tmp_path)
    store.save("s", ENTRIES)

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        store.save("s", [])
    monkeypatch.undo()
    assert store.load("s") == ENTRIES
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []


def test_langgraph_store_adapter_sync_and_async():
    backing = InMemoryStore()
    store = LangGraphIndexStore(backing)
    assert store.load("t") is None
    store.save("t", ENTRIES)
    assert store.load("t") == ENTRIES
    assert LangGraphIndexStore(backing).load("t") == ENTRIES  # another process, no cache
    item = backing.get(("librarian", "index"), "t#0")
    assert item is not None and item.value["entries"][0]["summary"] == "Budget is 12k"
    store.delete("t")
    assert store.load("t") is None
    assert backing.search(("librarian", "index")) == []  # nothing left behind


class CountingStore(InMemoryStore):
    """Counts the items each batch writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[list[str]] = []

    def batch(self, ops):
        ops = list(ops)
        puts = [op.key for op in ops if type(op).__name__ == "PutOp"]
        if puts:
            self.writes.append(puts)
        return super().batch(ops)


def many(n: int, start: int = 0) -> list[IndexEntry]:
    return [
        IndexEntry(id=i, role="human", summary=f"s{i}", message_id=f"m{i}", content_hash=f"h{i}")
        for i in range(start, start + n)
    ]


def test_a_turn_rewrites_only_the_last_chunk():
    from langgraph_librarian.stores.langgraph_store import CHUNK_SIZE

    backing = CountingStore()
    store = LangGraphIndexStore(backing)
    entries = many(3 * CHUNK_SIZE + 10)
    store.save("t", entries)
    loaded = store.load("t")
    store.save("t", [*loaded, *many(2, start=len(loaded))])  # one turn later
    assert backing.writes[-1] == ["t#3", "t#m"]
    # A fresh process reads everything and sees the same index.
    assert LangGraphIndexStore(backing).load("t") == [*entries, *many(2, start=len(entries))]


def test_a_turn_on_a_short_index_rewrites_a_few_entries_not_all_of_them():
    """Past the last full chunk the index is cut in items of TAIL_SIZE: a turn on a
    100-entry index rewrites the item its entries land in, not all 100 entries."""
    from langgraph_librarian.stores.langgraph_store import CHUNK_SIZE, TAIL_SIZE

    backing = CountingStore()
    store = LangGraphIndexStore(backing)
    entries = many(100)
    store.save("t", entries)
    entries = [*entries, *many(2, start=100)]
    store.save("t", entries)
    (last, manifest) = backing.writes[-1]
    assert manifest == "t#m"
    written = backing.get(("librarian", "index"), last).value["entries"]
    assert 0 < len(written) <= TAIL_SIZE
    # Filling the tail to a full chunk makes it one item again (and drops the small ones).
    entries = [*entries, *many(CHUNK_SIZE - len(entries), start=len(entries))]
    store.save("t", entries)
    keys = sorted(item.key for item in backing.search(("librarian", "index"), limit=100))
    assert keys == ["t#0", "t#m"]
    assert LangGraphIndexStore(backing).load("t") == entries


def test_saving_what_was_just_loaded_writes_nothing_and_reads_no_chunk():
    backing = CountingStore()
    store = LangGraphIndexStore(backing)
    store.save("t", many(5))
    writes = len(backing.writes)
    loaded = store.load("t")
    store.save("t", loaded)  # an index step with nothing new to index
    assert len(backing.writes) == writes
    # Another process (no cache) that saves the same content still writes it.
    other = LangGraphIndexStore(backing)
    other.save("t", many(5))
    assert len(backing.writes) == writes + 1
    # The first process now sees the other's chunks by token, and reads them again.
    assert store.load("t") == many(5)


def test_shrinking_index_deletes_stale_chunks_even_from_a_new_process():
    from langgraph_librarian.stores.langgraph_store import CHUNK_SIZE

    backing = InMemoryStore()
    LangGraphIndexStore(backing).save("t", many(2 * CHUNK_SIZE + 1))
    LangGraphIndexStore(backing).save("t", many(3))
    keys = sorted(item.key for item in backing.search(("librarian", "index"), limit=100))
    assert keys == ["t#0", "t#m"]
    assert LangGraphIndexStore(backing).load("t") == many(3)


def test_another_workers_write_is_seen():
    backing = InMemoryStore()
    mine, theirs = LangGraphIndexStore(backing), LangGraphIndexStore(backing)
    mine.save("t", many(5))
    assert mine.load("t") == many(5)
    theirs.save("t", many(7))
    assert mine.load("t") == many(7)  # the cached chunk's token no longer matches


def test_index_written_by_0_1_is_read_and_converted():
    backing = InMemoryStore()
    backing.put(("librarian", "index"), "t", {"entries": [e.to_dict() for e in ENTRIES]})
    store = LangGraphIndexStore(backing)
    assert store.load("t") == ENTRIES
    store.save("t", ENTRIES)
    assert backing.get(("librarian", "index"), "t") is None
    assert LangGraphIndexStore(backing).load("t") == ENTRIES


async def test_langgraph_store_async():
    store = LangGraphIndexStore(InMemoryStore(), namespace=("app", "idx"))
    await store.asave("t", ENTRIES)
    assert await store.aload("t") == ENTRIES
    await store.adelete("t")
    assert await store.aload("t") is None


async def test_a_sync_only_sqlite_store_serves_the_async_methods(tmp_path):
    # SqliteStore (the README's store) raises NotImplementedError from every async
    # method; ainvoke of a Librarian graph or middleware went through them and failed.
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.sqlite import SqliteStore

    from langgraph_librarian import LibrarianConfig, create_librarian_graph

    with SqliteStore.from_conn_string(str(tmp_path / "chatbot.db")) as backend:
        backend.setup()
        store = LangGraphIndexStore(backend, namespace=("app", "idx"))
        await store.asave("t", ENTRIES)
        assert await store.aload("t") == ENTRIES
        assert store.load("t") == ENTRIES
        await store.adelete("t")
        assert await store.aload("t") is None

        graph = create_librarian_graph(
            lambda state: {"messages": [AIMessage("Noted.")]},
            LibrarianConfig(store=backend),
            checkpointer=InMemorySaver(),
        )
        cfg = {"configurable": {"thread_id": "g"}}
        await graph.ainvoke({"messages": [HumanMessage("The venue is Porto.")]}, cfg)
        out = await graph.ainvoke({"messages": [HumanMessage("Where is the venue?")]}, cfg)
        assert not out["librarian_metadata"].get("selection_fallback")
        saved = LangGraphIndexStore(backend).load("g")
        assert saved is not None and len(saved) == 4


def test_langgraph_store_hostile_ids_distinct():
    store = LangGraphIndexStore(InMemoryStore())
    for n, session in enumerate(HOSTILE_IDS):
        store.save(session, [IndexEntry(id=0, role="human", summary=f"s{n}")])
    for n, session in enumerate(HOSTILE_IDS):
        assert store.load(session)[0].summary == f"s{n}"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("t", {"entries": [{"nope": 1}]}),  # a 0.1 item
        ("t#m", {"chunks": "not a list"}),
        ("t#m", {"chunks": [1, 2]}),
    ],
)
def test_langgraph_store_corrupt_value(key, value):
    backing = InMemoryStore()
    backing.put(("librarian", "index"), key, value)
    with pytest.raises(IndexStoreError):
        LangGraphIndexStore(backing).load("t")


def test_langgraph_store_corrupt_chunk():
    backing = InMemoryStore()
    LangGraphIndexStore(backing).save("t", ENTRIES)
    chunk = backing.get(("librarian", "index"), "t#0")
    backing.put(("librarian", "index"), "t#0", {**chunk.value, "entries": [{"id": "x"}]})
    with pytest.raises(IndexStoreError):
        LangGraphIndexStore(backing).load("t")
    backing.put(("librarian", "index"), "t#0", {"entries": []})  # no token at all
    with pytest.raises(IndexStoreError, match="no token"):
        LangGraphIndexStore(backing).load("t")


def test_langgraph_store_missing_chunk_is_indexed_again(caplog):
    backing = InMemoryStore()
    entries = [
        IndexEntry(id=n, role="human", summary=f"s{n}", message_id=f"m{n}", content_hash=f"h{n}")
        for n in range(300)
    ]
    LangGraphIndexStore(backing).save("t", entries)
    backing.delete(("librarian", "index"), "t#1")  # a chunk the manifest names is gone
    store = LangGraphIndexStore(backing)
    with caplog.at_level("WARNING", logger="langgraph_librarian"):
        loaded = store.load("t")
    # Its entries are gone (reconciliation indexes their messages again); the rest stays.
    assert loaded == entries[:128] + entries[256:]
    assert "1 chunk(s) differ from the manifest or are gone" in caplog.text
    store.save("t", entries)  # the next turn's index: the store is whole again
    assert LangGraphIndexStore(backing).load("t") == entries


def test_entry_from_dict_validation():
    assert IndexEntry.from_dict(ENTRIES[0].to_dict()) == ENTRIES[0]
    assert IndexEntry.from_dict({**ENTRIES[0].to_dict(), "future_field": 1}) == ENTRIES[0]
    for bad in [
        {"id": "1", "role": "h", "summary": "s"},
        {"role": "h"},
        "str",
        {"id": 1, "role": "h", "summary": "s", "status": "weird"},
    ]:
        with pytest.raises(ValueError):
            IndexEntry.from_dict(bad)


class CountingIndexStore:
    """A dict-backed index store that counts its reads and writes."""

    def __init__(self) -> None:
        self.data: dict[str, list[IndexEntry]] = {}
        self.loads = 0
        self.saves = 0

    def load(self, session_id: str) -> list[IndexEntry] | None:
        self.loads += 1
        return self.data.get(session_id)

    def save(self, session_id: str, entries: list[IndexEntry]) -> None:
        self.saves += 1
        self.data[session_id] = list(entries)

    def delete(self, session_id: str) -> None:
        self.data.pop(session_id, None)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_store_backed_turn_reads_the_index_once(mode):
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import MemorySaver

    from langgraph_librarian import LibrarianConfig, create_librarian_graph

    store = CountingIndexStore()
    graph = create_librarian_graph(
        lambda state: {"messages": [AIMessage("Noted.")]},
        LibrarianConfig(always_include_recent_turns=1, embeddings=None, store=store),
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "t1"}}
    for turn in range(4):
        before = (store.loads, store.saves)
        message = HumanMessage(f"Turn {turn}: the venue for event {turn} is hall {turn}.")
        if mode == "sync":
            graph.invoke({"messages": [message]}, cfg)
        else:
            await graph.ainvoke({"messages": [message]}, cfg)
        # Selection reads the index; indexing reuses that read, then writes once.
        assert (store.loads - before[0], store.saves - before[1]) == (1, 1)
    assert len(store.data["t1"]) == 8
    # Indexing alone (no selection this turn in this process) still reads the store.
    from langgraph_librarian import create_index_node

    index = create_index_node(LibrarianConfig(embeddings=None, store=store))
    loads = store.loads
    state = graph.get_state(cfg).values
    index(state, cfg)
    assert store.loads == loads + 1


def test_background_indexing_keeps_no_read_for_an_indexing_step():
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import MemorySaver

    from langgraph_librarian import (
        LibrarianConfig,
        create_librarian_graph,
        wait_for_background_indexing,
    )
    from langgraph_librarian._librarian import turn

    store = CountingIndexStore()
    config = LibrarianConfig(embeddings=None, store=store, background_indexing=True)
    graph = create_librarian_graph(
        lambda state: {"messages": [AIMessage("Noted.")]}, config, checkpointer=MemorySaver()
    )
    held = len(turn._READ_THIS_TURN)
    for n in range(3):
        cfg = {"configurable": {"thread_id": f"bg-{n}"}}
        graph.invoke({"messages": [HumanMessage(f"The venue is hall {n}.")]}, cfg)
        graph.invoke({"messages": [HumanMessage("Where is the venue?")]}, cfg)
    assert wait_for_background_indexing(timeout=30)
    # The worker reads the store itself: nothing is parked for an indexing step.
    assert len(turn._READ_THIS_TURN) == held


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_chunk_tokens_differ_in_a_forked_worker():
    # A forked worker must not repeat its parent's token sequence: a chunk it rewrites
    # would carry the token the parent cached for its own chunk, and be served stale.
    from langgraph_librarian.stores.langgraph_store import _new_token

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.write(write, _new_token().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    theirs = os.read(read, 64).decode()
    os.close(read)
    os.close(write)
    assert len(theirs) == 16 and theirs != _new_token()


class _Failing(InMemoryStore):
    """A store whose batches of the chosen kind (``fail``: ``PutOp``, ``GetOp``) raise
    ``error``; with ``once``, only the next one (a dropped connection)."""

    def __init__(self, error: Exception, *, once: bool) -> None:
        super().__init__()
        self.fail: type | None = None
        self.error, self.once = error, once

    def _maybe_fail(self, ops) -> None:
        if self.fail is not None and any(isinstance(op, self.fail) for op in ops):
            if self.once:
                self.fail = None
            raise self.error

    def batch(self, ops):
        ops = list(ops)
        self._maybe_fail(ops)
        return super().batch(ops)

    async def abatch(self, ops):
        ops = list(ops)
        self._maybe_fail(ops)
        return await super().abatch(ops)


@pytest.mark.parametrize("kind", ["put", "get"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_store_blip_does_not_fail_the_turn_and_the_index_catches_up(kind, mode):
    # One dropped connection while the index is read or saved: the reply was already
    # checkpointed, so failing the turn lost it to the caller (and a retry asked twice).
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.base import GetOp, PutOp

    from langgraph_librarian import LibrarianConfig, create_librarian_graph

    backend = _Failing(ConnectionError("server closed the connection unexpectedly"), once=True)
    graph = create_librarian_graph(
        lambda state: {"messages": [AIMessage("Noted.")]},
        LibrarianConfig(store=backend),
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": f"blip-{kind}-{mode}"}}

    async def turn(text: str) -> dict:
        payload = {"messages": [HumanMessage(text)]}
        return await graph.ainvoke(payload, cfg) if mode == "async" else graph.invoke(payload, cfg)

    await turn("The budget is 12,000 dollars.")
    backend.fail = PutOp if kind == "put" else GetOp
    out = await turn("Actually the budget is 15,000 dollars.")
    assert out["messages"][-1].content == "Noted."
    assert "catches up" in out["librarian_metadata"]["store_error"]
    await turn("What is the budget?")
    saved = LangGraphIndexStore(backend).load(cfg["configurable"]["thread_id"])
    assert saved is not None and len(saved) == 6  # every message indexed again


class _QuotaExceeded(Exception):
    """A backend's own error that says nothing about being transient (a quota, a
    permission, a custom backend's bug)."""


@pytest.mark.parametrize("face", ["graph", "middleware"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_store_refusing_writes_after_the_reply_does_not_hide_the_reply(face, mode):
    # Found by a newcomer trial: an error the store raised while the index was saved
    # after the reply (not a dropped connection) left invoke() raising with the reply
    # already checkpointed; the caller never saw it and a retry asked twice.
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_librarian import LibrarianConfig, LibrarianMiddleware, create_librarian_graph

    backend = _Failing(_QuotaExceeded("disk quota exceeded"), once=False)
    config = LibrarianConfig(store=backend)
    if face == "graph":
        app = create_librarian_graph(
            lambda state: {"messages": [AIMessage("Noted.")]},
            config,
            checkpointer=InMemorySaver(),
        )
    else:
        app = create_agent(
            GenericFakeChatModel(messages=iter(["Noted."] * 5)),
            tools=[],
            middleware=[LibrarianMiddleware(config)],
            checkpointer=InMemorySaver(),
        )
    thread = f"refusing-{face}-{mode}"
    cfg = {"configurable": {"thread_id": thread}}

    async def turn(text: str) -> dict:
        payload = {"messages": [HumanMessage(text)]}
        return await app.ainvoke(payload, cfg) if mode == "async" else app.invoke(payload, cfg)

    await turn("The budget is 12,000 dollars.")
    backend.fail = PutOp  # reads still work
    out = await turn("Actually the budget is 15,000 dollars.")
    assert out["messages"][-1].content == "Noted."
    assert len(out["messages"]) == 4
    error = out["librarian_metadata"]["store_error"]
    assert "after the reply" in error and "_QuotaExceeded: disk quota exceeded" in error
    backend.fail = None
    await turn("What is the budget?")
    saved = LangGraphIndexStore(backend).load(thread)
    assert saved is not None and len(saved) == 6  # the refused turn indexed again


def test_a_corrupt_index_still_fails_the_turn_loudly():
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_librarian import LibrarianConfig, create_librarian_graph

    backend = InMemoryStore()
    graph = create_librarian_graph(
        lambda state: {"messages": [AIMessage("Noted.")]},
        LibrarianConfig(store=backend),
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "corrupt-turn"}}
    graph.invoke({"messages": [HumanMessage("The budget is 12,000 dollars.")]}, cfg)
    backend.put(("librarian", "index"), "corrupt-turn#m", {"format": 2, "chunks": 7})
    with pytest.raises(IndexStoreError):
        graph.invoke({"messages": [HumanMessage("What is the budget?")]}, cfg)


def test_background_jobs_of_one_thread_id_in_two_stores_stay_apart():
    # Two apps in one process keep the same thread id in different stores: background
    # indexing shared one record per thread id, so one store's history went to the
    # other's job and the first store's index stayed behind.
    import threading

    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import MemorySaver

    from fakes import ScriptedChatModel
    from langgraph_librarian import (
        LibrarianConfig,
        create_librarian_graph,
        wait_for_background_indexing,
    )

    text = "We compared venues, prices and dates; Dana owns the decision. " * 6
    apps = []
    for name in "AB":
        backend = InMemoryStore()
        config = LibrarianConfig(
            store=backend,
            background_indexing=True,
            indexer_model=ScriptedChatModel(script=f"Summary {name}.", latency=0.2),
        )
        graph = create_librarian_graph(
            lambda state: {"messages": [AIMessage("Noted.")]},
            config,
            checkpointer=MemorySaver(),
            store=backend,
        )
        apps.append((name, backend, graph))
    cfg = {"configurable": {"thread_id": "user-1"}}
    for turn in range(3):
        threads = [
            threading.Thread(
                target=graph.invoke,
                args=({"messages": [HumanMessage(f"{name} turn {turn}: {text}")]}, cfg),
            )
            for name, _, graph in apps
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert wait_for_background_indexing(30)
    for _, backend, graph in apps:
        messages = graph.get_state(cfg).values["messages"]
        saved = LangGraphIndexStore(backend).load("user-1")
        assert saved is not None
        assert [e.message_id for e in saved] == [m.id for m in messages]
