"""Defects a production user hits: stores, thread ids, stale caches, plug-ins, background."""

from __future__ import annotations

import ast
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

from fakes import ScriptedChatModel, ToolCallingScriptedModel
from helpers import conversation, long_text
from langgraph_librarian import (
    FileIndexStore,
    IndexEntry,
    LangGraphIndexStore,
    LibrarianConfig,
    LibrarianMiddleware,
    create_librarian_graph,
    index_messages,
    select_and_hydrate,
    wait_for_background_indexing,
)
from langgraph_librarian.errors import IndexStoreError, MissingThreadError
from langgraph_librarian.select import LocalSelector, Selection


def reply(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [AIMessage(f"saw {len(state['curated_messages'])}")]}


# -- the index goes where the user's store is ------------------------------------------


def test_graph_store_keeps_the_index_out_of_state():
    store = InMemoryStore()
    graph = create_librarian_graph(reply, checkpointer=MemorySaver(), store=store)
    cfg = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": conversation(6)}, cfg)
    result = graph.invoke({"messages": [HumanMessage("What is the offsite budget?")]}, cfg)
    assert not result.get("index")  # lean checkpoint: the reducer default, never written
    assert result["librarian_metadata"]["selection_skipped"] is False
    saved = LangGraphIndexStore(store).load("t1")
    assert saved is not None and len(saved) == len(result["messages"])


def test_runtime_config_override_does_not_move_the_index_back_into_state():
    store = InMemoryStore()
    graph = create_librarian_graph(reply, checkpointer=MemorySaver(), store=store)
    cfg = {"configurable": {"thread_id": "t2", "librarian": LibrarianConfig()}}  # spec pattern 3
    result = graph.invoke({"messages": conversation(3)}, cfg)
    assert not result.get("index")
    assert LangGraphIndexStore(store).load("t2") is not None


def test_config_accepts_a_langgraph_store_directly():
    config = LibrarianConfig(store=InMemoryStore())
    assert isinstance(config.store, LangGraphIndexStore)


# -- a shared store needs a thread id ----------------------------------------------------


@pytest.mark.parametrize("configurable", [{}, {"thread_id": ""}, {"thread_id": None}])
def test_store_without_thread_id_is_a_clear_error(tmp_path, configurable):
    config = LibrarianConfig(store=FileIndexStore(tmp_path))
    state = {"messages": [*conversation(3), HumanMessage("budget?")]}
    run = {"configurable": {**configurable, "librarian": config}}
    with pytest.raises(MissingThreadError, match="thread_id"):
        index_messages(state, run)
    with pytest.raises(MissingThreadError):
        select_and_hydrate(state, run)
    assert list(tmp_path.iterdir()) == []  # nothing written under a shared "default" key


def test_two_threads_never_share_an_index(tmp_path):
    store = FileIndexStore(tmp_path)
    graph = create_librarian_graph(reply, LibrarianConfig(store=store))
    graph.invoke({"messages": conversation(2)}, {"configurable": {"thread_id": "a"}})
    graph.invoke({"messages": conversation(3)}, {"configurable": {"thread_id": "b"}})
    assert len(store.load("a")) == 5 and len(store.load("b")) == 7


def test_middleware_propagates_a_missing_thread_id(tmp_path):
    model = ToolCallingScriptedModel(script=lambda _m: AIMessage("ok"))
    config = LibrarianConfig(store=FileIndexStore(tmp_path))
    agent = create_agent(model, tools=[], middleware=[LibrarianMiddleware(config)])
    with pytest.raises(MissingThreadError):
        agent.invoke({"messages": conversation(2)})


def test_without_a_store_no_thread_id_is_needed():
    state = {"messages": [*conversation(3), HumanMessage("budget?")]}
    assert index_messages(state)["librarian_metadata"]["indexing_total_count"] == 7


# -- the lexical cache follows the summary -------------------------------------------------


