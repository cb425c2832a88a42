"""The default context budget and how a budget is shared."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.hydrate import COMPACT_MARK, hydrate
from langgraph_librarian.nodes import select_and_hydrate
from langgraph_librarian.tokens import count_tokens
from librarian_bench._budget import budget_tokens, parse_budget


def test_auto_budget_is_a_share_of_the_history_within_bounds():
    config = LibrarianConfig()
    assert config.context_token_budget == "auto"
    assert config.budget_for(1_000) == 2_000  # floor
    assert config.budget_for(50_000) == 3_500  # 7%
    assert config.budget_for(10_000_000) == 8_000  # ceiling
    assert LibrarianConfig(context_token_budget=1234).budget_for(10**6) == 1234
    assert LibrarianConfig(context_token_budget=None).budget_for(10**6) is None


@pytest.mark.parametrize("bad", [0, -5, True, "big", 12.5])
def test_invalid_budgets_are_rejected(bad):
    with pytest.raises(ValueError, match="context_token_budget"):
        LibrarianConfig(context_token_budget=bad)


def _history(words_per_message: list[int]) -> list:
    messages = []
    for n, words in enumerate(words_per_message):
        text = " ".join(f"w{n}x{i}" for i in range(words))
        messages.append(
            HumanMessage(text, id=f"h{n}") if n % 2 == 0 else AIMessage(text, id=f"a{n}")
        )
    messages.append(HumanMessage("the question?", id="q"))
    return messages


def test_a_selection_longer_than_the_whole_budget_is_sent_as_its_summary():
    messages = _history([3_000, 5, 40, 5])
    out = hydrate(messages, [0, 2], recent_turns=1, token_budget=600, summaries={0: "A report."})
    assert out.selected == [0, 2] and out.compacted == [0]
    short = out.messages[0]
    assert short.additional_kwargs[COMPACT_MARK] and "A report." in str(short.content)
    assert count_tokens(out.messages) <= 600


def test_a_selection_that_only_lost_the_race_for_room_leaves_room_to_smaller_ones_first():
    # Message 2 would fit alone, but message 0 took the room first: the smaller message
    # 4 below it still comes whole, and message 2 comes as its summary in what is left.
    messages = _history([300, 5, 300, 5, 8, 5])
    budget = count_tokens(messages[:1]) + count_tokens(messages[4:5] + messages[-1:]) + 20
    summaries = {0: "a", 2: "b", 4: "c"}
    out = hydrate(messages, [0, 2, 4], recent_turns=1, token_budget=budget, summaries=summaries)
    assert out.selected == [0, 2, 4] and out.dropped_for_budget == [] and out.compacted == [2]
    assert count_tokens(out.messages) <= budget
    # With no room left at all, it is dropped.
    tight = budget - 20
    out = hydrate(messages, [0, 2, 4], recent_turns=1, token_budget=tight, summaries=summaries)
    assert out.selected == [0, 4] and out.dropped_for_budget == [2]


def test_a_top_selection_is_never_lost_for_want_of_room_its_summary_has():
    # The newcomer's case: a budget between "too long to ever fit" (given as its
    # summary) and "fits beside the recent turns" dropped the best match entirely.
    AI, Human = AIMessage, HumanMessage

    for budget in range(200, 460, 20):
        messages = [
            Human("The launch is on March 3. " + "Details. " * 100, id="paste"),
            AI("Noted.", id="a0"),
            Human("pasta recipe?", id="h1"),
            AI("Noted, that is a long answer " * 10, id="a1"),
            Human("When is the launch?", id="q"),
        ]
        summaries = {0: "The launch is on March 3."}
        out = hydrate(messages, [0], recent_turns=2, token_budget=budget, summaries=summaries)
        assert out.selected == [0], budget
        assert any("March 3" in str(m.content) for m in out.messages), budget
        assert count_tokens(out.messages) <= budget


def test_the_best_match_keeps_room_for_its_summary_before_lower_matches_take_it():
    # The best match (0) fits the budget but not beside the earlier recent turn (4, 5);
    # the lower match (2) then took all the room left, and the best match was lost
    # entirely: its summary came after. Its summary's room is now kept at its rank.
    messages = _history([250, 5, 200, 5, 100, 5])
    recent, lower = count_tokens(messages[4:6]), count_tokens(messages[2:3])
    budget = count_tokens(messages[-1:]) + recent + lower + 2
    assert count_tokens(messages[:1]) <= budget - count_tokens(messages[-1:])
    summaries = {0: "The paste: port 9187.", 2: "Another long one."}
    out = hydrate(messages, [0, 2], recent_turns=2, token_budget=budget, summaries=summaries)
    assert out.selected[0] == 0 and 0 in out.compacted
    assert any("9187" in str(m.content) for m in out.messages)
    assert count_tokens(out.messages) <= budget


def test_without_a_summary_an_oversized_selection_is_dropped():
    messages = _history([3_000, 5, 40, 5])
    out = hydrate(messages, [0, 2], recent_turns=1, token_budget=600)
    assert out.selected == [2] and out.dropped_for_budget == [0]


def test_metadata_reports_the_budget_applied():
    messages = _history([400] * 12)
    for setting, expected in [("auto", 2_000), (3_000, 3_000), (None, None)]:
        config = LibrarianConfig(context_token_budget=setting, selector_model="local")
        state = {"messages": messages, "query": "w0x3"}
        meta = select_and_hydrate(state, {"configurable": {"librarian": config}})[
            "librarian_metadata"
        ]
        assert meta["context_budget"] == expected
        if expected is not None:
            assert meta["curated_tokens"] <= expected


def test_bench_budget_specs():
    assert parse_budget("auto") == "auto" and parse_budget(" 6 % ") == "6%"
    assert parse_budget("2500") == 2500 and parse_budget(300) == 300
    assert parse_budget("None") == "none" and budget_tokens("none", 50_000) == 50_000
    for bad in ("0", "0%", "150%", "lots", True):
        with pytest.raises(ValueError):
            parse_budget(bad)
    assert budget_tokens("6%", 50_000) == 3_000
    assert budget_tokens("auto", 50_000) == LibrarianConfig().budget_for(50_000)
    assert budget_tokens(1234, 50_000) == 1234


def test_a_top_selection_outranks_the_full_text_of_earlier_recent_turns():
    # The earlier recent turn (2, 3) fits its share in full, but then the best selection
    # (0) does not: the recent turn is given in short form to make room for it.
    messages = _history([400, 5, 90, 90])
    budget = 800
    summaries = {2: "They asked about the plan.", 3: "I listed the steps."}
    out = hydrate(messages, [0], recent_turns=2, token_budget=budget, summaries=summaries)
    assert out.selected == [0]
    assert out.compacted == [2, 3]
    assert count_tokens(out.messages) <= budget
    # Without summaries there is no short form: the recent turn stays, the selection goes.
    plain = hydrate(messages, [0], recent_turns=2, token_budget=budget)
    assert plain.selected == [] and plain.dropped_for_budget == [0]


# -- a selected message too long to fit whole keeps the passage the question is about ---------


def test_a_long_selected_message_is_shortened_to_its_summary_and_the_matching_passage():
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_librarian import LibrarianConfig, create_librarian_graph

    seen: dict[str, list] = {}

    def agent(state):
        seen["context"] = state["curated_messages"]
        return {"messages": [AIMessage("ok")]}

    graph = create_librarian_graph(
        agent, LibrarianConfig(always_include_recent_turns=1), checkpointer=InMemorySaver()
    )
    lines = [
        f"2024-01-01 12:{i % 60:02d} INFO worker {i} finished batch {i * 3}." for i in range(4000)
    ]
    lines[2000] = "2024-01-01 13:00 ERROR the database password was rotated to ZEBRA-44 by ops."
    thread = {"configurable": {"thread_id": "log"}}
    graph.invoke(
        {"messages": [HumanMessage("Here is the log:\n" + "\n".join(lines)), AIMessage("Got it.")]},
        thread,
    )
    for i in range(3):
        graph.invoke({"messages": [HumanMessage(f"Unrelated question number {i}?")]}, thread)
    result = graph.invoke(
        {"messages": [HumanMessage("What was the database password rotated to?")]}, thread
    )
    meta = result["librarian_metadata"]
    assert meta["selected_ids"][:1] == [0] and 0 in meta["shortened_selected_ids"]
    shortened = seen["context"][0]
    assert str(shortened.content).startswith("[shortened earlier message]")
    assert "rotated to ZEBRA-44" in str(shortened.content)
    assert meta["curated_tokens"] <= meta["context_budget"]


def test_matching_excerpt_picks_the_rarest_matches_in_order_within_its_size():
    from langgraph_librarian.hydrate import matching_excerpt

    text = "\n".join(
        [
            "The invoice total was 400 euros.",
            *[f"Line {i}: the invoice was checked." for i in range(50)],
            "The invoice was paid late on 3 May, with a fee.",
            "Shipping took two weeks.",
        ]
    )
    excerpt = matching_excerpt(text, "When was the invoice paid and what was the fee?", 60)
    assert excerpt.startswith("The invoice was paid late on 3 May")
    assert len(excerpt) <= 60
    assert matching_excerpt(text, "What colour is the car?", 500) == ""
    both = matching_excerpt(text, "invoice total paid", 200)
    assert both.index("400 euros") < both.index("paid late")  # message order


def test_matching_excerpt_finds_words_whose_stem_is_not_their_prefix_and_cuts_long_lines():
    import json

    from langgraph_librarian.hydrate import matching_excerpt

    log = "\n".join(f"line {n}: nothing to report" for n in range(3000))
    log += "\nline 3000: we are moving the database server on Friday night"
    assert "moving the database" in matching_excerpt(log, "What about the move?", 300)
    rows = [{"id": n, "status": "ok"} for n in range(3000)]
    rows[2100] = {"id": 2100, "status": "error", "detail": "disk quota exceeded"}
    minified = json.dumps(rows, separators=(",", ":"))  # one line, no spaces
    excerpt = matching_excerpt(minified, "Which row had the disk quota error?", 600)
    assert "disk quota exceeded" in excerpt and len(excerpt) <= 600


def test_recent_turns_alone_over_the_budget_are_curated_on_the_second_turn():
    # Turn 2 of a thread: every message is a recent turn, nothing to select from; a
    # large paste of turn 1 still may not go to the model whole.
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_librarian import create_librarian_graph

    paste = "The secret code is 4471. " + "lorem ipsum dolor sit amet " * 6000
    seen: list[list[str]] = []

    def agent(state):
        seen.append([str(m.content) for m in state["curated_messages"]])
        return {"messages": [AIMessage("ok")]}

    graph = create_librarian_graph(agent, LibrarianConfig(), checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "paste"}}
    graph.invoke({"messages": [HumanMessage(paste)]}, thread)
    out = graph.invoke({"messages": [HumanMessage("What is the secret code?")]}, thread)
    meta = out["librarian_metadata"]
    assert meta["curated_tokens"] <= meta["context_budget"]
    sent = seen[-1]
    assert len(sent) == 3 and sent[-1] == "What is the secret code?"
    assert "4471" in sent[0] and len(sent[0]) < len(paste) // 10


def test_unindexed_recent_turns_over_the_budget_are_shortened_not_left_out():
    # index=[] (or an indexer that has not caught up): the recent turns have no summary,
    # yet they are part of the context by contract; their start stands in for it.
    messages = []
    for n in range(3):
        messages.append(HumanMessage(f"turn {n} asks " + "word " * 800, id=f"h{n}"))
        messages.append(AIMessage(f"turn {n} answers " + "reply " * 800, id=f"a{n}"))
    messages.append(HumanMessage("And now?", id="q"))
    config = LibrarianConfig(context_token_budget=1500, always_include_recent_turns=3)
    out = select_and_hydrate(
        {"messages": messages, "index": []}, {"configurable": {"librarian": config}}
    )
    curated = out["curated_messages"]
    ids = [m.id for m in curated]
    assert ids[-5:] == ["h1", "a1", "h2", "a2", "q"]
    for message in curated[-5:-1]:
        assert message.additional_kwargs[COMPACT_MARK]
        assert str(message.content).startswith("[shortened earlier message] turn ")
    meta = out["librarian_metadata"]
    assert meta["shortened_recent_ids"] == [2, 3, 4, 5]
    assert meta["curated_tokens"] <= meta["context_budget"]


def test_a_tool_result_longer_than_the_whole_budget_is_cut_to_what_matches():
    # The current turn is sent whole, but a fetched log of ~150k tokens reaches no model:
    # its start and the lines matching the question go instead (flagged), and the next
    # turn's follow-up finds the line it asks about in the log's short form.
    from langchain.agents import create_agent
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import MemorySaver

    from fakes import ToolCallingScriptedModel
    from langgraph_librarian import LibrarianMiddleware

    @tool
    def fetch_log(service: str) -> str:
        """Fetch the full server log of a service."""
        lines = (f"line{i} status=ok latency={i % 97}ms" for i in range(20_000))
        return f"log of {service}: " + "\n".join(lines)

    def reply(messages):
        last = messages[-1]
        if last.type == "human" and "log" in str(last.content):
            call = {"name": "fetch_log", "args": {"service": "api"}, "id": "c1"}
            return AIMessage("", tool_calls=[call])
        return AIMessage("ok")

    model = ToolCallingScriptedModel(script=reply)
    config = LibrarianConfig(context_token_budget=4000)
    agent = create_agent(
        model,
        tools=[fetch_log],
        middleware=[LibrarianMiddleware(config)],
        checkpointer=MemorySaver(),
    )
    thread = {"configurable": {"thread_id": "log"}}
    meta = agent.invoke({"messages": [HumanMessage("show me the api log")]}, thread)[
        "librarian_metadata"
    ]
    sent = model.calls[-1]
    (result,) = [m for m in sent if isinstance(m, ToolMessage)]
    assert result.additional_kwargs[COMPACT_MARK] and str(result.content).count("line") < 2_000
    assert meta["curated_tokens"] <= meta["context_budget"]
    position = next(p for p in meta["shortened_recent_ids"])
    assert position == 2
    agent.invoke({"messages": [HumanMessage("What was the latency of line7?")]}, thread)
    assert any("line7 status=ok latency=7ms" in str(m.content) for m in model.calls[-1])


# -- the user message opening a selected answer's turn ----------------------------------------


def test_the_opener_of_a_selected_answer_takes_room_from_the_recent_turns_not_the_budget():
    # The selected answer (1) needs the user message that opened its turn (0). The room
    # the selection leaves goes back to the earlier recent turn (2, 3), less the
    # opener's: with all of it, the recent turn would come whole and the opener on top.
    messages = _history([300, 60, 200, 200])
    summaries = {0: "what the user asked " * 20, 2: "a question", 3: "an answer"}
    whole = count_tokens([messages[p] for p in (1, 2, 3, 4)])
    budget = whole + 40  # room for the recent turn whole, not for the opener too
    out = hydrate(messages, [1], recent_turns=2, token_budget=budget, summaries=summaries)
    assert out.positions[:2] == [0, 1] and out.messages[0].additional_kwargs.get(COMPACT_MARK)
    assert count_tokens(out.messages) <= budget
    assert out.compacted == [0, 2, 3]  # the recent turn short to make room for the opener


def test_a_long_opener_comes_short_even_when_its_short_form_is_long():
    # A recent message's short form may carry matching passages after its summary (a few
    # thousand characters): as a turn opener it is cut, as it may pass the budget.
    messages = _history([600, 100, 5, 5])
    summaries = {0: "summary " + "passage " * 500}
    out = hydrate(messages, [1], recent_turns=2, token_budget=1_000, summaries=summaries)
    opener = out.messages[0]
    assert out.positions[0] == 0 and opener.additional_kwargs.get(COMPACT_MARK)
    assert len(opener.content) < 450
