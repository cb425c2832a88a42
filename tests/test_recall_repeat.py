"""A question asked again in a new thread recalls the answer it got in the earlier one."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from fakes import ScriptedChatModel
from langgraph_librarian.recall import RecallMiddleware, RecallScope, ScopeMemory

TRAIN = "Which train goes to the airport?"
ANSWER = "Take the S7 line from Central, every 10 minutes."
TAHINI = "is tahini sauce a problem for me?"
SESAME = "I'm allergic to sesame."


def answers(table: dict[str, str]) -> Any:
    def reply(messages: list[BaseMessage]) -> str:
        asked = [m for m in messages if m.type == "human"][-1].text
        return table.get(asked, "Sure.")

    return reply


def agent_on(store: InMemoryStore, table: dict[str, str]) -> Any:
    return create_agent(
        ScriptedChatModel(script=answers(table)),
        middleware=[RecallMiddleware(ScopeMemory(store), capture_turns=True, report=True)],
        context_schema=RecallScope,
        checkpointer=InMemorySaver(),
    )


def ask(agent: Any, thread: str, text: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    state = agent.invoke(
        {"messages": [HumanMessage(text)]}, config, context=RecallScope(scope_id="user:1")
    )
    return state["librarian_recall"]


@pytest.mark.embeddings
def test_the_identical_question_in_a_new_thread_recalls_the_earlier_answer() -> None:
    """Newcomer finding 03: the same words again gave ``empty``; "... again?" worked."""
    agent = agent_on(InMemoryStore(), {TRAIN: ANSWER})
    ask(agent, "t1", TRAIN)
    again = ask(agent, "t2", TRAIN)
    assert again["status"] == "recalled"
    texts = [r["text"] for r in again["records"]]
    assert ANSWER in texts
    assert TRAIN not in texts  # the earlier copy of the question is never recalled itself


@pytest.mark.embeddings
def test_a_question_repeated_across_threads_still_recalls_the_fact_not_the_echo() -> None:
    """Issue 18 through the middleware: asked in B, asked again in C; A's fact answers."""
    agent = agent_on(InMemoryStore(), {})
    ask(agent, "A", SESAME)
    for n in range(3):
        ask(agent, f"T{n}", f"Weather in Paris on day {n}?")
    ask(agent, "B", TAHINI)
    again = ask(agent, "C", TAHINI)
    texts = [r["text"] for r in again["records"]]
    assert SESAME in texts
    assert TAHINI not in texts
    assert len(texts) == len(set(texts))


def test_the_thread_that_asks_never_gets_its_own_messages_back() -> None:
    """Leaving the question in by hash must not bring the thread's own turns back."""
    store = InMemoryStore()
    agent = agent_on(store, {TRAIN: ANSWER})
    ask(agent, "t1", TRAIN)
    again = ask(agent, "t1", TRAIN)
    assert again["status"] == "empty"
    assert "only what this thread already has" in again["reason"]


def test_a_model_selector_picking_the_earlier_question_gets_its_answer_instead() -> None:
    from langgraph_librarian import LibrarianConfig

    selector = ScriptedChatModel(script="IDs: [0]")  # the earlier copy of the question
    config = LibrarianConfig(selector_model=selector, selector_keeps_local=False)
    memory = ScopeMemory(InMemoryStore(), config=config)
    memory.capture("u", [HumanMessage(TRAIN, id="q"), AIMessage(ANSWER, id="a")], thread_id="t1")
    memory.capture("u", [HumanMessage("My cat is Miso.", id="c")], thread_id="t3")
    result = memory.recall("u", TRAIN)
    assert result.strategy == "llm"
    assert [r.text for r in result.records] == [ANSWER]
