"""Summaries that keep the message's words and facts and still say something else.

A weak model writes "There is no budget" for "The budget is 37,500 euros", "was
cancelled" or "rejected Lisbon" for "we settled on Lisbon", "9 people arriving October
14" for "14 people, arriving October 9", "37,500 dollars" for "37,500 euros". Each
number and name is the message's, so only what they are bound to (a noun, a month, a
currency) or a denial the message lacks tells them apart. English summaries of other
languages' messages, and markdown lists, are faithful and must be kept.

``tests/data/summaries_paraphrases.json`` holds faithful summaries of varied messages
(written with these checks, as a guard against false rejections); the rate is pinned.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.index._validate import statement_problem
from langgraph_librarian.index.summarize import DEFAULT_SUMMARY_PROMPT, summary_problem

OFFSITE = (
    "For the Q3 offsite we settled on Lisbon, hotel Alfama Loft, 14 people, arriving "
    "October 9. The budget is 37,500 euros and Marta Silva handles the bookings; dietary "
    "list goes to her by Friday."
)
PARAPHRASES = json.loads(
    (Path(__file__).parent / "data" / "summaries_paraphrases.json").read_text()
)


def _status(message: str, answer: str) -> str:
    model = ScriptedChatModel(script=answer)
    config = LibrarianConfig(indexer_model=model, max_retries=0)
    return update_index([HumanMessage(message * 2, id="m")], [], config).entries[0].status


@pytest.mark.parametrize(
    "wrong",
    [
        "The team decided not to go to Lisbon; there is no budget.",
        "There is no budget for the Q3 offsite; Marta Silva handles the bookings.",
        "The Q3 offsite in Lisbon was cancelled; Marta Silva cancelled the bookings.",
        "The user rejected Lisbon for the Q3 offsite and refused the 37,500 euro budget.",
        "Q3 offsite in Lisbon, Alfama Loft, 9 people arriving October 14; budget 37,500 "
        "euros; Marta Silva books.",
        "Q3 offsite in Lisbon at Alfama Loft for 14 people from October 9; budget 37,500 "
        "dollars; Marta Silva books.",
        "Q3 offsite in Lisbon at Alfama Loft for 14 people from October 9; budget $37,500.",
    ],
)
def test_a_wrong_summary_with_the_messages_facts_is_not_stored(wrong):
    assert _status(OFFSITE, wrong) == "fallback"


@pytest.mark.parametrize(
    "faithful",
    [
        "Q3 offsite: Lisbon, Alfama Loft, 14 people arriving October 9; budget 37,500 "
        "euros; Marta Silva books.",
        "Lisbon chosen for the Q3 offsite (14 people, arrive 9 October, €37,500 budget).",
        "- **Offsite**: Lisbon, Alfama Loft\n- **People**: 14\n- **Date**: October 9\n"
        "- **Budget**: 37,500 euros\n- **Bookings**: Marta Silva",
    ],
)
def test_a_faithful_summary_of_the_same_message_is_stored(faithful):
    assert _status(OFFSITE, faithful) == "summarized"


@pytest.mark.parametrize(
    ("message", "summary"),
    [
        (
            "Mañana a las 10 tenemos la reunión con Pedro García sobre el contrato de 12.000 "
            "euros; hay que revisar la cláusula 7 antes de firmar, y Ana quiere cambiar la "
            "fecha de entrega al 15 de marzo porque el proveedor va con retraso.",
            "Meeting with Pedro García tomorrow at 10 about the 12,000 euro contract; clause "
            "7 must be reviewed before signing; Ana wants to move delivery to March 15 "
            "because the supplier is late.",
        ),
        (
            "Für den Firmenausflug haben wir Lissabon gewählt, Hotel Alfama Loft, 14 "
            "Personen, Ankunft am 9. Oktober. Das Budget beträgt 37.500 Euro und Marta "
            "Silva kümmert sich um die Buchungen.",
            "Company trip to Lisbon, Hotel Alfama Loft, 14 people arriving October 9; "
            "budget 37,500 euros; Marta Silva handles bookings.",
        ),
        (
            "Para el viaje de empresa elegimos Lisboa, hotel Alfama Loft, 14 personas, "
            "llegamos el 9 de octubre. El presupuesto es de 37.500 euros.",
            "Company trip to Lisbon, hotel Alfama Loft, 14 people arriving October 9; "
            "budget 37,500 euros.",
        ),
    ],
)
def test_an_english_summary_of_another_languages_message_is_stored(message, summary):
    assert _status(message, summary) == "summarized"


@pytest.mark.parametrize(
    ("message", "wrong"),
    [
        (
            "Para el viaje de empresa elegimos Lisboa, hotel Alfama Loft, 14 personas, "
            "llegamos el 9 de octubre. El presupuesto es de 37.500 euros.",
            "Company trip to Madrid, hotel Alfama Loft, 14 people arriving October 9; "
            "budget 37,500 euros.",
        ),
        (
            "Para el viaje de empresa elegimos Lisboa, hotel Alfama Loft, 14 personas, "
            "llegamos el 9 de octubre. El presupuesto es de 37.500 euros.",
            "Company trip to Lisbon, hotel Alfama Loft, 9 people arriving October 14; "
            "budget 37,500 euros.",
        ),
        (
            "Para el viaje de empresa elegimos Lisboa, hotel Alfama Loft, 14 personas, "
            "llegamos el 9 de octubre. El presupuesto es de 37.500 euros.",
            "Company trip to Lisbon, hotel Alfama Loft, 14 people arriving October 9; "
            "budget 38,500 euros.",
        ),
    ],
)
def test_an_english_summary_of_another_language_is_still_checked(message, wrong):
    assert _status(message, wrong) == "fallback"


def test_faithful_paraphrases_are_kept():
    """83 faithful summaries (paraphrases, lists, reordered facts, English summaries of
    Spanish, French, German and Italian messages; the last 16 from a review: ranges
    written out, "Oct 9 to Oct 14" for "October 9 to 14", reordered lists and labels,
    "failed" for "broke", "pounds" for "lbs"): 2 are rejected (a number inside a word the
    message spells apart: "6-engineer", "v3")."""
    rejected = [
        s for m, s in PARAPHRASES if summary_problem(s, m, DEFAULT_SUMMARY_PROMPT) is not None
    ]
    assert len(PARAPHRASES) == 83
    assert len(rejected) <= 2, rejected


@pytest.mark.parametrize(
    ("message", "wrong"),
    [
        # A range or a list binds its noun to each of its numbers, not to others.
        ("We booked 10 adults and 14 kids for the trip.", "Trip booked for 14 adults and 10 kids."),
        (
            "It takes 3 to 7 days to ship and costs 12 dollars.",
            "Shipping takes 12 days; 3 dollars.",
        ),
        (
            "We're in Lisbon from October 9 to 14, with 3 kids.",
            "In Lisbon from October 3 to October 14, with 9 kids.",
        ),
        # An outcome the message states the other way.
        ("The build passed on main after the merge.", "The build failed on main after the merge."),
        ("We confirmed the Globex deal yesterday.", "The Globex deal was cancelled yesterday."),
        # Pounds are money when the summary writes them so.
        ("I lost 5 lbs and paid 40 dollars for the scale.", "User lost 5 pounds; paid £40 for it."),
    ],
)
def test_ranges_outcomes_and_weights_still_catch_a_wrong_summary(message, wrong):
    assert summary_problem(wrong, message, DEFAULT_SUMMARY_PROMPT, role="human") is not None


def test_a_hostile_summary_is_judged_in_bounded_time():
    """Respelled names are compared only when their lengths allow it, and a long summary
    against a long message is not judged pair by pair (12.8 s and 14 s before)."""
    source = "Quiero ir a Lisboa con mi hermana el viernes. Clave: Lis" + "a" * 20000
    summary = "User wants to go to Lis" + "b" * 3000 + " with sister Friday."
    numbers = " ".join(f"{i} people on October {i % 28 + 1}," for i in range(3000))
    start = time.perf_counter()
    assert summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT) is not None
    statement_problem(numbers[:20000], numbers)
    assert time.perf_counter() - start < 6


def test_the_index_prompt_asks_for_the_messages_own_language():
    """A Spanish message gets a Spanish summary: searchable in the words the user will
    use, and checked word for word against the message."""
    assert "in the message's own language" in DEFAULT_SUMMARY_PROMPT


SESAME = (
    "I'm allergic to sesame, so please keep it out of every recipe you suggest. Also, the "
    "kitchen renovation is going fine and the new oven arrives next week. The painter "
    "comes on Thursday."
)


@pytest.mark.parametrize(
    ("summary", "status"),
    [
        ("User loves sesame; the new oven arrives next week.", "fallback"),
        ("Kitchen renovation going fine; new oven next week, painter on Thursday.", "fallback"),
        ("Sesame allergy: no sesame in any recipe; new oven next week.", "summarized"),
        ("User is allergic to sesame; the painter comes Thursday.", "summarized"),
    ],
)
def test_a_summary_keeps_the_writers_health_or_diet_constraint(summary, status):
    assert _status(SESAME, summary) == status


def test_two_dates_of_one_month_stay_with_their_events():
    trip = (
        "We're flying to Lisbon on October 9 with the kids, and we come back on October "
        "14 in the evening. The hotel is near the old town, breakfast is included, and "
        "the kids want to see the aquarium and ride the tram up the hill."
    )
    assert _status(trip, "Flight to Lisbon October 9; back October 14.") == "summarized"
    assert _status(trip, "Flight to Lisbon October 14; back October 9.") == "fallback"


def test_a_bloated_model_summary_is_rejected_before_it_is_judged():
    """A summary far longer than an entry keeps is rejected at once: judging 600 clauses
    against a 117 KB message took most of a minute."""
    source = " ".join(f"The offsite plan {i} went well on day {i}." for i in range(3000))
    bloated = " ".join(f"The offsite plan {i} was cancelled today." for i in range(600))
    model = ScriptedChatModel(script=bloated)
    started = time.monotonic()
    update = update_index(
        [HumanMessage(source, id="m")], [], LibrarianConfig(indexer_model=model, max_retries=0)
    )
    assert time.monotonic() - started < 10
    (entry,) = update.entries
    assert entry.status != "summarized"  # the offline summary stands in for it