def test_a_summary_that_arrives_later_is_searched():
    """A message first scored while pending keeps no stale text once summarized."""
    messages = [
        HumanMessage(long_text("kitchen", "I cannot eat peanuts or cashews at all."), id="m0"),
        AIMessage(long_text("menu"), id="m1"),
        HumanMessage(long_text("travel"), id="m2"),
        AIMessage(long_text("hotel"), id="m3"),
    ]
    selector = LocalSelector()
    pending = IndexEntry(
        id=0, role="human", summary="", message_id="m0", content_hash="c0", status="pending"
    )
    others = [
        IndexEntry(id=i, role="ai", summary="", message_id=f"m{i}", content_hash=f"c{i}")
        for i in (1, 2, 3)
    ]
    assert selector.select("allergy", messages, [pending, *others]).ids == []
    summarized = IndexEntry(
        id=0,
        role="human",
        summary="The user has a nut allergy (peanuts, cashews).",
        message_id="m0",
        content_hash="c0",
        status="summarized",
    )
    assert selector.select("allergy", messages, [summarized, *others]).ids[0] == 0


# -- a custom selector plugs in; a broken one fails open ---------------------------------


class FirstMessageSelector:
    def __init__(self) -> None:
        self.calls = 0

    def select(self, query, messages, entries, *, exclude=(), config=None) -> Selection:
        self.calls += 1
        return Selection(ids=[entries[0].id], reasoning="always the first", strategy="local")

    async def aselect(self, query, messages, entries, *, exclude=(), config=None) -> Selection:
        return self.select(query, messages, entries, exclude=exclude, config=config)


class BrokenSelector(FirstMessageSelector):
    def select(self, query, messages, entries, *, exclude=(), config=None) -> Selection:
        raise RuntimeError("selector bug")


def indexed_state(question: str = "What is the offsite budget now?") -> dict[str, Any]:
    messages = [*conversation(6), HumanMessage(question, id="q")]
    state = {"messages": messages}
    return {**state, "index": index_messages(state)["index"]}


def test_custom_selector_is_used():
    selector = FirstMessageSelector()
    config = LibrarianConfig(selector=selector, always_include_recent_turns=1)
    out = select_and_hydrate(indexed_state(), {"configurable": {"librarian": config}})
    assert selector.calls == 1
    assert out["selected_ids"] == [0]
    assert out["librarian_metadata"]["selection_reasoning"] == "always the first"


async def test_broken_custom_selector_falls_back_to_local(caplog):
    config = LibrarianConfig(selector=BrokenSelector(), always_include_recent_turns=1)
    run = {"configurable": {"librarian": config}}
    for out in (
        select_and_hydrate(indexed_state(), run),
        await select_and_hydrate.ainvoke(indexed_state(), run),
    ):
        meta = out["librarian_metadata"]
        assert meta["selection_strategy"] == "local_fallback"
        assert "selector bug" in meta["fallback_reason"]
        assert 4 in out["selected_ids"]  # the local selector found the budget message


def test_selector_without_aselect_is_rejected():
    class Half:
        def select(self, *args, **kwargs):
            return Selection()

    with pytest.raises(TypeError, match="aselect"):
        LibrarianConfig(selector=Half())  # type: ignore[arg-type]


# -- background indexing through the middleware --------------------------------------------


def test_middleware_honours_background_indexing(tmp_path):
    store = FileIndexStore(tmp_path)
    indexer = ScriptedChatModel(script="summary")
    config = LibrarianConfig(indexer_model=indexer, store=store, background_indexing=True)
    model = ToolCallingScriptedModel(script=lambda _m: AIMessage("ok"))
    agent = create_agent(
        model, tools=[], middleware=[LibrarianMiddleware(config)], checkpointer=MemorySaver()
    )
    result = agent.invoke({"messages": conversation(3)}, {"configurable": {"thread_id": "bg"}})
    assert result["librarian_metadata"]["indexing_background"] is True
    assert wait_for_background_indexing(timeout=30)
    assert len(store.load("bg")) == 7


