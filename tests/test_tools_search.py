"""Tool search that never dead-ends: answer kinds, caps, hybrid score, calibration, phrasings."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from langchain.agents import create_agent
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from fakes import ToolCallingScriptedModel
from helpers import assert_calibration_reproduced
from langgraph_librarian.cli import main
from langgraph_librarian.embeddings import load_embeddings
from langgraph_librarian.tools import ToolIndex, ToolLibrarianMiddleware, format_search_result
from langgraph_librarian.tools.calibration import (
    CALIBRATIONS,
    DEFAULT_CALIBRATION,
    LEXICAL_MODEL_ID,
    SearchCalibration,
    calibrate_thresholds,
    calibration_for,
)
from langgraph_librarian.tools.request_tools import REQUEST_TOOLS_DESCRIPTION
from librarian_bench.datasets._tool_phrasings_data import STYLES
from librarian_bench.datasets.tool_phrasings import phrasing_cases, phrasing_catalog
from librarian_bench.tool_bench import (
    calibrate_engine,
    format_misses,
    phrasing_misses,
    run_phrasing_bench,
)

BOOKED: list[dict[str, Any]] = []


@tool
def email_send(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return f"sent to {to}"


@tool
def email_read(folder: str = "inbox") -> str:
    """Read the latest emails in a mailbox folder."""
    return "3 unread"


@tool
def calendar_create_event(title: str, when: str) -> str:
    """Create a calendar event at a given time."""
    BOOKED.append({"title": title, "when": when})
    return "event created"


@tool
def hotel_book(city: str, nights: int) -> str:
    """Book a hotel room in a city."""
    return "booked"


@tool
def weather(city: str) -> str:
    """Current weather in a city."""
    return "sunny"


CATALOG = [email_send, email_read, calendar_create_event, hotel_book, weather]


def schema(name: str, description: str, **args: str) -> dict[str, Any]:
    properties = {a: {"type": "string", "description": d} for a, d in args.items()}
    return {"name": name, "description": description, "parameters": {"properties": properties}}


class WordEmbeddings(Embeddings):
    """Deterministic bag-of-letters vectors (a stand-in model with a known id)."""

    model_id = "test-letters"

    def _vec(self, text: str) -> list[float]:
        counts = [0.0] * 26
        for ch in text.lower():
            if "a" <= ch <= "z":
                counts[ord(ch) - 97] += 1
        return counts

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


# -- answer kinds ---------------------------------------------------------------------


def test_five_answer_kinds_are_distinct_in_result_and_text():
    index = ToolIndex(CATALOG, embeddings=None)
    by_name = index.search("calendar_create_event")
    confident = index.search("send an email message to a recipient")
    strict = ToolIndex(CATALOG, embeddings=None, threshold=math.inf)
    candidates = strict.search("send an email message")
    domain = index.search("qwertyuiop", domain="email")
    domains = index.search("qwertyuiop")
    assert by_name.fallback == "name" and by_name.names == ["calendar_create_event"]
    assert confident.fallback is None and confident.names[0] == "email_send"
    assert not confident.low_confidence and {m.reason for m in confident.matches} <= {
        "match",
        "sibling",
    }
    assert candidates.fallback == "candidates" and candidates.low_confidence
    assert candidates.names[0] == "email_send"
    assert {m.reason for m in candidates.matches} == {"candidate"}
    assert next(iter(candidates.domains)) == "email"  # the candidates' domain comes first
    assert domain.fallback == "domain" and set(domain.names) == {"email_send", "email_read"}
    assert domains.fallback == "domains" and domains.names == [] and domains.domains
    texts = {
        "name": format_search_result(by_name, index),
        "confident": format_search_result(confident, index),
        "candidates": format_search_result(candidates, strict),
        "domain": format_search_result(domain, index),
        "domains": format_search_result(domains, index),
    }
    assert texts["name"].startswith("Tools loaded by name:")
    assert texts["confident"].startswith("Tools now available:")
    assert "No confident match" in texts["candidates"] and "Best guesses" in texts["candidates"]
    assert "email (2)" in texts["candidates"] and "other plain-English words" in texts["candidates"]
    assert texts["domain"].startswith("No single tool matched")
    assert texts["domains"].startswith("No tools matched") and "general (1)" in texts["domains"]
    assert len({t.splitlines()[0] for t in texts.values()}) == 5


def test_low_scores_below_the_candidate_floor_give_the_domain_list():
    index = ToolIndex(CATALOG, embeddings=None, threshold=math.inf, candidate_threshold=5.0)
    result = index.search("send a message")
    assert result.fallback == "domains" and result.names == []
    named_domain = index.search("send an email message")  # "email" names a domain
    assert named_domain.fallback == "domain" and set(named_domain.names) == {
        "email_send",
        "email_read",
    }


def test_names_load_exactly_those_tools():
    index = ToolIndex(CATALOG, embeddings=None)
    assert index.search("use email_read please").names == ["email_read"]
    both = index.search("email_send, calendar_create_event")
    assert both.fallback == "name" and both.names == ["email_send", "calendar_create_event"]
    assert index.search("weather").fallback == "name"  # a query made only of a name
    # A plain word that happens to be a tool name is an intent inside a sentence.
    sentence = index.search("what is the weather in Paris")
    assert sentence.fallback != "name" and "weather" in sentence.names
    assert index.named_tools("no_such_tool here") == []


def test_every_answer_respects_max_loaded():
    tools = [
        schema(f"crm_update_record_{i}", f"Update a customer record in CRM number {i}.")
        for i in range(30)
    ]
    index = ToolIndex(tools, embeddings=None, max_loaded=8)
    confident = index.search("update a customer record in the CRM")
    assert confident.fallback is None and len(confident.names) <= 8
    assert len(index.search(" ".join(f"crm_update_record_{i}" for i in range(12))).names) == 8
    assert len(index.search("qwertyuiop", domain="crm").names) == 8
    index.threshold = math.inf
    candidates = index.search("update a customer record")
    assert candidates.fallback == "candidates" and len(candidates.names) == 8
    small = ToolIndex(tools, embeddings=None, max_loaded=3, max_candidates=5)
    assert len(small.search("update a customer record").names) == 3
    with pytest.raises(ValueError, match="max_loaded"):
        ToolIndex(tools, embeddings=None, max_loaded=0)


def test_domain_list_is_bounded_and_puts_candidate_domains_first():
    tools = [schema(f"d{i:02d}_ping", f"Ping service number {i}.") for i in range(60)]
    tools.append(schema("zz_archive_mail", "Archive an old mail message."))
    index = ToolIndex(tools, embeddings=None, threshold=math.inf)
    result = index.search("archive mail")
    assert result.fallback == "candidates" and result.names[0] == "zz_archive_mail"
    assert len(result.domains) == 40 and next(iter(result.domains)) == "zz"
    assert "and 21 more" in format_search_result(result, index)
    nothing = index.search("qwertyuiop")
    assert len(nothing.domains) == 40 and "and 21 more" in format_search_result(nothing, index)


def test_request_tools_description_asks_for_plain_english_and_names():
    assert "plain English" in REQUEST_TOOLS_DESCRIPTION
    assert "exact tool names" in REQUEST_TOOLS_DESCRIPTION


# -- scoring ------------------------------------------------------------------------


async def test_asearch_is_a_full_twin_of_search():
    """Both take a precomputed query vector (a caller that embedded the query once)."""
    embeddings = WordEmbeddings()
    index = ToolIndex(CATALOG, embeddings=embeddings)
    query = "book a hotel in Rome for two nights"
    vector = embeddings.embed_query(query)
    for kwargs in ({}, {"query_vector": vector}, {"k": 2, "domain": "hotel"}):
        expected = index.search(query, **kwargs)
        assert await index.asearch(query, **kwargs) == expected


def test_hybrid_score_is_exactly_the_weighted_sum():
    index = ToolIndex(CATALOG, embeddings=WordEmbeddings(), semantic_weight=0.3)
    cosine, lexical = index.score_parts("book a hotel in Rome for two nights")
    names = index.row_names()
    scores = index.scores("book a hotel in Rome for two nights")
    for i, name in enumerate(names):
        assert scores[name] == pytest.approx(0.3 * cosine[i] + 0.7 * lexical[i], abs=1e-6)
    assert lexical.max() > 0 and cosine.max() > 0
    assert index.rank("book a hotel in Rome", limit=1)[0][0] == "hotel_book"
    lexical_only = ToolIndex(CATALOG, embeddings=None)
    assert lexical_only.semantic_weight == 0.0
    assert not lexical_only.score_parts("book a hotel")[0].any()
    with pytest.raises(ValueError, match="semantic_weight"):
        ToolIndex(CATALOG, embeddings=None, semantic_weight=1.5)


@pytest.mark.parametrize(
    ("query", "tool_name"),
    [
        ("put a meeting in my calender", "calendar_create_event"),  # typo
        ("réserver un hôtel", "hotel_book"),  # accent
        ("ajouter un événement au calendrier", "calendar_create_event"),  # cognate
        ("envoyer un e-mail à Jean", "email_send"),
    ],
)
def test_typos_accents_and_cognates_match_lexically(query, tool_name):
    index = ToolIndex(CATALOG, embeddings=None)
    result = index.search(query)
    assert result.names and result.names[0] == tool_name
    assert index.scores(query)[tool_name] > 0


def test_argument_descriptions_are_searched():
    tools = [
        schema("notify_push", "Send a notification.", device="The phone or tablet to ring."),
        schema("notify_banner", "Show a banner.", text="Text of the banner."),
    ]
    index = ToolIndex(tools, embeddings=None)
    assert index.get("notify_push").argument_descriptions == ["The phone or tablet to ring."]
    assert "tablet" in index.get("notify_push").search_text
    assert index.rank("ring my tablet", limit=1)[0][0] == "notify_push"
    assert ToolIndex([email_send], embeddings=None).get("email_send").argument_descriptions == [
        "",
        "",
    ]


def test_removed_tools_never_rank_and_compaction_keeps_scores():
    index = ToolIndex(CATALOG, embeddings=None)
    before = index.scores("book a hotel room")["hotel_book"]
    index.remove(["email_send", "email_read"])
    assert "email_send" not in index.scores("send an email")
    assert all(n != "email_send" for n, _ in index.rank("send an email"))
    index.search("anything")  # compacts (2 of 5 rows dead)
    assert "" not in index.row_names()
    assert index.scores("book a hotel room")["hotel_book"] == pytest.approx(before, rel=0.2)


# -- calibration ----------------------------------------------------------------------


def test_calibration_lookup_by_model():
    assert calibration_for(None) == CALIBRATIONS[LEXICAL_MODEL_ID]
    assert calibration_for(WordEmbeddings()) == DEFAULT_CALIBRATION
    index = ToolIndex(CATALOG, embeddings=WordEmbeddings())
    assert index.calibration == DEFAULT_CALIBRATION
    assert index.threshold == DEFAULT_CALIBRATION.threshold
    custom = ToolIndex(CATALOG, embeddings=None, threshold=0.2, candidate_threshold=0.05)
    assert custom.threshold == 0.2 and custom.candidate_threshold == 0.05


def test_calibrate_thresholds_rules_on_a_small_set():
    class Case:
        def __init__(self, query: str, gold: str | None) -> None:
            self.query, self.gold = query, gold

    index = ToolIndex(CATALOG, embeddings=None)
    cases = [
        Case("send an email message", "email_send"),
        Case("read my emails", "email_read"),
        Case("book a hotel room", "hotel_book"),
        Case("weather in a city", "weather"),
        Case("create a calendar event", "calendar_create_event"),
        Case("zzzz", None),
    ]
    cal = calibrate_thresholds(index, cases)
    assert isinstance(cal, SearchCalibration) and cal.semantic_weight == 0.0
    assert cal.candidate_threshold <= cal.threshold < math.inf
    for case in cases[:5]:  # every one of them is then answered confidently and right
        index.threshold = index.domain_threshold = cal.threshold
        assert case.gold in index.search(case.query).names
    with pytest.raises(ValueError):
        calibrate_thresholds(index, [])
    # A misspelled right tool would count as a miss and skew every value silently.
    with pytest.raises(ValueError, match="'email_sned'"):
        calibrate_thresholds(index, [*cases, Case("send mail", "email_sned")])


@pytest.mark.parametrize("model", ["none", "static", "e5-small"])
def test_stored_calibration_is_reproduced_from_the_calibration_half(model):
    embeddings = load_embeddings(model)
    assert_calibration_reproduced(embeddings, calibration_for(embeddings))


@pytest.mark.embeddings
def test_stored_minilm_calibration_is_reproduced():
    embeddings = load_embeddings("minilm")
    assert calibrate_engine(embeddings) == CALIBRATIONS["all-MiniLM-L6-v2"]


# -- phrasing set -------------------------------------------------------------------


def test_phrasing_split_is_disjoint_stratified_and_deterministic():
    everything = phrasing_cases("all")
    calibration = phrasing_cases("calibration")
    heldout = phrasing_cases("heldout")
    assert len(everything) == len(calibration) + len(heldout)
    assert not {c.query for c in calibration} & {c.query for c in heldout}
    assert phrasing_cases("heldout") == heldout  # deterministic
    assert phrasing_cases("heldout", seed=14) != heldout
    tools = {t["function"]["name"] for t in phrasing_catalog()}
    assert len(tools) >= 50 and len(everything) == 7 * len(tools) + 20
    for half in (calibration, heldout):
        for name in tools:
            styles = [c.style for c in half if c.gold == name]
            assert styles.count("indirect") == 1 and styles.count("foreign") == 1
            assert 3 <= len(styles) <= 4
        counts = {s: sum(c.style == s for c in half) for s in set(STYLES)}
        assert max(counts["colloquial"], counts["typo"], counts["elliptic"]) <= 28
        assert sum(c.gold is None for c in half) == 10
    for case in everything:  # requests never spell the tool's name
        assert case.gold is None or case.gold not in case.query
    with pytest.raises(ValueError):
        phrasing_cases("train")  # type: ignore[arg-type]


def test_phrasing_bench_rows_are_consistent():
    rows = run_phrasing_bench(None, split="calibration")
    by_style = {r["style"]: r for r in rows}
    assert set(by_style) == {"all", "indirect", "colloquial", "elliptic", "typo", "foreign", "none"}
    for row in rows:
        assert row["max_loaded_tools"] <= 8
        if row["style"] != "none":
            assert row["recall_at_1"] <= row["recall_at_k"]
            assert 0 < row["loaded_recall"] <= 1
    assert by_style["all"]["requests"] == 193


def test_phrasing_misses_are_the_requests_the_answers_did_not_serve():
    rows = {r["style"]: r for r in run_phrasing_bench(None, split="calibration")}
    misses = phrasing_misses(None, split="calibration")
    for style, row in rows.items():
        if style in ("all", "none"):
            continue
        missed = sum(m["style"] == style for m in misses)
        assert missed == round(row["requests"] * (1 - row["loaded_recall"]))
    assert len(misses) == round(rows["all"]["requests"] * (1 - rows["all"]["loaded_recall"]))
    for miss in misses:
        assert miss["gold"] not in miss["loaded"]
        assert miss["rank"] is None or miss["rank"] >= 1
    lines = format_misses(misses).splitlines()
    assert len(lines) == len(misses)
    assert all(f"-> {m['gold']} at rank" in line for m, line in zip(misses, lines, strict=True))


def test_cli_phrasings_option(capsys):
    assert main(["bench", "--dataset", "tools", "--phrasings", "--no-embeddings", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| lexical | heldout | indirect |" in out
    assert main(["bench", "--phrasings"]) == 2
    assert "--phrasings applies to --dataset tools only" in capsys.readouterr().err
    assert main(["bench", "--dataset", "tools", "--phrasings", "--tools", "50"]) == 2


# -- agents -------------------------------------------------------------------------


def _call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": name, "id": call_id, "type": "tool_call", "args": args}]
    )


def guessing_model() -> ToolCallingScriptedModel:
    """Asks vaguely, reads "Best guesses", calls the first tool listed."""

    def decide(messages: list[Any]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            return _call("request_tools", "g1", query="put the dentist event in my agenda")
        if isinstance(last, ToolMessage) and last.name == "request_tools":
            assert "Best guesses" in str(last.content)
            first = str(last.content).splitlines()[1].removeprefix("- ").split(":")[0]
            return _call(first, "g2", title="dentist", when="Tuesday 9am")
        return AIMessage(f"done: {last.content}")

    return ToolCallingScriptedModel(script=decide)


def low_confidence_index() -> ToolIndex:
    return ToolIndex(CATALOG, embeddings=None, threshold=math.inf, candidate_threshold=0.01)


def test_agent_calls_a_low_confidence_candidate_without_a_second_request():
    BOOKED.clear()
    model = guessing_model()
    agent = create_agent(
        model, tools=[], middleware=[ToolLibrarianMiddleware(low_confidence_index())]
    )
    result = agent.invoke({"messages": [HumanMessage("dentist on Tuesday at 9")]})
    assert BOOKED == [{"title": "dentist", "when": "Tuesday 9am"}]
    assert result["messages"][-1].content == "done: event created"
    bound = [{getattr(t, "name", None) for t in tools} for tools, _ in model.bound]
    assert "calendar_create_event" in bound[1] and len(bound[1]) <= 1 + 8


async def test_agent_calls_a_low_confidence_candidate_async():
    BOOKED.clear()
    agent = create_agent(
        guessing_model(), tools=[], middleware=[ToolLibrarianMiddleware(low_confidence_index())]
    )
    await agent.ainvoke({"messages": [HumanMessage("dentist on Tuesday at 9")]})
    assert BOOKED == [{"title": "dentist", "when": "Tuesday 9am"}]


def _asking_again_model() -> ToolCallingScriptedModel:
    """Gets the domain list, then asks again by exact tool name and calls it."""

    def decide(messages: list[Any]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            return _call("request_tools", "a1", query="qwertyuiop")
        if isinstance(last, ToolMessage) and last.tool_call_id == "a1":
            assert str(last.content).startswith("No tools matched")
            return _call("request_tools", "a2", query="calendar_create_event")
        if isinstance(last, ToolMessage) and last.tool_call_id == "a2":
            assert str(last.content).startswith("Tools loaded by name:")
            return _call("calendar_create_event", "a3", title="standup", when="9am")
        return AIMessage("ok")

    return ToolCallingScriptedModel(script=decide)


def test_agent_asks_again_by_exact_name():
    BOOKED.clear()
    model = _asking_again_model()
    index = ToolIndex(CATALOG, embeddings=None)
    agent = create_agent(model, tools=[], middleware=[ToolLibrarianMiddleware(index)])
    agent.invoke({"messages": [HumanMessage("add the standup")]})
    assert BOOKED == [{"title": "standup", "when": "9am"}]
    bound = [{getattr(t, "name", None) for t in tools} for tools, _ in model.bound]
    assert bound[1] == {"request_tools"} and bound[2] == {"request_tools", "calendar_create_event"}


async def test_agent_asks_again_by_exact_name_async():
    BOOKED.clear()
    index = ToolIndex(CATALOG, embeddings=None)
    agent = create_agent(
        _asking_again_model(), tools=[], middleware=[ToolLibrarianMiddleware(index)]
    )
    await agent.ainvoke({"messages": [HumanMessage("add the standup")]})
    assert BOOKED == [{"title": "standup", "when": "9am"}]


def test_static_engine_loads_the_right_tool_for_a_french_request():
    index = ToolIndex(CATALOG, embeddings=load_embeddings("static"))
    result = index.search("réserver une chambre d'hôtel à Rome")
    assert "hotel_book" in result.names[:3] and len(result.names) <= 8
    assert np.isfinite(index.threshold)


def test_a_misspelled_mode_is_an_error_not_an_agent_without_tools():
    for mode in ("All", "discovery", ""):
        with pytest.raises(ValueError, match="mode"):
            ToolLibrarianMiddleware(CATALOG, mode=mode)  # type: ignore[arg-type]


def test_removing_a_tool_keeps_the_name_lookup_of_one_differing_only_in_case():
    from langchain_core.tools import StructuredTool

    def make(name: str) -> StructuredTool:
        return StructuredTool.from_function(lambda to: to, name=name, description="Send mail.")

    index = ToolIndex([make("Email_Send"), make("email_send")], embeddings=None)
    index.remove("Email_Send")
    assert index.named_tools("email_send") == ["email_send"]
    index.remove("email_send")
    assert index.named_tools("email_send") == []


# -- review findings (tool librarian, 2026-12-02) -------------------------------------


def test_an_embedding_error_leaves_the_tools_pending_not_lost():
    class Flaky(WordEmbeddings):
        down = True

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            if self.down:
                raise ConnectionError("embedding server down")
            return super().embed_documents(texts)

    embeddings = Flaky()
    index = ToolIndex(CATALOG, embeddings=embeddings)
    # The search goes on lexically (docs/tools.md, failure behaviour) and says why.
    down = index.search("current weather in Oslo")
    assert down.embedding_error == "ConnectionError: embedding server down"
    assert down.names[0] == "weather"
    embeddings.down = False
    up = index.search("current weather in Oslo")
    assert up.names[0] == "weather" and up.embedding_error is None
    assert sorted(index.row_names()) == sorted(t.name for t in CATALOG)


def test_a_blank_description_never_breaks_a_search_answer():
    blank = schema("sms_send", "   \n  ", to="number")
    index = ToolIndex([blank, *CATALOG], embeddings=None)
    assert index.get("sms_send") is not None and index.get("sms_send").summary == "no description"
    text = format_search_result(index.search("sms_send"), index)
    assert "sms_send" in text


def test_a_search_reads_scores_and_names_from_one_snapshot():
    """Tools added (and removed) by another thread while a search scores must not
    misalign scores and names: the change is made from inside the scoring step, where
    a concurrent thread could land."""
    index = ToolIndex(CATALOG, embeddings=WordEmbeddings())
    index.search("warm up")
    lexical = index._lexical
    real = lexical.scores

    def scores_then_churn(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        index.add([schema(f"late_{i}_tool", f"Late tool {i}.") for i in range(5)])
        index._sync()
        index.remove("email_read")
        return out

    lexical.scores = scores_then_churn  # type: ignore[method-assign]
    try:
        scores = index.scores("send an email")
        ranked = index.rank("send an email", limit=3)
    finally:
        lexical.scores = real  # type: ignore[method-assign]
    assert set(scores) <= {t.name for t in CATALOG} | {f"late_{i}_tool" for i in range(5)}
    assert ranked[0][0] == "email_send"


def test_tools_stay_loaded_when_the_history_is_summarized_mid_turn():
    from langgraph_librarian.tools.request_tools import in_turn

    user = HumanMessage("send the report to Ann", id="u1")
    summary = HumanMessage(
        "Here is a summary of the conversation to date: ...",
        id="s1",
        additional_kwargs={"lc_source": "summarization"},
    )
    assert in_turn("u1", [user, AIMessage("")])
    assert in_turn("u1", [summary, AIMessage("")])  # the summary is not a new user turn
    assert not in_turn("u1", [summary, AIMessage(""), HumanMessage("next", id="u2")])
    middleware = ToolLibrarianMiddleware(CATALOG)
    state = {"messages": [summary], "loaded_tools": {"turn": "u1", "names": ["email_send"]}}
    assert middleware.loaded_names(state) == ["email_send"]


def test_loaded_tools_are_read_from_a_pydantic_state_too():
    from pydantic import BaseModel

    class State(BaseModel):
        messages: list[Any]
        loaded_tools: dict[str, Any]

    middleware = ToolLibrarianMiddleware(CATALOG)
    state = State(
        messages=[HumanMessage("mail Ann", id="u1")],
        loaded_tools={"turn": "u1", "names": ["email_send"]},
    )
    assert middleware.loaded_names(state) == ["email_send"]
    assert [t.name for t in middleware.tools_for(state)] == ["request_tools", "email_send"]


def test_each_tool_name_is_bound_once():
    @tool("request_tools")
    def shadow(query: str) -> str:
        """A catalog tool unwisely named like the meta-tool."""
        return query

    middleware = ToolLibrarianMiddleware([shadow, *CATALOG])
    state = {
        "messages": [HumanMessage("hi", id="u1")],
        "loaded_tools": {"turn": "u1", "names": ["request_tools", "email_send"]},
    }
    names = [t.name for t in middleware.tools_for(state)]
    assert names == ["request_tools", "email_send"]
    assert middleware.tools_for(state)[0] is middleware.request_tools  # the meta-tool wins


def test_schema_only_entries_are_not_announced_as_callable():
    index = ToolIndex([schema("crm_lookup", "Look up a customer in the CRM."), *CATALOG])
    text = format_search_result(index.search("crm_lookup"), index)
    assert "crm_lookup (described only: it cannot be called here)" in text


def test_a_domain_alone_loads_that_domain():
    index = ToolIndex(CATALOG, embeddings=None)
    result = index.search("", domain="email")
    assert result.fallback == "domain"
    assert set(result.names) == {"email_send", "email_read"}


@pytest.mark.parametrize("k", [0, -1, 2.5, "3", True])
def test_k_must_be_a_positive_int(k):
    index = ToolIndex(CATALOG, embeddings=None)
    with pytest.raises(ValueError, match="k must be"):
        index.search("send an email", k=k)
    with pytest.raises(ValueError, match="k must be"):
        ToolLibrarianMiddleware(CATALOG, k=k)


def test_callables_without_a_usable_name_are_refused_clearly():
    import functools

    def greet(name: str, greeting: str) -> str:
        """Greet someone."""
        return f"{greeting} {name}"

    for item in (functools.partial(greet, greeting="hi"), lambda q: q):
        with pytest.raises(TypeError, match=r"StructuredTool\.from_function"):
            ToolIndex([item], embeddings=None)
