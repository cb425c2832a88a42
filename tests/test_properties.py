"""Random histories with deletions, edits and tool calls never hydrate a wrong message."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian._messages import content_hash
from langgraph_librarian.hydrate import hydrate
from langgraph_librarian.index import reconcile_index, update_index

WORDS = ["budget", "venue", "Lisbon", "flight", "hotel", "12,000", "changed", "instead", "menu"]


@st.composite
def histories(draw) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    if draw(st.booleans()):
        messages.append(SystemMessage("You are helpful.", id="sys"))
    n_turns = draw(st.integers(1, 8))
    counter = 0
    for t in range(n_turns):
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=40)))
        messages.append(HumanMessage(text, id=f"h{t}"))
        if draw(st.booleans()):
            n_calls = draw(st.integers(1, 3))
            calls = []
            for _ in range(n_calls):
                counter += 1
                calls.append(
                    {
                        "name": "tool",
                        "args": {"n": counter},
                        "id": f"c{counter}",
                        "type": "tool_call",
                    }
                )
            messages.append(AIMessage("", tool_calls=calls, id=f"ai{t}"))
            for call in calls:
                messages.append(
                    ToolMessage(
                        f"result {call['id']} " + text,
                        tool_call_id=call["id"],
                        id=f"tm-{call['id']}",
                    )
                )
        messages.append(AIMessage(f"answer {t} " + text, id=f"a{t}"))
    return messages


@st.composite
def mutated(draw):
    before = draw(histories())
    after = list(before)
    # delete some whole messages (tool results included, as RemoveMessage could)
    for _ in range(draw(st.integers(0, 3))):
        if len(after) > 1:
            after.pop(draw(st.integers(0, len(after) - 1)))
    # edit some in place (same id, new content)
    for _ in range(draw(st.integers(0, 2))):
        if after:
            i = draw(st.integers(0, len(after) - 1))
            m = after[i]
            after[i] = m.model_copy(update={"content": f"EDITED {m.content}"})
    after.append(HumanMessage("current question about the budget", id="current"))
    return before, after


def check_valid(curated: list[BaseMessage], history: list[BaseMessage]) -> None:
    positions = {id(m): i for i, m in enumerate(history)}
    assert all(id(m) in positions for m in curated), "hydrated a message not in history"
    order = [positions[id(m)] for m in curated]
    assert order == sorted(set(order)), "order or duplicates broken"
    assert curated[-1].id == "current"
    call_ids_present = {c["id"] for m in curated if isinstance(m, AIMessage) for c in m.tool_calls}
    for m in curated:
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in call_ids_present, "orphan tool message"
    results_present = {m.tool_call_id for m in curated if isinstance(m, ToolMessage)}
    results_in_history = {m.tool_call_id for m in history if isinstance(m, ToolMessage)}
    for m in curated:
        if isinstance(m, AIMessage):
            for call in m.tool_calls:
                if call["id"] in results_in_history:
                    assert call["id"] in results_present, "tool call without its results"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.lists(st.integers(-3, 60), max_size=12), st.integers(0, 4))
def test_reconcile_then_hydrate_is_always_valid(pair, picks, recent):
    before, after = pair
    config = LibrarianConfig()
    old = update_index(before, [], config).entries
    rec = reconcile_index(after, old)
    # every reused entry describes exactly the message now at its position
    for position, entry in enumerate(rec.entries):
        if entry is not None:
            assert entry.id == position
            assert entry.content_hash == content_hash(after[position])
    new = update_index(after, old, config).entries
    assert [e.id for e in new] == list(range(len(after)))
    assert [e.content_hash for e in new] == [content_hash(m) for m in after]
    hydrated = hydrate(after, picks, recent_turns=recent)
    check_valid(hydrated.messages, after)
    budgeted = hydrate(after, picks, recent_turns=recent, token_budget=60)
    check_valid(budgeted.messages, after)
