"""The spec's examples and the graph contract, with real checkpointers."""

from __future__ import annotations

import logging
import sqlite3
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from typing_extensions import TypedDict

from fakes import ScriptedChatModel, first_sentence
from helpers import conversation
from langgraph_librarian import (
    LOCAL,
    FileIndexStore,
    LibrarianConfig,
    LibrarianState,
    create_librarian_graph,
    create_librarian_node,
    index_messages,
)


def pattern_two(state_schema: Any, config: LibrarianConfig, agent: Any, checkpointer: Any) -> Any:
    """The spec's pattern 2: ``create_librarian_node(config)``, the agent, then the
    module's ``index_messages``."""
    builder = StateGraph(state_schema)
    builder.add_node("librarian", create_librarian_node(config))
    builder.add_node("agent", agent)
    builder.add_node("indexer", index_messages)
    builder.add_edge(START, "librarian")
    builder.add_edge("librarian", "agent")
    builder.add_edge("agent", "indexer")
    builder.add_edge("indexer", END)
    return builder.compile(checkpointer=checkpointer)


def recording_agent(seen: list[list[Any]]):
    def my_agent(state: dict[str, Any]) -> dict[str, Any]:
        context = state.get("curated_messages", state["messages"])
        seen.append(list(context))
        return {"messages": [AIMessage(content=f"answer {len(seen)}")]}

    return my_agent


def selector_answer(ids: str):
    return ScriptedChatModel(script=f"Message 5 changes message 17.\nIDs: {ids}")


@pytest.fixture(params=["memory", "sqlite"])
def checkpointer(request, tmp_path):
    if request.param == "memory":
        yield MemorySaver()
        return
    conn = sqlite3.connect(tmp_path / "ckpt.db", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


def test_quick_start_runs_as_written():
    indexer = ScriptedChatModel(script="A short summary of the message.")
    selector = selector_answer("[4, 16]")
    # Unbounded context: the spec's first turn passes everything through.
    config = LibrarianConfig(
        indexer_model=indexer, selector_model=selector, context_token_budget=None
    )
    seen: list[list[Any]] = []
    graph = create_librarian_graph(agent_fn=recording_agent(seen), config=config)
    messages = conversation(12)
    result = graph.invoke(
        {"messages": messages, "query": "What was the budget?", "index": []},
        config={"configurable": {"librarian": config}},
    )
    # First turn: no index yet, everything passes through (spec), then indexing runs.
    assert result["librarian_metadata"]["selection_skipped"] is True
    assert result["librarian_metadata"]["reason"] == "no_index"
    assert len(seen[0]) == len(messages)
    assert len(result["index"]) == len(messages) + 1
    assert result["librarian_metadata"]["indexing_new_count"] == len(messages) + 1
    assert len(indexer.calls) == len(messages)  # the short AI reply is indexed verbatim


def test_first_turn_over_the_default_budget_is_curated_from_provisional_entries():
    """A long history arriving with no index (an import, a migrated thread) is not sent
    whole: the default budget is enforced with provisional (extractive) entries."""
    selector = selector_answer("[4, 16]")
    config = LibrarianConfig(indexer_model=ScriptedChatModel(script="s"), selector_model=selector)
    seen: list[list[Any]] = []
    graph = create_librarian_graph(agent_fn=recording_agent(seen), config=config)
    messages = conversation(12)
    result = graph.invoke({"messages": messages, "query": "What was the budget?", "index": []})
    meta = result["librarian_metadata"]
    assert meta["selection_skipped"] is False
    assert meta["context_budget"] == 2000  # the auto floor: 8% of ~3.3k tokens is less
    assert meta["original_tokens"] > meta["context_budget"] >= meta["curated_tokens"]
    assert len(seen[0]) < len(messages)
    assert len(selector.calls) == 1


def test_short_history_with_no_index_passes_through_under_the_default_budget():
    config = LibrarianConfig(indexer_model=ScriptedChatModel(script="s"), selector_model=LOCAL)
    seen: list[list[Any]] = []
    graph = create_librarian_graph(agent_fn=recording_agent(seen), config=config)
    messages = conversation(3)
    result = graph.invoke({"messages": messages, "query": "budget?", "index": []})
    assert result["librarian_metadata"]["reason"] == "no_index"
    assert len(seen[0]) == len(messages)


def test_second_turn_selects_and_hydrates(checkpointer):
    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script="summary"),
        selector_model=selector_answer("[4, 16]"),
        selector_keeps_local=False,  # the model's picks alone: this tests the plumbing
    )
    seen: list[list[Any]] = []
    graph = create_librarian_graph(recording_agent(seen), config, checkpointer=checkpointer)
    cfg = {"configurable": {"thread_id": "user-123", "librarian": config}}
    graph.invoke({"messages": conversation(12), "query": "budget?", "index": []}, cfg)
    result = graph.invoke({"messages": [HumanMessage("What is the budget now?")], "index": []}, cfg)
    meta = result["librarian_metadata"]
    assert meta["selection_skipped"] is False
    assert meta["selected_ids"] == [4, 16]
    assert "reason" not in meta  # nothing stale from the skipped first turn
    assert result["selected_ids"] == [4, 16]
    curated = seen[-1]
    assert curated[-1].content == "What is the budget now?"
    ids = [m.id for m in curated]
    assert "h2" in ids and "h8" in ids
    assert meta["curated_tokens"] < meta["original_tokens"]
    assert 0 < meta["token_reduction_pct"] < 100
    for key in ("selection_reasoning", "selection_latency_ms", "original_count", "curated_count"):
        assert key in meta
    # "index": [] in the input never wiped the persisted index
    assert len(result["index"]) == 12 * 2 + 3


