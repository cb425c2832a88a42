"""``RecallMiddleware(report=True)``: what a turn recalled, in ``state["librarian_recall"]``."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_librarian.recall import RecallMiddleware, RecallScope, ScopeMemory


class CountingStore(InMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        self.reads += sum(type(op).__name__ in {"SearchOp", "GetOp"} for op in ops)
        return super().batch(ops)


def _agent(memory: ScopeMemory, report: bool) -> Any:
    model = GenericFakeChatModel(messages=iter(["Noted.", "No nuts then.", "Hello."] * 2))
    return create_agent(
        model,
        middleware=[RecallMiddleware(memory, capture_turns=True, report=report)],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )


def _ask(agent: Any, thread: str, scope: str, text: str) -> dict[str, Any]:
    return agent.invoke(  # type: ignore[no-any-return]
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=RecallScope(scope_id=scope),
    )


def test_the_turns_recall_is_in_state_with_its_provenance() -> None:
    store = CountingStore()
    agent = _agent(ScopeMemory(store), report=True)
    first = _ask(agent, "t1", "user:1", "I'm allergic to peanuts and tree nuts.")
    assert first["librarian_recall"]["status"] == "empty"
    before = store.reads
    state = _ask(agent, "t2", "user:1", "Which nuts should I avoid?")
    recall = state["librarian_recall"]
    assert recall["status"] == "recalled" and recall["scope"] == "user:1"
    allergy = [r for r in recall["records"] if "peanuts" in r["text"]]
    assert allergy and allergy[0]["thread_id"] == "t1" and allergy[0]["message_id"]
    # The report reuses the turn's recall: no read beyond what the same turn makes
    # without a report.
    plain_store = CountingStore()
    plain = _agent(ScopeMemory(plain_store), report=False)
    _ask(plain, "t1", "user:1", "I'm allergic to peanuts and tree nuts.")
    plain_before = plain_store.reads
    _ask(plain, "t2", "user:1", "Which nuts should I avoid?")
    assert store.reads - before == plain_store.reads - plain_before > 0
    assert _ask(agent, "t3", "user:2", "Which nuts?")["librarian_recall"]["status"] == "empty"
    # Nothing recalled went into the thread's messages.
    assert [m.type for m in state["messages"]] == ["human", "ai"]


def test_no_report_unless_asked() -> None:
    agent = _agent(ScopeMemory(InMemoryStore()), report=False)
    _ask(agent, "t1", "user:1", "I'm allergic to peanuts.")
    state = _ask(agent, "t2", "user:1", "Which nuts should I avoid?")
    assert "librarian_recall" not in state


async def test_the_async_path_reports_too() -> None:
    agent = _agent(ScopeMemory(InMemoryStore()), report=True)
    await agent.ainvoke(
        {"messages": [HumanMessage("I'm allergic to peanuts and tree nuts.")]},
        {"configurable": {"thread_id": "a1"}},
        context=RecallScope(scope_id="u"),
    )
    state = await agent.ainvoke(
        {"messages": [HumanMessage("Which nuts should I avoid?")]},
        {"configurable": {"thread_id": "a2"}},
        context=RecallScope(scope_id="u"),
    )
    assert state["librarian_recall"]["status"] == "recalled"
