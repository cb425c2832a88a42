"""Scoped recall inside agents: create_agent middleware, composition, concurrency, failures."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from fakes import ScriptedChatModel, ToolCallingScriptedModel
from helpers import conversation
from langgraph_librarian import LibrarianConfig, LibrarianMiddleware
from langgraph_librarian.recall import RecallMiddleware, RecallScope, ScopeMemory
from langgraph_librarian.recall._result import RECALL_MESSAGE_ID
from langgraph_librarian.recall._scope import SCOPE_ENV_VAR
from test_recall_helpers import FlakyStore

ALLERGY = "Please remember that I have a severe nut allergy."
QUESTION = "Suggest a dessert with nuts for tonight."


def recall_messages(call: list[Any]) -> list[Any]:
    return [m for m in call if m.id == RECALL_MESSAGE_ID]


def agent_with(memory: ScopeMemory, model: Any, *, tools: Any = (), **kwargs: Any) -> Any:
    middleware = kwargs.pop("middleware", None) or [RecallMiddleware(memory, capture_turns=True)]
    return create_agent(
        model,
        tools=list(tools),
        middleware=middleware,
        context_schema=RecallScope,
        checkpointer=kwargs.pop("checkpointer", InMemorySaver()),
        **kwargs,
    )


def run(agent: Any, thread: str, scope: str | None, text: str, msg_id: str | None = None) -> Any:
    context = RecallScope(scope_id=scope) if scope is not None else None
    return agent.invoke(
        {"messages": [HumanMessage(text, id=msg_id)]},
        {"configurable": {"thread_id": thread}},
        context=context,
    )


async def arun(agent: Any, thread: str, scope: str, text: str, msg_id: str | None = None) -> Any:
    return await agent.ainvoke(
        {"messages": [HumanMessage(text, id=msg_id)]},
        {"configurable": {"thread_id": thread}},
        context=RecallScope(scope_id=scope),
    )


def saved_bytes(saver: InMemorySaver, thread: str) -> bytes:
    """Every saved checkpoint and pending write of ``thread``, serialized as stored."""
    blobs = []
    for saved in saver.list({"configurable": {"thread_id": thread}}):
        blobs.append(saver.serde.dumps_typed(saved.checkpoint)[1])
        blobs += [saver.serde.dumps_typed(v)[1] for _, _, v in saved.pending_writes or []]
    return b"".join(blobs)


def test_new_thread_recalls_earlier_thread_and_checkpoint_stays_clean():
    memory = ScopeMemory(InMemoryStore())
    model = ScriptedChatModel(script="Here is an idea.")
    saver = InMemorySaver()
    agent = agent_with(memory, model, checkpointer=saver)
    run(agent, "t1", "user:42", ALLERGY)
    result = run(agent, "t2", "user:42", QUESTION)
    seen = model.calls[-1]
    assert isinstance(seen[0], SystemMessage) and seen[0].id == RECALL_MESSAGE_ID
    assert ALLERGY in seen[0].content and "UNTRUSTED" in seen[0].content
    assert seen[1:] == result["messages"][:-1]  # originals follow, in order
    assert len(recall_messages(seen)) == 1
    # nothing recalled was written to state or any checkpoint of the new thread
    assert all(m.id != RECALL_MESSAGE_ID for m in result["messages"])
    assert ALLERGY.encode() not in saved_bytes(saver, "t2")
    assert b"UNTRUSTED" not in saved_bytes(saver, "t2")
    assert ALLERGY.encode() in saved_bytes(saver, "t1")  # the check can see text
    run(agent, "t3", "user:43", QUESTION)
    assert recall_messages(model.calls[-1]) == []


def test_a_thread_is_not_recalled_its_own_messages():
    memory = ScopeMemory(InMemoryStore())
    model = ScriptedChatModel(script="ok")
    agent = agent_with(memory, model)
    run(agent, "t1", "user:42", ALLERGY)
    run(agent, "t1", "user:42", QUESTION)  # the allergy is already in this thread's input
    assert recall_messages(model.calls[-1]) == []
    memory.remember("user:42", "Also allergic to sesame: no nuts or sesame seeds.")
    run(agent, "t1", "user:42", "Dessert with nuts or sesame then?")
    (recalled,) = recall_messages(model.calls[-1])
    assert "sesame" in recalled.content and ALLERGY not in recalled.content
    run(agent, "t2", "user:42", "Remind me of my nut allergy.")  # a new thread: recalled
    assert ALLERGY in recall_messages(model.calls[-1])[0].content


def test_capture_is_opt_in():
    memory = ScopeMemory(InMemoryStore())
    model = ScriptedChatModel(script="ok")
    agent = agent_with(memory, model, middleware=[RecallMiddleware(memory)])
    run(agent, "t1", "user:42", ALLERGY)
    assert memory.records("user:42") == []
    run(agent, "t2", "user:42", QUESTION)
    assert recall_messages(model.calls[-1]) == []


def test_capture_can_be_switched_off_per_run():
    memory = ScopeMemory(InMemoryStore())
    agent = agent_with(memory, ScriptedChatModel(script="ok"))
    agent.invoke(
        {"messages": [HumanMessage(ALLERGY)]},
        {"configurable": {"thread_id": "incognito"}},
        context=RecallScope(scope_id="user:42", allow_capture=False),
    )
    assert memory.records("user:42") == []


@tool
def pantry(item: str) -> str:
    """Check whether an item is in the pantry."""
    return f"{item}: 2 left"


def tool_then_answer() -> ToolCallingScriptedModel:
    def decide(messages: list[Any]) -> AIMessage:
        if isinstance(messages[-1], HumanMessage):
            call = {"name": "pantry", "args": {"item": "nuts"}, "id": "p1", "type": "tool_call"}
            return AIMessage("", tool_calls=[call])
        return AIMessage("Done.")

    return ToolCallingScriptedModel(script=decide)


def test_recall_runs_once_per_turn_across_tool_steps():
    store = FlakyStore()
    memory = ScopeMemory(store)
    memory.remember("user:42", "Severe nut allergy.")
    model = tool_then_answer()
    agent = agent_with(memory, model, tools=[pantry])
    before = store.searches
    run(agent, "t1", "user:42", "Do we have nuts for the cake?")
    assert store.searches - before == 1  # one read of scope memory for two model calls
    first, second = model.calls[-2:]
    assert recall_messages(first) == recall_messages(second) != []
    assert any(isinstance(m, ToolMessage) for m in second)


def test_llm_selector_is_called_once_per_turn():
    selector = ScriptedChatModel(script="IDs: [0]")
    memory = ScopeMemory(
        InMemoryStore(), config=LibrarianConfig(selector_model=selector, indexer_model="local")
    )
    memory.remember("user:42", "Severe nut allergy.")
    agent = agent_with(memory, tool_then_answer(), tools=[pantry])
    run(agent, "t1", "user:42", "Do we have nuts for the cake?")
    assert len(selector.calls) == 1


def test_store_failing_before_the_turn_fails_open(caplog):
    store = FlakyStore()
    memory = ScopeMemory(store)
    model = ScriptedChatModel(script="An answer anyway.")
    agent = agent_with(memory, model)
    run(agent, "t1", "user:42", ALLERGY)
    store.down = True
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian.recall"):
        result = run(agent, "t2", "user:42", QUESTION)
    assert result["messages"][-1].content == "An answer anyway."
    assert recall_messages(model.calls[-1]) == []
    messages = [r.getMessage() for r in caplog.records]
    assert any("recall skipped: memory unavailable" in m for m in messages)
    assert any("capture failed: memory unavailable" in m for m in messages)
    assert not any("configuration problem" in m for m in messages)


def mid_turn_outage() -> tuple[FlakyStore, Any, ToolCallingScriptedModel]:
    """An agent whose tool takes the store down between the turn's two model calls."""
    store = FlakyStore()
    memory = ScopeMemory(store)
    memory.remember("user:42", "Severe nut allergy.")

    @tool
    def break_store() -> str:
        """Take the memory store down (simulates an outage during the turn)."""
        store.down = True
        return "ok"

    def decide(messages: list[Any]) -> AIMessage:
        if isinstance(messages[-1], HumanMessage):
            return AIMessage("", tool_calls=[{"name": "break_store", "args": {}, "id": "b1"}])
        return AIMessage("Finished.")

    model = ToolCallingScriptedModel(script=decide)
    return store, agent_with(memory, model, tools=[break_store]), model


