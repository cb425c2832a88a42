"""An assistant reply that reacts to the user's statement stands for that statement."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from helpers import alternating, asked_after
from langgraph_librarian.select import LocalSelector

CHAT = [
    "Busy week at the bakery. I finally repainted the chalkboard menu by the till.",
    "A fresh chalkboard makes a real difference to how the counter reads; nice work.",
    "Disaster morning. Marco came in at 4:30 and the walk-in cooler was at 58 degrees, "
    "the compressor died overnight and we lost about $800 of dairy.",
    "I'm so sorry, losing the walk-in and the dairy overnight is brutal. A dead compressor "
    "is one of the most stressful equipment failures a bakery can have; get the repair "
    "quote in writing and check whether your insurance covers spoiled stock.",
    "Our sourdough starter turned ten this month, we fed it with rye to celebrate.",
    "Ten years is a lovely milestone for a starter; rye gives it a real boost.",
    "Deja wants to start an Instagram account for the café, a proper one this time.",
    "An Instagram account run by someone who enjoys it can do a lot for a café.",
]


def _ids(messages: list[BaseMessage], question: str, max_selected: int = 1) -> list[int]:
    history, entries = asked_after(messages, question)
    selector = LocalSelector(embeddings=None, max_selected=max_selected)
    return selector.select(question, history, entries).ids


def _selected(question: str, extra: list[str] | None = None, max_selected: int = 1) -> list[int]:
    return _ids(alternating([*CHAT, *(extra or [])]), question, max_selected)


def _chat(texts: list[str], question: str) -> list[int]:
    return _ids(alternating(texts), question)


def _off(monkeypatch) -> None:
    monkeypatch.setattr(
        LocalSelector, "_restated", staticmethod(lambda *args, **kwargs: (None, set()))
    )


QUESTION = "Which equipment failures needed a repair this year?"


def test_the_statement_a_reply_reacts_to_comes_first(monkeypatch):
    # The question shares "equipment failures" and "repair" with the reply only; the
    # cooler and its compressor are in the user's own message.
    ids = _selected(QUESTION)
    assert ids[0] == 2
    # Its exchange is the reply reacting to it, not the message before it (the
    # chalkboard: another topic).
    assert 1 not in ids
    assert _selected(QUESTION, max_selected=2)[:2] == [2, 3]  # the reply comes after it
    _off(monkeypatch)
    assert _selected(QUESTION)[0] == 3


def test_a_reply_stating_something_of_its_own_keeps_its_place():
    # The note answers by itself and does not react to the message before it.
    extra = [
        "We repainted the skirting boards in the back room over the weekend.",
        "Noted: the spare key for the flour store is in the blue tin on the top shelf.",
    ]
    ids = _selected("Where is the spare key for the flour store?", extra)
    assert ids[0] == 9


def test_a_question_about_what_the_assistant_said_is_left_alone(monkeypatch):
    question = "What did you suggest I check with my insurance about the equipment failures?"
    with_rule = _selected(question)
    _off(monkeypatch)
    assert _selected(question) == with_rule
    assert with_rule[0] == 3


def test_a_reply_to_a_question_is_not_a_reaction():
    # The reply answers the user's question: it is the answer, not a restatement.
    asked = [
        "Do ovens usually need a service every year, or is that a myth?",
        "Most commercial deck ovens benefit from a yearly service: equipment failures "
        "are cheaper to prevent than a repair in the middle of the holiday rush.",
    ]
    question = "Why are equipment failures cheaper to prevent than a repair in the holiday rush?"
    assert _selected(question, asked)[0] == 9


def test_words_every_message_shares_are_no_reaction():
    # The note shares "busy week at the bakery" with the message before it, and as much
    # with the user's other messages: it does not react to that message.
    texts = [
        "Busy week at the bakery: the rye order was short again.",
        "Short orders are worth raising with the mill.",
        "Busy week at the bakery: Marco trained the new starter on the mixer.",
        "Good, cross-training helps.",
        "Busy week at the bakery: repainted the skirting boards in the back room.",
        "Noted: the spare key for the flour store is in the blue tin on the top shelf. "
        "Sounds like a busy week at the bakery.",
        "Busy week at the bakery: the Saturday queue went round the corner.",
        "That's a great problem to have.",
        "Busy week at the bakery: we tried a cardamom bun, it sold out.",
        "Cardamom buns are a winner.",
    ]
    assert _chat(texts, "Where is the spare key for the flour store?")[0] == 5


def test_a_transcript_of_two_people_is_left_alone(monkeypatch):
    lines = [f"{'Ana' if i % 2 == 0 else 'Ben'}: {text}" for i, text in enumerate(CHAT)]
    with_rule = _chat(lines, QUESTION)
    _off(monkeypatch)
    assert _chat(lines, QUESTION) == with_rule


def test_words_shared_beside_messages_that_say_nothing_are_no_reaction():
    # The note shares "Elif" and "summer" with the message before it, and the user's
    # other messages around say nothing ("ok", "thanks"): no reaction can be read.
    texts = [
        "ok",
        "Sure.",
        "Elif grew again over the summer, all her trousers are short now.",
        "Noted: Elif is now in size 11 shoes after her summer growth spurt.",
        "thanks",
        "Any time.",
        "ok",
        "Talk soon.",
    ]
    assert _chat(texts, "What shoe size is Elif in now?")[0] == 3


def test_a_question_about_what_was_recommended_is_left_alone(monkeypatch):
    question = "Which repair was recommended for the equipment failures?"
    with_rule = _selected(question)
    _off(monkeypatch)
    assert _selected(question) == with_rule


def test_a_user_message_after_a_user_message_is_no_reply():
    # Two user messages in a row: the second is no assistant reply and does not hand its
    # place to the first.
    texts = [
        ("human", CHAT[0]),
        ("ai", CHAT[1]),
        ("human", CHAT[4]),
        ("ai", CHAT[5]),
        ("human", "The walk-in cooler died overnight, the compressor is gone."),
        (
            "human",
            "Update on the walk-in cooler and its compressor: the quote for the "
            "equipment failure repair came to $1,200.",
        ),
        ("ai", "That is steep but normal for a compressor; keep the invoice for the insurer."),
        ("human", CHAT[6]),
        ("ai", CHAT[7]),
        ("human", "The flour delivery was late again on Tuesday, third time this month."),
        ("ai", "Worth raising with the mill."),
    ]
    messages: list[BaseMessage] = [
        (HumanMessage if role == "human" else AIMessage)(text, id=f"c{i}")
        for i, (role, text) in enumerate(texts)
    ]
    ids = _ids(messages, "How much was the quote for the equipment failure repair?")
    assert ids[:2] == [5, 6]  # the update, then the reply reacting to it
