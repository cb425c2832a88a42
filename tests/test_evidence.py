"""Questions are not answers, filler is not evidence, repeats appear once, and recall has
a relevance floor: in-thread selection and scoped recall, with the packaged model."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index.pipeline import update_index
from langgraph_librarian.recall import ScopeMemory
from langgraph_librarian.select._evidence import (
    informative_terms,
    is_echo,
    is_filler,
    repeat_key,
    shares_evidence,
)
from langgraph_librarian.select.local import LocalSelector

TAHINI = "is tahini sauce a problem for me?"


def _terms(text: str) -> frozenset[str]:
    from langgraph_librarian._engine.text import content_terms

    return frozenset(content_terms(text))


@pytest.mark.parametrize(
    "text", ["Reply 8.", "Noted.", "Noted, thanks.", "Sounds good!", "Great choice.", "OK", ""]
)
def test_acknowledgements_are_filler(text: str) -> None:
    assert is_filler(text)


@pytest.mark.parametrize(
    "text", ["O negative.", "Paris.", "Tuesday at 3pm.", "No peanuts, ever.", "I'm allergic."]
)
def test_short_answers_are_not_filler(text: str) -> None:
    assert not is_filler(text)


@pytest.mark.parametrize(
    ("text", "says_nothing"),
    [
        ("I don't know.", True),
        ("I'm not sure, sorry!", True),
        ("I can't remember that.", True),
        ("Honestly, I have no clue.", True),
        ("I don't have that information.", True),
        ("I don't know yet, maybe Lisbon.", False),
        ("Not sure I can make it Friday.", False),
        ("I can't say for sure, it was either March or April.", False),
        ("I don't eat nuts.", False),
        ("Sure, I remember.", False),
        # Answers in the words of not knowing (a review of the first version of the rule).
        ("Not that I know of.", False),
        ("No, not that I'm aware of.", False),
        ("I am not aware of any.", False),
        ("I don't recall any.", False),
        ("I didn't say it.", False),
        ("I can't say no.", False),
        ("We don't know yet.", False),
        ("I don't know her.", False),
        ("Not sure, maybe Tuesday", False),
    ],
)
def test_a_reply_that_only_says_it_does_not_know_is_filler(text: str, says_nothing: bool) -> None:
    assert is_filler(text) is says_nothing


@pytest.mark.embeddings
def test_recall_offers_no_non_answer() -> None:
    # A newcomer trial: thread "tue" asked and got "I don't know.": the non-answer is no
    # evidence.
    memory = ScopeMemory(InMemoryStore())
    _scope(memory, "u", "mon", ["I'm allergic to peanuts and tree nuts.", "Noted."])
    _scope(memory, "u", "tue", ["Am I allergic to peanuts?", "I don't know."])
    _scope(memory, "u", "thu", ["Are peanut butter cookies safe for me?", "I'm not sure, sorry."])
    texts = [r.text for r in memory.recall("u", "Can I bake peanut butter cookies?").records]
    assert texts[0] == "I'm allergic to peanuts and tree nuts."
    assert "I don't know." not in texts and "I'm not sure, sorry." not in texts


def test_an_earlier_question_asking_the_same_is_an_echo() -> None:
    query = _terms(TAHINI)
    assert is_echo(TAHINI, query)
    assert is_echo("Is tahini sauce OK for me?", query)
    assert not is_echo("I'm allergic to sesame.", query)  # a statement answers
    assert not is_echo("Tahini sauce is made from sesame, so yes, avoid it.", query)
    assert not is_echo("Is the tahini sauce from the market vegan and gluten free?", query)


def test_rare_words_and_whole_queries_are_lexical_evidence() -> None:
    rare = informative_terms(TAHINI)
    assert "tahini" in rare and "problem" not in rare
    query = _terms(TAHINI)
    assert shares_evidence(frozenset({"tahini"}), query, rare)
    assert not shares_evidence(frozenset({"problem"}), query, rare)  # one common word
    cat = _terms("cat")
    assert shares_evidence(cat, cat, informative_terms("cat"))
    assert repeat_key("  Is  Tahini OK? ") == repeat_key("is tahini ok?")


def _scope(memory: ScopeMemory, scope: str, thread: str, turns: list[str]) -> None:
    messages: list[BaseMessage] = []
    for n, text in enumerate(turns):
        cls = HumanMessage if n % 2 == 0 else AIMessage
        messages.append(cls(text, id=f"{thread}-{n}"))
    memory.capture(scope, messages, thread_id=thread)


@pytest.mark.embeddings
def test_a_question_asked_before_does_not_push_out_the_fact_that_answers_it() -> None:
    memory = ScopeMemory(InMemoryStore())
    _scope(memory, "u", "A", ["I'm allergic to sesame.", "Reply 1.", "Best shoe for flat feet?"])
    first = memory.recall("u", TAHINI)
    assert [r.text for r in first.records] == ["I'm allergic to sesame."]  # no "Reply 1."
    _scope(memory, "u", "B", [TAHINI, "Reply 2."])
    for n in range(3, 7):
        _scope(memory, "u", f"T{n}", [f"Weather in Paris on day {n}?", f"Reply {n}."])
    again = memory.recall("u", TAHINI)
    texts = [r.text for r in again.records]
    assert "I'm allergic to sesame." in texts
    assert TAHINI not in texts and not any(t.startswith("Reply") for t in texts)


@pytest.mark.embeddings
def test_the_same_text_twice_is_recalled_once() -> None:
    memory = ScopeMemory(InMemoryStore())
    for thread in ("A", "B", "C"):
        _scope(memory, "u", thread, ["My flight to Oslo leaves Friday at 7am.", "Noted."])
    result = memory.recall("u", "When does my Oslo flight leave?")
    assert [r.text for r in result.records] == ["My flight to Oslo leaves Friday at 7am."]


@pytest.mark.embeddings
def test_recall_is_empty_when_nothing_bears_on_the_question_and_says_why() -> None:
    memory = ScopeMemory(InMemoryStore())
    _scope(
        memory,
        "u",
        "A",
        [
            "I'm vegetarian and I hate mushrooms.",
            "Noted.",
            "I love Thai curries, especially green curry.",
            "Great choice.",
            "My sister visits next week.",
            "Nice.",
        ],
    )
    unrelated = memory.recall("u", "Our project deadline is March 3.")
    assert unrelated.status == "empty" and unrelated.records == []
    assert unrelated.relevance is not None and unrelated.relevance < 1.5
    assert "bears on the question" in unrelated.reason
    diet = memory.recall("u", "Suggest a dinner recipe, remember my diet.")
    assert diet.status == "recalled" and diet.relevance is not None and diet.relevance >= 1.5
    texts = [r.text for r in diet.records]
    assert "I'm vegetarian and I hate mushrooms." in texts
    assert not {"Noted.", "Great choice.", "Nice."} & set(texts)


@pytest.mark.embeddings
async def test_async_recall_applies_the_same_floor() -> None:
    memory = ScopeMemory(InMemoryStore())
    _scope(memory, "u", "A", ["I'm allergic to sesame.", "Noted."])
    assert (await memory.arecall("u", "Our project deadline is March 3.")).status == "empty"
    hit = await memory.arecall("u", TAHINI)
    assert [r.text for r in hit.records] == ["I'm allergic to sesame."]


@pytest.mark.embeddings
@pytest.mark.parametrize("asynchronous", [False, True])
async def test_a_failed_selector_model_falls_back_to_the_floored_local_selection(
    asynchronous: bool,
) -> None:
    """The fallback is the offline selection: held to the same floor (a provider outage
    must not recall unrelated records into every turn)."""
    from fakes import ScriptedChatModel

    down = ScriptedChatModel(script=RuntimeError("provider down"))
    config = LibrarianConfig(selector_model=down, indexer_model="local", max_retries=0)
    memory = ScopeMemory(InMemoryStore(), config=config)
    _scope(memory, "u", "A", ["I'm allergic to sesame.", "Noted.", "My dentist is Dr. Okafor."])

    async def recall(question: str):  # type: ignore[no-untyped-def]
        if asynchronous:
            return await memory.arecall("u", question)
        return memory.recall("u", question)

    unrelated = await recall("What is the name of the largest moon of Saturn?")
    assert unrelated.status == "empty" and unrelated.records == []
    assert "bears on the question" in unrelated.reason
    hit = await recall(TAHINI)
    assert hit.strategy == "local_fallback"
    assert [r.text for r in hit.records] == ["I'm allergic to sesame."]
    assert len(down.calls) >= 2  # the model was asked (and failed) both times


@pytest.mark.embeddings
def test_in_thread_selection_prefers_the_statement_to_an_earlier_echo() -> None:
    history: list[BaseMessage] = [
        HumanMessage("I'm allergic to sesame.", id="m0"),
        AIMessage("Reply 1.", id="m1"),
        HumanMessage(TAHINI, id="m2"),
        AIMessage("Reply 2.", id="m3"),
        *[
            m
            for n in range(10)
            for m in (
                HumanMessage(f"Plan the garden bed number {n} with tomatoes.", id=f"g{n}"),
                AIMessage(f"Garden bed {n}: tomatoes along the south fence.", id=f"r{n}"),
            )
        ],
        HumanMessage(TAHINI, id="q"),
    ]
    config = LibrarianConfig()
    entries = update_index(history[:-1], [], config).entries
    from langgraph_librarian.embeddings import default_embeddings

    selection = LocalSelector(embeddings=default_embeddings()).select(TAHINI, history, entries)
    assert selection.ids[0] == 0  # the statement first, the echo (2) after it if at all
    assert 1 not in selection.ids and 3 not in selection.ids  # filler never rides along


def test_the_floor_rises_with_the_number_of_records() -> None:
    from langgraph_librarian.select._evidence import EVIDENCE_FLOOR, scope_floor

    assert scope_floor(1) == scope_floor(3) == EVIDENCE_FLOOR
    floors = [scope_floor(n) for n in (10, 50, 400, 5000)]
    assert floors == sorted(floors) and 3.0 < scope_floor(400) < 4.0


def test_a_rare_word_with_another_word_of_the_question_bears_in_a_scope_of_any_size() -> None:
    import numpy as np

    from langgraph_librarian.select._evidence import Evidence, corroborates

    rare = informative_terms("When did John get married at a greenhouse?")
    assert "greenhous" in rare
    assert corroborates(frozenset({"greenhous", "marri"}), rare)
    assert not corroborates(frozenset({"greenhous"}), rare)  # one word alone: chance
    assert not corroborates(frozenset({"marri", "john"}), frozenset())  # no rare word
    n = 400
    lexical = np.zeros(n, dtype=bool)
    lexical[7] = True
    evidence = Evidence(
        semantic=np.full(n, 2.5),  # below what the best of 400 reaches by chance
        lexical=lexical,
        usable=np.ones(n, dtype=bool),
        strong=np.zeros(n, dtype=bool),
        measured=True,
    )
    assert not evidence.bears()  # one shared rare word among 400 records is chance
    evidence.corroborated = lexical.copy()
    assert evidence.bears()
    evidence.usable[7] = False  # an echo of the question or filler never bears
    assert not evidence.bears()


@pytest.mark.embeddings
def test_a_large_scope_recalls_nothing_for_an_unrelated_question_and_finds_a_related_one() -> None:
    memory = ScopeMemory(InMemoryStore())
    dishes = ["lentil soup", "mushroom risotto", "green curry", "apple crumble", "fish pie"]
    sides = ["rice", "bread", "salad", "chips", "greens", "polenta", "couscous", "beans"]
    turns = []
    for n in range(120):
        dish, side = dishes[n % 5], sides[n % 8]
        turns += [f"Day {n}: we cooked {dish} with {side} for dinner.", f"Enjoy the {dish}!"]
    _scope(memory, "u", "kitchen", turns)
    unrelated = memory.recall("u", "What is the torque spec for the cylinder head bolts?")
    assert unrelated.status == "empty", unrelated.reason
    related = memory.recall("u", "When did we last have mushroom risotto with polenta?")
    assert related.status == "recalled"
    texts = [r.text for r in related.records]
    assert "Day 21: we cooked mushroom risotto with polenta for dinner." in texts
    assert "Enjoy the lentil soup!" not in texts  # not the reply to a bearing message


def test_without_embeddings_a_shared_rare_word_is_enough_and_nothing_shared_is_empty() -> None:
    memory = ScopeMemory(InMemoryStore())  # tests run lexical-only unless marked
    facts = [
        "I'm allergic to peanuts and tree nuts, please remember it.",
        "Our flat has a tiny oven that only fits one tray.",
        "My sister visits on Friday and she is vegan.",
        "We had ramen for lunch yesterday, it was great.",
    ]
    turns = [t for n in range(4) for fact in facts for t in (fact, f"Understood, note {n}.")]
    _scope(memory, "u", "A", turns)
    hit = memory.recall("u", "A second session: which nuts should I avoid?")
    assert hit.status == "recalled" and "peanuts" in hit.records[0].text
    assert memory.recall("u", "Our project deadline is March 3.").status == "empty"


@pytest.mark.parametrize(
    ("text", "filler"),
    [
        ("Okay, let me think about it.", True),
        ("Thanks, that helps!", True),
        ("Good morning!", True),
        ("Great, thanks a lot.", True),
        ("No problem at all.", True),
        ("Reply 8.", True),
        ("See you at 5.", False),
        ("I am vegan.", False),
        ("Let me know the price.", False),
        ("Thanks for the tip about Lyon!", False),
        ("Lovely chat, cheers.", True),
        ("Talk soon!", True),
        ("Take care, catch you later.", True),
        ("Let's talk about the budget later.", False),
        ("That works.", True),
        ("Good luck!", True),
        ("No worries, my pleasure.", True),
        ("Fair enough.", True),
        ("Have fun!", True),
        ("Glad to hear it.", True),
        ("Best wishes.", True),
        ("Good luck with the Berlin move!", False),
        ("My pleasure was the museum.", False),
        ("Happy birthday, Maria!", False),
        ("It works on Linux.", False),
    ],
)
def test_acknowledgements_and_greetings_are_filler(text: str, filler: bool) -> None:
    from langgraph_librarian.select._evidence import is_filler

    assert is_filler(text) is filler


def test_two_thirds_of_the_questions_words_in_one_record_corroborate() -> None:
    from langgraph_librarian.select._evidence import corroborates

    terms = _terms("What theme did we pick for the party?")
    assert corroborates(_terms("theme party"), frozenset(), terms)  # 2 of 3, no rare word
    assert not corroborates(_terms("party"), frozenset(), terms)  # one word: chance
    four = _terms("Which school bus does my son take?")
    assert not corroborates(_terms("school son"), frozenset(), four)  # 2 of 4
    five = _terms("What was the setting for John and his wife's first dance?")
    assert corroborates(_terms("John first dance"), frozenset(), five)  # 3 words, half of it
    assert not corroborates(_terms("John first"), frozenset(), five)


@pytest.mark.embeddings
def test_a_record_with_most_of_a_questions_common_words_bears_in_a_large_scope() -> None:
    """Found by a review on fresh scenarios: 'What theme did we pick for the party?' came
    back empty from a scope holding 'we're planning a dinosaur-themed party', because its
    words are common ones and the semantic floor rises with the scope."""
    memory = ScopeMemory(InMemoryStore())
    chatter = [
        "Work was busy today, lots of meetings.",
        "The weather has been grey all week.",
        "I finally finished the book I was reading.",
        "We went for a long walk by the canal.",
        "My back is sore from gardening.",
        "The train was late again this morning.",
    ]
    turns = []
    for n in range(200):
        turns += [f"{chatter[n % 6]} (day {n})", "Sounds like quite a day."]
    turns += [
        "Busy week: the car needs new tyres, the boiler was serviced, Mum came to stay, "
        "and Leo chose dinosaurs as the theme of his birthday party on the 14th.",
        "He'll love that!",
    ]
    _scope(memory, "u", "home", turns)
    result = memory.recall("u", "What theme did we pick for the party?")
    assert result.status == "recalled", result.reason
    assert any("dinosaurs as the theme" in r.text for r in result.records)
    assert (
        memory.recall("u", "What is the torque spec for the cylinder head bolts?").status == "empty"
    )


@pytest.mark.embeddings
def test_recall_shows_the_change_of_a_fact_not_only_the_fact() -> None:
    """The change shares no word with the question and scores under the floor by itself;
    the selector links it to the statement it changes, and recall keeps it (a review on
    fresh scenarios: recall showed 'managed with metformin' alone)."""
    memory = ScopeMemory(InMemoryStore())
    _scope(
        memory,
        "u",
        "a",
        [
            "I've got type 2 diabetes, managed with metformin.",
            "Noted. Keep an eye on carbs in the meals we plan.",
            "My allotment has tomatoes and runner beans this year.",
            "Lovely!",
        ],
    )
    _scope(
        memory,
        "u",
        "b",
        [
            "The doctor switched me from metformin to gliclazide last week.",
            "Gliclazide can cause low blood sugar, so carry a snack.",
            "We are thinking about a cruise to the fjords in August.",
            "The fjords are beautiful then.",
        ],
    )
    result = memory.recall("u", "What diabetes medication am I on now?")
    texts = [r.text for r in result.records]
    assert "The doctor switched me from metformin to gliclazide last week." in texts


def test_two_common_words_of_a_question_naming_something_rare_do_not_corroborate() -> None:
    from langgraph_librarian.select._evidence import corroborates

    terms = _terms("What did I decide about keeping chickens?")
    rare = informative_terms("What did I decide about keeping chickens?")
    assert rare == _terms("chickens")
    assert not corroborates(_terms("decide keep"), rare, terms)  # the topic is missing
    assert corroborates(_terms("decide chickens"), rare, terms)  # the rare word and another
    # Three words making half still do: the rare word may be what is asked for.
    holiday = "Around which US holiday did Maria get into a car accident?"
    assert "holiday" in informative_terms(holiday)
    assert corroborates(_terms("Maria car accident"), informative_terms(holiday), _terms(holiday))
    # A question of common words only keeps the two-thirds rule.
    assert corroborates(_terms("theme party"), frozenset(), _terms("What theme did we pick?"))


_ADVICE = [
    "Try to decide in advance what done looks like for the {0}, otherwise it grows.",
    "Keep a short running list for the {0}; it makes our next session quicker.",
    "A simple rule is to keep the {0} predictable and let the rest flex around it.",
    "If you have to choose, decide on the {0} first and keep the evenings free.",
]
_TOPICS = ["beds", "compost", "seedlings", "watering", "pests", "harvest", "weeds", "shed"]


@pytest.mark.embeddings
def test_a_never_discussed_topic_is_empty_though_long_replies_share_its_common_words() -> None:
    """Found by a blind trial of long advice chats: 'What did I decide about keeping
    chickens?' recalled 8 records of a scope that never mentions chickens, because
    long templated replies hold 'decide' and 'keep' (two thirds of its words)."""
    memory = ScopeMemory(InMemoryStore())
    turns = []
    for n in range(150):
        topic = _TOPICS[n % len(_TOPICS)]
        advice = " ".join(line.format(_TOPICS[(n + k) % 8]) for k, line in enumerate(_ADVICE))
        turns += [f"Any tips for the {topic} this week? (week {n})", advice]
    turns += ["The greenhouse tomatoes are Sungold this year.", "Lovely variety."]
    _scope(memory, "u", "plot", turns)
    result = memory.recall("u", "What did I decide about keeping chickens?")
    assert result.status == "empty", [r.text[:60] for r in result.records]
    assert memory.recall("u", "Which tomatoes are in the greenhouse?").status == "recalled"


@pytest.mark.embeddings
def test_recall_keeps_what_a_bearing_record_leads_to() -> None:
    """Found by a blind trial: the change of a fact reached through a rare name it shares
    with the statement ('Sungold') and a session's dateline for a 'when' question were
    selected, then dropped by recall's floor (each alone shares little with the question).
    The selector reached them through a record that bears on it: recall keeps them, as
    it keeps a linked change."""
    memory = ScopeMemory(InMemoryStore())
    chatter = [
        "What jobs should I do before winter?",
        "Clear the beds, mulch, and check the shed roof.",
        "Spent three hours weeding today.",
        "Your back will thank you for a rest.",
    ]
    _scope(memory, "u", "s1", [*chatter, "The greenhouse tomatoes are Sungold this year.", "Nice."])
    _scope(memory, "u", "s2", [*chatter, "Any tips for watering in a heatwave?", "Water early."])
    _scope(
        memory,
        "u",
        "s3",
        [
            *chatter,
            "Pulled the Sungold plants, blight got them. Replaced with Crimson Crush.",
            "A blight-resistant choice, good call.",
        ],
    )
    for n in range(4, 40):
        _scope(memory, "u", f"s{n}", [f"{chatter[n % 4]} (week {n})", "Noted, good plan for now."])
    result = memory.recall("u", "Which tomato variety is growing in the greenhouse now?")
    texts = [r.text for r in result.records]
    assert "The greenhouse tomatoes are Sungold this year." in texts
    assert any("Crimson Crush" in t for t in texts), texts


@pytest.mark.embeddings
def test_recall_keeps_the_dateline_of_the_session_a_when_question_finds() -> None:
    memory = ScopeMemory(InMemoryStore())
    filler = ["Any tips for the compost this week?", "Turn it every fortnight and keep it damp."]
    for n in range(30):
        day = 3 + n % 20
        opening = f"[Tue {day} Mar 2025] Hi! Picking up where we left off (week {n})."
        turns = [opening, "Welcome back!", *filler]
        if n == 17:
            turns += ["Planted the garlic cloves along the fence.", "They'll be ready by July."]
        _scope(memory, "u", f"s{n}", turns)
    result = memory.recall("u", "When did I plant the garlic?")
    texts = [r.text for r in result.records]
    assert "Planted the garlic cloves along the fence." in texts
    assert any(t.startswith("[Tue 20 Mar 2025]") for t in texts), texts
