"""Records of different threads (or captures) do not lend each other context in recall."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.recall import ScopeMemory

PAIRS = {
    "lena": ("My daughter Lena turns 7 on June 4.", "Lovely, happy early birthday to Lena!"),
    "novel": ("Recommend a sci-fi novel.", "Try Hyperion by Dan Simmons."),
}


def captured(order: list[str], memory: ScopeMemory | None = None) -> ScopeMemory:
    memory = memory or ScopeMemory(InMemoryStore())
    for k, name in enumerate(order):
        human, ai = PAIRS[name]
        exchange = [HumanMessage(human, id=f"h{k}"), AIMessage(ai, id=f"a{k}")]
        memory.capture("user:1", exchange, thread_id=f"thread-{name}")
    return memory


@pytest.mark.embeddings
@pytest.mark.parametrize("order", [["lena", "novel"], ["novel", "lena"]])
def test_the_record_saved_next_to_a_relevant_one_is_not_recalled_with_it(order) -> None:
    """Newcomer finding 02: "Recommend a sci-fi novel." came along with Lena's birthday."""
    result = captured(order).recall("user:1", "When is Lena's birthday?")
    assert {r.thread_id for r in result.records} == {"thread-lena"}
    assert [r.text for r in result.records] == list(PAIRS["lena"])  # the reply still comes


def test_breaks_separate_threads_captures_and_explicit_memories_only() -> None:
    from langgraph_librarian.recall._records import records_as_history

    memory = ScopeMemory(InMemoryStore())
    memory.capture("u", [HumanMessage("a1", id="1"), AIMessage("a2", id="2")], thread_id="A")
    memory.capture("u", [HumanMessage("b1", id="3")], thread_id="B")
    history = [HumanMessage("a1", id="1"), AIMessage("a2", id="2"), HumanMessage("a3", id="4")]
    memory.capture("u", history, thread_id="A")  # A goes on after B: not adjacent
    memory.remember("u", "explicit")
    messages, entries, slots = records_as_history(memory.records("u"))
    assert [m.text for m in messages] == ["a1", "a2", "", "b1", "", "a3", "", "explicit"]
    assert slots == [0, 1, -1, 2, -1, 3, -1, 4]
    assert [e.id for e in entries] == list(range(8))


def test_a_model_selectors_picks_map_back_to_records_past_the_breaks() -> None:
    selector = ScriptedChatModel(script="IDs: [3]")  # position 3: thread-novel's question
    config = LibrarianConfig(selector_model=selector, selector_keeps_local=False)
    memory = captured(["lena", "novel"], ScopeMemory(InMemoryStore(), config=config))
    result = memory.recall("user:1", "Which book did you suggest?")
    assert [r.text for r in result.records] == [PAIRS["novel"][0]]
    prompt = "\n".join(m.text for m in selector.calls[0])
    assert '"id": 2,' not in prompt and '"id": 3,' in prompt  # no break offered
