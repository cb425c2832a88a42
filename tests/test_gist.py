"""The gist: a running summary of older messages starts the curated context."""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from fakes import ScriptedChatModel, StatusError
from helpers import long_text
from langgraph_librarian import (
    LibrarianConfig,
    LibrarianMiddleware,
    create_librarian_graph,
    create_librarian_node,
    index_messages,
    merge_index,
)
from langgraph_librarian.memory import _summarizer
from langgraph_librarian.memory._prompts import SUMMARY_SOURCE


def recorder(seen: list[list[Any]]):
    def agent(state: dict[str, Any]) -> dict[str, Any]:
        seen.append(list(state["curated_messages"]))
        return {"messages": [AIMessage(long_text("reply", "Noted, thanks."))]}

    return agent


TOPICS = ["venue", "catering", "travel", "speakers", "schedule", "hotel", "music", "visa"]


def turn(n: int) -> HumanMessage:
    fact = "Remember that I am allergic to peanuts." if n == 0 else ""
    return HumanMessage(long_text(TOPICS[n % len(TOPICS)], fact), id=f"h{n}")


def is_gist(message: Any) -> bool:
    return message.type == "system" and "conversation_summary" in str(message.content)


def test_the_gist_carries_old_facts_and_is_never_indexed():
    seen: list[list[Any]] = []
    config = LibrarianConfig(running_summary_tokens=200, embeddings=None)
    graph = create_librarian_graph(recorder(seen), config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "g"}}
    for n in range(8):
        result = graph.invoke({"messages": [turn(n)]}, cfg)
    final = graph.invoke({"messages": [HumanMessage("Which hotel did we book?", id="q")]}, cfg)
    curated = seen[-1]
    assert is_gist(curated[0])  # the gist opens the context...
    assert "peanut" in str(curated[0].content)  # ...and still knows the first turn
    assert "h0" not in {m.id for m in curated}  # which was not selected in full
    gist = final["librarian_summary"]
    assert gist["text"] and gist["upto"] and gist["covers"] > 0
    # not a message: nothing indexed twice, nothing selectable
    assert len(final["index"]) == len(final["messages"])
    assert not any(is_gist(m) for m in final["messages"])
    meta = final["librarian_metadata"]
    assert meta["running_summary_included_tokens"] > 0
    assert result["librarian_metadata"]["running_summary_folded"] >= 1


def test_the_gist_counts_against_the_context_budget():
    seen: list[list[Any]] = []
    config = LibrarianConfig(running_summary_tokens=300, context_token_budget=900, embeddings=None)
    graph = create_librarian_graph(recorder(seen), config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "budget"}}
    for n in range(8):
        graph.invoke({"messages": [turn(n)]}, cfg)
    final = graph.invoke({"messages": [HumanMessage("What about the venue?")]}, cfg)
    assert final["librarian_metadata"]["curated_tokens"] <= 900 + 50
    assert final["curated_messages"][0].additional_kwargs.get("lc_source") == SUMMARY_SOURCE
    assert len(final["index"]) == len(final["messages"])  # the gist is not indexed


def test_a_failing_summary_model_keeps_the_old_gist():
    outcomes = iter(
        ["- User is allergic to peanuts; planning an offsite."] + [RuntimeError("down")] * 50
    )

    def summarize(messages):
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    indexer = ScriptedChatModel(script=summarize)
    config = LibrarianConfig(
        indexer_model=indexer,
        selector_model="local",
        running_summary_tokens=200,
        embeddings=None,
        max_retries=0,
        short_message_threshold=100_000,
    )
    graph = create_librarian_graph(recorder([]), config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "fail"}}
    results = [graph.invoke({"messages": [turn(n)]}, cfg) for n in range(8)]
    texts = [r.get("librarian_summary", {}).get("text") for r in results]
    kept = [t for t in texts if t]
    assert kept and all(t == kept[0] for t in kept)  # the first summary survives failures
    assert any("running_summary_error" in r["librarian_metadata"] for r in results)


def _refusing_graph(error: Exception | str) -> tuple[Any, ScriptedChatModel]:
    indexer = ScriptedChatModel(script=error)
    config = LibrarianConfig(
        indexer_model=indexer,
        selector_model="local",
        running_summary_tokens=200,
        embeddings=None,
        max_retries=0,
        short_message_threshold=100_000,
    )
    return create_librarian_graph(recorder([]), config, checkpointer=MemorySaver()), indexer