def test_store_failing_mid_turn_keeps_the_turn_alive(caplog):
    _, agent, model = mid_turn_outage()
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian.recall"):
        result = run(agent, "t1", "user:42", "Anything about nut allergy?")
    assert result["messages"][-1].content == "Finished."
    assert recall_messages(model.calls[-1]) != []  # the turn's recall was already prepared
    assert any("capture failed" in r.getMessage() for r in caplog.records)


async def test_store_failing_mid_turn_async(caplog):
    store, agent, model = mid_turn_outage()
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian.recall"):
        result = await arun(agent, "t1", "user:42", "Anything about nut allergy?")
    assert result["messages"][-1].content == "Finished." and store.down
    assert recall_messages(model.calls[-1]) != []
    assert any("capture failed" in r.getMessage() for r in caplog.records)


async def test_store_failing_async_fails_open(caplog):
    store = FlakyStore()
    memory = ScopeMemory(store)
    model = ScriptedChatModel(script="Async answer.")
    agent = agent_with(memory, model)
    await arun(agent, "t1", "user:42", ALLERGY)
    store.down = True
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian.recall"):
        result = await arun(agent, "t2", "user:42", QUESTION)
    assert result["messages"][-1].content == "Async answer."
    assert recall_messages(model.calls[-1]) == []
    assert any("memory unavailable" in r.getMessage() for r in caplog.records)
    store.down = False
    await arun(agent, "t3", "user:42", QUESTION)
    assert ALLERGY in recall_messages(model.calls[-1])[0].content


