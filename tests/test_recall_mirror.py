"""Scope memory follows the threads it captured from: deletions, edits, forgetting a thread."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore, SearchOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig, LibrarianMiddleware
from langgraph_librarian.recall import RecallMiddleware, RecallScope, ScopeMemory
from langgraph_librarian.recall._records import stable_key


@pytest.fixture(params=["memory", "sqlite"])
def store(request: Any, tmp_path: Any) -> Iterator[BaseStore]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    with SqliteStore.from_conn_string(str(tmp_path / "scope.sqlite")) as sqlite:
        sqlite.setup()
        yield sqlite


class CountingStore(InMemoryStore):
    """Counts the searches it answers (a reconciliation reads the thread's records)."""

    def __init__(self) -> None:
        super().__init__()
        self.searches = 0

    def batch(self, ops: Any) -> list[Any]:
        ops = list(ops)
        self.searches += sum(isinstance(op, SearchOp) for op in ops)
        return super().batch(ops)


def texts(memory: ScopeMemory, scope: str = "u") -> list[str]:
    return [r.text for r in memory.records(scope)]


def test_a_message_removed_from_its_thread_is_not_recalled_in_another(store):
    """Newcomer finding 04: the PIN deleted from thread A was still recalled in thread B."""
    agent = create_agent(
        ScriptedChatModel(script="Noted."),
        middleware=[
            LibrarianMiddleware(LibrarianConfig(store=store)),
            RecallMiddleware(ScopeMemory(store), capture_turns=True, report=True),
        ],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )
    ctx, a = RecallScope(scope_id="user:1"), {"configurable": {"thread_id": "A"}}
    agent.invoke({"messages": [HumanMessage("My bank PIN is 4417.", id="pin")]}, a, context=ctx)
    held = agent.get_state(a).values["messages"]
    agent.update_state(a, {"messages": [RemoveMessage(id=m.id) for m in held]})
    agent.invoke({"messages": [HumanMessage("ok, new topic")]}, a, context=ctx)
    b = {"configurable": {"thread_id": "B"}}
    result = agent.invoke({"messages": [HumanMessage("What is my bank PIN?")]}, b, context=ctx)[
        "librarian_recall"
    ]
    assert not any("4417" in r["text"] for r in result["records"])
    assert "4417" not in " ".join(texts(ScopeMemory(store), "user:1"))
    assert "ok, new topic" in texts(ScopeMemory(store), "user:1")


def test_an_edited_message_is_recalled_in_its_new_form_only(store):
    """Newcomer finding 04b: editing May 3 to May 5 (same id) left only May 3 in the scope."""
    agent = create_agent(
        ScriptedChatModel(script="Noted."),
        middleware=[RecallMiddleware(ScopeMemory(store), capture_turns=True, report=True)],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )
    ctx, a = RecallScope(scope_id="user:1"), {"configurable": {"thread_id": "A"}}
    flight = "My flight to Oslo is on May {}."
    agent.invoke({"messages": [HumanMessage(flight.format(3), id="f")]}, a, context=ctx)
    agent.update_state(a, {"messages": [HumanMessage(flight.format(5), id="f")]})
    agent.invoke({"messages": [HumanMessage("Thanks.")]}, a, context=ctx)
    b = {"configurable": {"thread_id": "B"}}
    result = agent.invoke(
        {"messages": [HumanMessage("When is my flight to Oslo?")]}, b, context=ctx
    )["librarian_recall"]
    assert [r["text"] for r in result["records"]] == [flight.format(5)]
    assert flight.format(3) not in texts(ScopeMemory(store), "user:1")


def test_an_edit_keeps_the_records_place_and_time():
    memory = ScopeMemory(InMemoryStore())
    history = [
        HumanMessage("My flight is on May 3.", id="h1"),
        AIMessage("Noted.", id="a1"),
        HumanMessage("And my hotel is the Grand.", id="h2"),
        AIMessage("Noted too.", id="a2"),
    ]
    memory.capture("u", history, thread_id="t")
    before = {r.message_id: r for r in memory.records("u")}
    history[0] = HumanMessage("My flight is on May 5.", id="h1")
    assert memory.capture("u", history, thread_id="t") == 1  # only the edited one
    after = {r.message_id: r for r in memory.records("u")}
    assert after["h1"].text == "My flight is on May 5."
    assert (after["h1"].seq, after["h1"].created_at) == (before["h1"].seq, before["h1"].created_at)
    assert [r.message_id for r in memory.records("u")] == ["h1", "a1", "h2", "a2"]


def test_an_unchanged_history_is_not_read_back_and_a_changed_one_is_once():
    store = CountingStore()
    memory = ScopeMemory(store)
    history: list[Any] = [HumanMessage("I live in Lyon.", id="h1"), AIMessage("Nice.", id="a1")]
    memory.capture("u", history, thread_id="t")
    for n in range(2, 5):
        history += [HumanMessage(f"Turn {n} about Lyon.", id=f"h{n}"), AIMessage("ok", id=f"a{n}")]
        memory.capture("u", history, thread_id="t")
    assert store.searches == 0  # the fingerprint matched: no read of the thread's records
    del history[2:4]  # turn 2 deleted
    history += [HumanMessage("Turn 5.", id="h5"), AIMessage("ok", id="a5")]
    assert memory.capture("u", history, thread_id="t") == 2
    assert store.searches == 1
    history += [HumanMessage("Turn 6.", id="h6"), AIMessage("ok", id="a6")]
    memory.capture("u", history, thread_id="t")
    assert store.searches == 1  # back to appending
    assert "Turn 2 about Lyon." not in texts(memory) and "Turn 6." in texts(memory)


def test_a_cursor_from_before_fingerprints_reconciles_once():
    store = CountingStore()
    memory = ScopeMemory(store)
    history: list[Any] = [HumanMessage("My PIN is 4417.", id="h1"), AIMessage("ok", id="a1")]
    memory.capture("u", history, thread_id="t")
    namespace, key = memory._ns("u", "threads"), stable_key("thread", "t")
    store.put(namespace, key, {"last": "id:a1", "seq": 2})  # as an earlier release wrote it
    history = [HumanMessage("New topic.", id="h2"), AIMessage("ok", id="a2")]
    memory.capture("u", history, thread_id="t")
    assert store.searches == 1
    assert texts(memory) == ["New topic.", "ok"]


def test_mirror_threads_false_only_ever_adds():
    memory = ScopeMemory(InMemoryStore(), mirror_threads=False)
    memory.capture("u", [HumanMessage("My PIN is 4417.", id="h1")], thread_id="t")
    memory.capture("u", [HumanMessage("New topic.", id="h2")], thread_id="t")
    assert texts(memory) == ["My PIN is 4417.", "New topic."]


def test_reconciling_touches_only_its_own_thread_and_keeps_explicit_memories(store):
    memory = ScopeMemory(store)
    memory.capture("u", [HumanMessage("Thread one fact.", id="x1")], thread_id="one")
    memory.capture("u", [HumanMessage("Thread two fact.", id="y1")], thread_id="two")
    memory.remember("u", "Explicit: prefers tea.", thread_id="one")
    memory.capture("u", [], thread_id="one")  # everything deleted from thread one
    assert sorted(texts(memory)) == ["Explicit: prefers tea.", "Thread two fact."]


def test_forget_thread_deletes_one_threads_records_and_cursor(store):
    memory = ScopeMemory(store)
    one = [HumanMessage("Thread one fact.", id="x1"), AIMessage("ok", id="x2")]
    memory.capture("u", one, thread_id="one")
    memory.capture("u", [HumanMessage("Thread two fact.", id="y1")], thread_id="two")
    memory.remember("u", "Explicit: prefers tea.", thread_id="one")
    assert memory.forget_thread("u", "one") == 2
    assert sorted(texts(memory)) == ["Explicit: prefers tea.", "Thread two fact."]
    assert memory.capture("u", one, thread_id="one") == 2  # the cursor went too


async def test_aforget_thread_and_acapture_match_sync(store):
    memory = ScopeMemory(store)
    history: list[Any] = [HumanMessage("My PIN is 4417.", id="h1"), AIMessage("ok", id="a1")]
    await memory.acapture("u", history, thread_id="t")
    history[0] = HumanMessage("My PIN is 9921.", id="h1")
    assert await memory.acapture("u", history, thread_id="t") == 1
    assert [r.text for r in await memory.athread_records("u", "t")] == ["My PIN is 9921.", "ok"]
    assert await memory.aforget_thread("u", "t") == 2
    assert await memory.arecords("u") == []


def test_captures_without_a_thread_id_only_ever_add():
    """Unrelated conversations without thread ids share one cursor: none erases another."""
    memory = ScopeMemory(InMemoryStore())
    memory.capture("u", [HumanMessage("First chat fact.", id="h1")])
    memory.capture("u", [HumanMessage("Second chat fact.", id="h2")])
    assert texts(memory) == ["First chat fact.", "Second chat fact."]


def _turns(n: int, fork: str = "") -> list[Any]:
    messages: list[Any] = []
    for k in range(n):
        messages.append(
            HumanMessage(f"{fork}Fact number {k}: item {k} costs {k * 7} euros.", id=f"{fork}h{k}")
        )
        messages.append(AIMessage(f"{fork}Noted item {k}.", id=f"{fork}a{k}"))
    return messages


def _captured_texts(memory: ScopeMemory, thread: str) -> list[str]:
    return [r.text for r in memory.thread_records("s", thread)]


def _cursor_ref(memory: ScopeMemory, thread: str) -> tuple[tuple[str, ...], str]:
    from langgraph_librarian.recall._memory import _THREADS

    return memory._ns("s", _THREADS), stable_key("thread", thread)


def test_records_another_writer_removed_behind_the_cursor_come_back(store: BaseStore) -> None:
    # forget_thread racing a capture: the capture's cursor lands after forget's deletes,
    # so the cursor says "captured" while the records are gone. The history did not
    # change (the fingerprint matches); a periodic check of the records against the
    # history brings them back within a bounded number of turns.
    memory = ScopeMemory(store)
    history = _turns(4)
    memory.capture("s", history, thread_id="t")
    ns, key = _cursor_ref(memory, "t")
    cursor = store.get(ns, key).value
    memory.forget_thread("s", "t")
    store.put(ns, key, cursor)  # the racing capture's cursor, written last
    assert memory.thread_records("s", "t") == []
    memory.capture("s", history := [*history, *_turns(5)[-2:]], thread_id="t")
    assert len(memory.thread_records("s", "t")) < len(history)  # not at once: no read
    for k in range(5, 20):
        history = [*history, *_turns(k + 1)[-2:]]
        memory.capture("s", history, thread_id="t")
        if len(memory.thread_records("s", "t")) == len(history):
            break
    # (the restored records come after the others in the thread's order: a rare repair)
    assert sorted(m.content for m in history) == sorted(_captured_texts(memory, "t"))


def test_records_of_a_losing_fork_are_removed_in_time(store: BaseStore) -> None:
    # Two workers capture two forks of one turn, both from the same cursor; the winner's
    # cursor is written last, and its fingerprint matches its own history: the loser's
    # records stayed for good. The periodic check removes them.
    memory, other = ScopeMemory(store), ScopeMemory(store)
    base = _turns(3)
    memory.capture("s", base, thread_id="t")
    ns, key = _cursor_ref(memory, "t")
    cursor = store.get(ns, key).value
    other.capture("s", [*base, *_turns(1, fork="lost ")], thread_id="t")
    store.put(ns, key, cursor)  # the winner read the cursor before the loser wrote
    history = [*base, *_turns(1, fork="kept ")]
    memory.capture("s", history, thread_id="t")
    assert any("lost" in text for text in _captured_texts(memory, "t"))
    for k in range(3, 20):
        history = [*history, *_turns(k + 1)[-2:]]
        memory.capture("s", history, thread_id="t")
        if not any("lost" in text for text in _captured_texts(memory, "t")):
            break
    assert [m.content for m in history] == _captured_texts(memory, "t")
