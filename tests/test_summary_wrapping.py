"""A model's wrapping around a summary is neither judged nor stored.

Small models wrap a good summary in a preamble ("Sure! Here's a concise summary of the
message:"), a code fence, a "**Summary:**" label or heading, quotes or a JSON object,
and end it with a closing offer ("Let me know if you need anything else!"). The
indexer and the running summary validate and store the same cleaned text: the
summary, without the wrapping (it would otherwise reach the selector and the agent).
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import aupdate_index, update_index
from langgraph_librarian.index._validate import clean_model_summary
from langgraph_librarian.memory import RunningSummarizer

SOURCE = (
    "Our team budget for the Lisbon offsite is 4,500 euros, and Maria Santos booked the "
    "Hotel Avenida for March 12 to March 15. The confirmation code is CRG-20931. Please "
    "remember that Tom is vegetarian and allergic to peanuts, so the dinner venue matters."
)
GOOD = (
    "Budget for the Lisbon offsite is 4,500 euros; Maria Santos booked Hotel Avenida "
    "March 12-15, code CRG-20931; Tom is vegetarian, allergic to peanuts."
)
WRAPPED = {
    "here_is": "Here is the summary: " + GOOD,
    "sure_preamble": "Sure! Here's a concise summary of the message:\n\n" + GOOD,
    "fence": "```\n" + GOOD + "\n```",
    "fence_with_language": "```text\n" + GOOD + "\n```",
    "bold_label": "**Summary:** " + GOOD,
    "heading": "## Summary\n" + GOOD,
    "json_object": '{"summary": "' + GOOD + '"}',
    "quotes": '"' + GOOD + '"',
    "nested": 'Sure! Here\'s the summary:\n```json\n{"summary": "' + GOOD + '"}\n```',
    "musing_then_label": "Okay, the message is about the offsite budget and the hotel.\n\n"
    "**Summary:**\n" + GOOD,
}
CLOSINGS = {
    "anything_else": GOOD + " Let me know if you need anything else!",
    "adjust": GOOD + "\n\nLet me know if you'd like me to adjust anything!",
    "question": GOOD + " Would you like me to add the hotel's address?",
    "two_closings": GOOD + " I hope this helps! Let me know if you need more.",
}


def _index(answer: str, mode: str):
    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script=answer), embeddings=None, retry_backoff=0
    )
    messages = [HumanMessage(SOURCE, id="m1")]
    if mode == "sync":
        return update_index(messages, [], config)

    return asyncio.run(aupdate_index(messages, [], config))


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("answer", list(WRAPPED.values()), ids=list(WRAPPED))
def test_the_indexer_stores_the_summary_without_its_wrapping(answer, mode):
    update = _index(answer, mode)
    entry = update.entries[0]
    assert (entry.status, update.errors) == ("summarized", [])
    assert entry.summary == GOOD


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("answer", list(CLOSINGS.values()), ids=list(CLOSINGS))
def test_a_closing_offer_after_a_good_summary_is_dropped_not_rejected(answer, mode):
    update = _index(answer, mode)
    entry = update.entries[0]
    assert (entry.status, update.errors) == ("summarized", [])
    assert entry.summary == GOOD


@pytest.mark.parametrize(
    "answer",
    [
        "Let me know if you need anything else!",
        "Would you like me to summarize the message? " + GOOD,
        "Sure! Here is the summary:",
    ],
)
def test_meta_talk_that_is_not_a_closing_line_is_still_rejected(answer):
    update = _index(answer, "sync")
    assert update.entries[0].status == "fallback"
    assert update.errors and "rejected" in update.errors[0]


MESSAGES = [
    HumanMessage(
        "I'm Dana, I'm vegetarian and allergic to peanuts. "
        "My budget for the Lisbon trip is 4,500 euros."
    ),
    AIMessage("Noted, Dana: vegetarian, peanut allergy, 4,500 euro budget for Lisbon."),
    HumanMessage("Also book the Hotel Avenida from March 12 to March 15, please."),
    AIMessage("Booked Hotel Avenida March 12-15, confirmation CRG-20931."),
]
PREVIOUS = (
    "- User is planning a trip to Portugal with her partner Sam.\n- Sam dislikes flying at night."
)
RUNNING = (
    "- Dana: vegetarian, allergic to peanuts\n- Lisbon trip budget: 4,500 euros\n"
    "- Hotel Avenida booked March 12-15, code CRG-20931\n"
    "- Partner Sam dislikes night flights; trip to Portugal"
)
RUNNING_WRAPPED = {
    "preamble": "Here is the updated summary:\n" + RUNNING,
    "sure_preamble": "Sure! Here's the updated running summary:\n\n" + RUNNING,
    "fence": "```\n" + RUNNING + "\n```",
    "heading": "### Updated summary\n" + RUNNING,
    "closing": RUNNING + "\n\nLet me know if you'd like me to adjust anything!",
    # The prompt fences its data in tags; models answer in tags of their own.
    "summary_tags": "<summary>\n" + RUNNING + "\n</summary>",
    "updated_summary_tags": "<updated_summary>\n" + RUNNING + "\n</updated_summary>",
    "preamble_and_tags": "Here is the updated summary:\n<summary>\n" + RUNNING + "\n</summary>",
    # A small model thinking aloud, then its summary under a label line.
    "musing_then_label": "Okay, let me update the summary with the hotel.\n\n**Updated summary:**\n"
    + RUNNING,
    "musing_then_heading": "Let me think. Dana added a hotel.\n### Summary\n" + RUNNING,
}


@pytest.mark.parametrize("answer", list(RUNNING_WRAPPED.values()), ids=list(RUNNING_WRAPPED))
async def test_the_running_summary_is_kept_without_its_wrapping(answer):
    summarizer = RunningSummarizer(
        ScriptedChatModel(script=answer), max_summary_tokens=200, max_retries=0
    )
    for result in (
        summarizer.summarize(MESSAGES, PREVIOUS),
        await summarizer.asummarize(MESSAGES, PREVIOUS),
    ):
        assert (result.method, result.notes) == ("llm", [])
        assert result.summary == RUNNING


def test_a_shortened_summary_in_the_prompts_summary_tags_is_kept():
    """The re-compression prompt shows the summary between <summary> tags: a model that
    answers in them too had its shorter summary rejected as "the model repeated its
    prompt", and the summary was cut offline instead."""
    long = RUNNING + "".join(
        f"\n- Day {n} of the Lisbon trip: a walk through the old town and a museum visit"
        for n in range(1, 9)
    )
    answers = [long, "<summary>\n" + RUNNING + "\n</summary>"]
    summarizer = RunningSummarizer(
        ScriptedChatModel(script=answers), max_summary_tokens=60, max_retries=0
    )
    days = [HumanMessage(line[2:]) for line in long.splitlines()[4:]]
    result = summarizer.summarize([*MESSAGES, *days], PREVIOUS)
    assert (result.method, result.recompressed, result.notes) == ("llm", True, [])
    assert result.summary == RUNNING