def test_missing_scope_is_logged_as_configuration_not_empty_memory(caplog, monkeypatch):
    monkeypatch.delenv(SCOPE_ENV_VAR, raising=False)
    memory = ScopeMemory(InMemoryStore())
    model = ScriptedChatModel(script="ok")
    agent = agent_with(memory, model)
    with caplog.at_level(logging.ERROR, logger="langgraph_librarian.recall"):
        result = run(agent, "t1", None, QUESTION)
    assert result["messages"][-1].content == "ok"
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert any("configuration problem" in r.getMessage() for r in errors)
    assert any("MissingScopeError" in r.getMessage() for r in errors)


def test_environment_scope_is_used_when_the_context_has_none(monkeypatch):
    memory = ScopeMemory(InMemoryStore())
    memory.remember("env-scope", "Severe nut allergy.")
    monkeypatch.setenv(SCOPE_ENV_VAR, "env-scope")
    model = ScriptedChatModel(script="ok")
    run(agent_with(memory, model), "t1", None, QUESTION)
    assert recall_messages(model.calls[-1])


def test_out_of_range_bound_in_context_is_a_configuration_problem(caplog):
    memory = ScopeMemory(InMemoryStore())
    memory.remember("user:42", "Severe nut allergy.")
    model = ScriptedChatModel(script="ok")
    agent = agent_with(memory, model)
    with caplog.at_level(logging.ERROR, logger="langgraph_librarian.recall"):
        agent.invoke(
            {"messages": [HumanMessage(QUESTION)]},
            {"configurable": {"thread_id": "t"}},
            context=RecallScope(scope_id="user:42", max_bytes=10),
        )
    assert recall_messages(model.calls[-1]) == []
    assert any("max_bytes" in r.getMessage() for r in caplog.records)


