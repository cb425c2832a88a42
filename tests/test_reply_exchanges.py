"""A reply is read with the other speaker's short question it answers.

"When did Maria start her new job?" shares "new job" with Sam's "How's the new job
going?" and "start" with Maria's answer "I started on Monday, it's intense.": each line
alone holds half of the question, the exchange holds all of it. The reply's opening
passage scores as the two passages read as one, when that is higher than its own score
and it matches the query itself.
"""

from __future__ import annotations

import numpy as np
import pytest
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


def _bm25(counts: list[float], length: float, index: BM25Index, query: str, n: int) -> float:
    """BM25 of one passage with these query-term ``counts`` and ``length`` (by hand)."""
    from langgraph_librarian._engine.postings import robertson_idf
    from langgraph_librarian._engine.text import content_terms
    from langgraph_librarian.select.lexical import _B, _K1

    avg = index._length_totals[-1] / n
    total = 0.0
    for term, tf in zip(dict.fromkeys(content_terms(query)), counts, strict=True):
        if tf:
            idf = robertson_idf(n, index._postings.df(term))
            total += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / avg))
    return total


def test_the_exchange_score_is_bm25_of_both_passages_read_as_one() -> None:
    lines = [*_FILLER, QUESTION, REPLY]
    index = _index(lines)
    # Raw BM25 per passage (score_passages adds the value boost: "Monday").
    scores = index._passage_scores(QUERY, len(lines), exchanges=True)
    from langgraph_librarian._engine.text import content_terms

    terms = list(dict.fromkeys(content_terms(QUERY)))
    question, reply = len(lines) - 2, len(lines) - 1
    counts = [
        sum(index.passage_terms[p] >= {t} and _tf(index, p, t) for p in (question, reply))
        for t in terms
    ]
    length = index._lengths[question] + index._lengths[reply]
    assert scores[reply] == pytest.approx(_bm25(counts, length, index, QUERY, len(lines)))


def _tf(index: BM25Index, passage: int, term: str) -> float:
    rows, counts = index._postings.arrays(term)
    return float(counts[list(rows).index(passage)])


def test_an_unknown_speaker_on_either_side_pairs_nothing() -> None:
    for question, reply in (
        (("", QUESTION[1]), REPLY),
        (QUESTION, ("", REPLY[1])),
    ):
        index = BM25Index()
        for n, (speaker, text) in enumerate([*_FILLER, question, reply]):
            index.add(n, text, speaker or None)
        alone, _ = index.score_passages(QUERY)
        assert np.array_equal(index.score_passages(QUERY, exchanges=True)[0], alone)


def test_a_question_under_sixty_words_is_short() -> None:
    def asked(words: int) -> tuple[str, str]:
        padding = " ".join(["really"] * (words - 5))
        return ("Sam", f"{padding} how's the new job going?")

    for words, pairs in ((59, True), (60, False)):
        lines = [*_FILLER, asked(words), REPLY]
        assert len(lines[-2][1].split()) == words
        alone = _score(lines, QUERY, exchanges=False)
        raised = bool(_score(lines, QUERY, exchanges=True)[-1] > alone[-1])
        assert raised is pairs, words


def test_the_last_question_of_the_message_is_the_one_answered() -> None:
    question = (
        "Sam",
        "Did you ever find out whether the landlord will fix the heating before the "
        "winter comes, because last year it took him two months and you were freezing? "
        "Also I keep meaning to ask you about it: how's the new job going?",
    )
    index = _index([*_FILLER, question, REPLY])
    passages = list(index.doc_passages(len(_FILLER)))
    assert len(passages) == 2
    assert index._answers[index.doc_passages(len(_FILLER) + 1)[0]] == passages[-1]


def test_a_related_word_alone_does_not_make_a_reply_match() -> None:
    lines = [*_FILLER, QUESTION, ("Maria", "Honestly? Exhausting, but the work is fun.")]
    index = _index(lines)
    alone, _ = index.score_passages(QUERY, related={"work": 0.3})
    paired, _ = index.score_passages(QUERY, related={"work": 0.3}, exchanges=True)
    assert alone[-1] > 0
    assert paired[-1] == alone[-1]


def test_with_three_speakers_a_question_is_answered_by_whom_it_was_asked_of() -> None:
    opening = ("Maria", "Finally a quiet evening after a long week.")
    interjection = ("Ivo", "Sorry, I started late today, what did I miss?")
    lines = [*_FILLER, opening, QUESTION, interjection, REPLY]
    index = _index(lines)
    ivo = len(lines) - 2
    assert index._answers[index.doc_passages(ivo)[0]] == -1
    # The one who spoke before the question answers it, in a group too.
    lines = [*_FILLER, ("Ivo", "Evening all."), opening, QUESTION, REPLY]
    index = _index(lines)
    question = len(lines) - 2
    assert index._answers[index.doc_passages(len(lines) - 1)[0]] == index.doc_passages(question)[0]


def test_a_reader_during_an_add_keeps_the_pairing() -> None:
    # A reader (another thread) converting the per-passage lists while the reply is
    # being added must not cache a value the add changes afterwards.
    class Reading(BM25Index):
        reading = False

        def _question_passage(self, first_pid: int, text: str) -> int:
            # Every passage of the reply is recorded by now; the document is not.
            if self.reading:
                self.score_passages(QUERY, len(self.keys), exchanges=True)
            return super()._question_passage(first_pid, text)

    index = Reading()
    for n, (speaker, text) in enumerate([*_FILLER, QUESTION]):
        index.add(n, text, speaker)
    index.reading = True
    index.add(len(_FILLER) + 1, "Marathon training started Monday, intense!", "Maria")
    index.reading = False
    fresh = _index([*_FILLER, QUESTION, ("Maria", "Marathon training started Monday, intense!")])
    ours, _ = index.score_passages(QUERY, exchanges=True)
    theirs, _ = fresh.score_passages(QUERY, exchanges=True)
    assert np.allclose(ours, theirs)
    assert ours[-1] > index.score_passages(QUERY)[0][-1]