# -- provider strings are checked when the config is built --------------------------------


def test_missing_provider_package_fails_at_config_time():
    from langgraph_librarian import LibrarianError

    with pytest.raises(ValueError, match="pip install langchain-google-genai"):
        LibrarianConfig(indexer_model="google_genai:gemini-2.0-flash")
    # the same family as the error a model string raises at first use
    with pytest.raises(LibrarianError, match="pip install langchain-google-genai"):
        LibrarianConfig(indexer_model="google_genai:gemini-2.0-flash")
    with pytest.raises(ValueError, match="selector_model"):
        LibrarianConfig(selector_model="anthropic:claude-x")
    LibrarianConfig(selector_model="openai:gpt-4o-mini")  # installed: accepted, built lazily


def test_models_built_from_strings_get_timeout_no_client_retries_and_output_limit(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = LibrarianConfig(selector_model="openai:gpt-4o-mini", model_timeout=7.5)
    model = config.get_selector_model()
    assert model.request_timeout == 7.5
    assert model.max_retries == 0
    assert model.max_tokens == 1024
    assert config.get_selector_model() is model  # built once


# -- a token counter that raises does not break turns --------------------------------------


def test_a_raising_token_counter_falls_back_to_the_approximate_count(caplog):
    def offline_tiktoken(messages):
        raise ConnectionError("could not download the encoding")

    config = LibrarianConfig(token_counter=offline_tiktoken, context_token_budget=3000)
    run = {"configurable": {"librarian": config}}
    # the "no index" path counts tokens too
    first = select_and_hydrate({"messages": [HumanMessage("hello")]}, run)
    assert first["librarian_metadata"]["reason"] in {"no_earlier_messages", "no_index"}
    out = select_and_hydrate(indexed_state(), run)
    assert out["librarian_metadata"]["selection_skipped"] is False
    assert out["librarian_metadata"]["curated_tokens"] > 0
    warnings = [r for r in caplog.records if "token counter" in r.getMessage()]
    assert len(warnings) == 1  # said once, not every call


def test_the_same_messages_indexed_with_and_without_vectors_are_not_confused():
    """The state-index cache tells an index with (pre-0.2) entry vectors from one without."""
    import dataclasses

    from langgraph_librarian._engine.state_cache import state_entries
    from langgraph_librarian.index import update_index

    messages = [*conversation(40), HumanMessage("budget?", id="q")]
    lexical = update_index(messages, [], LibrarianConfig(embeddings=None)).entries
    # Releases before 0.2 stored a vector per entry; such an index is still read as it is.
    older = [dataclasses.replace(e, vector="AAAA", vector_model="old-model") for e in lexical]
    assert state_entries({"index": [e.to_dict() for e in lexical]})[0].vector is None
    assert state_entries({"index": [e.to_dict() for e in older]})[0].vector == "AAAA"


@pytest.mark.parametrize(
    "args",
    [
        {"when": __import__("datetime").date(2024, 1, 1)},
        {"mixed": {1: "a", "b": 2}},
        {"blob": b"\x00\x01"},
        {"x": float("nan")},
    ],
    ids=["date", "mixed-keys", "bytes", "nan"],
)
def test_tool_call_arguments_that_are_not_json_are_indexed(args):
    """Hand-built tool calls may hold dates, bytes or mixed keys: index them, never fail."""
    from langchain_core.messages import ToolMessage

    from langgraph_librarian import index_messages, select_and_hydrate
    from langgraph_librarian._engine.messages import content_hash, message_text

    call = AIMessage("", tool_calls=[{"name": "book", "args": args, "id": "c1"}], id="a")
    messages = [
        HumanMessage("book it", id="h"),
        call,
        ToolMessage("booked", tool_call_id="c1", id="t"),
        AIMessage("done", id="a2"),
        HumanMessage("thanks, what did you book?", id="h2"),
    ]
    cfg = {"configurable": {"thread_id": "args"}}
    indexed = index_messages.invoke({"messages": messages}, cfg)
    assert len(indexed["index"]) == len(messages)
    curated = select_and_hydrate.invoke({"messages": messages, **indexed}, cfg)
    assert curated["curated_messages"]
    assert "[tool call book(" in message_text(call)
    assert content_hash(call) == content_hash(call.model_copy())  # stable


def test_removing_every_message_forgets_the_index_too():
    """A "forget me" (RemoveMessage of everything) must not leave the conversation's
    summaries in the index; an input of ``[]`` still never wipes it."""
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    from langgraph_librarian import index_messages, merge_index

    graph = create_librarian_graph(reply, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "forget"}}
    graph.invoke({"messages": [HumanMessage("My SSN is 078-05-1120, remember it")]}, cfg)
    graph.invoke({"messages": [HumanMessage("Thanks")], "index": []}, cfg)
    assert len(graph.get_state(cfg).values["index"]) == 4  # [] as input wiped nothing
    graph.update_state(cfg, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)]})
    values = graph.get_state(cfg).values
    assert values["messages"] == []
    update = index_messages.invoke(values, cfg)
    graph.update_state(cfg, update, as_node="index_messages")
    assert graph.get_state(cfg).values["index"] == []
    # The marker alone, read by a state without the reducer, is an empty index.
    assert merge_index([{"id": 0}], update["index"]) == []
    assert index_messages.invoke({"messages": [], "index": update["index"]}, cfg)


