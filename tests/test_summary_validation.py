"""Summary validation against held-out sets: faithful summaries kept, garbage rejected.

The sets live in ``tests/data/summaries_*.json`` (batch 1 written before the rules,
batch 2 after, never edited to pass). A weak model replaying the garbage set through
the indexer stores none of it: every such message gets a marked extractive entry.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.index.summarize import DEFAULT_SUMMARY_PROMPT, summary_problem

DATA = Path(__file__).parent / "data"
FAITHFUL = json.loads((DATA / "summaries_faithful.json").read_text())["items"]
GARBAGE = json.loads((DATA / "summaries_garbage.json").read_text())["items"]


def _source(item: dict) -> str:
    return item.get("text") or FAITHFUL[item["message"]]["message"]


def test_the_sets_are_varied_enough_to_mean_something():
    assert len(FAITHFUL) >= 40 and len(GARBAGE) >= 60
    kinds = {g["kind"] for g in GARBAGE}
    assert {"filler", "meta", "refusal", "fabrication", "off-topic", "echo"} <= kinds


@pytest.mark.parametrize("item", FAITHFUL, ids=lambda i: i["summary"][:40])
def test_faithful_summaries_are_accepted(item):
    assert summary_problem(item["summary"], item["message"], DEFAULT_SUMMARY_PROMPT) is None


@pytest.mark.parametrize("item", GARBAGE, ids=lambda i: f"{i['kind']}:{i['summary'][:40]}")
def test_garbage_and_fabrications_are_rejected(item):
    assert summary_problem(item["summary"], _source(item), DEFAULT_SUMMARY_PROMPT)


@pytest.mark.parametrize(
    ("summary", "problem"),
    [
        ("Just like that.", "facts"),
        ("Sure! Here is the summary:", "preamble"),
        ("The message is not found.", "instead of summarizing"),
        ("Booked, 50 euros, Confirmation CRG-21648", "50"),
        ("Budget moved to 4500 euros on Monday.", "date"),
        ("I'm sorry, but as requested: budget 4,500 euros.", "refused"),
    ],
)
def test_the_reason_names_the_rule(summary, problem):
    source = "We can increase our total budget to 4,500 euros, booked with CRG-20931 for May."
    assert problem in (summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT) or "")


def test_a_preamble_before_a_real_summary_is_fine():
    source = "We can increase our total budget to 4,500 euros, up from 3,800 in March."
    summary = "Sure! Here is the summary: budget raised to 4,500 euros (was 3,800 in March)."
    assert summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT) is None


def test_a_weak_indexer_stores_no_garbage():
    """The garbage set replayed by a model: every entry falls back, marked, with a reason."""
    by_text = {_source(g): [] for g in GARBAGE}
    for g in GARBAGE:
        by_text[_source(g)].append(g["summary"])
    messages, answers = [], {}
    for n, g in enumerate(GARBAGE):
        text = f"{_source(g)} (note {n})"
        messages.append(HumanMessage(text, id=f"m{n}"))
        answers[text] = g["summary"]

    def answer(prompt):
        body = str(prompt[-1].content)
        return next(a for t, a in answers.items() if t in body)

    model = ScriptedChatModel(script=answer)
    config = LibrarianConfig(
        indexer_model=model, short_message_threshold=10, embeddings=None, retry_backoff=0
    )
    update = update_index(messages, [], config)
    assert [e.status for e in update.entries] == ["fallback"] * len(GARBAGE)
    assert update.failed_count == len(GARBAGE) and all("rejected" in e for e in update.errors)
    assert all(e.summary not in answers.values() for e in update.entries)


def test_a_good_indexer_keeps_its_summaries():
    messages = [HumanMessage(f["message"], id=f"m{n}") for n, f in enumerate(FAITHFUL)]
    answers = {f["message"]: f["summary"] for f in FAITHFUL}

    def answer(prompt):
        body = str(prompt[-1].content)
        return next(a for t, a in answers.items() if t in body)

    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script=answer),
        short_message_threshold=10,
        embeddings=None,
    )
    update = update_index(messages, [], config)
    assert [e.status for e in update.entries] == ["summarized"] * len(FAITHFUL)


def test_a_summary_cut_at_the_output_limit_is_not_stored():
    from langchain_core.messages import AIMessage

    source = FAITHFUL[0]
    cut = AIMessage(content=source["summary"], response_metadata={"finish_reason": "length"})
    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script=[cut]),
        short_message_threshold=10,
        embeddings=None,
    )
    update = update_index([HumanMessage(source["message"], id="m")], [], config)
    assert update.entries[0].status == "fallback"
    assert "output-token limit" in update.errors[0]


TRIP = (
    "Our team budget for the Lisbon offsite is 4,500 euros, and Maria Santos booked the "
    "Hotel Avenida for March 12 to March 15. The confirmation code is CRG-20931. Tom is "
    "vegetarian and allergic to peanuts, so the dinner on the first night needs a menu."
)


@pytest.mark.parametrize(
    "answer",
    [
        "As a language model, I don't have opinions about whether Maria Santos should book "
        "the Hotel Avenida.",
        "My apologies, but I don't have access to the Hotel Avenida booking system.",
        "Let me think step by step. The message says the budget is 4,500 euros.",
        "Maria Santos booked the Hotel Avenida. " * 5,
        "Maria " * 8 + "booked the hotel.",
    ],
)
def test_a_model_speaking_as_itself_or_looping_is_rejected(answer):
    assert summary_problem(answer, TRIP, DEFAULT_SUMMARY_PROMPT) is not None


def test_first_person_from_the_message_itself_is_fine():
    source = "I'm allergic to sesame and my sister is allergic to peanuts: no satay, please."
    assert summary_problem("I'm allergic to sesame; my sister to peanuts.", source, "") is None


def test_a_long_message_copied_whole_is_not_stored_as_its_summary():
    message = HumanMessage(" ".join([TRIP] * 5) + " Action items: book the bus.", id="h1")
    model = ScriptedChatModel(script=str(message.content))
    update = update_index([message], [], LibrarianConfig(indexer_model=model, embeddings=None))
    assert update.entries[0].status == "fallback"
