"""A question asking for a go-ahead brings what the user said they cannot have."""

from __future__ import annotations

from helpers import FILLER, alternating, asked_after
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select.local import _ASKS_GO_AHEAD

_FACTS = [
    f"{FILLER} The school form has a health section: Noor has a tree nut allergy and "
    f"carries an EpiPen. {FILLER}",
    "Noted, flag it on the form.",
    f"{FILLER} The bakery on our street does great bread and pastries. {FILLER}",
    "Sounds lovely.",
    f"{FILLER} Class trip to the museum is on Friday, bring a packed lunch. {FILLER}",
    "Got it.",
]


def _select(question: str, texts: list[str] = _FACTS) -> list[int]:
    history, entries = asked_after(alternating(texts), question)
    return LocalSelector(embeddings=None).select(question, history, entries).ids


def test_a_go_ahead_question_brings_the_allergy_it_shares_no_word_with():
    # "baklava" is nowhere in the history: only the go-ahead rule brings the allergy.
    question = "She wants to bring baklava from the bakery for class, anything I should know?"
    assert 0 in _select(question)


def test_a_question_asking_no_go_ahead_does_not():
    assert 0 not in _select("What does the bakery on our street sell?")


def test_what_asks_a_go_ahead():
    for question in (
        "Can I eat the pad thai?",
        "Should we bring a pecan pie?",
        "Is it safe to take Advil before my run?",
        "I'm baking cookies for the party, any reason not to?",
        "Would that work at my place?",
        "Lobster dinner for our anniversary, good idea?",
        # someone else's go-ahead
        "Is that something Theo can eat?",
        "Can my son eat sushi yet?",
        "Grandpa's visiting — can he have a glass of wine with dinner?",
        "Is it safe for the baby?",
    ):
        assert _ASKS_GO_AHEAD.search(question), question
    for question in ("What did the nurse say?", "When is the museum trip?"):
        assert not _ASKS_GO_AHEAD.search(question), question


def test_without_the_rule_the_allergy_is_not_selected(monkeypatch):
    import re

    from langgraph_librarian.select import local

    monkeypatch.setattr(local, "_ASKS_GO_AHEAD", re.compile(r"(?!)"))
    question = "She wants to bring baklava from the bakery for class, anything I should know?"
    assert 0 not in _select(question)


def test_requests_and_how_to_questions_ask_no_go_ahead():
    for question in (
        "Can I ask you something?",
        "How can I fix the timeout in fetch_orders?",
        "Where can I find the config?",
        "Should I use pandas or polars?",
        "May I have the summary?",
        "Could he join the workshop remotely?",
        "How can he take the train there?",
        "Can Marco have a look at the PR?",
        "Can you have it ready by Friday?",
        "Where can they eat near the station?",
    ):
        assert not _ASKS_GO_AHEAD.search(question), question
    for question in (
        "My knee is achy — can I just take a couple of Advil?",
        "Would it be OK to leave the tablets out?",
        "Mum fancies grapefruit juice. Any reason she shouldn't?",
        "Anything I need to think about?",
    ):
        assert _ASKS_GO_AHEAD.search(question), question


def test_the_latest_statement_is_read_and_a_question_is_no_statement():
    texts = []
    for i in range(25):  # early talk about allergies in general, asked as questions
        texts += [f"Are kids allergic to peanuts more often now? {i}", "Somewhat, yes."]
    for i in range(30):
        texts += [f"Plans for week {i}: groceries, laundry, a walk.", "Sounds good."]
    texts += ["We booked the Spanish place for tonight at eight.", "Enjoy!"]
    texts += ["The doctor confirmed it: I'm allergic to shellfish.", "Good to know."]
    ids = _select("Can I order the paella there tonight?", texts)
    allergy = len(texts) - 2
    assert allergy in ids
    assert not any(i < 50 for i in ids)  # none of the early questions


def test_a_blood_thinner_is_what_rules_out_a_painkiller(monkeypatch):
    texts = [
        "The cardiologist put me on warfarin after the clot.",
        "Understood, that needs regular INR checks.",
    ]
    for i in range(30):
        texts += [f"Plans for week {i}: groceries, laundry, a walk.", "Sounds good."]
    texts += ["The allotment needs digging before the frost.", "Good luck with it."]
    question = "My knee aches after digging, is it all right if I take some ibuprofen?"
    assert 0 in _select(question, texts)
    from langgraph_librarian.select import local

    others = tuple(t for t in local._CONSTRAINT_TERMS if t != "warfarin")
    monkeypatch.setattr(local, "_CONSTRAINT_TERMS", others)
    assert 0 not in _select(question, texts)  # the term, not the history's shape, brings it