def test_a_skipped_selection_still_hands_over_a_valid_history():
    """Selection skipped (a short thread) after a tool result was deleted: the call
    without its result is repaired, as hydration does, not passed to the provider."""
    from langchain_core.messages import ToolMessage

    from langgraph_librarian import select_and_hydrate
    from langgraph_librarian.memory import history_problems

    messages = [
        HumanMessage("weather?", id="h1"),
        AIMessage("", tool_calls=[{"name": "w", "args": {}, "id": "c1"}], id="a1"),
        # ToolMessage "t1" was removed
        AIMessage("Sunny.", id="a2"),
        HumanMessage("and tomorrow?", id="h2"),
    ]
    out = select_and_hydrate.invoke({"messages": messages}, {"configurable": {}})
    assert out["librarian_metadata"]["selection_skipped"] is True
    assert history_problems(out["curated_messages"], require_human_first=False) == []
    assert not any(isinstance(m, ToolMessage) for m in out["curated_messages"])


def test_without_a_human_message_the_newest_message_is_kept():
    """An agent's own steps and a query given in state: the newest message is the
    current turn (the context was empty for an unrelated query)."""
    filler = " lorem ipsum dolor sit amet" * 60
    from langchain_core.messages import SystemMessage

    messages = [
        SystemMessage("You are a bot.", id="s"),
        AIMessage("Welcome! The offsite budget is 12,000 dollars." + filler, id="a1"),
        AIMessage("Reminder: the venue is Porto." + filler, id="a2"),
        AIMessage("Anything else about the weather today?" + filler, id="a3"),
    ]
    from langgraph_librarian.index import update_index

    index = [e.to_dict() for e in update_index(messages, [], LibrarianConfig()).entries]
    for history in (messages, messages[1:]):
        for query in ("capital of Peru?", "What is the budget?"):
            state = {"messages": history, "query": query, "index": index[-len(history) :]}
            out = select_and_hydrate.invoke(state, {"configurable": {}})
            ids = [m.id for m in out["curated_messages"]]
            assert ids and ids[-1] == "a3", (query, ids)


