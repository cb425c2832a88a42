"""Thread ids in scope memory: odd and hostile ids stay distinct threads, on real stores.

Stores cannot hold NUL (PostgreSQL) or lone surrogates (UTF-8), so records keep such
ids cleaned (U+FFFD in their place) and, next to them, the exact id escaped. Records
written before the exact id was kept (the same format without it) still read.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import BaseStore, SearchOp
from langgraph.store.memory import InMemoryStore

from fakes import ScriptedChatModel
from helpers import open_store
from langgraph_librarian.recall import (
    RecallMiddleware,
    RecallScope,
    ScopeMemory,
    _capture,
)
from langgraph_librarian.recall._middleware import recall_report
from langgraph_librarian.recall._records import MemoryRecord, clean_text, stable_key
from langgraph_librarian.recall._render import render_evidence
from langgraph_librarian.recall._scope import RecallConfigError
from langgraph_librarian.recall._turn import recall_for_turn
from test_recall_memory import evidence_lines
from test_recall_stores import fresh_memory

SCOPE = "user:1"
ODD = ["a\x00b", "a\ud800b", "\x00", "\udfff"]
"""Thread ids a store cannot hold as they are; each has a look-alike, its cleaned form."""


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_store(request: Any, tmp_path: Any) -> Iterator[BaseStore]:
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None
    with open_store(request.param, tmp_path, dsn) as store:
        yield store


def cat_thread() -> list[Any]:
    return [
        HumanMessage("My cat is called Miso.", id="h1"),
        AIMessage("Miso is a lovely name for a cat.", id="a1"),
    ]


def dog_thread() -> list[Any]:
    return [
        HumanMessage("My dog is called Rex.", id="h2"),
        AIMessage("Rex is a fine name for a dog.", id="a2"),
    ]


def ids(records: Any) -> list[str | None]:
    return [r.message_id for r in records]


@pytest.mark.parametrize("odd", ODD)
def test_a_thread_and_its_cleaned_look_alike_are_two_threads(any_store, odd):
    # Records kept the thread id cleaned and compared it cleaned: thread "a\x00b" and
    # thread "a\ufffdb" were one thread (each read, excluded and forgot the other's turns).
    memory = fresh_memory(any_store)
    twin = clean_text(odd)
    memory.capture(SCOPE, cat_thread(), thread_id=odd)
    memory.capture(SCOPE, dog_thread(), thread_id=twin)
    assert ids(memory.thread_records(SCOPE, odd)) == ["h1", "a1"]
    assert ids(memory.thread_records(SCOPE, twin)) == ["h2", "a2"]
    assert {r.thread_id for r in memory.records(SCOPE)} == {odd, twin}
    # The odd thread asking about the dog gets the other thread's turns as evidence.
    result = memory.recall(SCOPE, "What is my dog called?", exclude_thread_id=odd)
    assert result.status == "recalled" and "Rex" in result.text
    assert "Miso" not in result.text
    assert memory.forget_thread(SCOPE, odd) == 2
    assert ids(memory.records(SCOPE)) == ["h2", "a2"]


@pytest.mark.parametrize("odd", ODD[:2])
def test_a_thread_mirroring_an_edit_keeps_its_look_alike_thread(any_store, odd):
    # The odd thread's reconciliation (a message deleted from it) read the look-alike
    # thread's records as its own and deleted them: they were not in its history.
    memory = fresh_memory(any_store)
    twin = clean_text(odd)
    memory.capture(SCOPE, cat_thread(), thread_id=odd)
    memory.capture(SCOPE, dog_thread(), thread_id=twin)
    later = [cat_thread()[1], HumanMessage("It likes tuna.", id="h3")]
    memory.capture(SCOPE, later, thread_id=odd)
    assert ids(memory.thread_records(SCOPE, odd)) == ["a1", "h3"]
    assert ids(memory.thread_records(SCOPE, twin)) == ["h2", "a2"]


async def test_async_capture_keeps_look_alike_threads_apart(any_store):
    memory = fresh_memory(any_store)
    await memory.acapture(SCOPE, cat_thread(), thread_id="t\x00")
    await memory.acapture(SCOPE, dog_thread(), thread_id="t\ufffd")
    assert ids(await memory.athread_records(SCOPE, "t\x00")) == ["h1", "a1"]
    assert await memory.aforget_thread(SCOPE, "t\ufffd") == 2
    assert ids(await memory.arecords(SCOPE)) == ["h1", "a1"]


def test_message_ids_that_differ_only_by_an_unstorable_character_stay_apart(any_store):
    # Excluding the messages the model already has went by cleaned message ids: a
    # message "m\x00" excluded another thread's message "m\ufffd".
    memory = fresh_memory(any_store)
    memory.capture(SCOPE, [HumanMessage("My dog is called Rex.", id="m\ufffd")], thread_id="B")
    result = memory.recall(SCOPE, "What is my dog called?", exclude_message_ids={"m\x00"})
    assert result.status == "recalled" and "Rex" in result.text
    (record,) = memory.records(SCOPE)
    assert record.message_id == "m\ufffd"


# -- records written before the exact ids were kept ----------------------------------------


def old_record(thread_id: str | None, message_id: str, text: str, seq: int) -> dict[str, Any]:
    """A captured record as the format without exact ids wrote it: ids cleaned."""
    return {
        "v": 1,
        "text": text,
        "summary": text,
        "role": "human",
        "kind": "turn",
        "thread_id": None if thread_id is None else clean_text(thread_id),
        "message_id": clean_text(message_id),
        "created_at": f"2025-01-01T00:00:0{seq}.000000Z",
        "seq": seq,
        "name": None,
        "status": "verbatim",
        "content_hash": stable_key("text", text),
        "vector": None,
        "original_tokens": 8,
    }


def put_old(memory: ScopeMemory, thread_id: str, message_id: str, text: str, seq: int) -> str:
    key = stable_key("turn", thread_id, f"id:{message_id}")
    value = old_record(thread_id, message_id, text, seq)
    memory.store.put((*memory.scope_namespace(SCOPE), "memory"), key, value, index=False)
    return key


def test_records_in_the_old_format_still_read(any_store):
    memory = fresh_memory(any_store)
    put_old(memory, "t-1", "h1", "My cat is called Miso.", 0)
    put_old(memory, "t-1", "a1", "Miso is a lovely name for a cat.", 1)
    (first, second) = memory.records(SCOPE)
    assert (first.thread_id, first.message_id, second.message_id) == ("t-1", "h1", "a1")
    assert ids(memory.thread_records(SCOPE, "t-1")) == ["h1", "a1"]
    result = memory.recall(SCOPE, "What is my cat called?")
    assert result.status == "recalled" and "Miso" in result.text
    assert memory.recall(SCOPE, "What is my cat called?", exclude_thread_id="t-1").status == (
        "empty"
    )
    # The thread's next capture rewrites its records in place (same keys), no copies.
    memory.capture(SCOPE, [HumanMessage("My cat is called Miso.", id="h1")], thread_id="t-1")
    assert sorted(ids(memory.records(SCOPE))) == ["a1", "h1"]
    assert memory.forget_thread(SCOPE, "t-1") == 2
    assert memory.records(SCOPE) == []


def test_old_records_of_look_alike_threads_go_to_the_thread_that_wrote_them(any_store):
    # The old format kept "a\x00b" as "a\ufffdb": which thread wrote such a record is
    # told by its key (the hash of the exact thread id and the message id).
    memory = fresh_memory(any_store)
    put_old(memory, "a\x00b", "h1", "My cat is called Miso.", 0)
    put_old(memory, "a\ufffdb", "h2", "My dog is called Rex.", 0)
    assert ids(memory.thread_records(SCOPE, "a\x00b")) == ["h1"]
    assert ids(memory.thread_records(SCOPE, "a\ufffdb")) == ["h2"]
    assert memory.forget_thread(SCOPE, "a\x00b") == 1
    assert ids(memory.records(SCOPE)) == ["h2"]
    assert memory.forget_thread(SCOPE, "a\ufffdb") == 1
    assert memory.records(SCOPE) == []


# -- a missing thread id, an empty one, one that is not a string ---------------------------


def thread_calls(memory: ScopeMemory, thread: Any) -> dict[str, Any]:
    """Every ScopeMemory call that takes a thread id, with ``thread``."""
    history = cat_thread()
    return {
        "capture": lambda: memory.capture(SCOPE, history, thread_id=thread),
        "remember": lambda: memory.remember(SCOPE, "Likes tea.", thread_id=thread),
        "thread_records": lambda: memory.thread_records(SCOPE, thread),
        "forget_thread": lambda: memory.forget_thread(SCOPE, thread),
        "recall": lambda: memory.recall(SCOPE, "Any cat?", exclude_thread_id=thread),
    }


def athread_calls(memory: ScopeMemory, thread: Any) -> dict[str, Any]:
    history = cat_thread()
    return {
        "acapture": lambda: memory.acapture(SCOPE, history, thread_id=thread),
        "aremember": lambda: memory.aremember(SCOPE, "Likes tea.", thread_id=thread),
        "athread_records": lambda: memory.athread_records(SCOPE, thread),
        "aforget_thread": lambda: memory.aforget_thread(SCOPE, thread),
        "arecall": lambda: memory.arecall(SCOPE, "Any cat?", exclude_thread_id=thread),
    }


NAMES = sorted(thread_calls(ScopeMemory(InMemoryStore()), None))
ANAMES = sorted(athread_calls(ScopeMemory(InMemoryStore()), None))


@pytest.mark.parametrize("name", NAMES)
def test_an_empty_thread_id_is_refused(name):
    # Thread "" and thread None (no thread) shared one capture cursor and one key per
    # message: two conversations, one of them captured "without thread", were one
    # thread (the other's messages overwritten, its cursor moved). A run's empty thread
    # id already means "no thread" (as in the Librarian's own lookup); one passed to
    # ScopeMemory itself is a mistake, said as such.
    memory = ScopeMemory(InMemoryStore())
    with pytest.raises(RecallConfigError, match="thread_id must be a non-empty id or None"):
        thread_calls(memory, "")[name]()
    assert memory.records(SCOPE) == []


@pytest.mark.parametrize("name", ANAMES)
async def test_async_calls_refuse_an_empty_thread_id(name):
    memory = ScopeMemory(InMemoryStore())
    with pytest.raises(RecallConfigError, match="thread_id must be a non-empty id or None"):
        await athread_calls(memory, "")[name]()


# LangGraph reads a thread id as str(thread_id): a run with thread_id=1 and one with "1"
# continue one checkpointed thread (and a uuid.UUID is its text). Scoped recall reads
# them the same way, in a run and in every ScopeMemory call.
LOOK_ALIKES = [(1, "1"), (uuid.UUID(int=7), str(uuid.UUID(int=7)))]


@pytest.mark.parametrize(("given", "text"), LOOK_ALIKES, ids=["int", "uuid"])
def test_a_thread_id_that_is_not_a_string_is_its_text_as_in_langgraph(given, text):
    memory = ScopeMemory(InMemoryStore())
    assert memory.capture(SCOPE, cat_thread(), thread_id=given) == 2
    assert memory.capture(SCOPE, cat_thread(), thread_id=text) == 0  # one cursor
    assert {r.thread_id for r in memory.records(SCOPE)} == {text}
    assert ids(memory.thread_records(SCOPE, given)) == ids(memory.thread_records(SCOPE, text))
    assert memory.remember(SCOPE, "Likes tea.", thread_id=given).thread_id == text
    assert "Miso" in memory.recall(SCOPE, "What is my cat called?").text
    # The asking thread's own records are left out, whichever form its id takes.
    assert memory.recall(SCOPE, "What is my cat called?", exclude_thread_id=given).status == (
        "empty"
    )
    assert memory.forget_thread(SCOPE, given) == 2
    assert [r.kind for r in memory.records(SCOPE)] == ["explicit"]


@pytest.mark.parametrize(("given", "text"), LOOK_ALIKES, ids=["int", "uuid"])
async def test_async_calls_read_a_thread_id_as_its_text(given, text):
    memory = ScopeMemory(InMemoryStore())
    assert await memory.acapture(SCOPE, cat_thread(), thread_id=given) == 2
    assert await memory.acapture(SCOPE, cat_thread(), thread_id=text) == 0
    assert ids(await memory.athread_records(SCOPE, given)) == ["h1", "a1"]
    assert (await memory.aremember(SCOPE, "Likes tea.", thread_id=given)).thread_id == text
    result = await memory.arecall(SCOPE, "cat Miso?", exclude_thread_id=given)
    assert "Miso" not in result.text
    assert await memory.aforget_thread(SCOPE, given) == 2


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_run_with_an_int_thread_id_is_the_thread_of_its_text(use_async):
    """A run with thread_id=1 and one with "1" are one LangGraph thread (one checkpoint
    history): recall captures them as one thread, leaves that thread's own records out
    of its recall, and delete_thread(1) erases it (records and checkpoints)."""
    from langgraph.checkpoint.memory import InMemorySaver

    memory = ScopeMemory(InMemoryStore())
    model = ScriptedChatModel(script="Noted.")
    saver = InMemorySaver()
    agent = create_agent(
        model,
        middleware=[RecallMiddleware(memory, capture_turns=True)],
        context_schema=RecallScope,
        checkpointer=saver,
    )

    async def turn(thread: Any, text: str) -> Any:
        config = {"configurable": {"thread_id": thread}}
        state = {"messages": [HumanMessage(text)]}
        context = {"scope_id": SCOPE}
        if use_async:
            return await agent.ainvoke(state, config, context=context)
        return agent.invoke(state, config, context=context)

    await turn(1, "My cat is called Miso.")
    out = await turn("1", "What is my cat called?")
    assert len(out["messages"]) == 4  # LangGraph: one thread
    assert {r.thread_id for r in memory.records(SCOPE)} == {"1"}
    assert all("Miso" not in str(m.content) for m in model.calls[-1] if m.type == "system")
    if use_async:
        assert await memory.adelete_thread(1, checkpointer=saver) == 4
    else:
        assert memory.delete_thread(1, checkpointer=saver) == 4
    assert memory.records(SCOPE) == []
    assert saver.get_tuple({"configurable": {"thread_id": "1"}}) is None


@pytest.mark.parametrize("name", NAMES)
def test_no_thread_is_still_allowed(name):
    memory = ScopeMemory(InMemoryStore())
    thread_calls(memory, None)[name]()


def test_a_run_with_an_empty_thread_id_is_captured_as_without_thread():
    memory = ScopeMemory(InMemoryStore())
    agent = create_agent(
        ScriptedChatModel(script="Noted."),
        middleware=[RecallMiddleware(memory, capture_turns=True)],
        context_schema=RecallScope,
    )
    agent.invoke(
        {"messages": [HumanMessage("My cat is called Miso.", id="h1")]},
        {"configurable": {"thread_id": ""}},
        context={"scope_id": SCOPE},
    )
    assert [r.thread_id for r in memory.records(SCOPE)] == [None, None]


# -- ids holding the separator of key parts --------------------------------------------------


def test_ids_holding_the_key_separator_do_not_share_a_record(any_store):
    # A record's key hashed "turn", the thread id and the message's identity joined with
    # U+001F: thread "a\x1fid:b" with message "c" and thread "a" with message
    # "b\x1fid:c" made one key, so one thread's capture overwrote the other's record.
    memory = fresh_memory(any_store)
    memory.capture(SCOPE, [HumanMessage("My cat is called Miso.", id="c")], thread_id="a\x1fid:b")
    memory.capture(SCOPE, [HumanMessage("My dog is called Rex.", id="b\x1fid:c")], thread_id="a")
    assert ids(memory.thread_records(SCOPE, "a\x1fid:b")) == ["c"]
    assert ids(memory.thread_records(SCOPE, "a")) == ["b\x1fid:c"]
    assert len(memory.records(SCOPE)) == 2


def test_records_keyed_the_earlier_way_are_neither_doubled_nor_lost(any_store, monkeypatch):
    # A thread whose id holds U+001F has records keyed the earlier way (parts joined
    # with U+001F). Its next captures add only new messages; its next reconciliation
    # rewrites the old records under the new keys; forgetting it finds them either way.
    memory = fresh_memory(any_store)
    thread = "a\x1fb"
    with monkeypatch.context() as patch:
        patch.setattr(_capture, "stable_key", joined_key)
        memory.capture(SCOPE, cat_thread(), thread_id=thread)
    new_keys = {stable_key("turn", thread, f"id:{i}") for i in ("h1", "a1", "h2")}
    assert not new_keys & {r.key for r in memory.records(SCOPE)}
    more = [*cat_thread(), HumanMessage("It likes tuna.", id="h2")]
    memory.capture(SCOPE, more, thread_id=thread)
    assert sorted(ids(memory.records(SCOPE))) == ["a1", "h1", "h2"]
    more[0] = HumanMessage("My cat is called Miso Soup.", id="h1")  # edited: reconciles
    memory.capture(SCOPE, more, thread_id=thread)
    assert {r.key for r in memory.thread_records(SCOPE, thread)} == new_keys
    assert len(memory.records(SCOPE)) == 3
    assert memory.forget_thread(SCOPE, thread) == 3


def joined_key(*parts: str | None) -> str:
    """A key as it was made before: the parts joined with U+001F, hashed."""
    joined = "\x1f".join("" if p is None else p for p in parts)
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:40]


# -- a message id a store cannot hold, at the end of a captured history ----------------------


class CountingStore(InMemoryStore):
    """Counts the searches of one thread's records (a capture's reconciliation)."""

    thread_reads = 0

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        self.thread_reads += sum(
            isinstance(op, SearchOp) and "thread_id" in (op.filter or {}) for op in ops
        )
        return super().batch(ops)


def odd_ending() -> list[Any]:
    return [
        HumanMessage("My cat is called Miso.", id="h1"),
        AIMessage("Miso is a lovely name.", id="a\x00"),
    ]


def next_turns() -> list[Any]:
    return [
        HumanMessage("I live in Lyon.", id="h2"),
        AIMessage("Lyon is a lovely city.", id="a2"),
        HumanMessage("I like green tea.", id="h3"),
        AIMessage("Green tea it is.", id="a3"),
    ]


def test_a_capture_without_mirroring_resumes_after_an_odd_last_message_id():
    # The cursor kept the last captured message's key cleaned ("id:a\ufffd"), which the
    # history never holds: the next capture took the cursor's message for gone and
    # copied the latest turn only (a turn whose capture was skipped was lost).
    memory = ScopeMemory(InMemoryStore(), mirror_threads=False)
    memory.capture(SCOPE, odd_ending(), thread_id="t")
    assert memory.capture(SCOPE, [*odd_ending(), *next_turns()], thread_id="t") == 4
    assert "I live in Lyon." in [r.text for r in memory.records(SCOPE)]


def test_a_capture_after_an_odd_last_message_id_does_not_reconcile():
    # With mirroring, every capture after such a message read the thread's records back.
    store = CountingStore()
    memory = ScopeMemory(store)
    memory.capture(SCOPE, odd_ending(), thread_id="t")
    store.thread_reads = 0
    assert memory.capture(SCOPE, [*odd_ending(), *next_turns()], thread_id="t") == 4
    assert store.thread_reads == 0


# -- a turn's cached recall ---------------------------------------------------------------


def test_a_thread_does_not_get_the_cached_recall_of_another_thread():
    # The cache keyed a turn by "<thread>\x00<question id>\x00<digest>": thread "a\x00b"
    # asking with question id "c" and thread "a" asking with "b\x00c" shared one entry,
    # so thread "a" got the other's recall: its own turns, as earlier conversations.
    memory = ScopeMemory(InMemoryStore())
    memory.capture(SCOPE, cat_thread(), thread_id="a")
    context = RecallScope(scope_id=SCOPE)

    def ask(thread: str, question_id: str) -> Any:
        question = [HumanMessage("What is my cat called?", id=question_id)]
        return recall_for_turn(memory, context, question, {"configurable": {"thread_id": thread}})

    assert ask("a\x00b", "c").status == "recalled"
    assert ask("a", "b\x00c").status == "empty"


# -- stores whose prefix search is not bounded by labels ---------------------------------------


class LikePrefixStore(InMemoryStore):
    """A store searching ``namespace_prefix`` as LangGraph's SQLite and PostgreSQL stores did
    before langgraph PR 8478 (still allowed by this library's dependency floor):
    ``prefix LIKE '<labels joined with .>%'``, which crosses label boundaries
    (``("user",)`` finds ``("user2",)``), reads ``_`` as any character and, in SQLite,
    ignores ASCII case."""

    def batch(self, ops: Any) -> Any:
        return [
            self._like(op) if isinstance(op, SearchOp) else InMemoryStore.batch(self, [op])[0]
            for op in ops
        ]

    async def abatch(self, ops: Any) -> Any:
        return self.batch(ops)

    def _like(self, op: SearchOp) -> Any:
        pattern = "".join(
            "." if c == "_" else ".*" if c == "%" else re.escape(c)
            for c in ".".join(op.namespace_prefix) + "%"
        )
        wide = SearchOp((), op.filter, limit=1_000_000, offset=0)
        (everything,) = InMemoryStore.batch(self, [wide])
        found = [i for i in everything if re.match(pattern, ".".join(i.namespace), re.I | re.S)]
        return found[op.offset : op.offset + op.limit]


def test_deleting_a_scope_deletes_only_that_scope_on_a_store_with_a_wide_prefix_search():
    # delete_scope deleted every item its prefix search returned: on such a store,
    # deleting scope "user" deleted scope "user2"'s, "USER"'s and "u_er"'s memory too.
    store = LikePrefixStore()
    memory = ScopeMemory(store)
    others = ["user2", "USER", "usXr", "user:42"]
    for scope in ["user", "us_r", *others]:
        memory.remember(scope, f"A note of {scope}.")
    assert memory.delete_scope("user") == 1
    assert memory.delete_scope("us_r") == 1
    for scope in others:
        assert [r.text for r in memory.records(scope)] == [f"A note of {scope}."], scope


async def test_async_delete_scope_deletes_only_that_scope_on_a_store_with_a_wide_prefix_search():
    store = LikePrefixStore()
    memory = ScopeMemory(store)
    await memory.aremember("user", "Mine.")
    await memory.aremember("user2", "Theirs.")
    assert await memory.adelete_scope("user") == 1
    assert [r.text for r in await memory.arecords("user2")] == ["Theirs."]


def test_deleting_a_scope_passes_over_a_full_page_of_other_scopes_items():
    # The other scopes' items the search returns first fill whole pages: the scope's own
    # items after them are still deleted.
    store = LikePrefixStore()
    memory = ScopeMemory(store)
    namespace = (*memory.scope_namespace("user2"), "memory")
    for n in range(1_200):
        store.put(namespace, f"k{n}", {"v": 1}, index=False)
    memory.remember("user", "Mine.")
    memory.capture("user", cat_thread(), thread_id="t")
    assert memory.delete_scope("user") == 4
    assert memory.records("user") == []
    assert len(store.search(namespace, limit=2_000)) == 1_200


def test_what_leaves_scope_memory_holds_ids_as_stores_hold_them():
    # Records read back exact ids; the recalled block (a message of the thread) and the
    # report (kept in the graph state) show them cleaned, so a checkpoint can hold them.
    memory = ScopeMemory(InMemoryStore())
    memory.capture(
        SCOPE, [HumanMessage("My cat is called Miso.", id="h\ud800")], thread_id="a\ud800"
    )
    result = memory.recall(SCOPE, "What is my cat called?")
    assert result.status == "recalled"
    assert result.records[0].thread_id == "a\ud800"
    result.text.encode("utf-8")
    assert clean_text("a\ud800") in result.text
    report = recall_report(result)
    json.dumps(report, ensure_ascii=False).encode("utf-8")
    assert report["records"][0]["thread_id"] == clean_text("a\ud800")
    assert report["records"][0]["message_id"] == clean_text("h\ud800")


def test_deleting_a_scope_leaves_a_memory_rooted_under_it(any_store):
    # A scope's items are its memories and its threads' cursors. delete_scope deleted
    # everything under the scope's prefix: scope "team" of a memory rooted at ("app",)
    # took with it every scope of a memory rooted at ("app", "team").
    root = ("app", uuid.uuid4().hex)
    outer = ScopeMemory(any_store, namespace=root)
    inner = ScopeMemory(any_store, namespace=(*root, "team"))
    outer.remember("team", "The team meets on Mondays.")
    inner.remember("user:1", "Likes tea.")
    inner.capture("user:1", cat_thread(), thread_id="t")
    assert outer.delete_scope("team") == 1
    assert len(inner.records("user:1")) == 3


class ShiftingStore(LikePrefixStore):
    """A wide prefix search whose order shifts between searches (ties of ``updated_at``
    ordered anew by each query): the first search puts the scope's items last, the
    others first."""

    searches = 0

    def _like(self, op: SearchOp) -> Any:
        self.searches += 1
        wide = SearchOp(op.namespace_prefix, op.filter, limit=1_000_000, offset=0)
        found = list(super()._like(wide))
        found.sort(key=lambda item: (item.namespace[-2] == "user") != (self.searches > 1))
        return found[op.offset : op.offset + op.limit]


def test_deleting_a_scope_catches_items_a_shifting_order_left_behind():
    # Paged at an offset past the other scopes' items, the scope's items that the next
    # search's order put before that offset were never seen.
    store = ShiftingStore()
    memory = ScopeMemory(store)
    namespace = (*memory.scope_namespace("user2"), "memory")
    for n in range(600):
        store.put(namespace, f"k{n}", {"v": 1}, index=False)
    for n in range(3):
        memory.remember("user", f"Mine {n}.")
    assert memory.delete_scope("user") == 3
    assert memory.records("user") == []
    assert len(store.search(namespace, limit=2_000)) == 600


# -- threads as the recalled block names them ----------------------------------------------


def turn(key: str, text: str, thread: str, seq: int) -> MemoryRecord:
    return MemoryRecord(
        key=key,
        text=text,
        summary="",
        role="human",
        kind="turn",
        thread_id=thread,
        created_at="2026-01-01T10:00:00.000000Z",
        seq=seq,
    )


LONG = "support-conversation-2026-12-05-customer-000123-"
PAIRS = [
    (LONG + "morning", LONG + "evening"),  # alike in their first 48 characters
    ("a\x00b", "a\ufffdb"),  # alike once cleaned
    ("a\ud800b", "a\ufffd\ufffd\ufffdb"),
]


@pytest.mark.parametrize(("one", "other"), PAIRS)
def test_the_recalled_block_names_two_threads_apart(one, other):
    # The block names a line's thread where it changes from the line above, by the id's
    # first 48 characters, cleaned: two threads alike there read as one conversation.
    records = [turn("a", "I booked the train.", one, 0), turn("b", "I missed the bus.", other, 1)]
    text, kept = render_evidence(records, 8_000)
    assert len(kept) == 2
    lines = evidence_lines(text)
    assert lines[0]["thread"] != lines[1]["thread"]
    text.encode("utf-8")
    assert all(len(line["thread"]) <= 64 for line in lines)


def test_a_short_plain_thread_id_is_named_as_it_is():
    text, _ = render_evidence([turn("a", "Hello.", "chat-7", 0)], 8_000)
    assert evidence_lines(text)[0]["thread"] == "chat-7"
