"""The pre_model_hook-style recall node and the capture node in a hand-built StateGraph."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

from fakes import ScriptedChatModel
from langgraph_librarian.recall import (
    RecallScope,
    ScopeMemory,
    create_capture_node,
    create_recall_hook,
)
from langgraph_librarian.recall._result import RECALL_MESSAGE_ID
from langgraph_librarian.recall._scope import SCOPE_ENV_VAR
from test_recall_helpers import FlakyStore

ALLERGY = "Please remember that I have a severe nut allergy."


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    llm_input_messages: list[AnyMessage]


def graph_for(memory: ScopeMemory, model: ScriptedChatModel) -> Any:
    def call_model(state: State) -> dict[str, Any]:
        model_input = state.get("llm_input_messages") or state["messages"]
        return {"messages": [model.invoke(model_input)]}

    async def acall_model(state: State) -> dict[str, Any]:
        model_input = state.get("llm_input_messages") or state["messages"]
        return {"messages": [await model.ainvoke(model_input)]}

    builder = StateGraph(State, context_schema=RecallScope)
    builder.add_node("recall", create_recall_hook(memory))
    builder.add_node("model", RunnableLambda(call_model, afunc=acall_model))
    builder.add_node("capture", create_capture_node(memory))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_edge("model", "capture")
    builder.add_edge("capture", END)
    return builder.compile(checkpointer=InMemorySaver())


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_hook_writes_recall_then_originals_and_never_touches_messages():
    store = FlakyStore()
    memory = ScopeMemory(store)
    model = ScriptedChatModel(script="noted")
    graph = graph_for(memory, model)
    scope = RecallScope(scope_id="user:42")
    graph.invoke({"messages": [HumanMessage(ALLERGY)]}, cfg("t1"), context=scope)
    assert [r.text for r in memory.records("user:42")] == [ALLERGY, "noted"]  # captured
    state = graph.invoke(
        {"messages": [HumanMessage("Dessert with nuts?")]}, cfg("t2"), context=scope
    )
    first = state["llm_input_messages"][0]
    assert first.id == RECALL_MESSAGE_ID and ALLERGY in first.content
    assert state["llm_input_messages"][1:] == state["messages"][:-1]
    assert model.calls[-1] == state["llm_input_messages"]
    assert all(m.id != RECALL_MESSAGE_ID for m in state["messages"])


def test_hook_overwrites_the_channel_on_failure_paths():
    store = FlakyStore()
    memory = ScopeMemory(store)
    memory.remember("user:42", "Severe nut allergy.")
    model = ScriptedChatModel(script="ok")
    graph = graph_for(memory, model)
    scope = RecallScope(scope_id="user:42")
    state = graph.invoke({"messages": [HumanMessage("nut allergy?")]}, cfg("t"), context=scope)
    assert state["llm_input_messages"][0].id == RECALL_MESSAGE_ID
    store.down = True  # next turn fails: last turn's recall must not be reused
    state = graph.invoke(
        {"messages": [HumanMessage("nut allergy again?")]}, cfg("t"), context=scope
    )
    assert state["llm_input_messages"] == state["messages"][:-1]
    assert model.calls[-1] == state["messages"][:-1]
    store.down = False
    state = graph.invoke({"messages": [HumanMessage("Tell me a joke")]}, cfg("t"), context=scope)
    assert state["llm_input_messages"] == state["messages"][:-1]  # empty recall, same rule


def test_hook_without_scope_still_writes_the_channel(monkeypatch):
    monkeypatch.delenv(SCOPE_ENV_VAR, raising=False)
    memory = ScopeMemory(store_with_allergy())
    hook = create_recall_hook(memory)
    messages = [SystemMessage("rules"), HumanMessage("nut allergy?")]
    assert hook({"messages": messages}) == {"llm_input_messages": messages}


def store_with_allergy() -> InMemoryStore:
    store = InMemoryStore()
    ScopeMemory(store).remember("user:42", "Severe nut allergy.")
    return store


def test_hook_called_directly_uses_the_environment_scope(monkeypatch):
    monkeypatch.setenv(SCOPE_ENV_VAR, "user:42")
    hook = create_recall_hook(ScopeMemory(store_with_allergy()))
    out = hook({"messages": [SystemMessage("rules"), HumanMessage("nut allergy?")]})
    assert [m.id for m in out["llm_input_messages"]][1] == RECALL_MESSAGE_ID  # after "rules"


async def test_async_graph_recalls_and_fails_open():
    store = FlakyStore()
    memory = ScopeMemory(store)
    model = ScriptedChatModel(script="noted")
    graph = graph_for(memory, model)
    scope = RecallScope(scope_id="user:42")
    await graph.ainvoke({"messages": [HumanMessage(ALLERGY)]}, cfg("a1"), context=scope)
    state = await graph.ainvoke(
        {"messages": [HumanMessage("nut dessert?")]}, cfg("a2"), context=scope
    )
    assert state["llm_input_messages"][0].id == RECALL_MESSAGE_ID
    assert model.async_calls == 2
    store.down = True
    state = await graph.ainvoke(
        {"messages": [HumanMessage("nut dessert again?")]}, cfg("a2"), context=scope
    )
    assert state["llm_input_messages"] == state["messages"][:-1]
    assert isinstance(state["messages"][-1], AIMessage)
