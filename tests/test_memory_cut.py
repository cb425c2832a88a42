"""Where the running summary cuts: whole turns, whole tool exchanges, never a tool first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_librarian._engine.messages import tool_groups
from langgraph_librarian.memory import build_model_input, history_problems, repair_history
from langgraph_librarian.memory._cut import plan_summary_cut
from test_trim_properties import SETTINGS, call, histories


def exchange(call_id: str) -> list:
    return [
        AIMessage("", tool_calls=[call(call_id)], id=f"ai-{call_id}"),
        ToolMessage(f"result {call_id}", tool_call_id=call_id, id=f"tool-{call_id}"),
    ]


def test_spec_default_keeps_the_last_two_messages():
    history = [HumanMessage(f"h{i}") if i % 2 == 0 else AIMessage(f"a{i}") for i in range(8)]
    cut = plan_summary_cut(history, keep_last=2)
    assert cut.summarize == list(range(6)) and cut.keep == [6, 7] and cut.turn_aligned


def test_cut_moves_back_to_the_turn_start_instead_of_splitting_a_tool_exchange():
    history = [
        HumanMessage("old"),
        AIMessage("old answer"),
        HumanMessage("find flights"),
        *exchange("c1"),
        AIMessage("found two"),
    ]
    cut = plan_summary_cut(history, keep_last=2)  # target lands on the ToolMessage
    assert cut.keep == [2, 3, 4, 5] and cut.summarize == [0, 1]


def test_one_long_turn_is_cut_between_exchanges_and_keeps_its_question():
    history = [
        SystemMessage("rules"),
        HumanMessage("plan my trip"),
        *exchange("c1"),
        *exchange("c2"),
        *exchange("c3"),
        AIMessage("done"),
    ]
    cut = plan_summary_cut(history, keep_last=3)
    assert not cut.turn_aligned
    assert cut.summarize == [2, 3, 4, 5]  # c1 and c2, never the system or the question
    kept = [history[p] for p in cut.keep]
    assert [m.type for m in kept] == ["system", "human", "ai", "tool", "ai"]


def test_history_starting_with_a_tool_message_is_never_left_starting_with_one():
    history = [
        ToolMessage("stale", tool_call_id="gone", id="t0"),
        ToolMessage("stale", tool_call_id="gone2", id="t1"),
        HumanMessage("hi", id="h"),
        AIMessage("hello", id="a"),
    ]
    cut = plan_summary_cut(history, keep_last=4)
    assert cut.summarize == []  # nothing old enough yet
    cut = plan_summary_cut(history, keep_last=3)
    assert cut.summarize == [0, 1] and cut.keep == [2, 3]


def test_keep_last_zero_summarizes_everything_but_system_messages():
    history = [SystemMessage("rules"), HumanMessage("a"), AIMessage("b")]
    cut = plan_summary_cut(history, keep_last=0)
    assert cut.summarize == [1, 2] and cut.keep == [0]


@SETTINGS
@given(histories(), st.integers(0, 8))
def test_cut_properties_on_random_histories(history, keep_last):
    n = len(history)
    cut = plan_summary_cut(history, keep_last)
    assert sorted(cut.summarize + cut.keep) == list(range(n))
    assert all(history[p].type != "system" for p in cut.summarize)
    groups = tool_groups(history)
    summarized = set(cut.summarize)
    for members in groups.values():
        assert len({p in summarized for p in members}) == 1, "tool exchange split"
    for p in range(max(0, n - keep_last), n):
        orphan = history[p].type == "tool" and p not in groups
        assert p in cut.keep or orphan, "a recent message was summarized"
    kept = [history[p] for p in cut.keep if history[p].type != "system"]
    if cut.summarize and kept:
        assert kept[0].type != "tool"
        if cut.turn_aligned:
            assert kept[0].type == "human"


@SETTINGS
@given(histories(), st.integers(0, 8), st.booleans())
def test_a_valid_history_stays_valid_after_the_cut_without_any_repair(raw, keep_last, human_first):
    history = repair_history(raw, require_human_first=human_first)
    cut = plan_summary_cut(history, keep_last)
    kept = [history[p] for p in cut.keep]
    model_input = build_model_input(kept, "- summary", repair=False)
    assert history_problems(model_input, require_human_first=human_first) == []
    assert [m for m in model_input if m.type != "system"] == [m for m in kept if m.type != "system"]


def test_an_orphan_result_behind_a_system_message_is_not_left_first():
    history = [
        AIMessage("a", id="a0"),
        AIMessage("b", id="a1"),
        SystemMessage("rules", id="s2"),
        ToolMessage("stale", tool_call_id="ghost", id="t3"),
        HumanMessage("hi", id="h4"),
        HumanMessage("hi again", id="h5"),
    ]
    cut = plan_summary_cut(history, keep_last=4)
    kept = [history[p].id for p in cut.keep]
    assert kept == ["s2", "h4", "h5"] and cut.summarize == [0, 1, 3]


def test_exchange_spanning_a_turn_start_moves_the_cut_to_an_earlier_turn():
    # A malformed history: a human message landed between a tool call and its result.
    history = [
        HumanMessage("a", id="1"),
        AIMessage("b", id="2"),
        AIMessage("", tool_calls=[call("c1")], id="3"),
        HumanMessage("interrupting", id="4"),
        ToolMessage("r", tool_call_id="c1", id="5"),
        AIMessage("z", id="6"),
    ]
    cut = plan_summary_cut(history, keep_last=2)
    # no earlier turn to cut at: fall back to exchanges, keeping the question
    assert cut.summarize == [1] and not cut.turn_aligned and cut.keep[0] == 0
    history.insert(0, AIMessage("greeting", id="0"))
    history.insert(0, HumanMessage("first", id="-1"))
    cut = plan_summary_cut(history, keep_last=2)
    assert cut.summarize == [0, 1] and history[cut.keep[0]].type == "human"
