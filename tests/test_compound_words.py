"""A compound written apart in the question and together in the history is one word.

"How often does John work out with his family?" shared no term with Maria's "How often
do you all workout together?", so neither that question nor John's answer after it
("Three times a week") ranked.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select.local import _joined


class _Index:
    def __init__(self, *terms: str) -> None:
        self.terms = set(terms)

    def passage_frequency(self, term: str) -> int:
        return int(term in self.terms)


def test_two_words_the_history_writes_as_one_get_that_word_added():
    index = _Index("workout", "setup")
    assert _joined("How often does John work out with his family?", index) == (
        "How often does John work out workout with his family?"
    )
    assert _joined("did we set up the printer", index) == "did we set up setup the printer"


def test_only_known_words_the_history_uses_are_added():
    # "enjoy eating" is no word even if a hashtag wrote it so; "home made" is one, but
    # not in this history.
    index = _Index("enjoyeating")
    for query in ("What snacks does Sam enjoy eating?", "Was the cake home made?"):
        assert _joined(query, index) == query


def test_the_reply_to_a_compound_question_is_found():
    texts = [
        "Hey Maria, the kids started football practice this spring.",
        "Great news John! How often do you all workout together?",
        "Three times a week; it keeps us on track.",
        "That is impressive. My knee still hurts from the hike.",
    ]
    filler = [
        f"John, my family often watches documentaries about {topic}, it was fine."
        for topic in ("whales", "trains", "bread", "volcanoes", "chess", "bees")
    ]
    messages = [
        (HumanMessage if i % 2 == 0 else AIMessage)(text, id=f"m{i}")
        for i, text in enumerate([*filler, *texts, *filler])
    ]
    question = "How often does John work out with his family?"
    history = [*messages, HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    ids = LocalSelector(max_selected=3).select(question, history, entries).ids
    assert ids[:2] == [7, 8]  # Maria's question and John's answer, before the chatter
