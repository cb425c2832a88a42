"""Random histories with deletions, edits and tool calls never hydrate a wrong message.

Validity is the library's one definition, ``memory.history_problems``; the random
histories are the trimming property test's (system messages anywhere, missing,
duplicated, displaced, orphan and invalid tool results, deletions, messages without ids).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.messages import content_hash
from langgraph_librarian.hydrate import COMPACT_MARK, Hydrated, hydrate
from langgraph_librarian.index import reconcile_index, update_index
from langgraph_librarian.memory import history_problems
from test_trim_properties import call, histories


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


def check_valid(hydrated: Hydrated, history: list[BaseMessage]) -> None:
    curated = hydrated.messages
    assert history_problems(curated, require_human_first=False) == []
    assert len(hydrated.positions) == len(curated)
    for message, position in zip(curated, hydrated.positions, strict=True):
        original = history[position]
        if message.additional_kwargs.get(COMPACT_MARK):  # sent as its summary
            assert message.id == original.id and position in hydrated.compacted
            continue
        # the message itself, or a copy whose unanswered tool calls were stripped
        assert message is original or (
            message.id == original.id and message.content == original.content
        ), "hydrated a message not in history"
    conversation = [
        p for p, m in zip(hydrated.positions, curated, strict=True) if m.type != "system"
    ]
    assert conversation == sorted(set(conversation)), "order or duplicates broken"
    assert curated[-1].id == "current"
    # No context starts with an assistant or tool message when the history has a user
    # message before it (Anthropic and Gemini reject that): the opener comes along.
    first = next(p for p, m in zip(hydrated.positions, curated, strict=True) if m.type != "system")
    if any(m.type == "human" for m in history[:first]) or history[first].type == "human":
        assert history[first].type == "human", "the context starts with an answer"


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
    check_valid(hydrate(after, picks, recent_turns=recent), after)
    check_valid(hydrate(after, picks, recent_turns=recent, token_budget=60), after)
    # Long messages with summaries under tight budgets: some are sent in short form.
    longer = [
        m.model_copy(update={"content": m.content * 80})
        if i % 3 == 0 and isinstance(m.content, str) and m.content and m.id != "current"
        else m
        for i, m in enumerate(after)
    ]
    summaries = {p: f"summary of {p}" for p in range(len(longer))}
    for budget in (40, 300, 1500):
        shown = hydrate(
            longer, picks, recent_turns=recent, token_budget=budget, summaries=summaries
        )
        check_valid(shown, longer)


def test_a_result_separated_from_its_call_is_never_hydrated_apart_from_it():
    history = [
        HumanMessage("find my flight", id="h0"),
        AIMessage("", tool_calls=[call("c1")], id="ai1"),
        HumanMessage("hurry up", id="h2"),
        ToolMessage("LX318", tool_call_id="c1", id="t3"),
        AIMessage("It is LX318.", id="a4"),
        HumanMessage("and the gate?", id="h5"),
    ]
    hydrated = hydrate(history, [1])
    assert history_problems(hydrated.messages, require_human_first=False) == []
    assert hydrated.messages[-1].id == "h5"


def test_a_call_without_any_result_is_stripped_but_its_text_kept():
    history = [
        HumanMessage("check the pantry", id="h0"),
        AIMessage("Checking.", tool_calls=[call("c1")], id="ai1"),  # the tool never ran
        HumanMessage("never mind, lunch?", id="h2"),
    ]
    hydrated = hydrate(history, [], recent_turns=2)
    assert history_problems(hydrated.messages) == []
    assert [m.content for m in hydrated.messages] == [
        "check the pantry",
        "Checking.",
        "never mind, lunch?",
    ]
    assert hydrated.positions == [0, 1, 2] and not hydrated.messages[1].tool_calls


def test_a_valid_selection_comes_back_as_the_same_objects():
    history = [
        HumanMessage("q", id="h0"),
        AIMessage("", tool_calls=[call("c1")], id="ai1"),
        ToolMessage("r", tool_call_id="c1", id="t2"),
        AIMessage("a", id="a3"),
        HumanMessage("now?", id="h4"),
    ]
    hydrated = hydrate(history, [2], recent_turns=1)
    assert all(m is history[p] for m, p in zip(hydrated.messages, hydrated.positions, strict=True))
    # The user message that opened the exchange's turn comes with it (no context starts
    # with an assistant message: Anthropic and Gemini reject that).
    assert hydrated.positions == [0, 1, 2, 4] and hydrated.selected == [2]


def test_a_long_opener_without_a_summary_comes_in_short_form():
    """The opener of an answer's turn: a pasted document with no summary yet (an index
    that has not caught up) is cut, not sent whole past the budget."""
    from langgraph_librarian.tokens import count_tokens

    history = [
        HumanMessage("Here is the whole report: " + "lorem ipsum " * 8000, id="h0"),
        AIMessage("The report says revenue grew 12% in Q3.", id="a0"),
        HumanMessage("ok", id="h1"),
        AIMessage("fine", id="a1"),
        HumanMessage("what did the report say about revenue?", id="q"),
    ]
    hydrated = hydrate(history, [1], recent_turns=1, token_budget=2000)
    assert [m.id for m in hydrated.messages][:2] == ["h0", "a0"]
    assert count_tokens(hydrated.messages) < 2000