def test_permission_errors_are_configuration_problems(caplog):
    store = FlakyStore()
    store.error = PermissionError("role recall_ro may not read")
    memory = ScopeMemory(store)
    store.down = True
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian.recall"):
        run(agent_with(memory, ScriptedChatModel(script="ok")), "t", "user:42", QUESTION)
    assert any(
        r.levelno == logging.ERROR and "configuration problem" in r.getMessage()
        for r in caplog.records
    )


def librarian_and_recall(order: str, memory: ScopeMemory) -> list[Any]:
    librarian = LibrarianMiddleware(LibrarianConfig())
    recall = RecallMiddleware(memory)
    return [librarian, recall] if order == "librarian-first" else [recall, librarian]


@pytest.mark.parametrize("order", ["librarian-first", "recall-first"])
def test_composes_with_librarian_middleware(order):
    memory = ScopeMemory(InMemoryStore())
    memory.remember("user:42", "Severe nut allergy: never serve nuts at the offsite.")
    model = ScriptedChatModel(script="ok")
    agent = agent_with(memory, model, middleware=librarian_and_recall(order, memory))
    cfg = {"configurable": {"thread_id": "offsite"}}
    scope = RecallScope(scope_id="user:42")
    agent.invoke({"messages": conversation(12)}, cfg, context=scope)
    question = HumanMessage("What is the offsite budget now, and any nut allergy to know?")
    result = agent.invoke({"messages": [question]}, cfg, context=scope)
    seen = model.calls[-1]
    assert seen[0].id == RECALL_MESSAGE_ID and len(recall_messages(seen)) == 1  # scope memory
    assert "nut allergy" in seen[0].content
    assert len(seen) < len(result["messages"]) - 5  # thread memory: a curated subset
    assert {"h2", "h8"} <= {m.id for m in seen}
    assert result["librarian_metadata"]["selection_skipped"] is False
    assert all(m.id != RECALL_MESSAGE_ID for m in result["messages"])


async def test_two_tenants_same_prompt_at_once_see_only_their_own():
    memory = ScopeMemory(InMemoryStore())
    memory.remember("tenant:a", "Tenant A dessert rule: nut allergy, no nuts.")
    memory.remember("tenant:b", "Tenant B dessert rule: lactose intolerant, no cream.")
    model = ScriptedChatModel(script="ok", latency=0.05)
    agent = agent_with(memory, model)
    prompt = "What is our dessert rule?"
    await asyncio.gather(
        *(
            arun(agent, f"thread-{s}-{n}", f"tenant:{s}", prompt, "same-id")
            for n, s in enumerate("ab" * 3)
        )
    )
    calls = [recall_messages(c)[0].content for c in model.calls]
    assert len(calls) == 6
    assert sum("Tenant A" in c and "Tenant B" not in c for c in calls) == 3
    assert sum("Tenant B" in c and "Tenant A" not in c for c in calls) == 3


# -- review findings (scoped recall, 2026-12-02) ---------------------------------------


def _recall_blocks(model: Any) -> list[str]:
    return [str(m.content) for call in model.calls for m in call if m.id == RECALL_MESSAGE_ID]


@pytest.mark.parametrize("use_async", [False, True])
async def test_a_thread_never_recalls_its_own_turns_behind_a_librarian(use_async):
    """The Librarian first (the model gets a curated part of the thread), recall second:
    the thread's own older turns are not "earlier conversations"."""
    topics = ["database pool sizing", "chart rendering", "autoscaler thresholds"]

    def long(i: int) -> str:
        topic = topics[i % 3]
        return f"Turn {i} on {topic}. " + " ".join(f"Detail {j} about {topic}." for j in range(8))

    model = ToolCallingScriptedModel(script="Sure, a detailed answer about that. " * 6)
    memory = ScopeMemory(InMemoryStore())
    agent = create_agent(
        model,
        middleware=[
            LibrarianMiddleware(LibrarianConfig(context_token_budget=600, embeddings=None)),
            RecallMiddleware(memory, capture_turns=True),
        ],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "only-thread"}}
    for i in range(12):
        turn = {"messages": [HumanMessage(long(i))]}
        if use_async:
            await agent.ainvoke(turn, cfg, context=RecallScope(scope_id="team:x"))
        else:
            agent.invoke(turn, cfg, context=RecallScope(scope_id="team:x"))
    assert len(memory.records("team:x")) >= 20  # the turns were captured...
    assert _recall_blocks(model) == []  # ...and never recalled to their own thread