def test_query_from_an_earlier_turn_is_not_reused():
    selector = ScriptedChatModel(script="IDs: []")
    config = LibrarianConfig(indexer_model=ScriptedChatModel(script="s"), selector_model=selector)
    graph = create_librarian_graph(recording_agent([]), config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": conversation(4)}, cfg)
    graph.invoke(
        {
            "messages": [HumanMessage("first question about catering")],
            "query": "explicit catering query",
        },
        cfg,
    )
    assert '"explicit catering query"' in selector.calls[-1][0].content
    result = graph.invoke({"messages": [HumanMessage("second question about travel")]}, cfg)
    prompt = selector.calls[-1][0].content
    assert "second question about travel" in prompt
    assert "explicit catering query" not in prompt
    assert result["librarian_metadata"]["query"] == "second question about travel"


def test_builder_config_is_honoured_and_runtime_overrides_it():
    selector = ScriptedChatModel(script="IDs: [0]")
    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script="s"),
        selector_model=selector,
        always_include_recent_turns=1,
    )
    seen: list[list[Any]] = []
    graph = create_librarian_graph(recording_agent(seen), config, checkpointer=MemorySaver())
    cfg: dict[str, Any] = {"configurable": {"thread_id": "x"}}
    graph.invoke({"messages": conversation(6)}, cfg)
    graph.invoke({"messages": [HumanMessage("q1 about venue")]}, cfg)
    assert len(selector.calls) == 1  # the builder's selector model was used
    assert next(m.id for m in seen[-1]) == "h0"
    cfg["configurable"]["librarian"] = {"always_include_recent_turns": 3}
    graph.invoke({"messages": [HumanMessage("q2 about venue")]}, cfg)
    assert len(selector.calls) == 2
    curated_ids = [m.id for m in seen[-1]]
    assert "h5" in curated_ids and "h4" not in curated_ids[1:]  # three whole turns kept
    assert [m.content for m in seen[-1] if m.type == "human"][-2:] == [
        "q1 about venue",
        "q2 about venue",
    ]


def test_removed_and_edited_messages_never_hydrate_stale_content(checkpointer):
    selector = ScriptedChatModel(script=lambda msgs: "IDs: [0, 1, 2, 3]")
    indexer = ScriptedChatModel(script=lambda msgs: "summary of: " + msgs[-1].content[20:60])
    config = LibrarianConfig(indexer_model=indexer, selector_model=selector)
    seen: list[list[Any]] = []
    graph = create_librarian_graph(recording_agent(seen), config, checkpointer=checkpointer)
    cfg = {"configurable": {"thread_id": "edit"}}
    graph.invoke({"messages": conversation(6)}, cfg)
    # Delete the first two messages and edit a third (same id, new content).
    edited = HumanMessage(content="EDITED: the venue is now Porto. " * 10, id="h2")
    graph.invoke(
        {
            "messages": [
                RemoveMessage(id="h0"),
                RemoveMessage(id="a0"),
                edited,
                HumanMessage("Where is the venue?"),
            ]
        },
        cfg,
    )
    state = graph.get_state(cfg).values
    ids = [e["message_id"] for e in state["index"]]
    assert "h0" not in ids and "a0" not in ids
    assert [e["id"] for e in state["index"]] == list(range(len(state["messages"])))
    h2 = next(e for e in state["index"] if e["message_id"] == "h2")
    assert any("EDITED" in call[-1].content for call in indexer.calls)
    assert h2["summary"].startswith("summary of:")
    graph.invoke({"messages": [HumanMessage("And the budget?")]}, cfg)
    for message in seen[-1]:
        assert message.id not in {"h0", "a0"}
        if message.id == "h2":
            assert message.content.startswith("EDITED")