@pytest.mark.parametrize(
    "answer",
    ["# " * 10_000, "x" + " \n" * 10_000 + "x", "## a" + " " * 10_000 + "b", "x. " * 10_000],
    ids=["hashes", "blank_lines", "long_heading", "sentences"],
)
def test_cleaning_a_degenerate_answer_takes_linear_time(answer):
    """A weak model's runaway output (thousands of blank lines or hashes) is cleaned at
    once: the cleaner's patterns must not backtrack over it (they took 15-20 s here)."""
    start = time.perf_counter()
    clean_model_summary(answer)
    assert time.perf_counter() - start < 1.0


def test_a_closing_line_that_carries_facts_or_a_json_message_is_not_stripped():
    from langgraph_librarian.index._validate import clean_model_summary

    for text in (
        "Bob confirmed the 3pm call. If you need anything else, call Bob at 555-0199.",
        "Hotels A, B and C proposed. Would you like me to book hotel B for June 4?",
        '{"text": "hello", "user": "bob", "amount": 500}',
    ):
        assert clean_model_summary(text) == text
    assert clean_model_summary('{"summary": "Dana approved $5,000.", "keywords": ["budget"]}') == (
        "Dana approved $5,000."
    )


def test_closing_lines_are_told_apart_by_the_facts_they_carry():
    from langgraph_librarian.index._validate import clean_model_summary

    base = "Budget approved at 12k."
    for closing in (
        "Would you like me to book the hotel in Évora?",
        "Would you like me to book the “Tejo” shuttle?",
        "Would you like me to book it for twelve people?",
    ):
        assert clean_model_summary(f"{base} {closing}") == f"{base} {closing}"
    for closing in (
        "Let me know if you need a PDF version.",
        "Let me know if you want this in English.",
        "Let me know if you have any questions, OK?",
        "Let me know if I’d better wait.",
    ):
        assert clean_model_summary(f"{base} {closing}") == base


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_clause_the_message_does_not_say_is_dropped_and_the_rest_stored(mode):
    """A weak model's invented fact in its own clause ("... She adores loud jazz concerts.")
    is dropped; the faithful rest is stored as the summary."""
    (entry,) = _index(GOOD + " She adores loud jazz concerts.", mode).entries
    assert entry.status == "summarized"
    assert entry.summary == GOOD
    assert "jazz" not in entry.summary