def test_a_client_resending_its_history_without_ids_is_not_recalled_its_own_messages():
    model = ScriptedChatModel(script="Noted.")
    memory = ScopeMemory(InMemoryStore())
    agent = create_agent(
        model, middleware=[RecallMiddleware(memory, capture_turns=True)], context_schema=RecallScope
    )
    history: list[Any] = []
    questions = [
        "I am allergic to peanuts.",
        "I also avoid shellfish.",
        "Which of my allergies matter for a peanut satay?",
    ]
    for text in questions:
        history.append(HumanMessage(text))
        resent = [type(m)(m.content) for m in history]  # fresh objects, no ids (JSON)
        out = agent.invoke({"messages": resent}, context=RecallScope(scope_id="user:1"))
        history.append(AIMessage(out["messages"][-1].content))
    assert len(memory.records("user:1")) >= 2
    assert _recall_blocks(model) == []


async def test_a_hung_store_skips_recall_after_the_timeout():
    class HangingStore(InMemoryStore):
        async def abatch(self, ops: Any) -> Any:
            await asyncio.sleep(3600)

        def batch(self, ops: Any) -> Any:
            import time

            time.sleep(3600)

    model = ToolCallingScriptedModel(script="answer")
    memory = ScopeMemory(HangingStore(), timeout=0.3)
    agent = create_agent(model, middleware=[RecallMiddleware(memory)], context_schema=RecallScope)
    state = await asyncio.wait_for(
        agent.ainvoke({"messages": [HumanMessage("hi")]}, context=RecallScope(scope_id="u")), 10
    )
    assert state["messages"][-1].content == "answer"
    state = agent.invoke(
        {"messages": [HumanMessage("hi again")]}, context=RecallScope(scope_id="u")
    )
    assert state["messages"][-1].content == "answer"