def test_remove_all_messages_resets_the_index():
    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script="s"),
        selector_model=ScriptedChatModel(script="IDs: [0]"),
    )
    graph = create_librarian_graph(recording_agent([]), config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "r"}}
    graph.invoke({"messages": conversation(4)}, cfg)
    fresh = [HumanMessage("brand new start", id="n1")]
    result = graph.invoke({"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *fresh]}, cfg)
    assert [e["message_id"] for e in result["index"]] == ["n1", result["messages"][-1].id]


def test_forgetting_a_thread_without_running_the_agent_clears_its_index():
    # docs/librarian.md "Forgetting a conversation": the messages removed as if the agent
    # had written that, then the rest of the turn (the index node) run; the agent is not
    # called, and an agent that runs on an empty input (a greeting) still runs.
    seen: list[list[Any]] = []
    graph = create_librarian_graph(recording_agent(seen), checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "forget-all"}}
    graph.invoke({"messages": conversation(3)}, cfg)
    calls = len(seen)
    graph.update_state(cfg, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)]}, as_node="agent")
    assert graph.get_state(cfg).next == ("index_messages",)
    graph.invoke(None, cfg)
    values = graph.get_state(cfg).values
    assert len(seen) == calls and values["messages"] == [] and values["index"] == []
    greeting = graph.invoke({"messages": []}, {"configurable": {"thread_id": "greet"}})
    assert len(seen) == calls + 1 and greeting["messages"][-1].type == "ai"


def test_pattern_2_custom_graph_with_node_and_indexer():
    class MyState(TypedDict, total=False):
        messages: Annotated[list, add_messages]
        query: str
        index: list
        selected_ids: list[int]
        curated_messages: list
        librarian_metadata: dict
        user_name: str

    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script="s"),
        selector_model=ScriptedChatModel(script="IDs: [2]"),
        selector_keeps_local=False,
    )
    seen: list[list[Any]] = []
    graph = pattern_two(MyState, config, recording_agent(seen), MemorySaver())
    cfg = {"configurable": {"thread_id": "p2", "librarian": config}}
    graph.invoke({"messages": conversation(4), "user_name": "Ana"}, cfg)
    result = graph.invoke({"messages": [HumanMessage("budget?")]}, cfg)
    assert result["selected_ids"] == [2]
    assert result["user_name"] == "Ana"


async def test_async_graph_and_index_store(tmp_path):
    indexer = ScriptedChatModel(script="async summary")
    config = LibrarianConfig(
        indexer_model=indexer,
        selector_model=ScriptedChatModel(script="IDs: [1]"),
        store=FileIndexStore(tmp_path),
        selector_keeps_local=False,
    )
    graph = create_librarian_graph(recording_agent([]), config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "../../etc/passwd"}}
    await graph.ainvoke({"messages": conversation(3)}, cfg)
    assert indexer.async_calls == len(conversation(3))
    saved = config.store.load("../../etc/passwd")
    assert saved is not None and len(saved) == 7
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].parent == tmp_path
    result = await graph.ainvoke({"messages": [HumanMessage("venue?")]}, cfg)
    assert result["librarian_metadata"]["selected_ids"] == [1]


def test_external_store_is_source_of_truth_per_thread(tmp_path):
    store = FileIndexStore(tmp_path)
    config = LibrarianConfig(store=store)
    graph = create_librarian_graph(recording_agent([]), config, checkpointer=MemorySaver())
    result = graph.invoke({"messages": conversation(3)}, {"configurable": {"thread_id": "a"}})
    graph.invoke({"messages": conversation(5)}, {"configurable": {"thread_id": "b"}})
    assert len(store.load("a")) == 7
    assert len(store.load("b")) == 11
    assert not result.get("index")  # the store holds it: no second copy in checkpoints
    assert result["librarian_metadata"]["indexing_total_count"] == 7


def test_no_checkpoint_serializer_warnings(caplog, tmp_path):
    conn = sqlite3.connect(tmp_path / "w.db", check_same_thread=False)
    graph = create_librarian_graph(
        recording_agent([]), LibrarianConfig(), checkpointer=SqliteSaver(conn)
    )
    cfg = {"configurable": {"thread_id": "w"}}
    with caplog.at_level(logging.WARNING):
        graph.invoke({"messages": conversation(3)}, cfg)
        graph.invoke({"messages": [HumanMessage("budget?")]}, cfg)
        state = graph.get_state(cfg).values
    assert isinstance(state["index"][0], dict)
    assert not [
        r
        for r in caplog.records
        if "serial" in r.getMessage().lower() or "unregistered" in r.getMessage().lower()
    ]


def test_offline_default_needs_no_model():
    seen: list[list[Any]] = []
    graph = create_librarian_graph(recording_agent(seen), checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "off"}}
    graph.invoke({"messages": conversation(12)}, cfg)
    result = graph.invoke({"messages": [HumanMessage("What is the offsite budget now?")]}, cfg)
    meta = result["librarian_metadata"]
    assert meta["selection_strategy"] == "local"
    ids = {m.id for m in seen[-1]}
    assert {"h2", "h8"} <= ids
    assert meta["curated_tokens"] < meta["original_tokens"]


def test_state_schema_is_the_spec_one():
    hints = LibrarianState.__annotations__
    for key in (
        "messages",
        "query",
        "index",
        "selected_ids",
        "curated_messages",
        "librarian_metadata",
    ):
        assert key in hints


