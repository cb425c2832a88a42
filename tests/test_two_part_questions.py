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
