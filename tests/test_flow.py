"""What the best matches' speakers said next (``Selection.flow_ids``): listed by the local
selector, added by hydration only into room the rest of the context left unused."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_librarian import LibrarianConfig, select_and_hydrate
from langgraph_librarian.hydrate import hydrate
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector

_CHATTER = [
    "Work was fine today, nothing special.",
    "I watched a documentary about owls last night.",
    "The neighbours finally fixed their fence.",
    "My sister is visiting in the spring.",
    "It rained the whole afternoon here.",
    "I tried a new bakery near the station.",
]

QUESTION = "How much did Mateo pay for the van?"


def truck_chat() -> list[BaseMessage]:
    """Two friends; Mateo tells of the van over five lines, Zanele reacting between."""
    lines: list[tuple[str, str]] = []
    for k, text in enumerate(_CHATTER):
        lines.append(("Zanele", text))
        lines.append(("Mateo", f"Sounds good. {_CHATTER[-1 - k]}"))
    lines += [
        ("Mateo", "Guess what, I bought a van yesterday for the food business!"),
        ("Zanele", "No way! Show me!"),
        ("Mateo", "Photo: white, rusty, a sliding window on the side, me with the keys."),
        ("Zanele", "She's... beautiful? In a vintage way."),
        ("Mateo", "6 million pesos, from a guy in Rancagua who sold empanadas."),
        ("Zanele", "Does she have a name yet?"),
    ]
    for k in range(60):  # enough history that spare candidates stay below their share
        lines.append(("Zanele", f"Anyway. {_CHATTER[k % 6]} Day {k}."))
        lines.append(("Mateo", f"Right. {_CHATTER[(k + 2) % 6]} Also day {k}."))
    return [
        (HumanMessage if who == "Zanele" else AIMessage)(f"{who}: {text}", id=f"m{k}")
        for k, (who, text) in enumerate(lines)
    ]


MATCH, PRICE = 12, 16  # "I bought a van" and, four lines later, what it cost
REACTION = 15  # Zanele's line right before the price


def _selection(history: list[BaseMessage]):
    config = LibrarianConfig(embeddings=None)
    entries = update_index(history, [], config).entries[: len(history) - 1]
    return LocalSelector().select(QUESTION, history, entries)


def test_the_matched_speakers_next_lines_are_listed():
    history = [*truck_chat(), HumanMessage(QUESTION, id="q")]
    selection = _selection(history)
    assert MATCH in selection.ids
    assert PRICE not in selection.ids  # it shares no word with the question
    assert PRICE in selection.flow_ids
    # The other speaker's reaction in between comes with it, after it: the line the
    # speaker went on to say first.
    flow = selection.flow_ids
    assert REACTION in flow and flow.index(PRICE) < flow.index(REACTION)
    # Listed once, apart from what the selection holds.
    listed = {*selection.ids, *selection.reserve_ids}
    assert not listed & set(selection.flow_ids)
    assert len(selection.flow_ids) == len(set(selection.flow_ids))


def curate(budget: int | str | None) -> dict:
    history = [*truck_chat(), HumanMessage(QUESTION, id="q")]
    config = LibrarianConfig(embeddings=None, context_token_budget=budget)
    index = [e.to_dict() for e in update_index(history, [], config).entries]
    return select_and_hydrate(
        {"messages": history, "index": index}, {"configurable": {"librarian": config}}
    )


def test_a_context_with_room_takes_them(monkeypatch):
    # No spare candidates (they would bring every short line of this small chat).
    monkeypatch.setattr("langgraph_librarian._librarian.turn._SPARE_SHARE", 0.0)
    out = curate("auto")
    ids = {m.id for m in out["curated_messages"]}
    assert {f"m{MATCH}", f"m{PRICE}"} <= ids
    assert out["librarian_metadata"]["curated_tokens"] <= 0.8 * 2000


def test_an_unbounded_context_never_takes_them():
    ids = {m.id for m in curate(None)["curated_messages"]}
    assert f"m{MATCH}" in ids
    assert f"m{PRICE}" not in ids


def _long_chat() -> list[BaseMessage]:
    """Alternating turns of about 60-250 tokens, then a question."""
    messages: list[BaseMessage] = []
    for k in range(24):
        words = " ".join(f"w{k}x{j}" for j in range(40 + 37 * (k % 5)))
        cls = HumanMessage if k % 2 == 0 else AIMessage
        messages.append(cls(f"note {k}: {words}", id=f"n{k}"))
    messages.append(HumanMessage("the question", id="q"))
    return messages


def test_they_only_add_to_what_the_context_holds_without_them():
    messages = _long_chat()
    selected = [3, 9, 5, 17]
    flow = [4, 10, 11, 6, 18, 2]
    for budget in range(150, 2600, 50):
        alone = hydrate(messages, selected, token_budget=budget, recent_turns=3)
        both = hydrate(
            messages,
            [*selected, *flow],
            token_budget=budget,
            recent_turns=3,
            flow=flow,
            flow_tokens=budget,
        )
        # Every message of the context without them is still there, and every selected
        # match or recent turn in the same form (whole or short); only the turn opener a
        # message added before it brings may change.
        assert set(alone.positions) <= set(both.positions), budget
        assert both.selected[: len(alone.selected)] == alone.selected, budget
        assert both.dropped_for_budget == alone.dropped_for_budget, budget
        assert set(both.compacted) <= set(alone.compacted), budget
        added = set(both.positions) - set(alone.positions)
        openers = {p - 1 for p in flow if p % 2}  # a reply's turn opener
        assert added <= {*flow, *openers}, budget
        assert count_tokens_approximately(both.messages) <= max(
            budget, count_tokens_approximately(alone.messages)
        ), budget


def test_they_stop_at_their_own_limit():
    messages = _long_chat()
    base = hydrate(messages, [3], token_budget=3000, recent_turns=1)
    used = count_tokens_approximately(base.messages)
    cost = count_tokens_approximately([messages[4]])
    for room, expected in ((used + cost - 1, set()), (used + cost, {4})):
        out = hydrate(
            messages, [3, 4], token_budget=3000, recent_turns=1, flow=[4], flow_tokens=room
        )
        assert {4} & set(out.positions) == expected, room
        assert out.dropped_for_budget == []


def test_a_message_inside_a_kept_tool_exchange_is_not_added():
    # A result that came after a user message: adding that message between the call and
    # its result would part them, and both would be stripped.
    messages: list[BaseMessage] = [
        HumanMessage("find flights to Lisbon", id="h0"),
        AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": "c1"}], id="a1"),
        HumanMessage("also check the weather there", id="h2"),
        ToolMessage("VK12 Lisbon 140 EUR", tool_call_id="c1", id="t3"),
        AIMessage("VK12 is the cheapest.", id="a4"),
        HumanMessage("thanks", id="h5"),
        AIMessage("you're welcome", id="a6"),
        HumanMessage("which flight was cheapest?", id="q"),
    ]
    out = hydrate(messages, [3, 2], token_budget=2000, recent_turns=1, flow=[2], flow_tokens=2000)
    ids = [m.id for m in out.messages]
    assert {"a1", "t3"} <= set(ids)
    assert "h2" not in ids


def test_an_added_answer_pays_for_its_opener():
    messages = _long_chat()
    base = hydrate(messages, [12], token_budget=3000, recent_turns=1)
    used = count_tokens_approximately(base.messages)
    answer = count_tokens_approximately([messages[5]])
    added = set()
    # Position 5 is an answer: it comes with the user message that opened its turn (4),
    # whose cost counts within the limit too.
    for room in range(used, used + 2 * answer + 400, 5):
        out = hydrate(
            messages, [12, 5], token_budget=3000, recent_turns=1, flow=[5], flow_tokens=room
        )
        assert count_tokens_approximately(out.messages) <= room, room
        if 5 in out.positions:
            assert 4 in out.positions, room
            assert room >= used + answer, room
            added.add(room)
    assert added  # it does come in once there is room for both


def test_the_speakers_next_lines_until_another_takes_the_floor():
    # Speakers 0 and 1 alternate; every line scores. Speaker 0's best match (0) goes on
    # at 2 and 4 while speaker 1 only reacts at 1 and 3; a long reply takes the floor.
    # Each of the speaker's lines brings the reactions before it, listed after it.
    texts = ["ok", "wow!", "ok", "really?", "ok", "great"]
    messages = [
        (HumanMessage if k % 2 == 0 else AIMessage)(t, id=f"x{k}") for k, t in enumerate(texts)
    ]
    entries = [SimpleNamespace(id=k) for k in range(6)]
    speakers = np.array([0, 1, 0, 1, 0, 1])
    args = dict(
        tail=[],
        reserve_ids=[],
        fused=np.ones(6),
        entries=entries,
        speakers=speakers,
        filler=np.zeros(6, dtype=bool),
        positions=np.arange(6),
        excluded=(),
    )
    assert LocalSelector._flow([0], messages=messages, **args) == [2, 1, 4, 3]
    # A line that scores nothing for the question is no part of the answer (the
    # reactions around it come with the next line that is).
    scores = np.ones(6)
    scores[2] = 0.0
    assert LocalSelector._flow([0], messages=messages, **{**args, "fused": scores}) == [4, 1, 3]
    # A reaction after the speaker's last line brings nothing.
    assert 5 not in LocalSelector._flow([0], messages=messages, **args)
    messages[3] = AIMessage(" ".join(["word"] * 30), id="x3")
    assert LocalSelector._flow([0], messages=messages, **args) == [2, 1]


def test_the_speakers_line_before_the_others_question():
    # Speaker 0 tells of the rowing at 2; speaker 1 asks a short question at 3; the best
    # match is the answer at 4. The line before the question is the speaker's own.
    texts = ["ok", "fine", "I started rowing again.", "Which canal?", "The old one.", "nice"]
    messages = [
        (HumanMessage if k % 2 == 0 else AIMessage)(t, id=f"x{k}") for k, t in enumerate(texts)
    ]
    args = dict(
        tail=[],
        reserve_ids=[],
        fused=np.ones(6),
        entries=[SimpleNamespace(id=k) for k in range(6)],
        speakers=np.array([0, 1, 0, 1, 0, 1]),
        filler=np.zeros(6, dtype=bool),
        positions=np.arange(6),
        excluded=(),
    )
    assert LocalSelector._flow([4], messages=messages, **args) == [2, 3]
    # Behind a long line of the other's, the earlier lines belong to another exchange.
    messages[3] = AIMessage(" ".join(["word"] * 30), id="x3")
    assert LocalSelector._flow([4], messages=messages, **args) == []


def test_the_lines_between_two_best_matches_close_together():
    # Two best matches (1 and 5) four lines apart in one sitting tell one story: the
    # lines between them come along whoever says them, even one that scores nothing
    # ("Second place!" between "how did the show go" and "Mrs. Grant won again").
    texts = ["a", "How did the show go?", "Second place!", "wow", "so proud", "Grant won"]
    texts += ["later"] * 12
    n = len(texts)
    messages = [
        (HumanMessage if k % 2 == 0 else AIMessage)(t, id=f"x{k}") for k, t in enumerate(texts)
    ]
    fused = np.ones(n)
    fused[2] = 0.0
    args = dict(
        tail=[],
        reserve_ids=[],
        fused=fused,
        entries=[SimpleNamespace(id=k) for k in range(n)],
        messages=messages,
        # Two speakers in turn: 2 and 3 also come as the flow of 1 (a reaction and the
        # speaker's next line); 4, before the other match, only through the gap.
        speakers=np.array([0, 1] * (n // 2)),
        filler=np.zeros(n, dtype=bool),
        positions=np.arange(n),
        excluded=(),
    )
    gap = LocalSelector._flow([1, 5], **{**args, "fused": fused})
    assert {2, 3, 4} <= set(gap)
    # Not across a sitting's dateline: the end of one sitting, the start of the next.
    dated = [
        (HumanMessage if k % 2 == 0 else AIMessage)(
            f"({'2 May' if k < 4 else '9 May'} 2023) {t}", id=f"x{k}"
        )
        for k, t in enumerate(texts)
    ]
    assert 4 not in LocalSelector._flow([1, 5], **{**args, "messages": dated})
    # Filler and what the caller excludes stay out.
    filler = np.zeros(n, dtype=bool)
    filler[3] = True
    assert 3 not in LocalSelector._flow([1, 5], **{**args, "filler": filler})
    assert 4 not in LocalSelector._flow([1, 5], **{**args, "excluded": {4}})
    # Matches further apart are two stories: nothing between them.
    far = LocalSelector._flow([1, 15], **args)
    assert not set(range(7, 12)) & set(far)  # (the flow reaches 1-5 and 13-17)
