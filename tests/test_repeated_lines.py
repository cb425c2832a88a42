"""A line repeated in many messages of a long history takes one place in the context.

Long work chats repeat status lines ("The venue question keeps getting postponed.")
in many messages. Each copy was linked to the one before as a change of it, and the
copies of another line were ranked one after the other: the budget filled with copies
and the one message that answers was left out (`librarian demo --messages 5000`:
13 of 18 questions).
"""

from __future__ import annotations

import random

import pytest
from langchain_core.messages import HumanMessage

from helpers import alternating, curated_ids
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector

_FILLER = [
    "My inbox is a mess after the holidays, so apologies if I missed something you sent.",
    "The weather has been strange, so half the people were working from home.",
    "I made a checklist so that nothing falls through the cracks this time.",
    "Let us not forget to thank the people who stayed late on Thursday.",
    "Honestly, most of this is fine; the remaining questions are small.",
    "Someone suggested we record the next call so that everyone can catch up.",
    "The coffee machine on the third floor is broken again, which explains the mood.",
    "I had lunch with the design team and we talked about everything except work.",
]
_STATUS = (
    "The venue question for the Porto retreat keeps getting postponed because of other priorities."
)
_LOOKED = "I looked at photos of possible venues for the Porto retreat, but nothing is decided."
_FIRST = "The venue for the Porto retreat will be a rooftop hall; the booking is confirmed."
_CHANGE = (
    "Change of plans for the Porto retreat: instead of the rooftop hall, the venue is "
    "now the riverside hotel."
)


def _history(n: int = 800, seed: int = 5) -> list:
    rng = random.Random(seed)
    texts = [" ".join(rng.sample(_FILLER, 4)) for _ in range(n)]
    for at in range(7, n - 20, 23):
        texts[at] = f"{_STATUS} {' '.join(rng.sample(_FILLER, 3))}"
    for at in range(13, n - 20, 19):
        texts[at] = f"{_LOOKED} {' '.join(rng.sample(_FILLER, 3))}"
    texts[40] = f"{_FIRST} {' '.join(rng.sample(_FILLER, 3))}"
    texts[500] = f"{_CHANGE} {' '.join(rng.sample(_FILLER, 3))}"
    return alternating(texts)


def test_the_change_is_not_crowded_out_by_copies_of_a_status_line() -> None:
    ids = curated_ids(_history(), "Where is the Porto retreat taking place?", 1500)
    assert "m500" in ids
    assert "m40" in ids  # and what it changed


def test_copies_of_one_line_take_one_place() -> None:
    messages = _history()
    ids = curated_ids(messages, "Where is the Porto retreat taking place?", 1500)
    texts = {m.id: str(m.content) for m in messages}
    for line in (_STATUS, _LOOKED):
        copies = [i for i in ids if texts.get(i, "").startswith(line)]
        assert len(copies) <= 2, (line, copies)


def test_copies_wait_behind_the_next_best_candidates() -> None:
    # With room in the budget the copies beyond the first are spare candidates: they
    # come only while the context stays small, never before a next-best candidate.
    messages = _history()
    question = "Where is the Porto retreat taking place?"
    history = [*messages, HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    selection = LocalSelector().select(question, history, entries)
    texts = [str(m.content) for m in history]
    chosen = [*selection.ids, *selection.reserve_ids]
    for line in (_STATUS, _LOOKED):
        assert sum(texts[i].startswith(line) for i in chosen) <= 1, line


_RIVER = "Change of plans: the Porto retreat venue moved to the riverside hotel."
_BACK = "Change of plans: the Porto retreat venue moved back to the rooftop hall."


def _restated_history() -> list:
    # rooftop hall -> riverside hotel -> rooftop hall -> riverside hotel, the last change
    # written in the same words as the first one.
    rng = random.Random(1)
    texts = [" ".join(rng.sample(_FILLER, 4)) for _ in range(40)]
    texts[2] = f"The Porto retreat venue is the rooftop hall. {' '.join(rng.sample(_FILLER, 3))}"
    texts[10] = f"{_RIVER} {' '.join(rng.sample(_FILLER, 3))}"
    texts[20] = f"{_BACK} {' '.join(rng.sample(_FILLER, 3))}"
    texts[30] = f"{_RIVER} {' '.join(rng.sample(_FILLER, 3))}"
    return alternating(texts)


@pytest.mark.parametrize("budget", [None, 300, 800])
def test_a_change_restated_in_the_same_words_is_still_the_latest(budget) -> None:
    # The last change repeats the first change's sentence: it is the current venue, and
    # must not be dropped as a copy of the earlier one (the context then read "moved back
    # to the rooftop hall" as the latest).
    ids = curated_ids(_restated_history(), "Where is the Porto retreat venue?", budget)
    assert "m30" in ids


_NOTES = (
    "I will also send the notes from the meeting to everyone later today, and please let "
    "me know if anything in them looks wrong or if I forgot to mention one of the open "
    "points we discussed."
)


@pytest.mark.parametrize("budget", [None, 400])
def test_a_heading_two_updates_share_does_not_drop_the_earlier_value(budget) -> None:
    # Two updates open with the same line; the earlier holds the value the later one
    # changed, which "by how much did it go up?" needs. A line written twice is no
    # recurring line: both stay selected.
    texts = [
        f"Quick update on the budget for Project Willow. It is 40,000 dollars for now. {_NOTES}",
        "Ok.",
        "Unrelated: the office plants need water.",
        "Sure.",
        f"Quick update on the budget for Project Willow. It is now 55,000 dollars. {_NOTES}",
        "Ok.",
        "The train was late twice this week.",
        "Fine.",
    ]
    messages = alternating(texts)
    ids = curated_ids(messages, "By how much did the budget for Project Willow go up?", budget)
    assert {"m0", "m4"} <= set(ids)
