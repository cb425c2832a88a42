"""Scoped recall: a recalled record that only asks brings the reply it got, ahead of itself
(questions are not answers; the reply is the evidence and often shares no word of the
question)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langgraph_librarian.recall import ScopeMemory
from langgraph_librarian.recall._select import _only_asks

POTTERY = [
    "Back from the studio, my hands are covered in clay.",
    "Sounds fun! How did the pottery class go? Did you finish anything?",
    "Yes, a blue vase and two small bowls, glazed and fired on Friday.",
    "Lovely, congratulations!",
]
QUESTION = "What did I finish in the pottery class?"
SMALL_TALK = [
    ["Recommend a classic film for tonight?", "Casablanca is a good choice: great lines."],
    ["What's a quick stretch routine?", "Neck rolls and shoulder shrugs, 30 seconds each."],
]


def scope_with(thread: list[str]) -> ScopeMemory:
    """A scope holding ``thread`` (user and assistant alternating) and some small talk."""
    memory = ScopeMemory(InMemoryStore())
    for n, turns in enumerate([*SMALL_TALK, thread]):
        messages = [
            (HumanMessage if i % 2 == 0 else AIMessage)(t, id=f"t{n}-{i}")
            for i, t in enumerate(turns)
        ]
        memory.capture("user:1", messages, thread_id=f"thread-{n}")
    return memory


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Sounds fun! How did the pottery class go? Did you finish anything?", True),
        ("Wow, that rocks! What's the main idea of your art?", True),
        ("Any more paintings coming up?", True),
        ("Yes, a blue vase and two small bowls. Want to see them?", False),
        ("I won the tournament!", False),
        ("", False),
    ],
)
def test_a_message_only_asks_when_it_states_nothing(text: str, asks: bool) -> None:
    assert _only_asks(text) is asks


@pytest.mark.embeddings
def test_the_reply_to_a_matching_question_comes_before_it() -> None:
    memory = scope_with(POTTERY)
    result = memory.recall("user:1", QUESTION)
    texts = [r.text for r in result.records]
    assert POTTERY[1] in texts and POTTERY[2] in texts  # both, in time order
    # Under a bound that holds one record, the answer is the one recalled (it was the
    # question: it matches the question's words and says nothing).
    tight = memory.recall("user:1", QUESTION, max_bytes=512)
    assert [r.text for r in tight.records] == [POTTERY[2]]
