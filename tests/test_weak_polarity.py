"""Summaries that give a deed to the wrong party or say the opposite of the message.

A weak model keeps the message's words and facts and still gets it wrong: "The
assistant booked flights to Lisbon" for the user's "I booked the flights to Lisbon",
"User is not allergic to sesame" for "I'm allergic to sesame". The sets live in
``tests/data/weak_polarity.json`` (written before the checks; every third item held
out, measured once at the end): wrong summaries that must be rejected, and honest
ones (negations kept, reported speech, assistant messages that mention the user) that
must be kept. A rejected summary costs an extractive entry, so false rejections weigh
more than misses: every honest summary of the development part is kept, the held-out
part within a bound set before it was measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.index.summarize import DEFAULT_SUMMARY_PROMPT, summary_problem

DATA = json.loads((Path(__file__).parent / "data" / "weak_polarity.json").read_text())
WRONG, GOOD = DATA["wrong"], DATA["good"]
NEW_RULES = ("swaps who", "the opposite")


def problem(item: dict) -> str | None:
    return summary_problem(
        item["summary"], item["message"], DEFAULT_SUMMARY_PROMPT, role=item["role"]
    )


def _by_new_rules(item: dict) -> bool:
    found = problem(item) or ""
    return any(rule in found for rule in NEW_RULES)


def _ids(item: dict) -> str:
    return f"{item['kind']}:{item['summary'][:40]}"


def test_the_sets_are_varied_enough_to_mean_something():
    assert len(WRONG) >= 40 and len(GOOD) >= 60
    assert {w["kind"] for w in WRONG} == {"role", "polarity"}
    assert {"negation", "reported", "ai-mentions-user", "lexical", "names"} <= {
        g["kind"] for g in GOOD
    }
    assert {w["role"] for w in WRONG} == {"human", "ai", None}
    held = [i for i in WRONG + GOOD if i["held_out"]]
    assert len(held) * 3 >= len(WRONG + GOOD) - 2


@pytest.mark.parametrize("item", [g for g in GOOD if not g["held_out"]], ids=_ids)
def test_honest_summaries_are_not_taken_for_swaps_or_flips(item):
    assert not _by_new_rules(item), problem(item)


def test_most_wrong_summaries_are_rejected():
    dev = [w for w in WRONG if not w["held_out"]]
    caught = [w for w in dev if _by_new_rules(w)]
    assert len(caught) >= 0.8 * len(dev)


def test_the_held_out_part_is_within_the_bounds_set_before_measuring_it():
    """Bounds written before the held-out items were run: at most one honest summary
    in ten rejected by the new rules, and two wrong ones in three caught."""
    good = [g for g in GOOD if g["held_out"]]
    wrong = [w for w in WRONG if w["held_out"]]
    assert sum(map(_by_new_rules, good)) <= 0.1 * len(good)
    assert sum(map(_by_new_rules, wrong)) >= 2 / 3 * len(wrong)


# -- the two rules, one case each, and what they leave alone ----


@pytest.mark.parametrize(
    ("role", "source", "summary"),
    [
        (
            "human",
            "I sold the old bike to a neighbour for 80 euros.",
            "The assistant sold the old bike to a neighbour for 80 euros.",
        ),
        (
            "ai",
            "I've drafted the email to the landlord about the heating.",
            "The user drafted the email to the landlord about the heating.",
        ),
        (
            None,
            "Omar paid Lea back the 40 euros for the concert.",
            "Lea paid Omar back the 40 euros for the concert.",
        ),
    ],
)
def test_a_deed_given_to_the_other_party_is_rejected(role, source, summary):
    found = summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT, role=role)
    assert found is not None and "swaps who" in found


@pytest.mark.parametrize(
    ("role", "source", "summary"),
    [
        (
            "human",
            "I sold the old bike to a neighbour for 80 euros.",
            "User sold the old bike to a neighbour for 80 euros.",
        ),
        (
            "human",
            "Could you sell the old bike for me? 80 euros is fine.",
            "User asks the assistant to sell the old bike for 80 euros.",
        ),
        (
            "ai",
            "You sold the old bike for 80 euros, so I removed it from the list.",
            "The user sold the old bike for 80 euros; the assistant removed it from the list.",
        ),
        (
            "ai",
            "I've drafted the email to the landlord about the heating.",
            "Assistant drafted the email to the landlord about the heating.",
        ),
        (
            None,
            "Omar paid Lea back the 40 euros for the concert.",
            "Lea was paid back the 40 euros for the concert by Omar.",
        ),
        # Without the role, "I" is nobody in particular.
        (
            None,
            "I sold the old bike to a neighbour for 80 euros.",
            "The assistant sold the old bike to a neighbour for 80 euros.",
        ),
    ],
)
def test_who_did_it_kept_right_is_accepted(role, source, summary):
    assert summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT, role=role) is None


@pytest.mark.parametrize(
    ("source", "summary"),
    [
        (
            "The shop on Elm Street doesn't deliver on Sundays.",
            "The shop on Elm Street delivers on Sundays.",
        ),
        (
            "The shop on Elm Street delivers on Sundays.",
            "The shop on Elm Street never delivers on Sundays.",
        ),
        (
            "Der Laden in der Ulmenstraße liefert sonntags nicht.",
            "Der Laden in der Ulmenstraße liefert sonntags.",
        ),
    ],
)
def test_a_claim_turned_around_is_rejected(source, summary):
    found = summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT, role="human")
    assert found is not None and "the opposite" in found


@pytest.mark.parametrize(
    ("source", "summary"),
    [
        (
            "The shop on Elm Street doesn't deliver on Sundays.",
            "No Sunday deliveries from the shop on Elm Street.",
        ),
        (
            "The shop on Elm Street doesn't deliver on Sundays.",
            "The Elm Street shop is unable to deliver on Sundays.",
        ),
        (
            "Does the shop on Elm Street not deliver on Sundays?",
            "Asks whether the shop on Elm Street delivers on Sundays.",
        ),
        (
            "Don't forget that the shop on Elm Street delivers on Sundays.",
            "Reminder: the shop on Elm Street delivers on Sundays.",
        ),
        (
            "The error says 'shop not found' when I open the Elm Street page.",
            "Opening the Elm Street page gives a shop-not-found error.",
        ),
    ],
)
def test_a_negation_said_another_way_is_accepted(source, summary):
    found = summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT, role="human") or ""
    assert not any(rule in found for rule in NEW_RULES), found


def test_the_running_summary_is_not_judged_for_roles_or_polarity():
    """Its source is a conversation of two speakers that say yes and no to each other."""
    source = "User: I booked the flights to Lisbon.\nAssistant: I did not book the hotel yet."
    summary = "The assistant booked the hotel; the user booked flights to Lisbon."
    found = summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT, conversation=True)
    assert found is None or not any(rule in found for rule in NEW_RULES)


@pytest.mark.parametrize(
    ("message", "answer", "reason"),
    [
        (
            HumanMessage("I booked the flights to Lisbon for the 14th, window seats.", id="m1"),
            "The assistant booked the flights to Lisbon for the 14th.",
            "swaps who",
        ),
        (
            AIMessage("I'd recommend the 40L pack for the Lisbon day hikes.", id="m1"),
            "User recommends the 40L pack for Lisbon day hikes.",
            "swaps who",
        ),
        (
            HumanMessage(
                "I'm allergic to sesame, so please keep it out of the Lisbon menu.", id="m1"
            ),
            "User is not allergic to sesame; Lisbon menu.",
            "the opposite",
        ),
    ],
)
def test_the_indexer_falls_back_and_records_why(message, answer, reason):
    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script=answer),
        short_message_threshold=10,
        embeddings=None,
        retry_backoff=0,
    )
    update = update_index([message], [], config)
    assert update.entries[0].status == "fallback"
    assert reason in update.errors[0]
    assert update.entries[0].summary != answer