def test_background_indexing_returns_before_the_index_is_built(tmp_path):
    import threading

    from langgraph_librarian import wait_for_background_indexing

    release = threading.Event()

    def blocked_summary(messages):
        # Blocks until the test releases it: if invoke() waited for indexing, the
        # assertions below would see the index built (and release would time out).
        release.wait(10)
        return first_sentence(messages)

    indexer = ScriptedChatModel(script=blocked_summary)
    store = FileIndexStore(tmp_path)
    config = LibrarianConfig(
        indexer_model=indexer,
        selector_model="local",
        store=store,
        background_indexing=True,
        retry_backoff=0,
    )
    graph = create_librarian_graph(recording_agent([]), config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "bg"}}
    result = graph.invoke({"messages": conversation(6)}, cfg)
    assert result["librarian_metadata"]["indexing_background"] is True
    assert store.load("bg") is None  # the reply came back before any index was saved
    # Meanwhile the next turn still works: with no index saved yet, everything passes.
    second = graph.invoke({"messages": [HumanMessage("What is the offsite budget now?")]}, cfg)
    assert second["librarian_metadata"]["reason"] == "no_index"
    assert len(second["curated_messages"]) == 14  # 12 + the first reply + the question
    release.set()
    assert wait_for_background_indexing(timeout=30)
    saved = store.load("bg")
    assert saved is not None and len(saved) == len(graph.get_state(cfg).values["messages"])
    assert any(e.status == "summarized" for e in saved)


def test_background_indexing_needs_a_store():
    with pytest.raises(ValueError, match="store"):
        LibrarianConfig(background_indexing=True)


def test_background_jobs_that_run_out_of_order_never_move_the_index_back(monkeypatch):
    """Two workers start a session's jobs in any order: whatever the order, the stored
    index ends up covering the newest history (an older job must not overwrite it)."""
    from concurrent.futures import Future

    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian import LangGraphIndexStore
    from langgraph_librarian._kit import background

    class Reversed:
        """Holds the submitted jobs, then runs them newest first (the worst order)."""

        def __init__(self) -> None:
            self.jobs: list[tuple[Any, tuple[Any, ...], Future[None]]] = []

        def submit(self, fn: Any, *args: Any) -> Future[None]:
            future: Future[None] = Future()
            self.jobs.append((fn, args, future))
            return future

        def run_newest_first(self) -> None:
            for fn, args, future in reversed(self.jobs):
                fn(*args)
                future.set_result(None)

    executor = Reversed()
    monkeypatch.setattr(background, "_EXECUTOR", executor)
    store = LangGraphIndexStore(InMemoryStore())
    config = LibrarianConfig(store=store, embeddings=None, background_indexing=True)
    history = conversation(3)
    for turn in range(4):  # four turns, each submitted before any job runs
        history = [
            *history,
            HumanMessage(f"question {turn}", id=f"q{turn}"),
            AIMessage(f"answer {turn}", id=f"r{turn}"),
        ]
        background.submit_indexing(config, "s1", history)
    executor.run_newest_first()
    stored = store.load("s1")
    assert stored is not None and len(stored) == len(history)
    assert [e.message_id for e in stored] == [m.id for m in history]


@pytest.mark.parametrize("use_async", [False, True])
async def test_the_module_index_node_takes_the_selection_nodes_config(tmp_path, use_async):
    """Pattern 2 of the spec: ``create_librarian_node(config)`` before the agent and the
    module's ``index_messages`` after it. The index node uses the same config: the LLM
    indexer is called and the store written (it ran with offline defaults before)."""
    from fakes import ScriptedChatModel, first_sentence
    from langgraph_librarian import FileIndexStore

    indexer = ScriptedChatModel(script=first_sentence)
    store = FileIndexStore(tmp_path)
    config = LibrarianConfig(
        indexer_model=indexer,
        selector_model=ScriptedChatModel(script="IDs: [0]"),
        store=store,
        always_include_recent_turns=1,
    )
    reply = {"messages": [AIMessage("ok")]}
    graph = pattern_two(LibrarianState, config, lambda state: reply, MemorySaver())
    cfg = {"configurable": {"thread_id": "u1"}}
    filler = " We also discussed chairs, tables, catering and the bus schedule at length." * 5
    turns = [
        {"messages": [HumanMessage("The budget is 12,000 dollars." + filler), AIMessage("Ok.")]},
        {"messages": [HumanMessage("What is the budget?")]},
    ]
    for turn in turns:
        result = await graph.ainvoke(turn, cfg) if use_async else graph.invoke(turn, cfg)
    assert indexer.calls  # the LLM indexer summarized the long message
    stored = store.load("u1")
    assert stored is not None and stored[0].status == "summarized"
    assert result["librarian_metadata"]["selection_skipped"] is False


