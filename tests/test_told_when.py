"""For a "when" question, the line where a best match's speaker said when
(``LocalSelector._told_when``)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector

_CHATTER = [
    "Work was fine, nothing special at the terminal.",
    "I watched a documentary about owls.",
    "The neighbours finally fixed their fence.",
    "My sister is visiting in the spring.",
    "It rained the whole afternoon here.",
    "I tried a new bakery near the station.",
]


def transcript(day_line: tuple[str, str] = ("Ines", "Guess who asked me out last Thursday!")):
    """Ines and Des over three sittings; in the last, Ines says when, Des asks for more
    and Ines tells of the kayak trip without a day."""
    sittings: list[tuple[str, list[tuple[str, str]]]] = []
    for n, day in enumerate(["3 March 2023", "20 March 2023", "9 April 2023"]):
        lines = []
        for k in range(6):
            lines.append(("Ines", f"{_CHATTER[(n + k) % 6]} Theo says hi."))
            lines.append(("Des", f"Ha. {_CHATTER[(n + k + 3) % 6]}"))
        sittings.append((day, lines))
    sittings.append(
        (
            "2 May 2023",
            [
                day_line,
                ("Des", "FINALLY. Details, please!"),
                ("Ines", "We paddled a double kayak on Dyes Inlet, then fish tacos."),
                ("Des", "Adorable."),
                *[("Ines" if k % 2 else "Des", _CHATTER[k % 6]) for k in range(6)],
            ],
        )
    )
    messages: list[BaseMessage] = []
    for day, lines in sittings:
        for who, text in lines:
            cls = HumanMessage if who == "Ines" else AIMessage
            messages.append(cls(f"({day}) {who}: {text}", id=f"m{len(messages)}"))
    return messages


DAY_LINE, KAYAK = 36, 38


def select(history: list[BaseMessage], question: str, exclude: tuple[int, ...] = ()):
    history = [*history, HumanMessage(question, id="q")]
    config = LibrarianConfig(embeddings=None)
    entries = update_index(history, [], config).entries[:-1]
    return LocalSelector().select(question, history, entries, exclude=exclude)


def test_a_when_question_brings_the_line_that_said_when():
    selection = select(transcript(), "When did Ines go kayaking with Theo?")
    assert KAYAK in selection.ids
    assert DAY_LINE in selection.ids


def test_only_for_a_when_question():
    selection = select(transcript(), "Where did Ines go kayaking with Theo?")
    assert KAYAK in selection.ids
    assert DAY_LINE not in selection.ids


def test_the_match_that_says_when_itself_needs_no_other_line():
    history = transcript()
    history[KAYAK] = HumanMessage(
        "(2 May 2023) Ines: On Sunday we paddled a double kayak on Dyes Inlet.", id="k"
    )
    selection = select(history, "When did Ines go kayaking with Theo?")
    assert KAYAK in selection.ids
    assert DAY_LINE not in selection.ids


def test_only_the_same_speakers_line(monkeypatch):
    history = transcript(("Des", "I saw Theo last Thursday at the market."))
    selection = select(history, "When did Ines go kayaking with Theo?")
    assert KAYAK in selection.ids
    assert DAY_LINE not in selection.ids
    assert not told(history, "When did Ines go kayaking with Theo?", monkeypatch)


def test_not_from_an_earlier_sitting():
    history = transcript()
    # The day line now belongs to the sitting before (another dateline).
    history[DAY_LINE] = HumanMessage(
        "(9 April 2023) Ines: Guess who asked me out last Thursday!", id="d"
    )
    selection = select(history, "When did Ines go kayaking with Theo?")
    assert KAYAK in selection.ids
    assert DAY_LINE not in selection.ids


def test_a_year_apart_is_another_sitting(monkeypatch):
    history = transcript()
    history[DAY_LINE] = HumanMessage(
        "(2 May 2022) Ines: Guess who asked me out last Thursday!", id="d"
    )
    assert not told(history, "When did Ines go kayaking with Theo?", monkeypatch)


def test_not_above_a_match_that_opens_its_sitting(monkeypatch):
    # The sitting's date opens its first line, here the kayak line; the lines above
    # carry no date: they are the sitting before.
    history = transcript()
    for k in range(len(history)):
        history[k] = type(history[k])(history[k].content.split(") ", 1)[1], id=history[k].id)
    history[DAY_LINE + 1] = AIMessage("Des: FINALLY. Details, please!", id="details")
    history[KAYAK] = HumanMessage(
        "[Session 4, 2 May 2023] Ines: We paddled a double kayak on Dyes Inlet.", id="k"
    )
    assert not told(history, "When did Ines go kayaking with Theo?", monkeypatch)


def told(
    history: list[BaseMessage], question: str, monkeypatch, exclude: tuple[int, ...] = ()
) -> set[int]:
    """The slots :meth:`LocalSelector._told_when` brings (here a slot is a position)."""
    brought: set[int] = set()
    rule = LocalSelector._told_when

    def spy(*args, **kwargs):
        for slot, score in rule(*args, **kwargs):
            brought.add(slot)
            yield slot, score

    monkeypatch.setattr(LocalSelector, "_told_when", staticmethod(spy))
    select(history, question, exclude)
    return brought


def test_not_above_the_header_of_the_matchs_sitting(monkeypatch):
    # Sittings dated once, by a header line of their own: the day line is above the
    # header of the kayak's sitting, in the sitting before.
    history = transcript()
    for k in range(DAY_LINE, len(history)):
        history[k] = type(history[k])(history[k].content.split(") ", 1)[1], id=history[k].id)
    history[DAY_LINE + 1] = AIMessage("[Session 4, 2 May 2023]", id="header")
    history.insert(DAY_LINE + 2, AIMessage("Des: FINALLY. Details, please!", id="details"))
    kayak = DAY_LINE + 3
    assert "kayak" in history[kayak].content
    selection = select(history, "When did Ines go kayaking with Theo?")
    assert kayak in selection.ids
    # (Another rule, a name's other mentions, may bring the line for its own reason.)
    assert not told(history, "When did Ines go kayaking with Theo?", monkeypatch)
    # Below the header, in the same sitting, the day line is the speaker's.
    history[DAY_LINE], history[DAY_LINE + 1] = history[DAY_LINE + 1], history[DAY_LINE]
    assert told(history, "When did Ines go kayaking with Theo?", monkeypatch) == {DAY_LINE + 1}


def assistant_chat(reply: str) -> list[BaseMessage]:
    """A user and an assistant, no names: the user says something dated, the assistant
    answers, then the user tells of the cat without a day."""
    messages: list[BaseMessage] = []
    for k in range(8):
        messages.append(HumanMessage(f"Quick one: {_CHATTER[k % 6]}", id=f"u{k}"))
        messages.append(AIMessage(f"Noted. {_CHATTER[(k + 1) % 6]}", id=f"a{k}"))
    messages += [
        HumanMessage("My landlord raised the rent yesterday, by a lot.", id="rent"),
        AIMessage(reply, id="reply"),
        HumanMessage("I finally adopted the cat from the shelter, her name is Miso.", id="cat"),
        AIMessage("Welcome home, Miso!", id="welcome"),
    ]
    return messages


RENT, CAT = 16, 18


def test_a_long_message_gives_no_room_to_a_long_reply(monkeypatch):
    # A user's long message does not make the assistant's long reply a reaction.
    history = assistant_chat(" ".join(["Rent increases are capped in places."] * 10))
    history[CAT] = HumanMessage(
        "I finally adopted the cat from the shelter, her name is Miso. "
        + " ".join(["She sleeps on the radiator and ignores the toys I bought."] * 7),
        id="cat",
    )
    assert len(history[CAT].content.split()) > len(history[RENT + 1].content.split()) > 20
    assert not told(history, "When did I adopt Miso?", monkeypatch)


def test_another_request_in_between_is_no_reaction():
    long_reply = " ".join(["Rent increases are capped in many places; check your lease."] * 6)
    selection = select(assistant_chat(long_reply), "When did I adopt Miso?")
    assert CAT in selection.ids
    assert RENT not in selection.ids
    # A short reaction between keeps the telling one: the day line comes.
    selection = select(assistant_chat("Ouch, sorry to hear."), "When did I adopt Miso?")
    assert RENT in selection.ids


def test_the_walk_stops_at_an_empty_message():
    # Scoped recall separates threads with an empty message.
    history = assistant_chat("Ouch, sorry to hear.")
    history[RENT + 1] = AIMessage("", id="break")
    selection = select(history, "When did I adopt Miso?")
    assert CAT in selection.ids
    assert RENT not in selection.ids


def test_an_excluded_line_is_not_brought(monkeypatch):
    history = assistant_chat("Ouch, sorry to hear.")
    assert told(history, "When did I adopt Miso?", monkeypatch) == {RENT}
    assert not told(history, "When did I adopt Miso?", monkeypatch, exclude=(RENT,))


def test_only_within_a_few_lines():
    history = assistant_chat("Ouch, sorry to hear.")
    # Four more short exchanges between the day line and the cat: seven lines back.
    between = [
        (HumanMessage if k % 2 else AIMessage)(text, id=f"b{k}")
        for k, text in enumerate(["Anyway.", "So.", "Right.", "Hm.", "Yes.", "Well."])
    ]
    history[RENT + 2 : RENT + 2] = between
    cat = RENT + 2 + len(between)
    assert "Miso" in history[cat].content
    selection = select(history, "When did I adopt Miso?")
    assert cat in selection.ids
    assert RENT not in selection.ids


def test_what_tells_a_day():
    from langgraph_librarian.select.local import _tells_time

    for text in [
        "We went on Sunday.",
        "It was the 3rd of May.",
        "Back since 2023-05-02.",
        "I got the call yesterday",
        "Two weeks ago, at the lake.",
        "last weekend was wild",
        "I'll go today",
        "The interview is tomorrow",
        "We fly out next week.",
        "I started there in June.",
        "Since March it's been better",
    ]:
        assert _tells_time(text), text
    for text in [
        "The cafe had a great today's special board.",
        "I need 3/4 cup of sugar.",
        "The shop is open 24/7.",
        "Support is there 24/7/365.",
        "I read a june bug fact.",
        "In may cases it works.",
        "We may need three rooms.",
        "Kayaking was great.",
    ]:
        assert not _tells_time(text), text


def test_between_named_people_a_reply_as_long_as_the_match_is_a_reaction(monkeypatch):
    # In a transcript every line may run to 30 words: Des's 25-word reaction does not
    # take the floor from Ines's 30-word account.
    history = transcript()
    history[DAY_LINE + 1] = AIMessage(
        "(2 May 2023) Des: FINALLY. I have been waiting for this news since the winter "
        "party, you know that, so tell me everything and do not skip a single detail!",
        id="details",
    )
    history[KAYAK] = HumanMessage(
        "(2 May 2023) Ines: We paddled a double kayak all the way across Dyes Inlet, "
        "saw two harbor seals and an eagle, then ate fish tacos at a little stand by "
        "the marina.",
        id="k",
    )
    reaction, match = (len(history[k].content.split()) for k in (DAY_LINE + 1, KAYAK))
    assert 20 < reaction < match
    assert told(history, "When did Ines go kayaking with Theo?", monkeypatch) == {DAY_LINE}
