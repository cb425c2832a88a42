"""A question that asks two things at once is selected for each of them.

Scored as one query, the part with the more (and more frequent) matching messages
filled the selection, and the other part's one answer was left out ("Which port does
the search service use, and also: what is the budget for Project Willow?").
"""

from __future__ import annotations

import asyncio
import random

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from fakes import ScriptedChatModel
from helpers import alternating, curated_ids
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LLMSelector, LocalSelector
from langgraph_librarian.select.local import _question_parts


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "Which port does the search service use, and also: what is the budget for "
            "Project Willow?",
            ["Which port does the search service use", "what is the budget for Project Willow?"],
        ),
        (
            "Where is the Porto retreat taking place? Who leads Project Heron now?",
            ["Where is the Porto retreat taking place?", "Who leads Project Heron now?"],
        ),
        (
            "What did Maya order at the bakery and when did Jonas pick up the cake?",
            ["What did Maya order at the bakery", "when did Jonas pick up the cake?"],
        ),
    ],
)
def test_a_question_asking_several_things_is_read_as_its_parts(question, parts):
    assert _question_parts(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "What did Caroline and Melanie both do last summer?",
        "When did Maya move to Lisbon and why?",  # "why" has no words of its own
        "Where and when is the retreat?",
        "Why does `for (i = 0; i < n; i++) total += price[i];` print zero prices?",
        "What is the budget for Project Willow?",
        "",
        # A later part that refers back to the first part's subject has none of its own.
        "Which hotel did we book in Porto and how much did it cost per night?",
        "When did Melanie paint the lake sunrise, and how old were her kids then?",
        "Is the budget for Project Willow approved? If not, who is blocking the approval?",
        # "each", "both": a follow-up about what the first part named.
        "What structure did you suggest for my ERBC talk? Roughly how long for each part?",
        "Which two venues did we shortlist? Do both have step-free access?",
        # A sentence after the question is no question of its own.
        "Which port does the atlas-search service use? I need the number for the firewall "
        "rule in staging.",
        # Other languages: a part may name no subject at all ("¿Cuándo se mudó...?").
        "¿Dónde vive Marta? ¿Cuándo se mudó a Lisboa?",
        "Wo wohnt Marta? Wann ist sie nach Lissabon gezogen?",
    ],
)
def test_one_question_stays_whole(question):
    assert _question_parts(question) == [question.strip()]


_SERVICES = ["atlas", "anchor", "summit", "meadow", "harbor", "lantern", "comet", "falcon"]
_PROJECTS = ["Willow", "Tundra", "Heron", "Beacon", "Orchid", "Prism", "Juniper", "Coral"]


def _history():
    # Many distinct messages on service ports (the first part's topic), one budget per
    # project (the second part's answer is one message).
    rng = random.Random(4)
    texts = []
    for service in _SERVICES:
        old, new = rng.randint(2000, 9000), rng.randint(2000, 9000)
        texts += [
            f"The {service}-search service listens on port {old} in staging.",
            f"The {service}-search service port configuration lives in three files, a mess.",
            f"We moved the {service}-search service from port {old} to port {new} because of "
            "a conflict.",
        ]
    for project in _PROJECTS:
        texts += [
            f"The budget for Project {project} is ${rng.randint(2, 90)},500, and finance "
            "signed it off.",
            f"Project {project} came up again: people keep asking about its budget.",
        ]
    rng.shuffle(texts)
    messages = []
    for n, text in enumerate(texts):
        messages += [HumanMessage(text, id=f"u{n}"), AIMessage("Noted.", id=f"a{n}")]
    return messages


_QUESTION = (
    "Which port does the atlas-search service use, and also: what is the budget for Project Willow?"
)