async def _turns(graph: Any, cfg: dict[str, Any], use_async: bool) -> list[dict[str, Any]]:
    results = []
    for n in range(8):
        if use_async:
            results.append(await graph.ainvoke({"messages": [turn(n)]}, cfg))
        else:
            results.append(graph.invoke({"messages": [turn(n)]}, cfg))
    return results


@pytest.mark.parametrize("use_async", [False, True])
async def test_refused_credentials_are_not_absorbed_by_the_gist(use_async):
    """As in the running-summary node: a 401 raises (a 500 is absorbed, above); failing
    open would hide a configuration error turn after turn."""
    graph, indexer = _refusing_graph(StatusError(401, "invalid api key"))
    with pytest.raises(StatusError):
        await _turns(graph, {"configurable": {"thread_id": "refused"}}, use_async)
    assert indexer.calls  # the fold was attempted


@pytest.mark.parametrize("use_async", [False, True])
async def test_an_interrupt_in_the_gist_interrupts_the_graph(use_async):
    graph, indexer = _refusing_graph(GraphInterrupt())
    cfg = {"configurable": {"thread_id": "interrupted"}}
    results = await _turns(graph, cfg, use_async)
    assert indexer.calls
    assert not any("running_summary_error" in r.get("librarian_metadata", {}) for r in results)
    assert graph.get_state(cfg).next  # the indexing node is pending, not done


@pytest.mark.parametrize("use_async", [False, True])
async def test_a_rejected_model_summary_says_why(use_async, caplog, monkeypatch):
    """A refusing model: the gist is written offline, and the metadata and log say why
    (the log once per cause and process: forget the causes seen)."""
    monkeypatch.setattr(_summarizer, "_REJECTIONS_WARNED", OrderedDict())
    graph, indexer = _refusing_graph("I'm sorry, I can't help with that.")
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        results = await _turns(graph, {"configurable": {"thread_id": "rejected"}}, use_async)
    folds = [r["librarian_metadata"] for r in results]
    folds = [m for m in folds if "running_summary_method" in m]
    assert indexer.calls and folds
    assert all(m["running_summary_method"] == "extractive" for m in folds)
    assert all("the model refused" in " ".join(m["running_summary_notes"]) for m in folds)
    warnings = [r for r in caplog.records if r.name == "langgraph_librarian"]
    assert any("the model refused" in r.getMessage() for r in warnings)


def test_an_offline_gist_has_no_notes_and_no_warning(caplog):
    config = LibrarianConfig(running_summary_tokens=200, embeddings=None)
    graph = create_librarian_graph(recorder([]), config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "offline"}}
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        results = [graph.invoke({"messages": [turn(n)]}, cfg) for n in range(6)]
    metas = [r["librarian_metadata"] for r in results]
    assert any(m.get("running_summary_method") == "extractive" for m in metas)
    assert not any("running_summary_notes" in m for m in metas)
    assert not [r for r in caplog.records if "running summary" in r.getMessage()]


def test_the_gist_through_the_middleware():
    from langchain.agents import create_agent

    from fakes import ToolCallingScriptedModel

    model = ToolCallingScriptedModel(script=lambda m: AIMessage(long_text("reply", "Sure.")))
    config = LibrarianConfig(running_summary_tokens=200, embeddings=None)
    agent = create_agent(
        model, tools=[], middleware=[LibrarianMiddleware(config)], checkpointer=MemorySaver()
    )
    cfg = {"configurable": {"thread_id": "mw-gist"}}
    for n in range(8):
        state = agent.invoke({"messages": [turn(n)]}, cfg)
    agent.invoke({"messages": [HumanMessage("What should I avoid eating?")]}, cfg)
    first = model.calls[-1][0]
    assert is_gist(first) and "peanut" in str(first.content)
    assert "peanut" in state["librarian_summary"]["text"]


def test_gist_source_marker_is_set():
    config = LibrarianConfig(running_summary_tokens=64, embeddings=None)
    graph = create_librarian_graph(recorder([]), config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "marker"}}
    for n in range(5):
        graph.invoke({"messages": [turn(n)]}, cfg)
    out = graph.invoke({"messages": [HumanMessage("And the music?")]}, cfg)
    gist = out["curated_messages"][0]
    assert gist.additional_kwargs.get("lc_source") == SUMMARY_SOURCE


