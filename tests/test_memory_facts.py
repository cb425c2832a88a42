"""The offline running summary keeps distinct facts, bounds every line, and makes lines
only for what can still fit; token counters (CJK) reach its budget from every entry point."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from fakes import ScriptedChatModel
from langgraph_librarian.memory import (
    RunningSummarizer,
    _facts,
    asummarize_messages,
    create_summary_graph,
    summarize_messages,
)
from langgraph_librarian.tokens import count_text_tokens


def per_char(messages: list[BaseMessage]) -> int:
    """About one token per CJK character, as real tokenizers count it."""
    return sum(len(str(m.content)) for m in messages)


# -- distinct facts stay (A3) ----


@pytest.mark.parametrize(
    "first, second",
    [
        ("I am allergic to peanuts.", "Am I allergic to peanuts?"),
        (
            "Dinner for Tom on Friday costs 40 dollars.",
            "Dinner for Ann on Friday costs 40 dollars.",
        ),
        ("My sister Anna visits on Saturday.", "My sister Anna visits on Sunday."),
    ],
)
def test_facts_that_look_alike_both_stay_while_under_budget(first, second):
    result = RunningSummarizer(max_summary_tokens=400).summarize(
        [HumanMessage(first), HumanMessage(second)]
    )
    assert first in result.summary and second in result.summary
    assert not result.recompressed


def test_daily_cjk_lines_do_not_collapse_into_one():
    summarizer = RunningSummarizer(max_summary_tokens=2000)
    summary = ""
    for day in range(30):
        batch = [HumanMessage(f"第{day}天：我们今天做了红烧茄子，用了{day}克糖，味道很好。")]
        summary = summarizer.summarize(batch, summary).summary
    assert all(f"第{day}天" in summary for day in range(30))


def test_over_budget_a_question_never_replaces_the_statement_it_echoes():
    summarizer = RunningSummarizer(max_summary_tokens=40)
    summary = summarizer.summarize([HumanMessage("I am allergic to peanuts.")]).summary
    chatter = [HumanMessage(f"Is batch {i} of the squash roasting well today?") for i in range(8)]
    result = summarizer.summarize([*chatter, HumanMessage("Am I allergic to peanuts?")], summary)
    assert result.recompressed and result.summary_tokens <= 40
    assert "I am allergic to peanuts." in result.summary


def test_identical_lines_are_kept_once_when_over_budget():
    previous = "\n".join(["- User: I love basil."] * 12 + ["- User: My budget is 300 euros."])
    result = RunningSummarizer(max_summary_tokens=40).summarize(
        [HumanMessage("We leave on 3 May.")], previous
    )
    assert result.summary.count("I love basil") == 1
    assert "300 euros" in result.summary and "3 May" in result.summary


def test_identical_lines_under_budget_are_left_alone():
    text, changed = _facts.compress_lines(["User: ok", "User: ok"], 100)
    assert text == "- User: ok\n- User: ok" and not changed


# -- one line cannot evict the others (A4) ----

BLOBS = {
    "base64": "Here is the pantry export: " + "QmFzZTY0" * 60,
    "url": "Try this one: https://example.com/recipes/" + "x" * 400,
    "cjk": "今天我们讨论了很多不同的菜谱和做法，包括汤、炒菜和甜点。" * 10,
}


@pytest.mark.parametrize("blob", BLOBS.values(), ids=BLOBS.keys())
def test_an_unshortenable_line_is_clipped_instead_of_evicting_every_other_fact(blob):
    summarizer = RunningSummarizer(max_summary_tokens=60)
    summary = summarizer.summarize([HumanMessage("My sister Anna visits on Saturday.")]).summary
    result = summarizer.summarize([HumanMessage(blob)], summary)
    assert result.summary_tokens <= 60
    assert "Anna visits on Saturday" in result.summary
    assert blob[:12] in result.summary  # the new line is there too, cut down


def test_cjk_allergy_survives_long_cjk_chatter_with_a_per_character_counter():
    summarizer = RunningSummarizer(max_summary_tokens=120, token_counter=per_char)
    summary = summarizer.summarize([HumanMessage("我对坚果严重过敏，请一定记住。")]).summary
    for i in range(6):
        chatter = f"第{i}次：" + "今天我们讨论了很多不同的菜谱和做法，包括汤、炒菜和甜点。" * 8
        result = summarizer.summarize([HumanMessage(chatter), AIMessage("好的。")], summary)
        summary = result.summary
        assert per_char([HumanMessage(summary)]) <= 120
    assert "坚果" in summary and "第5次" in summary


def test_cjk_allergy_survives_with_the_default_counter():
    summarizer = RunningSummarizer(max_summary_tokens=60)
    summary = summarizer.summarize([HumanMessage("我对坚果严重过敏，请记住。")]).summary
    chatter = "今天我们讨论了很多不同的菜谱和做法，包括汤、炒菜和甜点。" * 10
    result = summarizer.summarize([HumanMessage(chatter)], summary)
    assert "坚果" in result.summary and result.summary_tokens <= 60


def test_facts_outside_the_recipe_domain_outrank_chatter():
    summarizer = RunningSummarizer(max_summary_tokens=60)
    summary = summarizer.summarize(
        [HumanMessage("Please remember: our production database is read-only on Fridays.")]
    ).summary
    for i in range(20):
        batch = [HumanMessage(f"What does line {i} of the log say?"), AIMessage(f"Line {i}: ok.")]
        summary = summarizer.summarize(batch, summary).summary
    assert "read-only on Fridays" in summary


def _purchases(start: int, n: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for i in range(start, start + n):
        messages.append(
            HumanMessage(f"My budget for item {i} is {100 + i} dollars; I decided to buy it.")
        )
        messages.append(AIMessage(f"Ok, {100 + i} dollars."))
    return messages


@pytest.mark.parametrize("budget", [60, 200])
def test_a_health_constraint_outlasts_many_other_lasting_facts(budget):
    """Budgets and decisions are lasting facts too, and a line with a budget, a number
    and "decided" outranked "I'm allergic to peanuts": sixty of them evicted it, and a
    model summary that dropped it was then held to no more than that."""
    allergy = [HumanMessage("I'm allergic to peanuts."), AIMessage("Noted.")]
    summarizer = RunningSummarizer(max_summary_tokens=budget)
    at_once = summarizer.summarize([*allergy, *_purchases(0, 60)]).summary
    assert "allergic to peanuts" in at_once
    summary = summarizer.summarize(allergy).summary
    for start in range(0, 60, 4):
        summary = summarizer.summarize(_purchases(start, 4), summary).summary
    assert "allergic to peanuts" in summary and "item 59" in summary


# -- bounded work (A10) ----


def test_lines_are_extracted_only_for_messages_that_can_still_fit(monkeypatch):
    calls = {"n": 0}
    real = _facts.extractive_summary

    def counting(*args: Any, **kwargs: Any) -> str:
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(_facts, "extractive_summary", counting)
    long = "The squash needs more time in the oven tonight. " * 6
    history = [HumanMessage(f"Batch {i} roasts at {i} degrees. {long}") for i in range(2000)]
    result = RunningSummarizer(max_summary_tokens=100).summarize(history)
    assert result.summary_tokens <= 100 and "Batch 1999 roasts" in result.summary
    assert "Batch 1 roasts" not in result.summary  # equal lines: the newer win
    assert calls["n"] < 100  # not one extraction per message of the backlog


async def test_async_offline_summary_does_not_block_the_event_loop():
    ticks = {"n": 0}
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            ticks["n"] += 1
            await asyncio.sleep(0)

    history = [
        HumanMessage(f"Message {i}: the oven timer is set to {i} minutes.") for i in range(300)
    ]
    task = asyncio.create_task(ticker())
    result = await RunningSummarizer(max_summary_tokens=100).asummarize(history)
    seen = ticks["n"]
    stop.set()
    await task
    assert result.summary_tokens <= 100
    assert seen > 0  # the loop kept running while the summary was made


# -- token counters reach the summary's budget everywhere ----


def test_summarize_messages_takes_a_token_counter():
    chatter = [HumanMessage("今天我们讨论了很多不同的菜谱和做法。" * 4) for _ in range(6)]
    result = summarize_messages(chatter, max_summary_tokens=60, token_counter=per_char)
    assert per_char([HumanMessage(result.summary)]) <= 60 and result.summary_tokens <= 60


async def test_asummarize_messages_takes_a_token_counter():
    chatter = [HumanMessage("今天我们讨论了很多不同的菜谱和做法。" * 4) for _ in range(6)]
    result = await asummarize_messages(chatter, max_summary_tokens=60, token_counter=per_char)
    assert per_char([HumanMessage(result.summary)]) <= 60


def test_the_graphs_token_counter_reaches_the_summarizer(tmp_path):
    chef = ScriptedChatModel(script="好的。")
    graph = create_summary_graph(
        chef,
        summarizer=RunningSummarizer(max_summary_tokens=60),
        max_messages=4,
        token_counter=per_char,
        checkpointer=SqliteSaver(sqlite3.connect(tmp_path / "db", check_same_thread=False)),
    )
    config = {"configurable": {"thread_id": "t"}}
    for i in range(5):
        state = graph.invoke(
            {"messages": [HumanMessage(f"第{i}天。" + "我们讨论了菜谱。" * 6)]}, config
        )
    assert state["summary"] and per_char([HumanMessage(state["summary"])]) <= 60
    assert state["summary_metadata"]["summary_tokens"] <= 60
    assert count_text_tokens(state["summary"], per_char) <= 60


LANGCHAIN_SUMMARY = """## SESSION INTENT
Plan a birthday party for Dana's son in Porto.