def test_a_hung_sync_model_neither_piles_up_threads_nor_blocks_another_model():
    """Timed-out sync calls of a model that never answers are abandoned on their threads:
    at most a few per model (then it fails at once), and a healthy model in the same
    process is not held up behind them (a shared pool of 32 used to fill with them)."""
    import threading
    import time

    from langgraph_librarian.index import update_index

    def calls_running() -> int:
        return sum(t.name == "librarian-call" for t in threading.enumerate())

    before = calls_running()
    hung = ScriptedChatModel(script="A summary.", latency=3.0)
    config = LibrarianConfig(indexer_model=hung, model_timeout=0.05, max_retries=0)
    history = [
        HumanMessage(long_text(f"topic {i}", f"The code is {i}."), id=f"m{i}") for i in range(40)
    ]
    update = update_index(history, [], config)
    assert update.failed_count == 40
    # At most the cap (8), plus the calls of one pass that started before it was reached.
    after_first = calls_running()
    assert after_first <= before + 8 + config.max_concurrency
    more = [
        HumanMessage(long_text(f"topic {i}", f"The code is {i}."), id=f"n{i}") for i in range(40)
    ]
    started = time.monotonic()
    assert update_index(more, [], config).failed_count == 40
    assert time.monotonic() - started < 1.0  # failed at once: no thread, no waiting
    assert calls_running() <= after_first

    healthy = ScriptedChatModel(script=lambda messages: "A short note.")
    healthy_config = LibrarianConfig(indexer_model=healthy, model_timeout=0.5, max_retries=0)
    started = time.monotonic()
    update_index(
        [HumanMessage(long_text("budget", "The budget is 12,000 dollars."), id="h")],
        [],
        healthy_config,
    )
    assert healthy.calls and time.monotonic() - started < 0.5


def test_the_abandoned_call_cap_holds_for_the_selectors_structured_output():
    """The structured-output wrapper is built anew for each selection: the cap counts
    the model behind it, so a hung tool-calling model stops at the cap here too."""
    import threading

    from langchain_core.language_models import BaseChatModel
    from langchain_core.outputs import ChatGeneration, ChatResult

    from langgraph_librarian.index import update_index
    from langgraph_librarian.select.llm import LLMSelector

    release = threading.Event()

    class HungModel(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "hung"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=tools, **kwargs)

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
            release.wait(30)
            return ChatResult(generations=[ChatGeneration(message=AIMessage("[1]"))])

    def calls_running() -> int:
        return sum(t.name == "librarian-call" for t in threading.enumerate())

    history = [
        HumanMessage(f"Note {i}: the Lisbon vendor {i} costs {i}00 euros.") for i in range(12)
    ]
    history.append(HumanMessage("What budget did we set?"))
    entries = update_index(history, [], LibrarianConfig()).entries
    selector = LLMSelector(
        HungModel(), local=LocalSelector(), timeout=0.05, max_retries=0, output="structured"
    )
    before = calls_running()
    try:
        for _ in range(12):
            selection = selector.select("What budget did we set?", history, entries)
            assert selection.strategy == "local_fallback"
        assert calls_running() <= before + 8
    finally:
        release.set()


def test_the_abandoned_call_key_is_stable_for_configurable_models():
    """init_chat_model(..., configurable_fields=...) builds a model on each attribute
    read: the key must not come from such a throw-away object."""
    from langchain.chat_models import init_chat_model
    from pydantic import BaseModel

    from langgraph_librarian._engine.calls import _model_key

    class Ids(BaseModel):
        ids: list[int]

    first = init_chat_model("openai:gpt-4o-mini", api_key="k1", configurable_fields="any")
    second = init_chat_model("openai:gpt-4.1", api_key="k2", configurable_fields="any")
    keys = {_model_key(first.with_structured_output(Ids)) for _ in range(3)}
    assert len(keys) == 1
    assert _model_key(second.with_structured_output(Ids)) not in keys


