"""Trimming, filtering and repairing histories: the result is always provider-valid.

``history_problems`` is the one validity checker; it is itself tested on hand-made
invalid histories first, so the property tests cannot pass with a lenient checker.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    filter_messages,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_openai.chat_models.base import _convert_message_to_dict

from langgraph_librarian.memory import (
    filter_history,
    history_problems,
    repair_history,
    summary_message,
    trim_history,
)

WORDS = ["nuts", "curry", "Thursday", "oat", "milk", "12", "allergic", "tart", "rice", "basil"]


def call(call_id: str | None, name: str = "lookup") -> dict:
    return {"name": name, "args": {"q": call_id}, "id": call_id, "type": "tool_call"}


def invalid_call(call_id: str | None, name: str = "lookup") -> dict:
    """A call whose arguments did not parse (``ToolNode`` never answers it)."""
    return {
        "name": name,
        "args": "{oops",
        "id": call_id,
        "error": "bad json",
        "type": "invalid_tool_call",
    }


def raw_call(call_id: str) -> dict:
    """A call as older integrations keep it in ``additional_kwargs["tool_calls"]``."""
    return {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


def openai_payload(messages: list[BaseMessage]) -> list[dict]:
    return [_convert_message_to_dict(m) for m in messages]


def unanswered_calls(payload: list[dict]) -> list[str]:
    """Tool call ids the OpenAI API would reject: sent without a tool reply after them."""
    missing: list[str] = []
    for i, item in enumerate(payload):
        wanted = [c["id"] for c in item.get("tool_calls") or []]
        replies = set()
        for later in payload[i + 1 :]:
            if later.get("role") != "tool":
                break
            replies.add(later.get("tool_call_id"))
        missing.extend(c for c in wanted if c not in replies)
    return missing


# -- the checker ----


def test_checker_accepts_a_valid_history():
    history = [
        SystemMessage("a"),
        SystemMessage("b"),
        HumanMessage("hi"),
        AIMessage("", tool_calls=[call("c1"), call("c2")]),
        ToolMessage("r1", tool_call_id="c1"),
        ToolMessage("r2", tool_call_id="c2"),
        AIMessage("done"),
    ]
    assert history_problems(history) == []


def test_checker_flags_every_rule():
    assert history_problems([HumanMessage("hi"), SystemMessage("late")]) == [
        "1: system message after the conversation started"
    ]
    assert history_problems([AIMessage("hello"), HumanMessage("hi")]) == [
        "0: first conversational message is ai, not human"
    ]
    assert history_problems([AIMessage("hello")], require_human_first=False) == []
    assert history_problems(
        [
            HumanMessage("q"),
            AIMessage("", tool_calls=[call("c1"), call("c2")]),
            ToolMessage("r", tool_call_id="c1"),
        ]
    ) == ["1: tool call c2 has no result"]
    assert history_problems([HumanMessage("q"), ToolMessage("r", tool_call_id="zz")]) == [
        "1: orphan tool result zz"
    ]
    # result separated from its call by another message
    assert history_problems(
        [
            HumanMessage("q"),
            AIMessage("", tool_calls=[call("c1")]),
            HumanMessage("x"),
            ToolMessage("r", tool_call_id="c1"),
        ]
    ) == ["1: tool call c1 has no result", "3: orphan tool result c1"]
    assert history_problems(
        [
            HumanMessage("q"),
            AIMessage("", tool_calls=[call("c1")]),
            ToolMessage("r", tool_call_id="c1"),
            ToolMessage("again", tool_call_id="c1"),
        ]
    ) == ["3: duplicate tool result c1"]
    problems = history_problems([HumanMessage("q"), AIMessage("", tool_calls=[call(None)])])
    assert problems == ["1: tool call without an id"]


def test_checker_counts_every_call_a_provider_sends():
    bad = AIMessage("", invalid_tool_calls=[invalid_call("c1")])
    assert history_problems([HumanMessage("q"), bad, HumanMessage("again?")]) == [
        "1: tool call c1 has no result"
    ]
    answered = [HumanMessage("q"), bad, ToolMessage("bad args", tool_call_id="c1")]
    assert history_problems(answered) == []
    legacy = AIMessage("Let me check.", additional_kwargs={"tool_calls": [raw_call("c2")]})
    assert history_problems([HumanMessage("q"), legacy]) == ["1: tool call c2 has no result"]


# -- hand-made repairs ----


def test_history_starting_with_a_tool_message_is_repaired():
    history = [ToolMessage("stale", tool_call_id="gone"), AIMessage("ok"), HumanMessage("hi")]
    fixed = repair_history(history)
    assert [m.content for m in fixed] == ["hi"]
    fixed_loose = repair_history(history, require_human_first=False)
    assert [m.content for m in fixed_loose] == ["ok", "hi"]


def test_unanswered_call_is_stripped_but_text_survives():
    ai = AIMessage("Let me check.", tool_calls=[call("c1"), call("c2")], id="ai")
    history = [HumanMessage("q"), ai, ToolMessage("r1", tool_call_id="c1")]
    fixed = repair_history(history)
    assert history_problems(fixed) == []
    assert [c["id"] for c in fixed[1].tool_calls] == ["c1"]
    # all calls unanswered: the message keeps its text without calls
    fixed = repair_history([HumanMessage("q"), ai])
    assert fixed[1].content == "Let me check." and fixed[1].tool_calls == []
    assert ai.tool_calls and len(ai.tool_calls) == 2  # the input is not mutated


def test_unanswered_invalid_and_raw_calls_are_stripped_and_openai_accepts_the_result():
    bad = AIMessage("", invalid_tool_calls=[invalid_call("c1")], id="bad")
    legacy = AIMessage(
        "Let me check.",
        additional_kwargs={"tool_calls": [raw_call("c2")]},
        tool_calls=[call("c2")],
        id="legacy",
    )
    history = [HumanMessage("q"), bad, HumanMessage("again?"), legacy, HumanMessage("never mind")]
    assert unanswered_calls(openai_payload(history)) == ["c1", "c2"]
    fixed = repair_history(history)
    assert history_problems(fixed) == []
    assert unanswered_calls(openai_payload(fixed)) == []
    assert [m.id for m in fixed] == [None, None, "legacy", None]  # "bad" had nothing else
    assert fixed[-2].content == "Let me check." and "tool_calls" not in fixed[-2].additional_kwargs
    assert legacy.additional_kwargs["tool_calls"]  # the input is not mutated


def test_answered_invalid_call_is_kept():
    bad = AIMessage("", invalid_tool_calls=[invalid_call("c1")])
    history = [HumanMessage("q"), bad, ToolMessage("Error: bad args", tool_call_id="c1")]
    assert all(a is b for a, b in zip(repair_history(history), history, strict=True))


def test_anthropic_tool_use_blocks_follow_their_calls():
    content = [
        {"type": "text", "text": "Checking both."},
        {"type": "tool_use", "id": "c1", "name": "lookup", "input": {}},
        {"type": "tool_use", "id": "c2", "name": "lookup", "input": {}},
    ]
    ai = AIMessage(content, tool_calls=[call("c1"), call("c2")])
    fixed = repair_history([HumanMessage("q"), ai, ToolMessage("r", tool_call_id="c2")])
    assert [b.get("id") for b in fixed[1].content if b["type"] == "tool_use"] == ["c2"]


def test_valid_history_comes_back_as_the_same_objects():
    history = [SystemMessage("s"), HumanMessage("q"), AIMessage("a")]
    fixed = repair_history(history)
    assert all(a is b for a, b in zip(fixed, history, strict=True))


def test_trim_keeps_the_current_turn_even_over_budget():
    history = [HumanMessage("old " * 50), AIMessage("x " * 50), HumanMessage("now " * 400)]
    trimmed = trim_history(history, max_tokens=20)
    assert [m.content[:3] for m in trimmed] == ["now"]


def test_trim_budgets_the_summary_it_sends_along():
    history = [HumanMessage(f"turn {i} " + "word " * 10) for i in range(10)]
    summary = "- User: allergic to nuts. " + "detail " * 40
    budget = count_tokens_approximately([summary_message(summary)]) + 60
    trimmed = trim_history(history, max_tokens=budget, summary=summary)
    assert trimmed[0].additional_kwargs["lc_source"] == "running_summary"
    assert trimmed[0].content == summary_message(summary).content
    assert count_tokens_approximately(trimmed) <= budget
    assert len(trimmed) >= 3 and trimmed[-1] is history[-1] and history_problems(trimmed) == []
    plain = trim_history(history, max_tokens=budget)
    assert len(plain) > len(trimmed) - 1  # the summary took room from the messages


def test_trim_never_splits_a_tool_exchange():
    history = [
        HumanMessage("find flights " * 10),
        AIMessage("", tool_calls=[call("c1"), call("c2")]),
        ToolMessage("r1 " * 30, tool_call_id="c1"),
        ToolMessage("r2 " * 30, tool_call_id="c2"),
        AIMessage("two options"),
        HumanMessage("book the first"),
    ]
    for budget in range(0, 200, 7):
        trimmed = trim_history(history, max_tokens=budget)
        assert history_problems(trimmed) == []
        assert trimmed[-1].content == "book the first"


def test_filter_out_tool_messages_strips_their_calls():
    history = [
        HumanMessage("q"),
        AIMessage("", tool_calls=[call("c1")]),
        ToolMessage("r", tool_call_id="c1"),
        AIMessage("answer"),
    ]
    filtered = filter_history(history, exclude_types=["tool"])
    assert [m.type for m in filtered] == ["human", "ai"]
    assert history_problems(filtered) == []


# -- random histories ----


@st.composite
def histories(draw) -> list[BaseMessage]:
    """Histories with system messages anywhere, tool exchanges, missing, duplicated,
    displaced and orphan results, deletions and messages without ids."""
    messages: list[BaseMessage] = []
    counter = 0
    for t in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["human", "ai", "tools", "system", "orphan", "human"]))
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=30)))
        if kind == "human":
            messages.append(HumanMessage(text or "hi", id=f"h{t}"))
        elif kind == "ai":
            messages.append(AIMessage(text, id=f"a{t}"))
        elif kind == "system":
            messages.append(SystemMessage(text or "rules", id=f"s{t}"))
        elif kind == "orphan":
            messages.append(ToolMessage(text, tool_call_id=f"ghost{t}", id=f"o{t}"))
        else:
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append(call(f"c{counter}" if draw(st.integers(0, 9)) else None))
            invalid = []
            if draw(st.integers(0, 3)) == 0:
                counter += 1
                invalid.append(invalid_call(f"c{counter}"))
            extra = {}
            if draw(st.integers(0, 3)) == 0:  # older integrations mirror calls here
                extra["tool_calls"] = [raw_call(c["id"]) for c in calls if c["id"]]
            messages.append(
                AIMessage(
                    text,
                    tool_calls=calls,
                    invalid_tool_calls=invalid,
                    additional_kwargs=extra,
                    id=f"ai{t}",
                )
            )
            results = [c for c in calls + invalid if c["id"] and draw(st.integers(0, 5))]
            if draw(st.booleans()):
                results = list(reversed(results))
            if results and draw(st.integers(0, 4)) == 0:
                results.append(results[0])  # duplicate result
            if results and draw(st.integers(0, 4)) == 0:
                messages.append(HumanMessage("interrupting", id=f"i{t}"))
            for c in results:
                messages.append(ToolMessage(f"result {c['id']} {text}", tool_call_id=c["id"]))
    # random deletions, as RemoveMessage or filtering could do
    for _ in range(draw(st.integers(0, 3))):
        if messages:
            messages.pop(draw(st.integers(0, len(messages) - 1)))
    # some messages lose their id
    for m in messages:
        if draw(st.integers(0, 6)) == 0:
            m.id = None
    return messages


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def is_subsequence(
    part: list[BaseMessage], whole: list[BaseMessage], *, loose: bool = False
) -> bool:
    """``part`` is ``whole`` with some messages left out (order kept).

    ``loose`` compares role, content and id only: a repair may strip a message's calls.
    """

    def key(m: BaseMessage) -> object:
        return (m.type, str(m.content), m.id) if loose else m

    rest = iter(whole)
    return all(any(key(m) == key(w) for w in rest) for m in part)


@SETTINGS
@given(histories(), st.booleans())
def test_repair_always_valid_idempotent_and_identity_on_valid(history, human_first):
    fixed = repair_history(history, require_human_first=human_first)
    assert history_problems(fixed, require_human_first=human_first) == []
    assert unanswered_calls(openai_payload(fixed)) == []  # what the OpenAI API checks
    again = repair_history(fixed, require_human_first=human_first)
    assert all(a is b for a, b in zip(again, fixed, strict=True))
    if not history_problems(history, require_human_first=human_first):
        assert all(a is b for a, b in zip(fixed, history, strict=True))
    # the latest human message always survives (it is the question)
    humans = [m for m in history if m.type == "human"]
    if humans:
        assert any(m is humans[-1] for m in fixed)
    assert [m for m in fixed if m.type == "system"] == [m for m in history if m.type == "system"]


@SETTINGS
@given(histories(), st.integers(0, 400), st.booleans())
def test_trim_always_valid_and_within_budget_except_current_turn(history, budget, human_first):
    trimmed = trim_history(history, max_tokens=budget, require_human_first=human_first)
    assert history_problems(trimmed, require_human_first=human_first) == []
    repaired = repair_history(history, require_human_first=human_first)
    assert is_subsequence(trimmed, repaired)
    conversation = [m for m in repaired if m.type != "system"]
    humans = [i for i, m in enumerate(conversation) if m.type == "human"]
    if humans:
        current_turn = conversation[humans[-1] :]
        assert trimmed[-len(current_turn) :] == current_turn
        kept_conversation = [m for m in trimmed if m.type != "system"]
        if len(kept_conversation) > len(current_turn):  # more than the mandatory part
            assert count_tokens_approximately(trimmed) <= budget


@SETTINGS
@given(
    histories(),
    st.sampled_from(
        [
            {"exclude_types": ["tool"]},
            {"exclude_types": ["ai"]},
            {"exclude_types": ["system"]},
            {"include_types": ["human", "ai"]},
            {"exclude_tool_calls": ["c1", "c2", "c3"]},
            {"exclude_tool_calls": True},
            {"exclude_ids": ["h0", "ai1", "a2", "h3"]},
        ]
    ),
)
def test_filter_always_valid(history, criteria):
    filtered = filter_history(history, **criteria)
    assert history_problems(filtered) == []
    conversation = [m for m in filtered if m.type != "system"]
    assert is_subsequence(conversation, [m for m in history if m.type != "system"], loose=True)
    # the question survives whenever the criteria keep it
    allowed = filter_messages([m for m in history if m.type == "human"], **criteria)
    if allowed:
        assert any(m is allowed[-1] for m in filtered)