def test_a_bound_index_node_leaves_nothing_for_another_app(tmp_path):
    """App A binds both nodes; app B (same process, same thread and message ids) uses
    the module nodes: B's index must not land in A's store."""
    from langgraph_librarian import (
        FileIndexStore,
        create_index_node,
        create_librarian_node,
        index_messages,
        select_and_hydrate,
    )

    store_a = FileIndexStore(tmp_path)
    config_a = LibrarianConfig(store=store_a)
    select_a, index_a = create_librarian_node(config_a), create_index_node(config_a)
    run = {"configurable": {"thread_id": "1"}}
    a = {"messages": [HumanMessage("my IBAN is DE89 3704", id="u1")]}
    select_a(a, run)
    a["messages"].append(AIMessage("noted", id="a1"))
    index_a(a, run)
    b = {"messages": [HumanMessage("hello from app B", id="u1")]}
    select_and_hydrate(b, run)
    b["messages"].append(AIMessage("hi", id="a1"))
    out = index_messages(b, run)
    assert [e["summary"] for e in out["index"]] == ["hello from app B", "hi"]
    stored = store_a.load("1")
    assert stored is not None and [e.summary for e in stored] == ["my IBAN is DE89 3704", "noted"]


def test_a_dict_override_applies_on_top_of_the_selection_nodes_config(tmp_path):
    from langgraph_librarian import FileIndexStore, create_librarian_node, index_messages

    store = FileIndexStore(tmp_path)
    select = create_librarian_node(LibrarianConfig(store=store))
    run = {"configurable": {"thread_id": "1", "librarian": {"always_include_recent_turns": 3}}}
    state = {"messages": [HumanMessage("The budget is 12,000.", id="h1")]}
    select(state, run)
    state["messages"].append(AIMessage("Noted.", id="a1"))
    out = index_messages(state, run)
    assert "index" not in out  # the index went to the bound store, not to graph state
    assert store.load("1") is not None and len(store.load("1")) == 2


def test_two_librarian_subgraphs_in_one_thread_keep_separate_indexes_in_a_shared_store():
    """A supervisor's two sub-agents share the thread id and the store: each keeps its own
    index (keyed by thread and subgraph), so neither re-summarizes the other's history."""
    from langgraph.graph import MessagesState
    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian import LangGraphIndexStore

    def experiment(shared: bool) -> tuple[list[int], InMemoryStore]:
        first = InMemoryStore()
        stores = (first, first if shared else InMemoryStore())
        indexers, agents = [], []
        for tag, store in zip(("researcher", "writer"), stores, strict=True):
            indexer = ScriptedChatModel(script=first_sentence)
            config = LibrarianConfig(indexer_model=indexer, short_message_threshold=10)
            reply = AIMessage(f"{tag} handled it, with a few words to summarize later on.")
            agents.append(
                create_librarian_graph(
                    lambda state, r=reply: {"messages": [r]}, config, checkpointer=True, store=store
                )
            )
            indexers.append(indexer)

        def call(agent: Any, prefix: str) -> Any:
            def node(state: MessagesState) -> dict[str, Any]:
                text = f"{prefix}: {state['messages'][-1].content}"
                agent.invoke({"messages": [HumanMessage(text)]})
                return {}

            return node

        parent = StateGraph(MessagesState)
        parent.add_node("research", call(agents[0], "Research"))
        parent.add_node("write", call(agents[1], "Write about"))
        parent.add_edge(START, "research")
        parent.add_edge("research", "write")
        parent.add_edge("write", END)
        graph = parent.compile(checkpointer=MemorySaver())
        thread = {"configurable": {"thread_id": "t"}}
        for i in range(4):
            topic = f"Topic {i}: the launch is on March {i + 3} at the Berlin office."
            graph.invoke({"messages": [HumanMessage(topic)]}, thread)
        return [len(indexer.calls) for indexer in indexers], first

    separate, _ = experiment(shared=False)
    shared, store = experiment(shared=True)
    assert shared == separate
    index = LangGraphIndexStore(store)
    assert index.load("t|research") and index.load("t|write")
    assert index.load("t") is None


def test_indexing_new_count_counts_a_reply_that_repeats_earlier_text():
    """Spec: ``indexing_new_count`` is the number of newly indexed messages; a repeated
    "Noted." is indexed (by a copy of the earlier entry) and counted."""
    graph = create_librarian_graph(
        lambda state: {"messages": [AIMessage("Noted.")]},
        LibrarianConfig(),
        checkpointer=MemorySaver(),
    )
    thread = {"configurable": {"thread_id": "count"}}
    seen = []
    for i in range(3):
        out = graph.invoke(
            {"messages": [HumanMessage(f"Fact {i}: the code is {i}{i}{i}.")]}, thread
        )
        meta = out["librarian_metadata"]
        seen.append((meta["indexing_new_count"], meta["indexing_reused_count"]))
        assert meta["indexing_total_count"] == 2 * (i + 1)
    assert seen == [(2, 0), (2, 1), (2, 1)]