def test_a_summary_of_added_clauses_only_is_rejected():
    (entry,) = _index("She adores loud jazz concerts downtown.", "sync").entries
    assert entry.status != "summarized"


def test_added_clauses_are_dropped_by_their_words():
    from langgraph_librarian.index._validate import drop_added_clauses

    assert drop_added_clauses(GOOD + "; she adores jazz concerts.", SOURCE) == GOOD + "."
    # A clause with one of the message's words, or a number, or a short remark stays.
    for kept in (
        GOOD + " Tom needs a vegetarian menu.",
        GOOD + " About 40 people attend.",
        GOOD + " Good news.",
    ):
        assert drop_added_clauses(kept, SOURCE) == kept
    # A summary in another language than the message: its words are translations.
    spanish = "Presupuesto de 4.500 euros para Lisboa; Tom es vegetariano y alérgico."
    assert drop_added_clauses(spanish, SOURCE) == spanish


# A weak model answering JSON other than {"summary": "..."}: its one string field is the
# summary; any other JSON (null, a number, several fields, objects in a list) is not a
# summary, and the extractive entry is used. Raw JSON is never stored.
JSON_READ = {
    "text_key": json.dumps({"text": GOOD}),
    "response_key": json.dumps({"response": GOOD}),
    "answer_key": json.dumps({"answer": GOOD}),
    "response_and_extras": json.dumps({"response": GOOD, "language": "en"}),
    "list_of_one": json.dumps([GOOD]),
    "object_in_a_list": json.dumps([{"summary": GOOD}]),
    "nested": json.dumps({"summary": {"text": GOOD}}),
}
JSON_REJECTED = {
    "null": json.dumps({"summary": None}),
    "null_with_extras": json.dumps({"summary": None, "keywords": ["budget"]}),
    "number": json.dumps({"summary": 4500}),
    "empty_object": "{}",
    "empty_list": "[]",
    "two_fields": json.dumps({"summary": GOOD, "text": GOOD}),
    "fields_of_the_message": json.dumps(
        {"budget": "4,500 euros", "hotel": "Hotel Avenida", "code": "CRG-20931"}
    ),
    "list_of_objects": json.dumps([{"budget": "4,500 euros"}, {"hotel": "Hotel Avenida"}]),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("answer", list(JSON_READ.values()), ids=list(JSON_READ))
def test_a_json_answer_with_one_string_field_is_read(answer, mode):
    update = _index(answer, mode)
    entry = update.entries[0]
    assert (entry.status, update.errors) == ("summarized", [])
    assert entry.summary == GOOD


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("answer", list(JSON_REJECTED.values()), ids=list(JSON_REJECTED))
def test_any_other_json_answer_is_rejected_not_stored(answer, mode):
    update = _index(answer, mode)
    entry = update.entries[0]
    assert entry.status == "fallback"
    assert update.errors and "rejected" in update.errors[0]
    assert not entry.summary.lstrip().startswith(("{", "["))


@pytest.mark.parametrize(
    "answer", [json.dumps({"response": RUNNING}), json.dumps({"summary": None}), "[]"]
)
def test_the_running_summary_reads_or_rejects_json_answers_too(answer):
    summarizer = RunningSummarizer(
        ScriptedChatModel(script=answer), max_summary_tokens=200, max_retries=0
    )
    result = summarizer.summarize(MESSAGES, PREVIOUS)
    if answer.startswith('{"response"'):
        assert (result.method, result.summary) == ("llm", RUNNING)
    else:
        assert result.method != "llm"
        assert not result.summary.lstrip().startswith(("{", "["))
