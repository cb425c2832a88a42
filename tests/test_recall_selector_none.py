"""A selector model that answers "nothing applies": what recall keeps, and says it kept."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.recall import ScopeMemory
from langgraph_librarian.recall._middleware import recall_report

LENA = ["My daughter Lena turns 7 on June 4.", "Happy early birthday to Lena!"]
NONE = "Nothing applies.\nIDs: none"


def memory_with(answer: str | Exception, keeps_local: bool = True) -> ScopeMemory:
    config = LibrarianConfig(
        selector_model=ScriptedChatModel(script=answer),
        selector_keeps_local=keeps_local,
        max_retries=0,
    )
    memory = ScopeMemory(InMemoryStore(), config=config)
    exchange = [HumanMessage(LENA[0], id="1"), AIMessage(LENA[1], id="2")]
    memory.capture("u", exchange, thread_id="A")
    memory.capture("u", [HumanMessage("Recommend a sci-fi novel.", id="3")], thread_id="B")
    return memory


def test_offline_picks_that_bear_stay_when_the_model_says_none_and_the_result_says_so():
    """Newcomer finding 06: "IDs: none" still recalled, with nothing saying why."""
    result = memory_with(NONE).recall("u", "When is Lena's birthday?")
    assert result.status == "recalled" and result.strategy == "llm"
    assert [r.text for r in result.records] == LENA
    assert (result.model_picks, result.kept_local) == (0, 2)
    assert "selector_keeps_local" in result.reason
    report = recall_report(result)
    assert (report["model_picks"], report["kept_local"]) == (0, 2)


def test_without_keeping_local_picks_the_models_none_is_final():
    result = memory_with(NONE, keeps_local=False).recall("u", "When is Lena's birthday?")
    assert result.status == "empty" and result.records == []
    assert result.model_picks == 0
    assert "found nothing that applies" in result.reason


def test_the_models_own_picks_are_counted_apart_from_the_kept_offline_ones():
    result = memory_with("IDs: [0]").recall("u", "When is Lena's birthday?")
    assert [r.text for r in result.records] == LENA
    assert (result.model_picks, result.kept_local) == (1, 1)
    assert result.reason == ""


def test_no_model_selection_reports_no_model_picks():
    offline = ScopeMemory(InMemoryStore())
    offline.capture("u", [HumanMessage(LENA[0], id="1")], thread_id="A")
    result = offline.recall("u", "When is Lena's birthday?")
    assert result.status == "recalled" and (result.model_picks, result.kept_local) == (None, 0)
    failed = memory_with(RuntimeError("provider down")).recall("u", "When is Lena's birthday?")
    assert failed.strategy == "local_fallback" and failed.model_picks is None


def test_kept_offline_picks_under_the_floor_do_not_stay_when_the_model_says_none():
    import numpy as np

    from langgraph_librarian.recall._records import MemoryRecord
    from langgraph_librarian.recall._select import _ranked
    from langgraph_librarian.select._evidence import Evidence
    from langgraph_librarian.select.result import Selection

    def record(n: int, thread: str) -> MemoryRecord:
        return MemoryRecord(f"k{n}", f"Statement {n}.", "", "human", "turn", thread, seq=0)

    records = [record(0, "A"), record(1, "B"), record(2, "C")]
    evidence = Evidence(
        semantic=np.array([2.5, 0.2, 0.1]),
        lexical=np.zeros(3, dtype=bool),
        usable=np.ones(3, dtype=bool),
        strong=np.zeros(3, dtype=bool),
        measured=True,
    )
    said_none = Selection(ids=[0, 1], strategy="llm", model_ids=[], kept_local_ids=[0, 1])
    ranked = _ranked(records, said_none, evidence, "anything?")
    assert [r.key for r in ranked.records] == ["k0"] and ranked.model_picks == []
    picked = Selection(ids=[0], strategy="llm", model_ids=[2], reserve_ids=[1])
    ranked = _ranked(records, picked, evidence, "anything?")
    # the model's own pick stays (after the offline ones, as in a turn); k1 does not bear
    assert [r.key for r in ranked.records] == ["k0", "k2"]
    assert [r.key for r in ranked.model_picks or []] == ["k2"]
