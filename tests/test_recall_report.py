"""``RecallMiddleware(report=True)``: what a turn recalled, in ``state["librarian_recall"]``."""

from __future__ import annotations

from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

from langgraph_librarian.recall import (
    RecallMiddleware,
    RecallScope,
    ScopeMemory,
    create_capture_node,
    create_recall_hook,
)


class HookState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    llm_input_messages: list[AnyMessage]
    librarian_recall: dict[str, Any]


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


def test_the_hook_reports_into_a_state_key_when_asked() -> None:
    def model(state: HookState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"read {len(state['llm_input_messages'])}")]}

    memory = ScopeMemory(InMemoryStore())
    builder = StateGraph(HookState, context_schema=RecallScope)
    builder.add_node("recall", create_recall_hook(memory, report=True))
    builder.add_node("model", model)
    builder.add_node("capture", create_capture_node(memory))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_edge("model", "capture")
    builder.add_edge("capture", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    scope = RecallScope(scope_id="project:api")
    graph.invoke(
        {"messages": [HumanMessage("API versions go in the URL path.")]},
        {"configurable": {"thread_id": "a"}},
        context=scope,
    )
    state = graph.invoke(
        {"messages": [HumanMessage("Where do API versions go?")]},
        {"configurable": {"thread_id": "b"}},
        context=scope,
    )
    recall = state["librarian_recall"]
    assert recall["status"] == "recalled"
    assert any(r["thread_id"] == "a" and "URL path" in r["text"] for r in recall["records"])
    plain = create_recall_hook(memory)({"messages": [HumanMessage("Where?")]})
    assert "librarian_recall" not in plain
