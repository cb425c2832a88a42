"""The three memory tools, run by a create_agent ToolNode with the scope in the run context."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from fakes import ToolCallingScriptedModel
from langgraph_librarian.recall import RecallScope, ScopeMemory, create_memory_tools
from langgraph_librarian.recall._render import NO_MATCH
from langgraph_librarian.recall._scope import SCOPE_ENV_VAR
from test_recall_helpers import FlakyStore


def calling(name: str, args: dict[str, Any]) -> ToolCallingScriptedModel:
    """A model that makes one tool call, then answers with what the tool said."""

    def decide(messages: list[Any]) -> AIMessage:
        if isinstance(messages[-1], HumanMessage):
            return AIMessage("", tool_calls=[{"name": name, "args": args, "id": "call-1"}])
        return AIMessage(f"tool said: {messages[-1].content}")

    return ToolCallingScriptedModel(script=decide)


def use_tool(
    memory: ScopeMemory,
    name: str,
    args: dict[str, Any],
    context: Any = None,
    *,
    include_remember: bool = True,
) -> str:
    agent = create_agent(
        calling(name, args),
        tools=create_memory_tools(memory, include_remember=include_remember),
        context_schema=RecallScope,
    )
    result = agent.invoke(
        {"messages": [HumanMessage("go")]},
        {"configurable": {"thread_id": "tool-thread"}},
        context=context if context is not None else RecallScope(scope_id="user:42"),
    )
    (tool_message,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    return str(tool_message.content)


async def ause_tool(memory: ScopeMemory, name: str, args: dict[str, Any]) -> str:
    agent = create_agent(
        calling(name, args), tools=create_memory_tools(memory), context_schema=RecallScope
    )
    result = await agent.ainvoke(
        {"messages": [HumanMessage("go")]}, context=RecallScope(scope_id="user:42")
    )
    (tool_message,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    return str(tool_message.content)


def result_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.fixture
def memory() -> ScopeMemory:
    memory = ScopeMemory(InMemoryStore())
    for n in range(25):
        memory.remember("user:42", f"Garden note {n}: the tomatoes need water on day {n}.")
    memory.remember("tenant:b", "Tenant B secret: the vault code is 9911.")
    return memory


def test_tools_take_no_scope_argument():
    tools = create_memory_tools(ScopeMemory(InMemoryStore()))
    assert [t.name for t in tools] == ["memory_search", "memory_remember", "memory_context"]
    fields = [set(t.tool_call_schema.model_json_schema()["properties"]) for t in tools]
    assert fields == [{"query", "limit"}, {"text"}, {"query"}]
    without = create_memory_tools(ScopeMemory(InMemoryStore()), include_remember=False)
    assert [t.name for t in without] == ["memory_search", "memory_context"]


def test_search_defaults_to_five_and_caps_at_twenty(memory):
    assert len(result_lines(use_tool(memory, "memory_search", {"query": "tomatoes water"}))) == 5
    capped = use_tool(memory, "memory_search", {"query": "tomatoes water", "limit": 50})
    assert len(result_lines(capped)) == 20
    assert "UNTRUSTED" in capped


def test_search_refuses_bad_requests_and_reports_misses(memory):
    assert use_tool(memory, "memory_search", {"query": "  "}).startswith("invalid request:")
    zero = use_tool(memory, "memory_search", {"query": "tomatoes", "limit": 0})
    assert zero.startswith("invalid request:")
    assert use_tool(memory, "memory_search", {"query": "submarine sonar"}) == NO_MATCH
    # a malformed argument is answered by the tool node, the graph keeps running
    assert "error" in use_tool(memory, "memory_search", {"query": "x", "limit": "many"}).lower()


def test_a_scope_argument_from_the_model_cannot_reach_another_tenant(memory):
    out = use_tool(memory, "memory_search", {"query": "vault code secret", "scope_id": "tenant:b"})
    assert "9911" not in out


def test_remember_writes_to_the_run_scope_with_provenance(memory):
    out = use_tool(memory, "memory_remember", {"text": "Prefers tea over coffee."})
    assert out.startswith("remembered (id ")
    (record,) = [r for r in memory.records("user:42") if "tea" in r.text]
    assert record.thread_id == "tool-thread" and record.kind == "explicit"
    assert not [r for r in memory.records("tenant:b") if "tea" in r.text]


def test_remember_can_be_disabled_per_scope_or_left_out(memory):
    before = len(memory.records("user:42"))
    scope = RecallScope(scope_id="user:42", allow_remember=False)
    out = use_tool(memory, "memory_remember", {"text": "Likes jazz."}, scope)
    assert out.startswith("invalid request:") and "disabled" in out
    too_long = use_tool(memory, "memory_remember", {"text": "x" * 5000})
    assert too_long.startswith("invalid request:")
    assert len(memory.records("user:42")) == before
    out = use_tool(memory, "memory_remember", {"text": "Likes jazz."}, include_remember=False)
    assert "memory_remember is not a valid tool" in out


def test_remember_policy_by_scope(memory):
    agent = create_agent(
        calling("memory_remember", {"text": "Team prefers tabs."}),
        tools=create_memory_tools(memory, can_remember=lambda scope: scope.startswith("user:")),
        context_schema=RecallScope,
    )
    for scope, allowed in (("user:42", True), ("team:core", False)):
        result = agent.invoke({"messages": [HumanMessage("go")]}, context=RecallScope(scope))
        (answer,) = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
        assert answer.startswith("remembered") is allowed
        assert bool([r for r in memory.records(scope) if "tabs" in r.text]) is allowed


def test_context_is_bounded_and_distinguishes_misses(memory):
    scope = RecallScope(scope_id="user:42", max_bytes=700)
    out = use_tool(memory, "memory_context", {"query": "tomatoes water day"}, scope)
    assert "<recalled_memory>" in out and len(out.encode("utf-8")) <= 700
    assert use_tool(memory, "memory_context", {"query": "submarine sonar"}) == NO_MATCH


def test_a_100k_query_is_accepted(memory):
    query = "tomatoes " + "very long question " * 6000
    assert len(result_lines(use_tool(memory, "memory_search", {"query": query}))) == 5


@pytest.mark.parametrize("name", ["memory_search", "memory_remember", "memory_context"])
def test_failures_are_unavailable_strings_not_misses_or_exceptions(name):
    store = FlakyStore()
    memory = ScopeMemory(store)
    store.down = True
    args = {"text": "x"} if name == "memory_remember" else {"query": "tomatoes"}
    out = use_tool(memory, name, args)
    assert out.startswith("memory unavailable: the memory store failed (StoreDown)")
    assert out != NO_MATCH


@pytest.mark.parametrize("name", ["memory_search", "memory_remember", "memory_context"])
async def test_async_failures_are_unavailable_strings(name):
    store = FlakyStore()
    memory = ScopeMemory(store)
    store.down = True
    args = {"text": "x"} if name == "memory_remember" else {"query": "tomatoes"}
    out = await ause_tool(memory, name, args)
    assert out.startswith("memory unavailable:")


async def test_async_tools_work(memory):
    assert len(result_lines(await ause_tool(memory, "memory_search", {"query": "tomatoes"}))) == 5
    assert (await ause_tool(memory, "memory_remember", {"text": "Owns a cat."})).startswith(
        "remembered"
    )
    out = await ause_tool(memory, "memory_context", {"query": "cat"})
    assert "Owns a cat." in out


def test_missing_scope_is_reported_to_the_model(monkeypatch, memory):
    monkeypatch.delenv(SCOPE_ENV_VAR, raising=False)
    out = use_tool(memory, "memory_search", {"query": "tomatoes"}, context=RecallScope())
    assert out == "memory unavailable: no memory scope is set for this conversation"
