"""Scoped recall offers what came right after a bearing record in its thread: the fact
finished or changed a message later, in words the question does not share."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langgraph_librarian.embeddings import resolve_embeddings
from langgraph_librarian.recall import ScopeMemory
from langgraph_librarian.recall._records import records_as_index
from langgraph_librarian.recall._select import _ranked
from langgraph_librarian.select.local import LocalSelector
from langgraph_librarian.select.result import Selection

# Scope memory as users get it: the packaged embedding model, default settings.
pytestmark = pytest.mark.embeddings

SMALL_TALK = [
    [
        "Give me three ideas for a rainy Sunday afternoon.",
        "Bake bread, do a jigsaw puzzle, or watch a film series you've been saving.",
    ],
    [
        "What's the difference between weather and climate?",
        "Weather is the day-to-day state of the atmosphere; climate is the average over decades.",
    ],
    [
        "Recommend a classic film for tonight?",
        "Casablanca is a good choice: romance, war drama, great lines.",
    ],
    [
        "What's a quick stretch routine for desk workers?",
        "Neck rolls, shoulder shrugs, a seated spinal twist and wrist stretches, 30 seconds each.",
    ],
]


def scope_with(thread: list[str], *, turn_by_turn: bool = False) -> ScopeMemory:
    """A scope holding ``thread`` (user and assistant alternating) and some small talk."""
    memory = ScopeMemory(InMemoryStore())
    for n, turns in enumerate(SMALL_TALK):
        messages = [
            (HumanMessage if i % 2 == 0 else AIMessage)(t, id=f"talk{n}-{i}")
            for i, t in enumerate(turns)
        ]
        memory.capture("user:1", messages, thread_id=f"talk-{n}")
    messages = [
        (HumanMessage if i % 2 == 0 else AIMessage)(t, id=f"m{i}") for i, t in enumerate(thread)
    ]
    if turn_by_turn:  # as the middleware captures: one turn at a time, history growing
        for end in range(2, len(messages) + 1, 2):
            memory.capture("user:1", messages[:end], thread_id="main")
    else:
        memory.capture("user:1", messages, thread_id="main")
    return memory


PLANT = [
    "My fiddle leaf fig keeps dropping leaves, it's by the north window.",
    "It probably wants more light; try a brighter spot.",
    "I moved it next to the balcony door and it's doing better now.",
    "Great, thanks.",
]


def test_the_speakers_next_message_after_the_reply_is_recalled() -> None:
    result = scope_with(PLANT).recall("user:1", "Where is my fig tree now?")
    texts = [r.text for r in result.records]
    assert result.status == "recalled"
    assert PLANT[0] in texts
    assert PLANT[2] in texts  # the change, sharing no word of the question
    assert PLANT[3] not in texts  # filler is not offered


def test_follow_ups_are_found_across_captures_of_one_thread() -> None:
    party = [
        "My son Felix turns seven next week and wants a dinosaur party.",
        "Fun! A dinosaur egg hunt works well for that age.",
        "He's also allergic to eggs, so the cake needs to be egg-free.",
        "Noted: an egg-free cake.",
    ]
    memory = scope_with(party, turn_by_turn=True)
    result = memory.recall("user:1", "What is Felix planning for his birthday?")
    assert party[2] in [r.text for r in result.records]


def test_an_unrelated_question_recalls_no_follow_up() -> None:
    result = scope_with(PLANT).recall("user:1", "What is the torque spec for the cylinder head?")
    assert result.status == "empty"


def test_follow_ups_come_last_and_displace_no_ranked_record() -> None:
    # The selection picked the fig statement; a fig record of another conversation is
    # a next-best candidate (the reserve). The follow-up of the fig's thread comes after
    # every ranked record, so a full byte bound keeps what it kept without follow-ups.
    memory = scope_with(PLANT)
    memory.remember("user:1", "Fig jam on toast is my favourite breakfast.")
    records = memory.records("user:1")
    query = "Where is my fig tree now?"
    messages, entries = records_as_index(records)
    local = LocalSelector(embeddings=resolve_embeddings(memory.config))
    _, evidence = local.weigh(query, messages, entries)
    texts = [r.text for r in records]
    jam = texts.index("Fig jam on toast is my favourite breakfast.")
    selection = Selection(ids=[texts.index(PLANT[0])], reserve_ids=[jam], strategy="local")
    ranked = [r.text for r in _ranked(records, selection, evidence).records]
    assert ranked[:2] == [PLANT[0], texts[jam]]
    assert ranked[-1] == PLANT[2]


def test_a_new_subject_or_question_after_the_reply_is_not_a_follow_up() -> None:
    thread = [
        "My fiddle leaf fig keeps dropping leaves, it's by the north window.",
        "It probably wants more light; try a brighter spot.",
        "My dentist is Dr. Okafor.",
        "Good to know.",
    ]
    asked = [*thread[:2], "Which shoes are best for flat feet?", "Trail runners."]
    for turns in (thread, asked):
        result = scope_with(turns).recall("user:1", "Where is my fig tree now?")
        assert turns[0] in [r.text for r in result.records]
        assert turns[2] not in [r.text for r in result.records]
