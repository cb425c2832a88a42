"""A role the question uses ("my husband") brings the name the history gives it."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from helpers import FILLER, bm25_head
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select._related import ROLE_NAMES, names_by_role


def test_the_name_set_beside_the_role_either_way_round():
    head = bm25_head(
        "We are moving in August: me, my husband Javier and our daughter, Alba.",
        "Farah (my physio) says the knee is fine.",
        "I saw Dr. Reyes, my cardiologist, on Monday.",
    )
    assert names_by_role("What work did my husband find?", head) == {"javier": 1.0}
    assert names_by_role("Where is our daughter's school?", head) == {"alba": 1.0}
    assert names_by_role("What did my physio say?", head) == {"farah": 1.0}
    # A title is not the name.
    assert names_by_role("What did my cardiologist say?", head) == {"reyes": 1.0}


def test_only_what_sits_right_beside_the_role_counts():
    head = bm25_head(
        "My sister said Tom would call.",  # names no sister
        "My husband and I went out.",  # "and" is no name
        "I asked my boss. Maria from HR replied.",  # a sentence ends between them
    )
    for question in ("Where does my sister work?", "What did my husband buy?", "Who is my boss?"):
        assert names_by_role(question, head) == {}


def test_a_role_of_many_names_or_a_name_the_question_gives_brings_nothing():
    friends = [f"I met my friend {n} for lunch." for n in ("Priya", "Tom", "Ana", "Liam")]
    head = bm25_head(*friends, "My sister Bea is visiting.")
    assert len(friends) > ROLE_NAMES
    assert names_by_role("What did my friend recommend?", head) == {}
    assert names_by_role("When is my sister Bea arriving?", head) == {}
    # Without "my" / "our" the word is not a role the user gave anyone.
    assert names_by_role("What does a sister do?", head) == {}


def _ranking(question: str) -> list[int]:
    facts = [
        "Big move coming: me, my husband Javier and the kids, all to Toronto.",
        "Ok.",
        f"{FILLER} The bank finally opened our account, so rent is sorted. {FILLER}",
        "Noted.",
        f"{FILLER} Great news, Javier starts teaching Spanish at a school on Monday! {FILLER}",
        "Congratulations!",
        f"{FILLER} My own work at the new office is intense but fun. {FILLER}",
    ]
    messages = [
        (HumanMessage if i % 2 == 0 else AIMessage)(text, id=f"m{i}")
        for i, text in enumerate(facts)
    ]
    history = [*messages, HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    return [p for p, _ in LocalSelector(embeddings=None).rank(question, history, entries)]


def test_the_message_that_says_only_the_name_is_found(monkeypatch):
    question = "Where does my husband work now?"
    # It shares no word with the question: lexically it is found through the name only.
    ranked = _ranking(question)
    assert 4 in ranked[:3]
    from langgraph_librarian.select import local

    monkeypatch.setattr(local, "names_by_role", lambda query, index: {})
    assert 4 not in _ranking(question)


def test_a_name_given_in_so_many_words_counts_for_any_role():
    head = bm25_head(
        "The electrician is a guy named Luis Ortega, really nice.",
        "We went over the weekend, Sarah came too.",
        "My boss will be someone called Graham.",
    )
    assert names_by_role("What did the electrician quote us?", head) == {
        "luis": 1.0,
        "ortega": 1.0,
    }
    assert names_by_role("When does my boss want the report?", head) == {"graham": 1.0}
    # Only "my" / "our" roles take the name beside them: "the weekend, Sarah" is no alias.
    assert names_by_role("What did we do over the weekend?", head) == {}


def test_a_hostile_question_reads_a_bounded_number_of_roles():
    roles = [a + b + "ster" for a in "bcdfghjklm" for b in "aeiou"]  # 50 letter-only words
    head = bm25_head(*(f"my {role} {role.title()}son met us." for role in roles))
    assert names_by_role(f"Where is my {roles[0]}?", head) == {f"{roles[0]}son": 1.0}
    query = " ".join(f"my {role}" for role in roles * 8)
    # Only the first roles are looked up (each a postings read and a few regexes).
    assert len(names_by_role(query, head)) == 4


def test_when_a_call_a_line_break_or_a_common_word_is_no_name():
    head = bm25_head(
        "I'm seeing my mom Monday, and our flight Tuesday is early.",
        "My sister called Dad yesterday.",  # a call made, not a name given
        "the electrician fixed the dog named Rex",  # another thing between them
        "off to visit my aunt\nMelanie: Cool, have fun",  # a transcript's next line
        "My boss Bill wants the slides.",
        "The electricity bill came in high.",  # "Bill" is also a common word here
        "Which is the one?",
    )
    for question in (
        "What did my mom recommend?",
        "When is our flight?",
        "What did my sister say?",
        "What did the electrician fix?",
        "Where does my aunt live?",
        "What does my boss want?",
        "Which is the one?",
    ):
        assert names_by_role(question, head) == {}, question


def test_spaces_beside_a_role_cost_linear_time():
    import time

    head = bm25_head("my husband" + " " * 20_000 + "x")
    start = time.perf_counter()
    names_by_role("What did my husband say?", head)
    # A quadratic pattern took seconds here; a linear one takes milliseconds.
    assert time.perf_counter() - start < 1.0


def test_a_role_introduced_with_an_article_is_called_its_name():
    head = bm25_head("I've started seeing a physio called Ulla about the shoulder.")
    assert names_by_role("Which restaurant does my physio recommend?", head) == {"ulla": 1.0}


def test_a_name_said_to_be_the_role():
    head = bm25_head("Sarah is my manager now.", "Tom's our landlord.", "This is my husband.")
    assert names_by_role("What did my manager decide?", head) == {"sarah": 1.0}
    assert names_by_role("Did our landlord fix the boiler?", head) == {"tom": 1.0}
    # "This" opens a sentence and is a stop word: no name.
    assert names_by_role("Where does my husband work?", head) == {}