def test_a_turn_resumed_in_another_process_indexes_with_the_selection_nodes_config(tmp_path):
    """The hand-built graph (``create_librarian_node(config)`` + the module's
    ``index_messages``), interrupted in the agent and resumed by another worker: the index
    node there still uses the selection node's config (its indexer model), not defaults."""
    from langgraph.types import Command, interrupt

    from langgraph_librarian import LibrarianState
    from langgraph_librarian import nodes as librarian_nodes

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        if "approve" in str(state["messages"][-1].content):
            interrupt("approve?")
        reply = "Approved: the Berlin team handles the launch logistics next week, as planned."
        return {"messages": [AIMessage(reply)]}

    def build(connection: sqlite3.Connection) -> tuple[Any, ScriptedChatModel]:
        # Six words and a full stop (six words alone may end on "the": a cut summary).
        indexer = ScriptedChatModel(script=lambda m: " ".join(first_sentence(m).split()[:6]) + ".")
        config = LibrarianConfig(indexer_model=indexer, short_message_threshold=10)
        return pattern_two(LibrarianState, config, agent, SqliteSaver(connection)), indexer

    path = tmp_path / "threads.sqlite"
    thread = {"configurable": {"thread_id": "resume"}}
    first, _ = build(sqlite3.connect(path, check_same_thread=False))
    opening = "Our product launch is on March 3rd in Berlin, with the whole team present there."
    first.invoke({"messages": [HumanMessage(opening)]}, thread)
    request = "Please approve the plan for the launch logistics in Berlin, for next week."
    first.invoke({"messages": [HumanMessage(request)]}, thread)
    assert first.get_state(thread).next == ("agent",)

    # What another process has: neither this turn's hand-off nor the first graph's config.
    librarian_nodes._BOUND_THIS_TURN.drop(lambda key: True)
    with librarian_nodes._BOUND_NODES_LOCK:
        librarian_nodes._BOUND_NODES.clear()
    second, indexer = build(sqlite3.connect(path, check_same_thread=False))
    out = second.invoke(Command(resume=True), thread)
    assert indexer.calls  # the resumed turn's question (the reply repeats an indexed one)
    assert [entry["status"] for entry in out["index"]] == ["summarized"] * 4


def test_functional_api_selection_and_a_task_indexing_share_the_store_key():
    """A functional API ``@task`` runs under its entrypoint's namespace with the
    entrypoint's checkpoint: not a subgraph, so the index it writes is the one the
    entrypoint's selection reads (the key was '<thread>|<entrypoint>' for the task)."""
    from langgraph.config import get_config
    from langgraph.func import entrypoint, task
    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian import LangGraphIndexStore, create_index_node, create_librarian_node

    store = InMemoryStore()
    config = LibrarianConfig(store=store, short_message_threshold=5)
    select, index = create_librarian_node(config), create_index_node(config)

    @task
    def index_task(messages: list[Any]) -> Any:
        return index.invoke({"messages": messages}, get_config())

    @entrypoint(checkpointer=MemorySaver())
    def chat(messages: list[Any], *, previous: Any = None) -> Any:
        history = (previous or []) + messages
        selected = select.invoke({"messages": history}, get_config())
        history = [*history, AIMessage(f"Noted ({len(history)}).", id=f"a{len(history)}")]
        index_task(history).result()
        return entrypoint.final(value=selected["librarian_metadata"], save=history)

    thread = {"configurable": {"thread_id": "fn"}}
    lines = ["Our launch is on March 3rd in Berlin.", "The catering budget is $5,000.", "Budget?"]
    for i, line in enumerate(lines):
        meta = chat.invoke([HumanMessage(line, id=f"h{i}")], thread)
    assert meta["index_size"] == 4
    assert LangGraphIndexStore(store).load("fn") is not None


def test_a_subgraph_reads_the_thread_key_written_before_subgraph_keys_existed():
    """Upgrading: an index stored under the plain thread id (releases before subgraph
    keys) is read by the subgraph until it writes its own key: no re-indexing."""
    from langgraph.graph import MessagesState
    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian import LangGraphIndexStore
    from langgraph_librarian.index import update_index

    store = InMemoryStore()
    history = [
        HumanMessage("Our launch is on March 3rd in Berlin, with the whole team.", id="h0"),
        AIMessage("Noted: March 3rd in Berlin.", id="a0"),
    ]
    LangGraphIndexStore(store).save("up", update_index(history, [], LibrarianConfig()).entries)
    agent = create_librarian_graph(
        lambda state: {"messages": [AIMessage("ok")]}, LibrarianConfig(), store=store
    )

    def research(state: MessagesState) -> dict[str, Any]:
        out = agent.invoke({"messages": [*history, HumanMessage("When is the launch?")]})
        meta = out["librarian_metadata"]
        counts = (meta["indexing_new_count"], meta["indexing_total_count"])
        return {"messages": [AIMessage(str(counts))]}

    parent = StateGraph(MessagesState)
    parent.add_node("research", research)
    parent.add_edge(START, "research")
    graph = parent.compile(checkpointer=MemorySaver())
    out = graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "up"}})
    # Only the question and the reply are new: the two entries stored before are reused.
    assert out["messages"][-1].content == "(2, 4)"
    assert LangGraphIndexStore(store).load("up|research") is not None