def _selection(asynchronous: bool = False):
    history = [*_history(), HumanMessage(_QUESTION, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    selector = LocalSelector(max_selected=4)
    if asynchronous:
        return asyncio.run(selector.aselect(_QUESTION, history, entries))
    return selector.select(_QUESTION, history, entries), history


def test_each_part_s_best_match_comes_first():
    # Scored as one query, four port messages ranked before the one budget message.
    selection, history = _selection()
    texts = [str(history[i].content) for i in selection.ids[:2]]
    assert any(t.startswith("The budget for Project Willow") for t in texts), texts
    assert any("search service" in t for t in texts), texts


def test_async_selects_the_same():
    sync, asyn = _selection()[0], _selection(asynchronous=True)
    assert (asyn.ids, asyn.reserve_ids, asyn.spare_ids) == (
        sync.ids,
        sync.reserve_ids,
        sync.spare_ids,
    )


def test_the_llm_selector_s_local_fallback_selects_by_parts_too():
    history = [*_history(), HumanMessage(_QUESTION, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    local = LocalSelector(max_selected=4)
    model = ScriptedChatModel(script="I cannot tell which messages matter.")
    selector = LLMSelector(model, local=local, max_retries=0)
    fell_back = selector.select(_QUESTION, history, entries)
    assert fell_back.strategy == "local_fallback"
    assert fell_back.ids[:4] == local.select(_QUESTION, history, entries).ids[:4]
    fell_back_async = asyncio.run(selector.aselect(_QUESTION, history, entries))
    assert fell_back_async.ids == fell_back.ids


def test_a_part_referring_back_is_not_asked_on_its_own():
    # "how much did it cost per night?" alone matches every price per night: read
    # apart, the Valencia hostel's took the place of the Porto hotel's.
    texts = [
        "We booked the hotel in Porto for the retreat, the one near the river.",
        "Great.",
        "The Porto hotel costs 95 euros per night, breakfast included.",
        "Ok.",
    ]
    for city, kind, price in [
        ("Lisbon", "apartment", 80),
        ("Madrid", "hostel", 30),
        ("Seville", "guesthouse", 60),
        ("Bilbao", "apartment", 90),
        ("Valencia", "hostel", 25),
        ("Faro", "guesthouse", 70),
    ]:
        texts += [f"For the side trip, the {city} {kind} costs {price} euros per night.", "Noted."]
        texts += [f"The weather in {city} should be fine that week.", "Good."]
    question = "Which hotel did we book in Porto and how much did it cost per night?"
    assert "m2" in curated_ids(alternating(texts), question, 60)


def test_a_question_in_another_language_is_not_split():
    # "¿Cuándo se mudó a Lisboa?" names nobody: read apart, Lucía's move took the place
    # of Marta's.
    texts = [
        "Marta vive ahora en Lisboa, en un piso cerca del río.",
        "Qué bien.",
        "Marta se mudó a Lisboa en marzo de 2021, después de cambiar de trabajo.",
        "Vale.",
        "Pedro se mudó a Lisboa en enero de 2019 con su familia.",
        "Ah.",
        "Lucía se mudó a Lisboa en julio de 2023 para estudiar.",
        "Genial.",
        "Andrés se mudó a Lisboa en octubre de 2022 por su pareja.",
        "Entiendo.",
        "El tiempo en Lisboa fue muy bueno este fin de semana.",
        "Sí.",
    ]
    ids = curated_ids(alternating(texts), "¿Dónde vive Marta? ¿Cuándo se mudó a Lisboa?", 60)
    assert "m2" in ids


def test_a_part_s_best_match_is_not_demoted_as_another_part_s_exchange():
    # Message 9 is the first part's exchange (kept by structure, at the end) and the
    # second part's best match: it ranks as that part's best, not after every match.
    from langgraph_librarian.select import Selection
    from langgraph_librarian.select.local import _merged

    first = Selection(ids=[1, 2, 3, 9], strategy="local", exchange_ids=[9])
    second = Selection(ids=[9, 5], strategy="local")
    merged = _merged([first, second])
    assert merged.ids[:2] == [1, 9]
    assert 9 not in merged.exchange_ids
    assert sorted(merged.ids) == [1, 2, 3, 5, 9]
