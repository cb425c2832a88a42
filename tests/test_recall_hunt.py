"""Bugs found by a bug hunt on scoped recall, each pinned by the input that showed it."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from fakes import ScriptedChatModel, ToolCallingScriptedModel
from langgraph_librarian.recall import RecallMiddleware, RecallScope, ScopeMemory
from test_recall_helpers import FlakyStore
from test_recall_tools import ause_tool, use_tool


class SilentStore(InMemoryStore):
    """A store that stops answering (a network partition, no statement timeout)."""

    def __init__(self, seconds: float = 3.0) -> None:
        super().__init__()
        self.seconds = seconds
        self.release = threading.Event()

    def batch(self, ops: Any) -> Any:
        self.release.wait(self.seconds)
        raise ConnectionError("no answer")

    async def abatch(self, ops: Any) -> Any:
        await asyncio.sleep(self.seconds)
        raise ConnectionError("no answer")


TOOL_ARGS = {
    "memory_search": {"query": "tomatoes"},
    "memory_remember": {"text": "Prefers tea."},
    "memory_context": {"query": "tomatoes"},
}


@pytest.mark.parametrize("name", sorted(TOOL_ARGS))
def test_memory_tools_give_up_after_the_timeout(name):
    # The tools waited for the store as long as it took (3 s here, for ever on a hung
    # store) although ScopeMemory(timeout=) bounds every wait for it.
    store = SilentStore()
    memory = ScopeMemory(store, timeout=0.3)
    started = time.monotonic()
    out = use_tool(memory, name, TOOL_ARGS[name])
    store.release.set()
    assert time.monotonic() - started < 2.0
    assert out.startswith("memory unavailable: the memory store failed (TimeoutError)")


@pytest.mark.parametrize("name", sorted(TOOL_ARGS))
async def test_async_memory_tools_give_up_after_the_timeout(name):
    memory = ScopeMemory(SilentStore(), timeout=0.3)
    started = time.monotonic()
    out = await ause_tool(memory, name, TOOL_ARGS[name])
    assert time.monotonic() - started < 2.0
    assert out.startswith("memory unavailable: the memory store failed (TimeoutError)")


@pytest.mark.parametrize("odd", ["chat\x00one", "chat\ud800one"])
def test_a_thread_with_an_odd_id_is_not_recalled_its_own_turns(odd):
    # Records keep ids cleaned (NUL and lone surrogates become U+FFFD, which stores can
    # hold); the asking thread's raw id and its messages' raw ids were compared with
    # them as they were, so the thread got its own turns back as "earlier conversations".
    memory = ScopeMemory(InMemoryStore())
    history = [
        HumanMessage("My cat is called Miso.", id=f"h-{odd}"),
        AIMessage("Miso is a lovely name for a cat.", id=f"a-{odd}"),
    ]
    memory.capture("user:1", history, thread_id=odd)
    question = "What is my cat called?"
    assert memory.recall("user:1", question).status == "recalled"
    assert memory.recall("user:1", question, exclude_thread_id=odd).status == "empty"
    ids = [m.id for m in history if m.id]
    assert memory.recall("user:1", question, exclude_message_ids=ids).status == "empty"


@pytest.mark.parametrize("off", ["false", "False", "0", "no", "off", ""])
def test_a_switch_sent_as_the_string_false_switches_capture_off(off):
    # A context sent as JSON (a form, an HTTP API) carries "false" as a string, and
    # bool("false") is True: the "incognito" run was captured into scope memory.
    memory = ScopeMemory(InMemoryStore())
    agent = create_agent(
        ScriptedChatModel(script="Noted."),
        middleware=[RecallMiddleware(memory, capture_turns=True)],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )
    agent.invoke(
        {"messages": [HumanMessage("My alias is Zorro; keep this between us.")]},
        {"configurable": {"thread_id": "incognito"}},
        context={"scope_id": "user:1", "allow_capture": off},
    )
    assert memory.records("user:1") == []
    agent.invoke(
        {"messages": [HumanMessage("My alias is Zorro; remember it.")]},
        {"configurable": {"thread_id": "open"}},
        context={"scope_id": "user:1", "allow_capture": "true"},
    )
    assert len(memory.records("user:1")) == 2


def test_an_edited_and_regenerated_question_is_recalled_anew():
    # Edit and regenerate keeps the question's id and changes its text: the recall cached
    # for the old question (keyed by the id) was handed to the model for the new one.
    memory = ScopeMemory(InMemoryStore())
    memory.remember("user:1", "My dog Rex loves carrots.")
    memory.remember("user:1", "My apartment in Lyon has a balcony.")
    for n in range(8):
        memory.remember("user:1", f"Gym session {n} was fine.")
    agent = create_agent(
        ScriptedChatModel(script="ok"),
        middleware=[RecallMiddleware(memory, report=True)],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "B"}}
    scope = RecallScope(scope_id="user:1")
    state = agent.invoke(
        {"messages": [HumanMessage("What does my dog Rex eat?", id="q1")]}, config, context=scope
    )
    assert [r["text"] for r in state["librarian_recall"]["records"]] == [
        "My dog Rex loves carrots."
    ]
    before = next(s for s in agent.get_state_history(config) if s.next == ("model",))
    edited = HumanMessage("Does my Lyon apartment have a balcony?", id="q1")
    forked = agent.update_state(before.config, {"messages": [edited]})
    state = agent.invoke(None, forked, context=scope)
    texts = [r["text"] for r in state["librarian_recall"]["records"]]
    assert texts == ["My apartment in Lyon has a balcony."]


def _loop_agent(memory: ScopeMemory, calls: int = 2) -> Any:
    """An agent whose model calls a tool ``calls`` times in a turn, then answers."""

    def decide(messages: list[Any]) -> AIMessage:
        asked = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        done = sum(isinstance(m, ToolMessage) for m in messages[asked:])
        if done < calls:
            call = {"name": "clock", "args": {}, "id": f"call-{done}"}
            return AIMessage("", tool_calls=[call])
        return AIMessage("done")

    def clock() -> str:
        """The time."""
        return "noon"

    return create_agent(
        ToolCallingScriptedModel(script=decide),
        tools=[clock],
        middleware=[RecallMiddleware(memory, report=True)],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )


def test_a_retried_turn_recalls_again_once_the_store_is_back():
    # A failed recall was cached for the turn (by its question) with no end: every later
    # run of that turn (the user's retry, a regenerate) got "unavailable" again though
    # the store was back, for the life of the process.
    store = FlakyStore()
    memory = ScopeMemory(store)
    memory.remember("user:1", "My dog Rex loves carrots.")
    agent = _loop_agent(memory)
    config = {"configurable": {"thread_id": "B"}}
    scope = RecallScope(scope_id="user:1")
    store.down = True
    asked = store.batches
    state = agent.invoke(
        {"messages": [HumanMessage("What does my dog Rex eat?", id="q1")]}, config, context=scope
    )
    assert state["librarian_recall"]["status"] == "unavailable"
    assert store.batches == asked + 1  # the tool loop's later model calls did not ask again
    store.down = False
    # The retry: the turn run again from its first model call.
    first = [s for s in agent.get_state_history(config) if s.next == ("model",)][-1]
    state = agent.invoke(None, first.config, context=scope)
    assert state["librarian_recall"]["status"] == "recalled"


def test_foreign_items_in_a_scope_are_warned_about_once_not_at_every_turn(caplog):
    # Items another writer left under a scope's namespace were logged at WARNING one by
    # one at every recall: 300 foreign items, 300 warnings a turn.
    store = InMemoryStore()
    memory = ScopeMemory(store)
    memory.remember("user:1", "My dog Rex loves carrots.")
    namespace = (*memory.scope_namespace("user:1"), "memory")
    for n in range(300):
        store.put(namespace, f"foreign-{n}", {"app": "other", "n": n})
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian.recall"):
        for _ in range(5):
            assert memory.recall("user:1", "What does Rex eat?").status == "recalled"
    warnings = [r for r in caplog.records if "skipping unreadable record" in r.getMessage()]
    assert len(warnings) == 300


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_slow_selector_model_leaves_the_offline_recall_within_the_turns_timeout(asynchronous):
    """The turn waits ``timeout`` (15 s by default) for the store and the selector
    together, while a selector model had ``selection_timeout`` (60 s by default): a
    provider slower than the turn's wait made recall ``unavailable`` instead of the
    offline selection standing in, as it does when the model fails. The model now gets
    half of the turn's wait."""
    from langgraph_librarian import LibrarianConfig
    from langgraph_librarian.recall._turn import arecall_for_turn, recall_for_turn

    selector = ScriptedChatModel(script="IDs: [0]", latency=3.0)
    config = LibrarianConfig(selector_model=selector, indexer_model="local", max_retries=0)
    memory = ScopeMemory(InMemoryStore(), config=config, timeout=1.5)
    memory.capture(
        "u",
        [
            HumanMessage("Please remember: I have a severe peanut allergy.", id="h1"),
            AIMessage("Understood, no peanuts in any recipe.", id="a1"),
        ],
        thread_id="earlier",
    )
    messages = [HumanMessage("Is satay sauce with peanuts fine for my allergy?", id="q")]
    run = {"configurable": {"thread_id": "now"}}
    context = RecallScope(scope_id="u")
    if asynchronous:
        result = asyncio.run(arecall_for_turn(memory, context, messages, run))
    else:
        result = recall_for_turn(memory, context, messages, run)
    assert result.status == "recalled" and result.strategy == "local_fallback"
    assert "peanut allergy" in result.text
    assert memory.config.selection_timeout == 60.0  # the user's config is left as given


def test_a_hung_sync_only_store_leaves_the_event_loops_executor_free():
    """A sync-only store (``SqliteStore``: ``abatch`` not implemented) was called through
    ``asyncio.to_thread``: hung calls kept the loop's default executor's few threads (6 on
    two cores), and everything else the loop sent there (sync callback handlers, sync
    graph nodes, LangChain's sync-only models) waited for the store. Its calls run on the
    library's own threads."""
    from fakes import hung_sync_only_calls_leave_the_default_executor_free
    from langgraph_librarian.recall._store import abatch, get_op

    assert hung_sync_only_calls_leave_the_default_executor_free(
        lambda store: abatch(store, [get_op(("s",), "k")])
    )
