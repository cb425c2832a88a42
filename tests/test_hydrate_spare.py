"""Spare candidates: next-best messages past the reserve, taken only while the context is
small (a chat of short messages whose best match leaves most of the budget unused)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_librarian import LibrarianConfig, select_and_hydrate
from langgraph_librarian.hydrate import hydrate
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector

_CHATTER = [
    "morning, slept badly again",
    "coffee first, then the gym maybe",
    "traffic was awful on the bridge today",
    "made soup for dinner, turned out fine",
    "my sister called about the weekend",
    "rain all afternoon, stayed in",
    "work was quiet, left early",
    "the neighbours are painting their fence",
]
_BOOKS = [
    "finished reading dune last night, loved the book",
    "started a new book, the overstory",
    "the book club picked circe this month",
    "gave up on that thriller book halfway",
    "reread the hobbit, a comfort book",
    "borrowed a cookbook from mum, great book",
]
QUESTION = "tell me about the books i read"


def short_chat() -> list:
    """48 short messages; every eighth (3, 11, ..., 43) mentions a book."""
    messages = []
    for k in range(48):
        if k % 8 == 3:
            text = _BOOKS[k // 8]
        elif k % 2 == 0:
            text = f"{_CHATTER[k % 8]} ({k})"
        else:
            text = "nice, tell me more" if k % 4 == 1 else "oh no, hope tomorrow is better"
        messages.append((HumanMessage if k % 2 == 0 else AIMessage)(text, id=f"m{k}"))
    return messages


BOOK_IDS = [f"m{k}" for k in range(3, 48, 8)]


def test_candidates_past_the_reserve_are_spare(monkeypatch):
    # The reserve by its count alone (short lines would otherwise stretch it to an
    # amount of text: see test_local_selector's reserve test).
    monkeypatch.setattr("langgraph_librarian.select.local._RESERVE_TOKENS", 0)
    history = [*short_chat(), HumanMessage(QUESTION, id="q")]
    entries = update_index(history, [], LibrarianConfig(embeddings=None)).entries[:-1]
    selection = LocalSelector(max_selected=2).select(QUESTION, history, entries)
    listed = {*selection.ids, *selection.reserve_ids}
    spare = set(selection.spare_ids)
    books = {int(i[1:]) for i in BOOK_IDS}
    assert books <= listed | spare
    assert books & spare  # two matches past the reserve (two at most)
    assert not listed & spare


def curate(budget: int | str | None) -> dict:
    history = [*short_chat(), HumanMessage(QUESTION, id="q")]
    config = LibrarianConfig(embeddings=None, max_selected=2, context_token_budget=budget)
    index = [e.to_dict() for e in update_index(history, [], config).entries]
    return select_and_hydrate(
        {"messages": history, "index": index}, {"configurable": {"librarian": config}}
    )


def test_a_small_context_takes_the_spare_candidates():
    out = curate("auto")
    ids = {m.id for m in out["curated_messages"]}
    assert set(BOOK_IDS) <= ids
    assert out["librarian_metadata"]["curated_tokens"] <= 0.4 * 2000


def test_an_unbounded_context_never_takes_them():
    ids = {m.id for m in curate(None)["curated_messages"]}
    assert not set(BOOK_IDS) <= ids


def test_spare_positions_stop_at_their_own_limit():
    messages = short_chat()
    current = [*messages, HumanMessage(QUESTION, id="q")]
    cost = count_tokens_approximately([current[-1]])
    for room, expected in ((cost + 5, {3}), (10_000, {3, 11})):
        out = hydrate(current, [3, 11], token_budget=2000, spare=[11], spare_tokens=room)
        kept = {p for p in out.positions if p < len(messages)}
        assert {3, 11} & kept == expected, room
        assert out.dropped_for_budget == []
    # Without a budget, spare positions are never added.
    out = hydrate(current, [3, 11], spare=[11], spare_tokens=10_000)
    assert 11 not in out.positions


def test_a_spare_position_inside_a_selected_unit_keeps_its_summary():
    # A selected tool call whose long result is also a spare candidate: the exchange is
    # one unit, and the result's short form is still there when the whole does not fit.
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from langgraph_librarian import LibrarianConfig, select_and_hydrate
    from langgraph_librarian.index import update_index
    from langgraph_librarian.select import Selection

    class Fixed:
        def select(self, query, messages, entries, *, exclude=(), config=None):
            return Selection(ids=[1], spare_ids=[2])

        async def aselect(self, *args, **kwargs):
            return self.select(*args, **kwargs)

    long = "flight options: " + " ".join(f"VK{i} Lisbon {100 + i} EUR" for i in range(400))
    history = [
        HumanMessage("find flights to Lisbon", id="h0"),
        AIMessage(
            "", tool_calls=[{"name": "search", "args": {"q": "Lisbon"}, "id": "c1"}], id="a1"
        ),
        ToolMessage(long, tool_call_id="c1", id="t2"),
        AIMessage("Here are the options.", id="a3"),
        HumanMessage("thanks, something else: plants?", id="h4"),
        AIMessage("water them", id="a5"),
    ]
    config = LibrarianConfig(
        selector=Fixed(), context_token_budget=800, always_include_recent_turns=1
    )
    entries = update_index(history, [], config).entries
    state = {
        "messages": [*history, HumanMessage("which Lisbon flight was cheapest?", id="q")],
        "index": [e.to_dict() for e in entries],
    }
    out = select_and_hydrate(state, {"configurable": {"librarian": config}})
    from langgraph_librarian.hydrate import COMPACT_MARK

    assert 1 in out["selected_ids"]
    result = next(m for m in out["curated_messages"] if m.id == "t2")
    assert result.additional_kwargs.get(COMPACT_MARK) and "VK" in str(result.content)