def test_the_gist_keeps_its_facts_under_a_summarization_middleware():
    """RunningSummaryMiddleware replaces the history (the gist's last folded message is
    deleted): the gist keeps what it holds, never folds a summary as a message."""
    from langchain.agents import create_agent

    from langgraph_librarian.memory import RunningSummaryMiddleware

    count = {"n": 0}

    def answer(messages: list[Any]) -> str:
        count["n"] += 1
        return f"Answer number {count['n']}: a simple seasonal dish with rice and greens."

    model = ScriptedChatModel(script=answer)
    agent = create_agent(
        model,
        middleware=[  # the order docs/memory.md recommends
            RunningSummaryMiddleware(model, trigger=("messages", 12), keep=("messages", 2)),
            LibrarianMiddleware(
                LibrarianConfig(
                    running_summary_tokens=150, embeddings=None, context_token_budget=200
                )
            ),
        ],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "stacked"}}
    texts = ["I'm allergic to peanuts.", "I live in Lyon."]
    texts += [f"Idea number {i} for a quick weekday dinner?" for i in range(20)]
    for text in texts:
        state = agent.invoke({"messages": [("user", text)]}, cfg)
    gist = state["librarian_summary"]["text"]
    assert "peanuts" in gist
    assert "User: - User" not in gist and "Here is a summary" not in gist  # never nested
    assert "peanuts" in "\n".join(str(m.content) for m in model.calls[-1])


def _schema_graph(with_summary: bool, seen: list[list[Any]], config: LibrarianConfig) -> Any:
    class Bare(TypedDict, total=False):  # docs/librarian.md's schema, no gist field
        messages: Annotated[list, add_messages]
        index: Annotated[list, merge_index]
        curated_messages: list

    class Full(Bare, total=False):
        librarian_summary: dict

    builder = StateGraph(Full if with_summary else Bare)
    builder.add_node("librarian", create_librarian_node(config))
    builder.add_node("agent", recorder(seen))
    builder.add_node("indexer", index_messages)
    builder.add_edge(START, "librarian")
    builder.add_edge("librarian", "agent")
    builder.add_edge("agent", "indexer")
    builder.add_edge("indexer", END)
    return builder.compile(checkpointer=MemorySaver())


@pytest.mark.parametrize("with_summary", [False, True])
def test_a_schema_without_the_gist_field_is_reported(with_summary, caplog, monkeypatch):
    from langgraph_librarian._librarian import gist

    monkeypatch.setattr(gist, "_gist_warned", [])  # the warning is once per process
    seen: list[list[Any]] = []
    config = LibrarianConfig(running_summary_tokens=200, embeddings=None)
    graph = _schema_graph(with_summary, seen, config)
    cfg = {"configurable": {"thread_id": f"schema-{with_summary}"}}
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        for n in range(8):
            graph.invoke({"messages": [turn(n)]}, cfg)
    lost = [r for r in caplog.records if "not in the state" in r.getMessage()]
    if with_summary:
        assert not lost
        assert any(is_gist(m) for m in seen[-1])
    else:
        assert len(lost) == 1  # once, not at every turn
        assert "librarian_summary" in lost[0].getMessage()
        assert not any(is_gist(m) for m in seen[-1])


def test_another_graph_on_the_same_thread_id_is_not_reported(caplog, monkeypatch):
    from langgraph_librarian._librarian import gist

    monkeypatch.setattr(gist, "_gist_warned", [])
    config = LibrarianConfig(running_summary_tokens=200, embeddings=None)
    cfg = {"configurable": {"thread_id": "1"}}  # ids such as "1" get reused
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        for _ in range(2):  # two graphs, each with its own checkpointer
            seen: list[list[Any]] = []
            graph = create_librarian_graph(recorder(seen), config, checkpointer=MemorySaver())
            for n in range(8):
                graph.invoke({"messages": [turn(n)]}, cfg)
            assert any(is_gist(m) for m in seen[-1])
    assert not [r for r in caplog.records if "not in the state" in r.getMessage()]
