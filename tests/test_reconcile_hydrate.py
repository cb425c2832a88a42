from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from helpers import conversation, tool_exchange
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.hydrate import hydrate
from langgraph_librarian.index import reconcile_index, update_index


def indexed(messages):
    return update_index(messages, [], LibrarianConfig()).entries


def test_reconcile_by_identity_not_position():
    messages = conversation(4)
    entries = indexed(messages)
    shifted = messages[2:]  # the first turn was removed
    rec = reconcile_index(shifted, entries)
    assert rec.missing == []
    assert rec.dropped == 2
    assert [e.message_id for e in rec.complete()] == [m.id for m in shifted]
    assert [e.id for e in rec.complete()] == list(range(len(shifted)))


def test_edit_needs_resummarizing():
    messages = conversation(3)
    entries = indexed(messages)
    edited = list(messages)
    edited[1] = AIMessage(content="completely different", id=messages[1].id)
    rec = reconcile_index(edited, entries)
    assert rec.missing == [1]


def test_resent_history_without_ids_reuses_summaries():
    messages = conversation(3, with_ids=False)
    entries = indexed(messages)
    rec = reconcile_index(conversation(3, with_ids=False), entries)
    assert rec.missing == []
    assert rec.reused == 0  # same content keys
    with_ids = conversation(3, with_ids=True)
    rec = reconcile_index(with_ids, entries)
    assert rec.missing == [] and rec.reused == len(with_ids)


def test_duplicate_messages_without_ids_keep_distinct_entries():
    messages = [HumanMessage("same"), AIMessage("x"), HumanMessage("same")]
    entries = indexed(messages)
    assert len({e.message_id for e in entries}) == 3


def test_hydrate_keeps_tool_exchanges_whole():
    messages = [
        SystemMessage("sys", id="s"),
        HumanMessage("book a flight", id="q1"),
        *tool_exchange("c1"),
        AIMessage("done", id="r1"),
        HumanMessage("and a hotel?", id="q2"),
        AIMessage("sure", id="r2"),
        HumanMessage("current question", id="q3"),
    ]
    # selecting the tool result pulls in its call, and vice versa
    for pick in (3, 2):
        result = hydrate(messages, [pick], recent_turns=1)
        ids = [m.id for m in result.messages]
        assert ids == ["s", "q1", "t-ai-c1", "t-tool-c1", "q3"]  # with its turn's opener


def test_hydrate_multi_call_exchange_and_orphans():
    ai = AIMessage(
        content="",
        id="ai",
        tool_calls=[
            {"name": "a", "args": {}, "id": "x", "type": "tool_call"},
            {"name": "b", "args": {}, "id": "y", "type": "tool_call"},
        ],
    )
    messages = [
        HumanMessage("q", id="q"),
        ai,
        ToolMessage("rx", tool_call_id="x", id="tx"),
        ToolMessage("ry", tool_call_id="y", id="ty"),
        ToolMessage("orphan", tool_call_id="zzz", id="orphan"),
        HumanMessage("now", id="now"),
    ]
    result = hydrate(messages, [3, 4, 99, -1, 3], recent_turns=1)
    assert [m.id for m in result.messages] == ["q", "ai", "tx", "ty", "now"]  # opener too
    assert result.selected == [3]


def test_hydrate_order_duplicates_and_recent_turns():
    messages = conversation(5)
    result = hydrate(messages, [4, 0, 4, 9], recent_turns=2)
    positions = result.positions
    assert positions == sorted(set(positions))
    assert {0, 4} <= set(positions)
    assert positions[-4:] == [6, 7, 8, 9]


def tokens(messages):
    from langchain_core.messages.utils import count_tokens_approximately

    return count_tokens_approximately(messages)


def test_hydrate_budget_keeps_room_for_the_selection():
    messages = conversation(6)  # 12 messages of ~100 tokens each
    full = hydrate(messages, [0, 2, 4], recent_turns=3)
    assert full.selected == [0, 2, 4]
    small = hydrate(messages, [0, 2, 4], recent_turns=3, token_budget=500)
    current = [m for m in small.messages if m.id in {"h5", "a5"}]
    assert len(current) == 2  # the current turn is always there, in full
    assert tokens(small.messages) <= 500
    # earlier recent turns take at most their share; the selection gets the rest, in rank order
    earlier = [m for m in small.messages if m.id in {"h3", "a3", "h4", "a4"}]
    assert tokens(earlier) <= 0.35 * 500
    assert small.selected == full.selected[: len(small.selected)] and small.selected
    assert small.dropped_for_budget == full.selected[len(small.selected) :]
    tiny = hydrate(messages, [0], recent_turns=3, token_budget=10)
    assert [m.id for m in tiny.messages] == ["h5", "a5"]  # current turn is never dropped


def test_unused_selection_budget_goes_back_to_recent_turns():
    messages = conversation(6)
    nothing_selected = hydrate(messages, [], recent_turns=3, token_budget=700)
    ids = [m.id for m in nothing_selected.messages]
    assert ids[:2] == ["h3", "a3"] or ids[:2] == ["h4", "a4"]  # earlier turns came back
    assert tokens(nothing_selected.messages) <= 700


def test_long_recent_messages_are_shortened_before_selection_is_cut():
    messages = conversation(6)
    summaries = {p: f"summary of message {p}" for p in range(len(messages))}
    plain = hydrate(messages, [0, 2], recent_turns=3, token_budget=560)
    short = hydrate(messages, [0, 2], recent_turns=3, token_budget=560, summaries=summaries)
    assert short.compacted  # some earlier recent messages in short form...
    compact = [m for m in short.messages if m.additional_kwargs.get("librarian_compact")]
    assert compact and all("summary of message" in m.content for m in compact)
    # ...so more of the recent context fits, within its share, next to the best selection
    assert len(short.messages) > len(plain.messages)
    assert short.selected[0] == plain.selected[0] == 0
    assert tokens(short.messages) <= 560


def test_hydrate_counter_is_used():
    messages = conversation(3)
    calls = []

    def counter(msgs):
        calls.append(len(msgs))
        return 1

    hydrate(messages, [0], recent_turns=1, token_budget=100, token_counter=counter)
    assert calls
