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
        (
            "human",
            "You booked the flights to Lisbon, thanks!",
            "The user booked the flights to Lisbon.",
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
        # In a user's message "you" is anyone as often as the assistant.
        (
            "human",
            "When you cancel within 24 hours you get a full refund.",
            "User can cancel within 24 hours for a full refund.",
        ),
        (
            "human",
            "You need a visa for Japan for stays over 90 days.",
            "User needs a visa for Japan for stays over 90 days.",
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


# Honest summaries written after the first measurement (probes of antonyms, idioms,
# generic "you", reported deeds and two clauses with two names): none is taken for a
# swap or a flip (another rule may still judge them).
PROBES = [
    (
        "ai",
        "You can't return opened items after 30 days, but I can ask for an exception.",
        "Opened items can't be returned after 30 days; the assistant can ask for an exception.",
    ),
    (
        "human",
        "I'm not going to the party, Tom is going instead.",
        "Tom is going to the party instead of the user.",
    ),
    (
        "human",
        "We didn't get the apartment, the landlord chose another family.",
        "The landlord chose another family for the apartment.",
    ),
    (
        "human",
        "I never got the refund for order 5521.",
        "Refund for order 5521 still not received.",
    ),
    ("human", "I can't find my keys anywhere.", "User has lost their keys."),
    (
        "ai",
        "There's no need to restart the server; the config reloads automatically.",
        "Server restart unnecessary: config reloads automatically.",
    ),
    (
        "human",
        "Nobody from the team could join the call on Monday.",
        "The whole team missed Monday's call.",
    ),
    (
        "human",
        "I don't mind the early flight to Rome.",
        "User is fine with the early flight to Rome.",
    ),
    (
        "human",
        "It's not expensive, only 20 euros for the ticket.",
        "The ticket costs only 20 euros, which is cheap.",
    ),
    ("human", "I'd rather not drive at night.", "User prefers not to drive at night."),
    ("human", "The printer in room 4 isn't working again.", "Printer in room 4 broken again."),
    (
        "ai",
        "I couldn't find any flights under 200 euros for those dates.",
        "Assistant found no flights under 200 euros for those dates.",
    ),
    (
        "human",
        "Not a fan of the blue design, let's go with green.",
        "User prefers the green design over the blue one.",
    ),
    (
        "human",
        "My sister isn't coming to the wedding in June.",
        "User's sister will miss the wedding in June.",
    ),
    ("human", "I don't eat pork but chicken is fine.", "User eats chicken but not pork."),
    (
        "human",
        "I don't remember the wifi password for the cabin.",
        "User forgot the cabin wifi password.",
    ),
    ("human", "The train was not late today, for once.", "The train was on time today, for once."),
    (
        "ai",
        "You don't have to pay the deposit until March.",
        "The deposit is due in March, not before.",
    ),
    (
        "human",
        "I never heard back from the recruiter at Acme.",
        "The Acme recruiter has not replied.",
    ),
    (
        "human",
        "I can't decide between the red and the grey sofa.",
        "User is torn between the red and grey sofa.",
    ),
    ("human", "The kids won't eat broccoli no matter what I do.", "The kids refuse broccoli."),
    (
        "ai",
        "I checked: your passport doesn't expire until 2031.",
        "Assistant checked that the user's passport is valid until 2031.",
    ),
    (
        "human",
        "I'm no longer with Vodafone, I switched to O2 last month.",
        "User switched from Vodafone to O2 last month.",
    ),
    (
        "human",
        "The landlord didn't fix the boiler, so we called a plumber ourselves.",
        "User called a plumber because the landlord did not fix the boiler.",
    ),
    ("human", "Nothing is booked yet for the Porto trip.", "Porto trip bookings still open."),
    (
        "ai",
        "I see you've already paid the deposit for the flat.",
        "User already paid the deposit for the flat.",
    ),
    (
        "human",
        "You recommended the 40L pack and I bought it yesterday.",
        "User bought the 40L pack the assistant recommended.",
    ),
    (
        "human",
        "I asked you to book the flights but you booked the train.",
        "User asked the assistant to book flights, but the assistant booked the train.",
    ),
    (
        "human",
        "We booked the flights together yesterday, thanks for your help!",
        "User and assistant booked the flights together yesterday.",
    ),
    (
        "ai",
        "You mentioned you booked the hotel; I added the check-in time to the plan.",
        "User booked the hotel; the assistant added the check-in time to the plan.",
    ),
    (
        "human",
        "My boss told me I booked the wrong hotel.",
        "User's boss said the user booked the wrong hotel.",
    ),
    (
        "ai",
        "As you said, the venue holds 120 people, so I booked the larger room.",
        "Venue holds 120 people, per the user; assistant booked the larger room.",
    ),
    (
        "human",
        "Here's what Tom wrote: I sent the contract yesterday.",
        "Tom says he sent the contract yesterday.",
    ),
    (
        "ai",
        "I can draft the reply to Ms Okafor if you send me her last email.",
        "The assistant offers to draft the reply to Ms Okafor once the user sends her last email.",
    ),
    (
        "human",
        "Can you remind me what I ordered last week?",
        "User asks what they ordered last week.",
    ),
    (
        "ai",
        "You ordered the walnut desk and two chairs last week.",
        "User ordered the walnut desk and two chairs last week.",
    ),
    (
        "human",
        "Thanks, you fixed the export bug!",
        "The assistant fixed the export bug, the user says.",
    ),
    (
        "human",
        "Thanks, you fixed the export bug!",
        "User thanks the assistant for fixing the export bug.",
    ),
    (
        "ai",
        "I'd suggest you call the embassy before booking.",
        "The assistant suggests the user call the embassy before booking.",
    ),
    (
        "ai",
        "I'd suggest you call the embassy before booking.",
        "User should call the embassy before booking, the assistant suggests.",
    ),
    (
        "human",
        "Sofia called Ben about the invoice, and Ben called the bank.",
        "Ben called the bank after Sofia called him about the invoice.",
    ),
    (
        "human",
        "Sofia emailed Ben the slides and Ben emailed them to the client.",
        "Ben emailed the slides to the client after Sofia sent them.",
    ),
    (
        "human",
        "I think you misunderstood: I wanted the 3pm slot, not 5pm.",
        "User says the assistant misunderstood: they wanted the 3pm slot, not 5pm.",
    ),
    (
        "ai",
        "Let me know if you want me to book it; I found a table at Lume for 8pm.",
        "Assistant found a table at Lume for 8pm and offers to book it.",
    ),
    (
        "human",
        "I told the assistant last week that I moved to Leeds.",
        "User moved to Leeds and said so last week.",
    ),
]


@pytest.mark.parametrize(("role", "source", "summary"), PROBES, ids=[p[2][:40] for p in PROBES])
def test_more_honest_summaries_are_not_taken_for_swaps_or_flips(role, source, summary):
    found = summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT, role=role) or ""
    assert not any(rule in found for rule in NEW_RULES), found
