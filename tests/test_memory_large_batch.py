"""A large batch folded at once is ranked whole: what the user said about themselves at
its start competes with everything after it, instead of going unread (newbie trial 3:
Monday's nut allergy was lost when ~50 messages, or an imported history, were folded in
one step)."""

from __future__ import annotations

import random
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from fakes import ScriptedChatModel
from helpers import chatter_with_constraints
from langgraph_librarian import LibrarianConfig, create_librarian_graph
from langgraph_librarian.memory import (
    RunningSummarizer,
    RunningSummaryMiddleware,
    _facts,
    create_summary_graph,
)

ALLERGY = "Remember: I'm allergic to nuts."


def imported_history(n: int) -> list[BaseMessage]:
    """``n`` messages of priced notes with filler; the allergy is message 6."""
    rng = random.Random(1)
    history: list[BaseMessage] = []
    for i in range(n // 2):
        filler = "filler words here " * rng.randint(1, 40)
        history.append(
            HumanMessage(f"Note {i}: item {i} costs {rng.randint(10, 999)} euros. {filler}")
        )
        history.append(AIMessage(f"Got it, note {i} recorded."))
    history[6] = HumanMessage(ALLERGY)
    return history


def squash_month() -> list[BaseMessage]:
    """docs/memory.md's example: 30 days of squash, the allergy stated on day 0."""
    days: list[BaseMessage] = [HumanMessage(ALLERGY)]
    for day in range(30):
        days += [
            HumanMessage(f"Day {day}: we roasted squash batch {day} for 25 minutes."),
            AIMessage("Sounds delicious!"),
        ]
    return days


def test_the_docs_month_folded_at_once_keeps_the_allergy_like_folding_it_in_steps():
    days = squash_month()
    summarizer = RunningSummarizer(max_summary_tokens=60)
    stepwise = ""
    for k in range(0, len(days), 3):
        stepwise = summarizer.summarize(days[k : k + 3], stepwise).summary
    at_once = summarizer.summarize(days).summary
    assert "allergic to nuts" in stepwise
    assert "allergic to nuts" in at_once
    assert "batch 29" in at_once  # the newest of equal lines still wins a place


def test_a_2000_message_import_keeps_the_first_self_statement_with_bounded_extraction(
    monkeypatch: Any,
):
    calls = {"n": 0}
    real = _facts.extractive_summary

    def counting(*args: Any, **kwargs: Any) -> str:
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(_facts, "extractive_summary", counting)
    result = RunningSummarizer(max_summary_tokens=200).summarize(imported_history(2000))
    assert result.summary_tokens <= 200
    assert ALLERGY in result.summary
    assert "Note 999:" in result.summary and "Note 900:" not in result.summary
    assert calls["n"] < 200  # lines are made only for the best-ranked messages


def test_in_one_batch_a_later_change_still_beats_the_older_value():
    """The 200 turns of test_a_stated_constraint_outlives_200_turns... folded at once."""
    messages: list[BaseMessage] = []
    for text in chatter_with_constraints():
        messages += [HumanMessage(text), AIMessage("Noted.")]
    summary = RunningSummarizer(max_summary_tokens=60).summarize(messages).summary
    assert "allergic to peanuts" in summary and "80 dollars" in summary
    # Room for one line: the change, not the value it replaces.
    tight = RunningSummarizer(max_summary_tokens=30).summarize(messages).summary
    assert "80 dollars" in tight and "50 dollars a week" not in tight


def test_an_enormous_message_is_ranked_on_a_bounded_part_of_its_text(monkeypatch: Any):
    seen: list[int] = []
    real = _facts._importance

    def recording(line: Any, newest: int, covered: set[int]) -> float:
        seen.append(len(line.text))
        return real(line, newest, covered)

    monkeypatch.setattr(_facts, "_importance", recording)
    blob = HumanMessage("log line ok. " * 100_000)
    summary = RunningSummarizer(max_summary_tokens=60).summarize([HumanMessage(ALLERGY), blob])
    assert "allergic to nuts" in summary.summary
    assert max(seen) < 2 * _facts._SCORED_CHARS


REPLY = (
    "Here is a simple idea: roast the vegetables at 200 degrees for 25 minutes, then toss "
    "them with lemon, olive oil and herbs; serve with rice or flatbread. You can prepare "
    "the sauce a day ahead and keep it in the fridge."
)


def test_spec02_week_through_the_middleware_defaults_keeps_mondays_allergy():
    rng = random.Random(1)
    chat = [ALLERGY] + [
        f"What can I cook with {rng.choice(['leeks', 'rice', 'feta', 'limes'])} tonight "
        f"for {rng.randint(2, 6)} people?"
        for _ in range(40)
    ]
    model = ScriptedChatModel(script=REPLY)
    agent = create_agent(
        model,
        system_prompt="You are Chef Aria.",
        middleware=[RunningSummaryMiddleware(model)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "sam"}}
    for text in chat:
        agent.invoke({"messages": [HumanMessage(text)]}, config)
    state = agent.invoke({"messages": [HumanMessage("Thursday: walnut cake?")]}, config)
    assert state["summary_metadata"]["summarized_count"] >= 30  # one large fold happened
    assert any("allergic to nuts" in str(m.content) for m in model.calls[-1])


def test_an_imported_history_keeps_the_allergy_in_the_graph_and_the_librarian_gist():
    history = [*imported_history(2000), HumanMessage("What am I allergic to?")]
    graph = create_summary_graph(ScriptedChatModel(script="ok"), checkpointer=InMemorySaver())
    state = graph.invoke({"messages": history}, {"configurable": {"thread_id": "g"}})
    assert "allergic to nuts" in state["summary"]

    seen: list[list[BaseMessage]] = []

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        seen.append(state["curated_messages"])
        return {"messages": [AIMessage("ok")]}

    librarian = create_librarian_graph(
        agent, LibrarianConfig(running_summary_tokens=300), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "l"}}
    librarian.invoke({"messages": history}, config)
    librarian.invoke({"messages": [HumanMessage("And what else should I avoid?")]}, config)
    assert any("allergic to nuts" in str(m.content) for m in seen[-1])