def test_a_resumed_turn_never_takes_a_config_it_cannot_tell_from_another(tmp_path, caplog):
    """Two tenants' configs that differ only in their store describe alike: a turn
    resumed without its hand-off is indexed with index_messages' own config (and a
    warning), never into the other tenant's store."""
    from langgraph.store.memory import InMemoryStore
    from langgraph.types import Command, interrupt

    from langgraph_librarian import (
        LangGraphIndexStore,
        LibrarianState,
    )
    from langgraph_librarian import nodes as librarian_nodes

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        interrupt("approve?")
        return {"messages": [AIMessage("Approved, the launch logistics are settled.")]}

    def build(store: InMemoryStore) -> Any:
        return pattern_two(
            LibrarianState,
            LibrarianConfig(store=store),
            agent,
            SqliteSaver(sqlite3.connect(path, check_same_thread=False)),
        )

    path = tmp_path / "threads.sqlite"
    store_a, store_b = InMemoryStore(), InMemoryStore()
    thread = {"configurable": {"thread_id": "tenant-a"}}
    first = build(store_a)
    first.invoke({"messages": [HumanMessage("Please approve the launch plan.")]}, thread)
    librarian_nodes._BOUND_THIS_TURN.drop(lambda key: True)
    with librarian_nodes._BOUND_NODES_LOCK:
        librarian_nodes._BOUND_NODES.clear()
    resumed_a, _ = build(store_a), build(store_b)  # a worker serving both tenants
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        resumed_a.invoke(Command(resume=True), thread)
    assert LangGraphIndexStore(store_b).load("tenant-a") is None
    assert "not the only one of its kind" in caplog.text

    # One tenant's graph built per request, each time with a fresh config over the same
    # store: the same work, so the tag is not ambiguous and the store gets the index.
    thread_c = {"configurable": {"thread_id": "tenant-c"}}
    build(store_a).invoke({"messages": [HumanMessage("Please approve the budget.")]}, thread_c)
    librarian_nodes._BOUND_THIS_TURN.drop(lambda key: True)
    with librarian_nodes._BOUND_NODES_LOCK:
        librarian_nodes._BOUND_NODES.clear()
    build(store_a)  # an earlier request of this process
    build(store_a).invoke(Command(resume=True), thread_c)
    assert LangGraphIndexStore(store_a).load("tenant-c")


@pytest.mark.parametrize(
    ("namespace", "levels", "expected"),
    [
        ("top:1", {"": "a"}, ""),
        # a map handed back by get_state(subgraphs=True) carries another branch's level
        ("top:1", {"": "a", "agent:9": "b"}, ""),
        ("research:1|a:2", {"": "a", "research:1": "b"}, "research"),
        ("research|a:2", {"": "a", "research": "b"}, "research"),  # checkpointer=True
        (
            "team:1|research:2|a:3",
            {"": "a", "team:1": "b", "team:1|research:2": "c"},
            "team|research",
        ),
        ("ep:1|t1:2", {"": "a", "ep:1": "a"}, ""),  # a functional API task
        # an entrypoint used as a subgraph: its task shares the entrypoint's checkpoint
        (
            "assistant:1|chat:2|t1:3",
            {"": "a", "assistant:1": "b", "assistant:1|chat:2": "b"},
            "assistant",
        ),
    ],
)
def test_graph_namespace_counts_only_ancestors_with_a_checkpoint_of_their_own(
    namespace, levels, expected
):
    from langgraph_librarian.config import graph_namespace

    config = {"configurable": {"checkpoint_ns": namespace, "checkpoint_map": levels}}
    assert graph_namespace(config) == expected