## SUMMARY
Dana is allergic to peanuts. The budget is 300 euros.

## ARTIFACTS
None

## NEXT STEPS
- Order the cake
<summary>
</summary>"""


def test_a_previous_summarys_headings_and_placeholders_are_not_facts():
    """A summary written by LangChain's summarization prompt (sections "## SESSION
    INTENT", "## ARTIFACTS" with "None"), or wrapped in tags, was folded line by line:
    "- ## SESSION INTENT", "- None" and "- <summary>" became fact lines of the summary."""
    new = [HumanMessage("Also, we'll be 12 kids."), AIMessage("Noted: 12 kids.")]
    summary = RunningSummarizer(max_summary_tokens=300).summarize(new, LANGCHAIN_SUMMARY).summary
    assert summary.splitlines() == [
        "- Plan a birthday party for Dana's son in Porto.",
        "- Dana is allergic to peanuts.",
        "- The budget is 300 euros.",
        "- Order the cake",
        "- User: Also, we'll be 12 kids.",
        "- Assistant: Noted: 12 kids.",
    ]


def test_a_model_may_drop_a_previous_summarys_headings():
    """The previous summary's words a model must mostly keep counted its headings and
    placeholders ("SESSION INTENT", "None"): an answer keeping every fact but not the
    scaffolding was rejected as dropping most of the previous summary."""
    previous = (
        "## SESSION INTENT\nParty for Dana.\n\n## SUMMARY\nDana is allergic to peanuts.\n\n"
        "## ARTIFACTS\nNone\n\n## DECISIONS\nNone\n\n## OPEN QUESTIONS\nNone\n\n"
        "## NEXT STEPS\nNone"
    )
    new = [HumanMessage("Also, we'll be 12 kids."), AIMessage("Noted: 12 kids.")]
    answer = "- Dana is allergic to peanuts.\n- Party: 12 kids."
    model = ScriptedChatModel(script=answer)
    result = RunningSummarizer(model, max_summary_tokens=300).summarize(new, previous)
    assert (result.method, result.notes, result.summary) == ("llm", [], answer)
