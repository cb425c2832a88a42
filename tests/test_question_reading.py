"""How a question is read for selection: its words about the conversation itself and
the asker's hedges are not what it asks about."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select.local import _question


@pytest.mark.parametrize(
    ("question", "read"),
    [
        (
            "Which pets lived with Roz over the course of the conversations?",
            "Which pets lived with Roz?",
        ),
        (
            "Which places has Dario driven to, according to what he mentions?",
            "Which places has Dario driven to?",
        ),
        (
            "What injuries did Dario have during these conversations?",
            "What injuries did Dario have?",
        ),
        (
            "What did I tell you about my allergies in our earlier chats?",
            "What did I tell you about my allergies?",
        ),
        ("What did we decide throughout this chat so far?", "What did we decide so far?"),
        # Not at the end: the words name which chat, or whose account.
        (
            "What did Kwame say in the chat with his mum?",
            "What did Kwame say in the chat with his mum?",
        ),
        (
            "What do sunflowers represent according to Caroline?",
            "What do sunflowers represent according to Caroline?",
        ),
        ("Is Noor likely to come to the wedding?", "Is Noor to come to the wedding?"),
        ("Would Priya probably enjoy a climbing trip?", "Would Priya enjoy a climbing trip?"),
        ("Is Bev the sort of person who praises people easily?", "Is Bev praises people easily?"),
        ("Is Roz someone who avoids challenges?", "Is Roz avoids challenges?"),
        # Whose account, a group chat's members, a title, an adjective: kept.
        (
            "What do sunflowers represent, according to what Caroline said?",
            "What do sunflowers represent, according to what Caroline said?",
        ),
        (
            "What did you suggest, according to what you said?",
            "What did you suggest, according to what you said?",
        ),
        ("Who else was in the chat?", "Who else was in the chat?"),
        (
            "Did I like the musical Maybe Happy Ending?",
            "Did I like the musical Maybe Happy Ending?",
        ),
        ("What is the most likely cause?", "What is the most likely cause?"),
        (
            "What is Kai's favourite sort of people to work with?",
            "What is Kai's favourite sort of people to work with?",
        ),
        # Nothing but words about the conversation: read as it is.
        ("In our earlier chats?", "In our earlier chats?"),
        # A word that only looks like one: kept.
        (
            "What is the likelihood of rain, and do you like it?",
            "What is the likelihood of rain, and do you like it?",
        ),
    ],
)
def test_the_question_as_read_for_selection(question: str, read: str) -> None:
    assert _question(question) == read


def _transcript(lines: list[tuple[str, str]]) -> list:
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(f"{speaker}: {text}", id=f"m{i}")
        for i, (speaker, text) in enumerate(lines)
    ]


def _picked(messages: list, question: str) -> list[int]:
    full = [*messages, HumanMessage(question, id="q")]
    entries = update_index(full, [], LibrarianConfig()).entries[:-1]
    return LocalSelector(max_selected=3).select(question, full, entries).ids


def test_the_conversation_named_in_a_question_does_not_bring_a_course() -> None:
    """ "Over the course of the conversations" asked about the animals: the pottery course
    and its curriculum (the static model's neighbours of "course") came first."""
    messages = _transcript(
        [
            ("Roz", "Morning! The fog is thick over the bay today and the ferry was late again."),
            ("Ikaika", "Here it's sunny. I spent the morning counting urchins off the reef."),
            ("Roz", "I've signed up for a pottery course at the community centre, every Tuesday."),
            ("Ikaika", "That sounds fun. Who teaches it?"),
            ("Roz", "A retired instructor called Yuki. She taught ceramics at the art school."),
            ("Ikaika", "Nice. My sister's hula group has practice every night this month."),
            ("Roz", "Pickle slept in the sun patch by the kitchen window all afternoon, snoring."),
            ("Ikaika", "Ha, give him a scratch from me. How old is he now?"),
            ("Roz", "Fourteen. He walks slowly now but still guards the gate."),
            ("Ikaika", "I love our talks, they make the evenings shorter."),
            ("Roz", "The curriculum for the course covers glazing in week three, I can't wait."),
            ("Ikaika", "We had a seminar on kelp forests, the lecturer talked for two hours."),
            ("Roz", "Four hens arrived on Saturday, I named them after the Brontë sisters."),
            ("Ikaika", "Brilliant names. Do they lay yet?"),
            ("Roz", "Not yet, but they follow me around the yard all day."),
            ("Ikaika", "I have a conference talk to prepare, wish me luck."),
        ]
    )
    picked = _picked(
        messages, "Which animals has Roz looked after over the course of the conversations?"
    )
    assert 12 in picked  # the hens
    assert not {2, 10} & set(picked)  # the pottery course, its curriculum


def test_a_hedged_question_asked_again_is_still_its_own_echo() -> None:
    """The question asked again is read without its hedge; its earlier copy must be read
    the same way, or it no longer counts as an echo and outranks the answer."""
    question = "Is Noor the sort of person who flies?"
    lines = [
        (HumanMessage, question),
        (AIMessage, "I'm not sure, she has not said yet."),
        (HumanMessage, "Our venue is booked for the ninth of June."),
        (AIMessage, "Great, the garden one by the river."),
        (HumanMessage, "Noor told me she flies to every wedding and lands on the seventh."),
        (AIMessage, "Then she will be there for it."),
        (HumanMessage, "The caterer wants a headcount by Friday."),
        (AIMessage, "I'll remind you on Thursday."),
    ]
    messages = [cls(text, id=f"m{i}") for i, (cls, text) in enumerate(lines)]
    picked = _picked(messages, question)
    assert picked[0] == 4
    assert 0 not in picked[:2]