def test_an_unreadable_index_in_state_names_the_way_out_and_the_way_out_works():
    # Found by a newcomer trial: a thread whose checkpoint held an index of an older
    # format raised on every turn, and neither update_state(..., {"index": []}) nor
    # {"index": None} cleared it (both leave the index as it is, by design).
    saver = MemorySaver()
    thread = {"configurable": {"thread_id": "older-format"}}
    _older_release_thread(saver, thread)

    graph = create_librarian_graph(
        lambda s: {"messages": [AIMessage("ok")]},
        LibrarianConfig(always_include_recent_turns=1),
        checkpointer=saver,
    )
    ask = {"messages": [HumanMessage("What is the vault code?")]}
    with pytest.raises(ValueError, match="update_state") as raised:
        graph.invoke(ask, thread)
    way_out = str(raised.value).split("clear it with graph.update_state(config, ")[1]
    update = ast.literal_eval(way_out.split(") and the next turn")[0])  # the message's own
    graph.update_state(thread, update)
    out = graph.invoke(ask, thread)
    assert out["messages"][-1].content == "ok"
    assert len(out["index"]) == 4  # every message indexed again
    assert "The vault code is 5512." in [m.content for m in out["curated_messages"]]


class _Older(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    index: list


def _older_release_thread(saver: MemorySaver, thread: dict) -> None:
    """A thread checkpointed by an older deployment with its own index format."""
    older = StateGraph(_Older)
    stale = [{"id": "0", "role": "human", "summary": "vault code 5512", "status": "ok"}]
    older.add_node("agent", lambda s: {"messages": [AIMessage("Noted.")], "index": stale})
    older.add_edge(START, "agent")
    older.add_edge("agent", END)
    older.compile(checkpointer=saver).invoke(
        {"messages": [HumanMessage("The vault code is 5512.")]}, thread
    )


def test_an_unreadable_index_in_state_raises_before_the_model_in_the_middleware():
    # A review found the middleware passing the messages through on this error (as on
    # any selection failure), calling and billing the model, then raising after the
    # reply: turn after turn, the caller never saw a reply that was checkpointed.
    model = ScriptedChatModel(script="ok")
    saver = MemorySaver()
    thread = {"configurable": {"thread_id": "older-format-mw"}}
    _older_release_thread(saver, thread)
    agent = create_agent(model, tools=[], middleware=[LibrarianMiddleware()], checkpointer=saver)
    ask = {"messages": [HumanMessage("What is the vault code?")]}
    with pytest.raises(IndexStoreError, match="update_state"):
        agent.invoke(ask, thread)
    assert model.calls == []  # raised before the model, which was never billed
    agent.update_state(thread, {"index": [{"librarian_index_cleared": True}]})
    out = agent.invoke({"messages": [HumanMessage("And the vault code?")]}, thread)
    assert out["messages"][-1].content == "ok" and len(model.calls) == 1
    assert "The vault code is 5512." in [m.content for m in model.calls[0]]


def _deaf_call(release, started: list[int] | None = None, **caller: Any):
    """A ``ModelCaller`` around an async model that swallows every cancellation until
    ``release`` (an ``asyncio.Event``) is set; ``started`` counts its calls."""
    import asyncio

    from langchain_core.runnables import RunnableLambda

    from langgraph_librarian._engine.calls import ModelCaller

    async def deaf(_: object) -> str:
        if started is not None:
            started.append(1)
        while True:
            try:
                await release.wait()
                return "late"
            except asyncio.CancelledError:
                continue  # swallows every cancellation until released

    def never_sync(_: object) -> str:
        raise AssertionError("sync path not used here")

    return ModelCaller(RunnableLambda(never_sync, afunc=deaf), step="select", **caller)


async def test_async_calls_left_running_count_against_the_models_cap(monkeypatch):
    """An async model that ignores its cancellation is left running (``await_within``);
    like a hung sync call on its thread, each one counts against the model's cap, so a
    model that hangs for good stops getting new calls instead of piling up tasks."""
    import asyncio

    from langgraph_librarian._engine import calls as calls_module
    from langgraph_librarian._engine import concurrency

    monkeypatch.setattr(concurrency, "CANCEL_GRACE", 0.02)
    monkeypatch.setattr(calls_module, "_MAX_ABANDONED", 3)
    release = asyncio.Event()
    started: list[int] = []
    call = _deaf_call(release, started, timeout=0.02)
    try:
        for _ in range(3):
            with pytest.raises(TimeoutError, match="ignored its cancellation"):
                await call.ainvoke("x")
        assert len(started) == 3  # each left running, none retried over itself
        with pytest.raises(TimeoutError, match="3 earlier calls of this model"):
            await call.ainvoke("x")
        assert len(started) == 3  # refused at once: the model was not called again
        release.set()
        for _ in range(20):
            await asyncio.sleep(0.01)
        release.clear()
        with pytest.raises(TimeoutError, match="ignored its cancellation"):
            await call.ainvoke("x")  # the three ended: the model is called again
        assert len(started) == 4
    finally:
        release.set()  # every call left running ends (the loop's close waits for them)
        await asyncio.sleep(0.05)


async def test_calls_left_running_when_the_caller_is_cancelled_count_too(monkeypatch):
    """A review found the turn's own timeout (``asyncio.wait_for`` around it) left the
    deaf calls running uncounted: the cap never tripped."""
    import asyncio

    from langgraph_librarian._engine import calls as calls_module

    monkeypatch.setattr(calls_module, "_MAX_ABANDONED", 3)
    release = asyncio.Event()
    started: list[int] = []
    call = _deaf_call(release, started, timeout=30.0)
    try:
        for _ in range(5):
            with pytest.raises((TimeoutError, asyncio.TimeoutError)):
                await asyncio.wait_for(call.ainvoke("x"), 0.02)
        assert len(started) == 3  # the fourth and fifth were refused at once
    finally:
        release.set()
        await asyncio.sleep(0.05)


def test_a_call_left_on_a_dropped_event_loop_does_not_block_the_model(monkeypatch):
    """A sync wrapper that makes an event loop per request and drops it: what was left
    running there never runs again, and must not count against the model for good."""
    import asyncio

    from langgraph_librarian._engine import calls as calls_module
    from langgraph_librarian._engine import concurrency
    from langgraph_librarian._engine.calls import _model_key, _still_running

    monkeypatch.setattr(concurrency, "CANCEL_GRACE", 0.02)
    monkeypatch.setattr(calls_module, "_MAX_ABANDONED", 2)

    class Never:  # an event never set, usable from any event loop
        async def wait(self) -> None:
            await asyncio.sleep(3600)

    call = _deaf_call(Never(), timeout=0.02, retries=0)

    async def once() -> str:
        with pytest.raises(TimeoutError) as raised:
            await call.ainvoke("x")
        return str(raised.value)

    loops = [asyncio.new_event_loop() for _ in range(3)]
    try:
        for loop in loops:  # each dropped after its request, not closed
            assert "ignored its cancellation" in loop.run_until_complete(once())
        assert _still_running(_model_key(call.runnable)) == 0  # none of those loops runs
    finally:
        for loop in loops:
            loop.close()


def test_concurrent_hung_calls_leave_at_most_the_cap_of_threads(monkeypatch):
    """Twelve running-summary folds started at once against a model that hangs: the
    cap was checked before each call started, when none had timed out yet, so all
    twelve started a thread and all twelve were left running. Calls in flight count
    now; those beyond the cap fail (the summarizer raises, the caller keeps its
    messages) without calling the model."""
    import threading

    from langgraph_librarian._engine import calls as calls_module
    from langgraph_librarian.memory import RunningSummarizer, SummarizationError

    monkeypatch.setattr(calls_module, "_MAX_ON_THREADS", 8)
    release = threading.Event()

    def hang(_: object) -> str:
        release.wait(60)
        return "- User is allergic to nuts."

    model = ScriptedChatModel(script=hang)
    summarizer = RunningSummarizer(model, timeout=1.0, max_retries=0)
    start = threading.Barrier(12)
    failures: list[BaseException] = []

    def fold() -> None:
        start.wait()
        try:
            summarizer.summarize([HumanMessage("I'm allergic to nuts.")])
        except BaseException as exc:
            failures.append(exc)

    def hung_threads() -> int:
        return sum(t.name == "librarian-call" for t in threading.enumerate())

    before = hung_threads()
    folds = [threading.Thread(target=fold) for _ in range(12)]
    try:
        for thread in folds:
            thread.start()
        for thread in folds:
            thread.join()
        assert len(failures) == 12
        assert all(isinstance(exc, SummarizationError) for exc in failures)
        key = calls_module._model_key(model)
        assert calls_module._still_running(key) == 8  # eight left running, not twelve
        assert model.in_flight <= 8 and len(model.calls) <= 8
        assert hung_threads() - before <= 8
    finally:
        release.set()


def test_calls_beyond_the_cap_wait_for_a_slot_while_the_model_answers(monkeypatch):
    """A busy model that does answer: calls beyond the cap wait in line for a slot
    (within their timeout) instead of failing."""
    import threading
    import time

    from langgraph_librarian._engine import calls as calls_module
    from langgraph_librarian._engine.calls import ModelCaller

    monkeypatch.setattr(calls_module, "_MAX_ON_THREADS", 3)
    release = threading.Event()

    def slow(_: object) -> str:
        release.wait(60)
        return "answer"

    model = ScriptedChatModel(script=slow)
    caller = ModelCaller(model, step="select", timeout=60.0, retries=0)
    answers: list[str] = []
    threads = [
        threading.Thread(target=lambda: answers.append(caller.invoke("x").content))
        for _ in range(7)
    ]
    try:
        for thread in threads:
            thread.start()
        for _ in range(6000):  # (at most a minute: a broken cap fails, not hangs)
            if len(model.calls) >= 3:  # the first three hold the slots
                break
            time.sleep(0.01)
        assert model.in_flight == 3
        release.set()
        for thread in threads:
            thread.join()
        assert answers == ["answer"] * 7 and model.peak <= 3
    finally:
        release.set()


async def test_concurrent_async_calls_ignoring_cancellation_leave_at_most_the_cap(monkeypatch):
    """Twelve async calls started at once against a model that ignores its
    cancellation: the abandoned-call cap was checked before each call started, when
    none had timed out yet, so all twelve were left running (with a cap of three).
    Async calls in flight count now, as sync ones on threads do: those beyond the cap
    wait for a slot within their timeout and fail without calling the model."""
    import asyncio

    from langgraph_librarian._engine import calls as calls_module
    from langgraph_librarian._engine import concurrency

    monkeypatch.setattr(concurrency, "CANCEL_GRACE", 0.02)
    monkeypatch.setattr(calls_module, "_MAX_TASKS", 3)
    release = asyncio.Event()
    started: list[int] = []
    call = _deaf_call(release, started, timeout=0.1, retries=0)
    key = calls_module._model_key(call.runnable)
    try:
        results = await asyncio.gather(
            *(call.ainvoke("x") for _ in range(12)), return_exceptions=True
        )
        assert all(isinstance(r, TimeoutError) for r in results)
        assert len(started) == 3  # the others never called the model
        assert calls_module._still_running(key) == 3  # three left running, not twelve
    finally:
        release.set()
        await asyncio.sleep(0.05)
    assert calls_module._still_running(key) == 0


async def test_async_calls_beyond_the_cap_wait_for_a_slot_while_the_model_answers(
    monkeypatch,
):
    """A busy async model that does answer: calls beyond the cap wait in line for a
    slot (within their timeout) instead of failing."""
    import asyncio

    from langgraph_librarian._engine import calls as calls_module
    from langgraph_librarian._engine.calls import ModelCaller

    monkeypatch.setattr(calls_module, "_MAX_TASKS", 3)
    model = ScriptedChatModel(script="answer", latency=0.05)
    caller = ModelCaller(model, step="select", timeout=30.0, retries=0)
    answers = await asyncio.gather(*(caller.ainvoke("x") for _ in range(10)))
    assert [a.content for a in answers] == ["answer"] * 10
    assert model.peak <= 3 and model.async_calls == 10
