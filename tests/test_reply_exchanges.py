"""A reply is read with the other speaker's short question it answers.

"When did Maria start her new job?" shares "new job" with Sam's "How's the new job
going?" and "start" with Maria's answer "I started on Monday, it's intense.": each line
alone holds half of the question, the exchange holds all of it. The reply's opening
passage scores as the two passages read as one, when that is higher than its own score
and it matches the query itself.
"""

from __future__ import annotations

import numpy as np
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select.lexical import BM25Index

_FILLER = [
    ("Maria", "We finally fixed the leaking kitchen tap this weekend."),
    ("Sam", "My sister started a pottery class, she loves it."),
    ("Maria", "The new job board at the library lists a few openings."),
    ("Sam", "Did you watch the match on Sunday? What a finish."),
    ("Maria", "I started reading that mystery novel you recommended."),
    ("Sam", "The new cafe near the station has great croissants."),
]


def _index(lines: list[tuple[str, str]]) -> BM25Index:
    index = BM25Index()
    for n, (speaker, text) in enumerate(lines):
        index.add(n, text, speaker)
    return index


def _score(lines: list[tuple[str, str]], query: str, exchanges: bool) -> np.ndarray:
    return _index(lines).score_passages(query, exchanges=exchanges)[0]


QUESTION = ("Sam", "How's the new job going?")
REPLY = ("Maria", "I started on Monday, it's intense.")
QUERY = "When did Maria start her new job?"


def test_a_reply_scores_with_the_question_it_answers() -> None:
    lines = [*_FILLER, QUESTION, REPLY]
    alone = _score(lines, QUERY, exchanges=False)
    paired = _score(lines, QUERY, exchanges=True)
    reply = len(lines) - 1
    assert paired[reply] > alone[reply]
    # It now outranks every line holding only one half of the question.
    assert int(np.argmax(paired)) == reply
    assert int(np.argmax(alone)) != reply
    # Nothing else changed.
    others = np.arange(len(lines)) != reply
    assert np.array_equal(paired[others], alone[others])


def test_not_when_the_same_speaker_asked() -> None:
    lines = [*_FILLER, ("Maria", "How's the new job going, you ask?"), REPLY]
    alone = _score(lines, QUERY, exchanges=False)
    assert np.array_equal(_score(lines, QUERY, exchanges=True), alone)


def test_not_after_a_statement_or_a_long_question() -> None:
    statement = ("Sam", "I heard about the new job from your mum.")
    long_question = (
        "Sam",
        "So tell me everything, because I have been wondering all week long and your "
        "mum only said a few words on the phone before she had to run off to her choir "
        "practice and then the line went dead and I never heard the end of it, which "
        "was a shame because she sounded so pleased about you, so please, now that I "
        "finally have you here: how's the new job going?",
    )
    for before in (statement, long_question):
        lines = [*_FILLER, before, REPLY]
        alone = _score(lines, QUERY, exchanges=False)
        assert np.array_equal(_score(lines, QUERY, exchanges=True), alone), before


def test_a_reply_sharing_no_word_with_the_query_is_not_raised() -> None:
    # The question alone matches; its reply says nothing the query asks: the reply
    # does not take the question's score (it still travels with its exchange).
    lines = [*_FILLER, QUESTION, ("Maria", "Honestly? Exhausting, but fun.")]
    paired = _score(lines, QUERY, exchanges=True)
    assert paired[-1] == 0.0


def test_only_the_reply_opening_is_read_with_the_question() -> None:
    lines = [
        *_FILLER,
        QUESTION,
        (
            "Maria",
            "It has been a really busy week with the move and all the boxes everywhere. "
            "My cousin came over on Saturday to help us carry the heavy furniture up "
            "three flights of stairs, and then we ordered pizza and fell asleep on the "
            "sofa. Anyway, to answer you, I started on Monday and it's intense.",
        ),
    ]
    index = _index(lines)
    alone, _ = index.score_passages(QUERY)
    paired, _ = index.score_passages(QUERY, exchanges=True)
    assert np.array_equal(paired, alone)


def test_the_selector_finds_the_answer_by_its_exchange() -> None:
    lines = [*_FILLER * 3, QUESTION, REPLY, *_FILLER]
    messages = [
        (HumanMessage if speaker == "Maria" else AIMessage)(text, name=speaker, id=f"m{n}")
        for n, (speaker, text) in enumerate(lines)
    ]
    entries = [IndexEntry(id=n, role=m.type, summary=m.text) for n, m in enumerate(messages)]
    reply = len(_FILLER) * 3 + 1
    ranked = LocalSelector().scores(QUERY, messages, entries)
    assert int(np.argmax(ranked)) == reply