def test_background_indexing_of_a_subgraph_reads_the_thread_key_before_its_own_exists():
    from langgraph.graph import MessagesState
    from langgraph.store.memory import InMemoryStore

    from langgraph_librarian import LangGraphIndexStore, wait_for_background_indexing
    from langgraph_librarian.index import update_index

    store = InMemoryStore()
    history = [
        HumanMessage("Our launch is on March 3rd in Berlin, with the whole team there.", id="h0"),
        AIMessage("Noted: the launch is March 3rd in Berlin, with everyone.", id="a0"),
    ]
    LangGraphIndexStore(store).save("bgup", update_index(history, [], LibrarianConfig()).entries)
    indexer = ScriptedChatModel(script=lambda m: " ".join(first_sentence(m).split()[:6]))
    config = LibrarianConfig(
        indexer_model=indexer, store=store, background_indexing=True, short_message_threshold=10
    )
    agent = create_librarian_graph(lambda state: {"messages": [AIMessage("All right.")]}, config)

    def research(state: MessagesState) -> dict[str, Any]:
        question = HumanMessage("When exactly is the launch happening for the team?", id="q")
        agent.invoke({"messages": [*history, question]})
        return {}

    parent = StateGraph(MessagesState)
    parent.add_node("research", research)
    parent.add_edge(START, "research")
    parent.compile(checkpointer=MemorySaver()).invoke(
        {"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "bgup"}}
    )
    assert wait_for_background_indexing(30)
    assert len(LangGraphIndexStore(store).load("bgup|research") or []) == 4
    assert len(indexer.calls) == 2  # the question and the reply: h0 and a0 are reused


def test_a_malformed_index_in_the_input_is_rejected_and_the_thread_goes_on(checkpointer):
    graph = create_librarian_graph(
        lambda state: {"messages": [AIMessage("ok")]}, LibrarianConfig(), checkpointer=checkpointer
    )
    thread = {"configurable": {"thread_id": "bad-index"}}
    first = graph.invoke({"messages": [HumanMessage("My budget is 300 euros.")]}, thread)
    entry = first["index"][0]
    with pytest.raises(ValueError, match="invalid index entry"):
        graph.invoke({"messages": [HumanMessage("q")], "index": [dict(entry, id=-1)]}, thread)
    for wrong in (5, "entries", {"id": 0}):  # not a list at all: a clear refusal too
        with pytest.raises(ValueError, match="must be a list of index entries"):
            graph.invoke({"messages": [HumanMessage("q")], "index": wrong}, thread)
    # Nothing of the rejected input was stored: the next turn works on the old index.
    out = graph.invoke({"messages": [HumanMessage("What is my budget?")]}, thread)
    assert [e["id"] for e in out["index"]][:2] == [0, 1]
    assert all(e["id"] >= 0 for e in out["index"])


def test_curated_messages_reach_the_agent_the_output_and_the_checkpoint(checkpointer):
    seen: list[list[Any]] = []
    graph = create_librarian_graph(
        recording_agent(seen), LibrarianConfig(), checkpointer=checkpointer
    )
    cfg = {"configurable": {"thread_id": "curated"}}
    graph.invoke({"messages": [HumanMessage("Our launch is on March 3.")]}, cfg)
    out = graph.invoke({"messages": [HumanMessage("When is the launch?")]}, cfg)
    assert [m.content for m in out["curated_messages"]] == [m.content for m in seen[-1]]
    assert out["curated_messages"][-1].content == "When is the launch?"
    saved = graph.get_state(cfg).values
    assert [m.content for m in saved["curated_messages"]] == [m.content for m in seen[-1]]
    assert saved["selected_ids"] == out["selected_ids"]
    assert saved["librarian_metadata"]["curated_count"] == len(out["curated_messages"])


def _long_history() -> list[Any]:
    history: list[Any] = []
    for i in range(30):
        history += [
            HumanMessage(f"Fact {i}: shuttle {i} leaves at {i % 12 + 1} pm."),
            AIMessage("Noted."),
        ]
    history[10] = HumanMessage("The offsite budget is 12,000 dollars.")
    return history


def test_an_agent_resumed_after_an_interrupt_gets_the_same_context(checkpointer):
    from langgraph.types import Command, interrupt

    seen: list[list[str]] = []

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        context = state["curated_messages"]  # as docs/librarian.md's agent reads it
        seen.append([str(m.content) for m in context])
        approved = interrupt("send the answer?")
        return {"messages": [AIMessage(f"{len(context)} messages, approved={approved}")]}

    config = LibrarianConfig(always_include_recent_turns=1)
    quiet = create_librarian_graph(
        lambda s: {"messages": [AIMessage("Noted.")]}, config, checkpointer=checkpointer
    )
    cfg = {"configurable": {"thread_id": "hitl"}}
    quiet.invoke({"messages": _long_history()}, cfg)
    graph = create_librarian_graph(agent, config, checkpointer=checkpointer)
    first = graph.invoke({"messages": [HumanMessage("What is the offsite budget?")]}, cfg)
    assert "__interrupt__" in first
    out = graph.invoke(Command(resume=True), cfg)
    assert len(seen) == 2 and seen[1] == seen[0]  # the same context after the resume
    assert any("12,000 dollars" in text for text in seen[1])
    assert len(seen[1]) < len(out["messages"]) - 1
    assert out["messages"][-1].content == f"{len(seen[1])} messages, approved=True"


def test_an_agent_retried_after_an_error_gets_the_same_context(checkpointer):
    seen: list[list[str]] = []
    failures = [RuntimeError("the model provider is down")]

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        seen.append([str(m.content) for m in state["curated_messages"]])
        if failures:
            raise failures.pop()
        return {"messages": [AIMessage("ok")]}

    config = LibrarianConfig(always_include_recent_turns=1)
    quiet = create_librarian_graph(
        lambda s: {"messages": [AIMessage("Noted.")]}, config, checkpointer=checkpointer
    )
    cfg = {"configurable": {"thread_id": "retry"}}
    quiet.invoke({"messages": _long_history()}, cfg)
    graph = create_librarian_graph(agent, config, checkpointer=checkpointer)
    with pytest.raises(RuntimeError, match="provider is down"):
        graph.invoke({"messages": [HumanMessage("What is the offsite budget?")]}, cfg)
    out = graph.invoke(None, cfg)  # LangGraph's retry: the failed node runs again
    assert len(seen) == 2 and seen[1] == seen[0]
    assert any("12,000 dollars" in text for text in seen[1])
    assert len(seen[1]) < len(out["messages"]) - 1