def test_recall_timeout_is_validated():
    from langgraph_librarian.recall._scope import RecallConfigError

    for bad in (0, -1, "5", True):
        with pytest.raises(RecallConfigError, match="timeout"):
            ScopeMemory(InMemoryStore(), timeout=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("blank", [" ", "\n", "\t "])
def test_a_blank_scope_id_is_refused(blank):
    from langgraph_librarian.recall._scope import MissingScopeError, resolve_scope

    with pytest.raises(MissingScopeError):
        resolve_scope(RecallScope(scope_id=blank))


def test_line_separators_cannot_split_a_recalled_record():
    from langgraph_librarian.recall._render import _escape

    hostile = "a\u2028b\u2029c\x85d \uff1c/recalled_memory\uff1e <x>"
    escaped = _escape(hostile)
    assert len(escaped.splitlines()) == 1
    assert not {"\u2028", "\u2029", "\x85", "\uff1c", "\uff1e", "<", ">"} & set(escaped)


def test_concurrent_sync_recalls_do_not_queue_behind_each_other():
    """Each sync recall runs on a thread of its own: eight recalls that can only finish
    together (the store answers once all eight have asked) all finish; a shared pool of
    fewer threads made the last ones time out although the store was healthy."""
    import contextlib
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from langgraph_librarian.recall._turn import recall_for_turn

    callers = 8
    barrier = threading.Barrier(callers)

    class TogetherStore(InMemoryStore):
        def batch(self, ops: Any) -> Any:
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(timeout=10)
            return super().batch(ops)

    memory = ScopeMemory(TogetherStore(), timeout=8.0)

    def one(i: int) -> str:
        messages = [HumanMessage(f"question {i}", id=f"q{i}")]
        context = RecallScope(scope_id="u")
        return recall_for_turn(
            memory, context, messages, {"configurable": {"thread_id": str(i)}}
        ).status

    with ThreadPoolExecutor(callers) as pool:
        statuses = list(pool.map(one, range(callers)))
    assert statuses == ["empty"] * callers


def test_a_hung_store_does_not_pile_up_threads():
    """Each turn against a store that never answers left a thread behind, without bound
    (two a turn: recall and capture). Past a small cap turns fail at once, and the
    threads end when the store answers again."""
    import threading
    import time

    released = threading.Event()

    class HangingStore(InMemoryStore):
        def batch(self, ops: Any) -> Any:
            released.wait(30)
            return super().batch(ops)

    model = ToolCallingScriptedModel(script="answer")
    memory = ScopeMemory(HangingStore(), timeout=0.02)
    agent = create_agent(
        model, middleware=[RecallMiddleware(memory, capture_turns=True)], context_schema=RecallScope
    )

    def stuck() -> int:
        return sum(t.name == "librarian-recall" for t in threading.enumerate())

    before = stuck()  # another test's hung threads may still be sleeping
    try:
        for i in range(60):
            out = agent.invoke(
                {"messages": [HumanMessage(f"question {i}")]}, context=RecallScope(scope_id="u")
            )
            assert out["messages"][-1].content == "answer"
        assert stuck() <= before + 32
    finally:
        released.set()
    deadline = time.monotonic() + 10
    while stuck() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stuck() <= before


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_missing_scope_is_logged_once_a_turn_with_the_report_on(
    caplog, monkeypatch, asynchronous
):
    monkeypatch.delenv(SCOPE_ENV_VAR, raising=False)
    memory = ScopeMemory(InMemoryStore())
    model = ScriptedChatModel(script="Hello.")
    agent = agent_with(
        memory, model, middleware=[RecallMiddleware(memory, report=True, capture_turns=False)]
    )
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian.recall"):
        if asynchronous:
            result = asyncio.run(
                agent.ainvoke(
                    {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "x"}}
                )
            )
        else:
            result = run(agent, "x", None, "hi")
    errors = [
        r for r in caplog.records if "recall skipped: configuration problem" in r.getMessage()
    ]
    assert len(errors) == 1
    assert result["librarian_recall"]["status"] == "misconfigured"


@pytest.mark.parametrize("use_async", [False, True])
async def test_capture_does_not_wait_again_after_recall_found_the_store_silent(use_async):
    import threading

    class FreezableStore(InMemoryStore):
        def __init__(self) -> None:
            super().__init__()
            self.frozen = threading.Event()
            self.calls_while_frozen = 0

        def batch(self, ops: Any) -> Any:
            if self.frozen.is_set():
                self.calls_while_frozen += 1  # then hangs until thawed (at most 5 s)
                for _ in range(50):
                    if not self.frozen.is_set():
                        break
                    threading.Event().wait(0.1)
            return super().batch(ops)

        async def abatch(self, ops: Any) -> Any:
            return await asyncio.to_thread(self.batch, ops)

    store = FreezableStore()
    memory = ScopeMemory(store, timeout=0.3)
    model = ToolCallingScriptedModel(script="answer")
    agent = create_agent(
        model,
        middleware=[RecallMiddleware(memory, capture_turns=True)],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": f"silent-{use_async}"}}

    async def turn(text: str) -> Any:
        payload = {"messages": [HumanMessage(text)]}
        if use_async:
            return await agent.ainvoke(payload, cfg, context=RecallScope(scope_id="u"))
        return await asyncio.to_thread(
            agent.invoke, payload, cfg, context=RecallScope(scope_id="u")
        )

    await turn("I am allergic to sesame.")
    store.frozen.set()
    await turn("Is tahini a problem for me?")
    assert store.calls_while_frozen == 1  # recall waited once; capture did not wait again
    store.frozen.clear()
    await asyncio.sleep(0.6)  # the abandoned call finishes
    await turn("And hummus?")
    captured = [r.text for r in memory.records("u")]
    assert any("tahini" in text for text in captured)  # the skipped turn caught up
