"""Exchanges are kept by structure, not by length: a long assistant reply brings the user
message it answers, a question of any length its bare answer ("4", "yes", "grey")."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.nodes import select_and_hydrate
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select._evidence import is_filler

ADVICE = (
    "Keeping a small notebook by the bed helps you track how the week is going. "
    "Drinking a glass of water first thing in the morning is an easy habit to keep. "
    "A short walk after lunch clears the head before the afternoon meetings. "
    "Tidying the desk on Friday evening makes Monday morning calmer. "
    "Let me know whenever you would like to adjust anything at all."
)
OTHER = [
    ("Any tips for the commute?", "Podcasts or an audiobook make the bus ride go faster."),
    ("What should I cook tonight?", "A quick stir fry with rice and vegetables works well."),
    ("Help me plan the weekend.", "Saturday for errands, Sunday for a long walk outside."),
    ("Thinking of switching broadband.", "Compare the yearly total, not the monthly price."),
]


def history(*pairs: tuple[str, str | None]) -> list:
    """Unrelated exchanges around ``pairs``, as user/assistant messages m0, m1, ..."""
    out: list = []
    for human, ai in [*OTHER[:2], *pairs, *OTHER[2:]]:
        for cls, text in ((HumanMessage, human), (AIMessage, ai)):
            if text is not None:
                out.append(cls(text, id=f"m{len(out)}"))
    return out


def select(messages: list, question: str):
    full = [*messages, HumanMessage(question, id="q")]
    entries = update_index(full, [], LibrarianConfig(embeddings=None)).entries[:-1]
    return LocalSelector().select(question, full, entries)


def test_a_long_assistant_reply_brings_the_user_message_it_answers() -> None:
    messages = history(
        (
            "Work was insane, I did not manage it today, sorry.",
            "No worries, skipping one practice day won't break your streak. " + ADVICE,
        )
    )
    assert len(message_words(messages[5])) >= 60
    selection = select(messages, "Which day did I skip my practice?")
    assert selection.ids[0] == 5
    # The evidence, what the reply reacts to, comes right after the matches.
    assert 4 in selection.ids
    assert selection.ids.index(4) > selection.ids.index(5)


def test_a_long_reply_to_a_question_does_not_bring_the_question() -> None:
    """A reply to a question holds the answer itself ("what's been your toughest
    challenge?" / "Last season I hurt my ankle..."): the question stays out."""
    messages = history(
        (
            "Out of curiosity, what has been hard for you lately?",
            "Honestly, I had to skip practice for a whole week with a sore ankle. " + ADVICE,
        )
    )
    ids = select(messages, "Which week did I skip my practice?").ids
    assert ids[0] == 5
    assert 4 not in ids


def test_a_long_message_asking_mid_way_brings_its_bare_answer() -> None:
    messages = history(
        (
            "Help me refresh the living room.",
            "Good idea! For the sofa, would you prefer the slate or the mustard cover? " + ADVICE,
        ),
        ("grey", "Noted. " + ADVICE),
    )
    ids = select(messages, "Which colour did I pick for the sofa cover?").ids
    assert ids[0] == 5
    assert 6 in ids


def test_a_short_question_brings_a_bare_number_answer() -> None:
    messages = history(
        ("Can you make me a training plan?", "Sure! Three or four sessions a week?"),
        ("4", "Perfect. " + ADVICE),
    )
    assert is_filler("4")  # on its own it says nothing...
    selection = select(messages, "How many sessions a week did I choose?")
    # A count question keeps short matches' neighbours for the budget left over.
    ids = [*selection.ids, *selection.reserve_ids]
    assert 5 in ids
    assert 6 in ids  # ...after the question, it is the answer


def test_a_bare_reply_to_a_statement_stays_out() -> None:
    messages = history(
        ("Can you make me a training plan?", "Sure! The plan has four sessions a week."),
        ("ok", "Perfect. " + ADVICE),
    )
    ids = select(messages, "How many sessions a week are in my plan?").ids
    assert 5 in ids
    assert 6 not in ids


def test_the_statement_a_long_reply_reacts_to_takes_its_place() -> None:
    """The user message a long reply reacts to (they share its words, the user's other
    messages do not) takes the reply's rank, and the reply keeps half of it: at a tight
    budget the reply is the one left out (LocalSelector._restated)."""
    reply = "No worries, skipping one practice day won't break your streak. " + ADVICE
    messages = history(
        ("Is a practice day on Sunday a good idea?", "Yes, a Sunday practice day is fine."),
        ("Work was insane, I did not manage it today, sorry. " + ADVICE, reply),
    )
    question = "Which day did I skip my practice?"
    selection = select(messages, question)
    assert {4, 5, 6} <= set(selection.ids)
    assert 7 not in selection.ids[: selection.ids.index(6)]
    full = [*messages, HumanMessage(question, id="q")]
    kept = {}
    for budget in (240, 600):
        config = LibrarianConfig(
            context_token_budget=budget, always_include_recent_turns=1, embeddings=None
        )
        entries = update_index(full, [], config).entries
        state = {"messages": full, "index": [e.to_dict() for e in entries]}
        out = select_and_hydrate(state, {"configurable": {"librarian": config}})
        kept[budget] = {m.id for m in out["curated_messages"]}
    assert {"m4", "m5", "m6"} <= kept[240]
    assert "m7" not in kept[240]
    assert {"m4", "m5", "m6", "m7"} <= kept[600]


@pytest.mark.parametrize(
    ("reply", "asked", "expected"),
    [
        ("4", "Three or four sessions a week?", True),
        ("yes", "Shall I book the table for Friday?", True),
        ("No.", "Do you eat fish?", True),
        ("grey", "Would you prefer slate grey or mustard? Either works with oak.", True),
        ("grey", "The sofa comes in slate grey.", False),  # no question: nothing answered
        ("Thanks!", "Anything else I can help with?", False),
        ("Reply 8.", "Is tahini sauce a problem for me?", False),
        ("Sounds good!", "Shall we meet at noon?", False),
        ("I don't know.", "Which day suits you?", False),
        ("Let me think about which one suits the room better first.", "Grey or mustard?", False),
    ],
)
def test_bare_answers(reply: str, asked: str, expected: bool) -> None:
    from langgraph_librarian.select._evidence import answers_question

    assert answers_question(reply, asked) is expected


def message_words(message) -> list[str]:
    return str(message.content).split()


# -- what the exchanges kept by structure are not (a review's cases) -----------------

_ADVICE = (
    "Keeping a small notebook by the bed helps you track how the week is going. "
    "Drinking a glass of water first thing in the morning is an easy habit to keep. "
    "A short walk after lunch clears the head before the afternoon meetings. "
    "Tidying the desk on Friday evening makes Monday morning calmer. "
    "Let me know whenever you would like to adjust anything at all."
)
_PAIRS = [
    ("Any tips for the commute?", "Podcasts or an audiobook make the bus ride go faster."),
    ("My piano practice is on Tuesdays and Thursdays at the community hall.", "Nice."),
    ("What should I cook tonight?", "A quick stir fry with rice and vegetables works well."),
    (
        "lol my cat just knocked the basil plant off the windowsill again, total chaos",
        "Here is a reminder about your piano practice routine and how to keep your "
        "practice streak going. " + _ADVICE,
    ),
    ("Help me plan the weekend.", "Saturday for errands, Sunday for a long walk outside."),
    ("Thinking of switching broadband.", "Compare the yearly total, not the monthly price."),
]


def _chatty_history():
    from langchain_core.messages import AIMessage, HumanMessage

    messages = []
    for human, ai in _PAIRS:
        messages.append(HumanMessage(human, id=f"m{len(messages)}"))
        messages.append(AIMessage(ai, id=f"m{len(messages)}"))
    return messages


def test_an_llm_selectors_backed_pick_comes_before_an_exchange_kept_by_structure():
    """The offline engine's "sure" picks are its matches: the user message a long reply
    reacts to ("lol my cat...") comes after the reserve pick the model backed, and is
    not reported as an offline pick the model missed."""
    from langchain_core.messages import HumanMessage

    from langgraph_librarian import LibrarianConfig
    from langgraph_librarian.index import update_index
    from langgraph_librarian.select import LocalSelector
    from langgraph_librarian.select._answers import Answer
    from langgraph_librarian.select.llm import LLMSelector

    question = "Which days is my piano practice?"
    history = [*_chatty_history(), HumanMessage(question, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    local = LocalSelector().select(question, history, entries)
    assert local.exchange_ids == [6] and local.ids[-1] == 6 and local.reserve_ids
    backed = local.reserve_ids[0]
    selector = LLMSelector.__new__(LLMSelector)
    selector.keep_local = True
    chosen = selector._chosen(Answer(ids=[2, backed]), local, entries, False, 0)
    assert chosen.ids.index(backed) < chosen.ids.index(6)
    assert 6 not in chosen.kept_local_ids


def test_scoped_recall_does_not_recall_an_exchange_kept_by_structure():
    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian.recall import ScopeMemory

    memory = ScopeMemory(InMemoryStore())
    memory.capture("user:1", _chatty_history(), thread_id="t1")
    recalled = memory.recall("user:1", "Which days is my piano practice?")
    texts = [record.text for record in recalled.records]
    assert any("Tuesdays and Thursdays" in text for text in texts)
    assert not any("lol my cat" in text for text in texts)


@pytest.mark.parametrize("reply", ["brb", "idk", "dunno lol", "nvm", "huh", "what?", "one sec"])
def test_chat_shorthand_and_a_question_back_answer_nothing(reply):
    from langgraph_librarian.select._evidence import answers_question

    assert not answers_question(reply, "Three or four sessions a week, which suits you?")
    assert answers_question("4", "Three or four sessions a week, which suits you?")


def _group_chat(speakers: int) -> list:
    """A chat with a poll: "Vote time..." and the replies of the others after it."""
    names = ["Helen", "Tom", "Jess", "Rob"][:speakers]
    lines = [
        ("Helen", "Morning all, the hall is booked for the party."),
        ("Tom", "nice one"),
        ("Helen", "Vote time. Lakes, tablet or bench? One each please"),
        ("Tom", "tablet, she keeps holding the phone to her ear"),
        ("Jess", "bench"),
        ("Rob", "Bench. Sorry son"),
        ("Helen", "Bench from me too. So bench it is, 3 to 1"),
        ("Jess", "who is doing the cake then"),
        ("Rob", "I can ask the bakery on Monday."),
        ("Tom", "the parking by the hall is free after six"),
    ]
    out: list = []
    for who, text in lines:
        if who not in names:
            who = names[len(out) % len(names)]
        cls = HumanMessage if who == "Helen" else AIMessage
        out.append(cls(text, id=f"m{len(out)}", name=who))
    return out


def test_in_a_group_a_question_brings_every_reply_after_it() -> None:
    """Put to a group, a question is answered by several people, each in a message of
    their own: the replies after it (up to the asker's next line, the tally) come
    with it, not only the next one."""
    selection = select(_group_chat(4), "Which present options were put to the vote?")
    assert selection.ids[0] == 2
    assert {3, 4, 5, 6} <= {*selection.ids, *selection.reserve_ids}


def test_in_a_group_a_request_brings_the_replies_that_take_it_up() -> None:
    """Not only questions: "someone has to ring the landlord" is answered by "I'll ring
    him tomorrow", which shares no word with "who rang the landlord?"."""
    names = ["Kofi", "Mira", "Sophie", "Dan"]
    lines = [
        ("Kofi", "the bathroom fan is making the noise again"),
        ("Dan", "someone has to ring the landlord about the extractor fan"),
        ("Sophie", "I'll ring him tomorrow on my lunch break, he likes me"),
        ("Mira", "thank you queen"),
        ("Kofi", "the bins go out on Thursday this week btw"),
        ("Mira", "who finished the oat milk"),
        ("Dan", "guilty"),
        ("Sophie", "the heating timer is still on summer mode"),
    ]
    messages = [
        (HumanMessage if who == names[0] else AIMessage)(text, id=f"m{i}", name=who)
        for i, (who, text) in enumerate(lines)
    ]
    selection = select(messages, "Who rang the landlord about the fan?")
    assert selection.ids[0] == 1
    assert 2 in {*selection.ids, *selection.reserve_ids}


def test_between_two_people_a_question_brings_its_one_reply() -> None:
    messages = _group_chat(2)
    selection = select(messages, "Which present options were put to the vote?")
    assert selection.ids[0] == 2
    listed = {*selection.ids, *selection.reserve_ids}
    assert 3 in listed and not {4, 5} <= listed


def test_a_group_is_read_from_named_speakers_who_write_most_messages() -> None:
    """Found by a review: labels such as "Error:" or "Note:" in a few pasted outputs
    are read as speakers too; three of them in an unnamed chat are no group."""
    import numpy as np

    from langgraph_librarian.select.local import _group_chat

    assert _group_chat(np.array([0, 1, 2, 0, 1, 2, 3]))
    assert not _group_chat(np.array([0, 1, 0, 1, 0, 1]))  # two people
    assert not _group_chat(np.array([-1, -1, 0, -1, 1, -1, 2, -1, 0, 1, 2, -1, -1, -1]))
    assert not _group_chat(np.array([0, 1, 2, 3, 4]))  # each wrote once
    assert not _group_chat(np.array([], dtype=np.int64))


@pytest.mark.parametrize("bot", [False, True])
def test_in_a_group_a_question_asked_before_brings_the_replies_it_got(bot: bool) -> None:
    """Found by a review: people's messages in a group are all of one type, and an earlier
    copy of the question was the only match, so nothing at all was selected (it set no
    scale) and its reply was never handed its score (replies were told by type). A bot
    taking part (an AI message without a name) is one more speaker: its line between
    the question and the people's replies does not end them."""
    names = ["ana", "ben", "cai", "dee"]
    messages: list = [
        HumanMessage(f"chatter number {i} about lunch plans today", name=names[i % 4])
        for i in range(8)
    ]
    messages.append(HumanMessage("Who's up for the landlord call about the fan?", name="ana"))
    if bot:
        messages.append(AIMessage("I can draft the message for you."))
    messages += [
        HumanMessage("I'll ring him tomorrow", name="ben"),
        HumanMessage("thanks ben", name="ana"),
    ]
    messages += [
        HumanMessage(f"more chatter number {i} about football results", name=names[i % 4])
        for i in range(8)
    ]
    for i, message in enumerate(messages):
        message.id = f"m{i}"
    selection = select(messages, "Who is calling the landlord about the fan?")
    reply = 10 if bot else 9
    assert {8, reply} <= {*selection.ids, *selection.reserve_ids}
