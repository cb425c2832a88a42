from __future__ import annotations

import json
import os

import pytest
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


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "",
        "[]",
        json.dumps({"version": 1, "session_id": "s", "entries": [{"id": "x"}]}),
        json.dumps({"version": 1, "session_id": "other", "entries": []}),
    ],
)
def test_corrupt_file_raises_clear_error(tmp_path, content):
    store = FileIndexStore(tmp_path)
    store.path_for("s").write_text(content, encoding="utf-8")
    with pytest.raises(IndexStoreError) as info:
        store.load("s")
    assert str(store.path_for("s")) in str(info.value) or "another session" in str(info.value)


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
    item = backing.get(("librarian", "index"), "t")
    assert item is not None and item.value["entries"][0]["summary"] == "Budget is 12k"
    store.delete("t")
    assert store.load("t") is None


async def test_langgraph_store_async():
    store = LangGraphIndexStore(InMemoryStore(), namespace=("app", "idx"))
    await store.asave("t", ENTRIES)
    assert await store.aload("t") == ENTRIES
    await store.adelete("t")
    assert await store.aload("t") is None


def test_langgraph_store_hostile_ids_distinct():
    store = LangGraphIndexStore(InMemoryStore())
    for n, session in enumerate(HOSTILE_IDS):
        store.save(session, [IndexEntry(id=0, role="human", summary=f"s{n}")])
    for n, session in enumerate(HOSTILE_IDS):
        assert store.load(session)[0].summary == f"s{n}"


def test_langgraph_store_corrupt_value():
    backing = InMemoryStore()
    backing.put(("librarian", "index"), "t", {"entries": [{"nope": 1}]})
    with pytest.raises(IndexStoreError):
        LangGraphIndexStore(backing).load("t")


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
