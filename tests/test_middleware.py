"""LibrarianMiddleware (create_agent) and create_librarian_hook (pre_model_hook)."""

from __future__ import annotations

import logging
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

from fakes import ScriptedChatModel, ToolCallingScriptedModel
from helpers import conversation
from langgraph_librarian import (
    BaseIndexStore,
    FileIndexStore,
    IndexStoreError,
    LangGraphIndexStore,
    LibrarianConfig,
    create_index_node,
    merge_index,
)
from langgraph_librarian.middleware import LibrarianMiddleware, create_librarian_hook


@tool
def lookup_invoice(number: str) -> str:
    """Look up an invoice by number."""
    return f"invoice {number}: 1,200 EUR"


def seen_by_model(model: ToolCallingScriptedModel | ScriptedChatModel) -> list[list[Any]]:
    return [call for call in model.calls]


def answer_model() -> ToolCallingScriptedModel:
    def decide(messages: list[Any]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage) and "invoice" in str(last.content):
            return AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "lookup_invoice",
                        "id": "t1",
                        "type": "tool_call",
                        "args": {"number": "42"},
                    }
                ],
            )
        return AIMessage(f"answer after {len(messages)} messages")

    return ToolCallingScriptedModel(script=decide)


def test_context_is_ephemeral_and_index_persists():
    model = answer_model()
    agent = create_agent(
        model,
        tools=[lookup_invoice],
        middleware=[LibrarianMiddleware()],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "mw-1"}}
    agent.invoke({"messages": conversation(12)}, cfg)
    result = agent.invoke({"messages": [HumanMessage("What is the offsite budget now?")]}, cfg)
    full = len(result["messages"])
    saw = model.calls[-1]
    assert len(saw) < full - 5  # the model saw a curated subset
    assert {m.id for m in saw if m.id} >= {"h2", "h8"}
    # the checkpoint keeps the real conversation: no curated copies were appended
    assert [m.id for m in result["messages"][:24]] == [m.id for m in conversation(12)]
    assert len(result["index"]) == full
    meta = result["librarian_metadata"]
    assert meta["selection_skipped"] is False and meta["indexing_total_count"] == full


def test_selection_runs_once_per_turn_and_rehydrates_tool_results():
    selector = ScriptedChatModel(script="IDs: [4, 16]")
    config = LibrarianConfig(selector_model=selector, indexer_model="local")
    model = answer_model()
    agent = create_agent(
        model,
        tools=[lookup_invoice],
        middleware=[LibrarianMiddleware(config)],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "mw-2"}}
    agent.invoke({"messages": conversation(10)}, cfg)
    before = len(selector.calls)
    agent.invoke({"messages": [HumanMessage("Check invoice 42 against the budget")]}, cfg)
    assert len(selector.calls) == before + 1  # two model calls in the turn, one selection
    second_call = model.calls[-1]
    assert any(isinstance(m, ToolMessage) and m.tool_call_id == "t1" for m in second_call)
    assert {m.id for m in second_call} >= {"h2", "h8"}


def test_later_model_calls_of_a_turn_keep_the_whole_selection():
    """A tool loop's second model call sees what the first saw (the budget-filling
    reserve included), plus the tool exchange: the cached selection keeps every list."""
    topics = ["budget", "venue", "catering", "music", "transport", "speakers"]
    history: list[AnyMessage] = []
    for i in range(60):
        topic = topics[i % len(topics)]
        history.append(
            HumanMessage(
                f"Note {i} about the offsite {topic}: option {i} costs {100 + i} euros, "
                f"the {topic} contact is person{i}. " + "Some filler detail. " * 8,
                id=f"h{i}",
            )
        )
        history.append(AIMessage(f"Recorded the {topic} option {i}.", id=f"a{i}"))
    model = answer_model()
    agent = create_agent(
        model,
        tools=[lookup_invoice],
        middleware=[LibrarianMiddleware(LibrarianConfig(context_token_budget=3000))],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "mw-reserve"}}
    agent.invoke({"messages": history}, cfg)
    calls = len(model.calls)
    question = "Check invoice 42 against the venue and catering options and their costs"
    agent.invoke({"messages": [HumanMessage(question)]}, cfg)
    first, second = model.calls[calls], model.calls[calls + 1]
    first_ids = {m.id for m in first if m.id}
    assert len(first_ids) > 30  # the budget holds far more than the primary selection
    assert first_ids <= {m.id for m in second if m.id}
    assert any(isinstance(m, ToolMessage) and m.tool_call_id == "t1" for m in second)


def test_threads_do_not_share_selections():
    selector = ScriptedChatModel(script="IDs: [0]")
    config = LibrarianConfig(selector_model=selector, indexer_model="local")
    agent = create_agent(
        answer_model(),
        tools=[],
        middleware=[LibrarianMiddleware(config)],
        checkpointer=MemorySaver(),
    )
    for thread in ("tenant-a", "tenant-b"):
        cfg = {"configurable": {"thread_id": thread}}
        agent.invoke({"messages": conversation(4)}, cfg)
        agent.invoke({"messages": [HumanMessage("same question", id="same-id")]}, cfg)
    assert len(selector.calls) == 2


def test_corrupt_store_raises_before_the_model_is_called(tmp_path):
    # A corrupt index cannot be indexed into after the reply either: failing open here
    # billed a model call whose reply was checkpointed and never returned, every turn.
    store = FileIndexStore(tmp_path)
    store.path_for("broken").write_text("{corrupt", encoding="utf-8")
    model = answer_model()
    agent = create_agent(
        model,
        tools=[],
        middleware=[LibrarianMiddleware(LibrarianConfig(store=store))],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "broken"}}
    history = conversation(4)
    with pytest.raises(IndexStoreError, match=r"FileIndexStore\(.*\)\.delete_thread\('broken'\)"):
        agent.invoke({"messages": history}, cfg)
    assert model.calls == []  # no billed call
    assert len(agent.get_state(cfg).values["messages"]) == len(history)  # no reply
    store.delete_thread("broken")  # the way out the error names
    result = agent.invoke({"messages": [HumanMessage("and now?")]}, cfg)
    assert result["messages"][-1].type == "ai"
    assert len(store.load("broken") or []) == len(result["messages"])


def test_corrupt_langgraph_store_index_raises_with_the_way_out():
    store = InMemoryStore()
    model = answer_model()
    agent = create_agent(
        model,
        tools=[],
        middleware=[LibrarianMiddleware(LibrarianConfig(store=store))],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("Budget is 12k")]}, cfg)
    calls = len(model.calls)
    for namespace in store.list_namespaces():
        for item in store.search(namespace):
            if item.key.endswith("#m"):  # the index's manifest
                store.put(namespace, item.key, {"format": 2, "count": 2, "chunks": "oops"})
    before = len(agent.get_state(cfg).values["messages"])
    way_out = r"LangGraphIndexStore\(store\)\.delete_thread\('t'\)"
    with pytest.raises(IndexStoreError, match=way_out):
        agent.invoke({"messages": [HumanMessage("important message")]}, cfg)
    assert len(model.calls) == calls  # the model was not called
    assert len(agent.get_state(cfg).values["messages"]) == before + 1  # the question only
    LangGraphIndexStore(store).delete_thread("t")  # the way out the error names
    result = agent.invoke({"messages": [HumanMessage("next turn")]}, cfg)
    assert result["messages"][-1].type == "ai"


async def test_async_middleware():
    model = answer_model()
    agent = create_agent(
        model,
        tools=[lookup_invoice],
        middleware=[LibrarianMiddleware()],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "mw-async"}}
    await agent.ainvoke({"messages": conversation(12)}, cfg)
    result = await agent.ainvoke({"messages": [HumanMessage("offsite budget now?")]}, cfg)
    history_before_reply = len(result["messages"]) - 1
    assert len(model.calls[-1]) < history_before_reply - 5  # a curated subset, not everything
    assert {m.id for m in model.calls[-1] if m.id} >= {"h2", "h8"}
    assert result["librarian_metadata"]["selection_skipped"] is False


class HookState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    llm_input_messages: list[AnyMessage]
    index: Annotated[list, merge_index]


def hook_graph(model: ScriptedChatModel, config: LibrarianConfig | None = None):
    def call_model(state: HookState) -> dict[str, Any]:
        return {"messages": [model.invoke(state.get("llm_input_messages") or state["messages"])]}

    builder = StateGraph(HookState)
    builder.add_node("recall", create_librarian_hook(config))
    builder.add_node("model", call_model)
    builder.add_node("indexer", create_index_node(config))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_edge("model", "indexer")
    builder.add_edge("indexer", END)
    return builder.compile(checkpointer=MemorySaver())


def test_pre_model_hook_writes_curated_input():
    model = ScriptedChatModel(script="ok")
    graph = hook_graph(model)
    cfg = {"configurable": {"thread_id": "hook"}}
    graph.invoke({"messages": conversation(12)}, cfg)
    state = graph.invoke({"messages": [HumanMessage("What is the offsite budget now?")]}, cfg)
    assert len(model.calls[-1]) < len(state["messages"]) - 5
    assert {m.id for m in state["llm_input_messages"]} >= {"h2", "h8"}


class _BrokenStore(BaseIndexStore):
    """A store whose reads fail with an error that is neither transient nor corruption."""

    def load(self, session_id: str) -> list[Any] | None:
        raise RuntimeError("the disk is on fire")

    def save(self, session_id: str, entries: list[Any]) -> None:
        raise RuntimeError("the disk is on fire")

    def delete(self, session_id: str) -> None:
        pass


def test_pre_model_hook_always_writes_even_when_failing():
    hook = create_librarian_hook(LibrarianConfig(store=_BrokenStore()))
    messages = conversation(3)
    out = hook({"messages": messages}, {"configurable": {"thread_id": "hook-fail"}})
    assert out == {"llm_input_messages": messages}  # never {}: no stale input next call


def test_pre_model_hook_raises_on_a_corrupt_index(tmp_path):
    # As the graph's select node and the middleware: the index step after the model
    # could not work either, so the model is not called for a reply nobody sees.
    store = FileIndexStore(tmp_path)
    store.path_for("hook-fail").write_text("not json", encoding="utf-8")
    hook = create_librarian_hook(LibrarianConfig(store=store))
    with pytest.raises(IndexStoreError, match="corrupt index file"):
        hook({"messages": conversation(3)}, {"configurable": {"thread_id": "hook-fail"}})


def test_without_a_thread_id_two_conversations_never_share_a_selection():
    """No checkpointer, no thread id, message ids numbered per conversation (m0, m1...):
    the second conversation must get its own selection and its own metadata."""

    def conversation_of(topic: str, word: str, at: int) -> list[AnyMessage]:
        history: list[AnyMessage] = []
        for i in range(20):
            history.append(HumanMessage(f"Note {i} on {topic}: detail {i} " * 6))
            history.append(AIMessage(f"Noted {i}."))
        history.insert(at, HumanMessage(f"The code word for {topic} is {word}."))
        history.append(HumanMessage(f"What was the code word for {topic}?"))
        for i, message in enumerate(history):
            message.id = f"m{i}"
        return history

    def agent() -> Any:
        config = LibrarianConfig(context_token_budget=600, embeddings=None)
        model = ScriptedChatModel(script="ok")
        return create_agent(model, tools=[], middleware=[LibrarianMiddleware(config)]), model

    first = conversation_of("design", "falcon", 10)
    second = conversation_of("security", "otter", 26)
    alone, _ = agent()
    expected = alone.invoke({"messages": second})["librarian_metadata"]
    shared, model = agent()
    shared.invoke({"messages": first})
    got = shared.invoke({"messages": second})["librarian_metadata"]
    assert got["query"] == "What was the code word for security?"
    assert got["selected_ids"] == expected["selected_ids"]
    assert "otter" in " ".join(str(m.content) for m in model.calls[-1])


_FACTS = [
    ("My dog is named Biscuit and he is a beagle who loves long walks in the park.", "Noted."),
    ("The product launch date is March 3rd at the Berlin office with the whole team.", "Noted."),
    ("I am allergic to peanuts and shellfish, keep that in mind for recipes.", "Noted."),
    ("The database password rotation happens every ninety days on Sunday night.", "Noted."),
    ("My favourite colour is teal, like the ocean near Lisbon in summer.", "Noted."),
]


def _shown(call: list[Any], needle: str) -> bool:
    return any(needle in str(m.content) for m in call if m.type != "human" or m.id != "q")


def test_an_edited_question_is_selected_again_not_served_from_the_cache():
    """A fork that edits the turn's question (same id, new text) gets a new selection."""
    model = ScriptedChatModel(script="ok")
    agent = create_agent(
        model,
        middleware=[LibrarianMiddleware(LibrarianConfig(always_include_recent_turns=1))],
        checkpointer=MemorySaver(),
    )
    thread = {"configurable": {"thread_id": "edit"}}
    for i, (fact, _) in enumerate(_FACTS):
        agent.invoke({"messages": [HumanMessage(fact, id=f"h{i}")]}, thread)
    agent.invoke({"messages": [HumanMessage("What is my dog's name?", id="q")]}, thread)
    assert _shown(model.calls[-1], "Biscuit")
    before_model = next(
        s
        for s in agent.get_state_history(thread)
        if s.next and s.values.get("messages") and s.values["messages"][-1].id == "q"
    )
    fork = agent.update_state(
        before_model.config, {"messages": [HumanMessage("When is the product launch?", id="q")]}
    )
    out = agent.invoke(None, fork)
    assert _shown(model.calls[-1], "March 3rd")
    assert out["librarian_metadata"]["query"] == "When is the product launch?"


def _fold_mid_turn(
    thread_id: str, selector: ScriptedChatModel | None = None
) -> tuple[list[list[Any]], int]:
    """The model calls of one turn whose tool loop (three invoice lookups) makes a
    summarization middleware fold the history between two of them, and how many
    selector calls that turn made."""
    from langchain.agents.middleware import SummarizationMiddleware

    calls = {"n": 0}

    def decide(messages: list[Any]) -> AIMessage:
        tools = 0
        for m in reversed(messages):
            if m.type == "human":
                break
            tools += m.type == "tool"
        if any(m.type == "human" and m.id == "q" for m in messages) and tools < 3:
            calls["n"] += 1
            call = {"name": "lookup_invoice", "args": {"number": str(calls["n"])}}
            return AIMessage("", tool_calls=[{**call, "id": f"c{calls['n']}"}])
        return AIMessage("final")

    model = ToolCallingScriptedModel(script=decide)
    summarizer = ScriptedChatModel(script="The product launch is March 3rd in Berlin.")
    agent = create_agent(
        model,
        tools=[lookup_invoice],
        middleware=[
            SummarizationMiddleware(summarizer, trigger=("messages", 12), keep=("messages", 4)),
            LibrarianMiddleware(
                LibrarianConfig(always_include_recent_turns=1, selector_model=selector)
            ),
        ],
        checkpointer=MemorySaver(),
    )
    thread = {"configurable": {"thread_id": thread_id}}
    for i, (fact, _) in enumerate(_FACTS):
        agent.invoke({"messages": [HumanMessage(fact, id=f"h{i}")]}, thread)
    first, asked = len(model.calls), len(selector.calls) if selector is not None else 0
    agent.invoke({"messages": [HumanMessage("Plan the product launch logistics", id="q")]}, thread)
    selections = len(selector.calls) - asked if selector is not None else 0
    return model.calls[first:], selections


def test_a_history_rewritten_mid_turn_is_selected_again():
    """Summarization between two model calls of one turn folds the selected message into
    a summary: later calls select over the new history (the summary), not the cached ids."""
    turn, _ = _fold_mid_turn("rewrite")
    assert len(turn) == 4
    assert all(_shown(call, "March 3rd") for call in turn), [
        [str(m.content)[:30] for m in call] for call in turn
    ]


def test_a_fold_mid_turn_costs_no_second_selector_call():
    """With a selector model, a summary folded between two model calls of a turn keeps the
    model's choice and completes it offline: one selector call a turn, not one per model
    call, and the summary that replaced the chosen message still reaches the agent."""
    selector = ScriptedChatModel(script="The launch message answers it.\nIDs: []")
    turn, selections = _fold_mid_turn("fold", selector)
    assert len(turn) == 4
    assert selections == 1
    assert all(_shown(call, "March 3rd") for call in turn)


def test_a_hook_whose_graph_keeps_no_index_says_so(caplog):
    """create_react_agent's AgentState has no index channel: the index node's update is
    dropped and every message passes through. The hook warns once; with the recipe
    (a state schema with an index field) it curates and stays quiet."""
    import warnings

    from langgraph.prebuilt.chat_agent_executor import AgentState

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in LangGraph 1.x
        from langgraph.prebuilt import create_react_agent

    class IndexedState(AgentState):
        index: Annotated[list, merge_index]

    texts = ["Our launch is March 3.", "A pasta recipe?", "When is the launch?", "Thanks!"]
    config = LibrarianConfig(always_include_recent_turns=1)
    for schema, warns in [(None, True), (IndexedState, False)]:
        caplog.clear()
        model = ToolCallingScriptedModel(script=lambda msgs: AIMessage(f"saw {len(msgs)}"))
        extra = {"state_schema": schema} if schema is not None else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agent = create_react_agent(
                model,
                tools=[],
                pre_model_hook=create_librarian_hook(config),
                post_model_hook=create_index_node(config),
                checkpointer=MemorySaver(),
                **extra,
            )
        thread = {"configurable": {"thread_id": f"react-{warns}"}}
        with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
            for text in texts:
                agent.invoke({"messages": [HumanMessage(text)]}, thread)
        said = [r for r in caplog.records if "has no 'index'" in r.getMessage()]
        assert len(said) == (1 if warns else 0)
        assert (len(model.calls[-1]) == 7) is warns  # everything, or a curated few


# -- what a turn leaves indexed ----------------------------------------------------------


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_turn_leaves_every_message_indexed(use_async: bool):
    import asyncio

    agent = create_agent(
        answer_model(),
        tools=[lookup_invoice],
        middleware=[LibrarianMiddleware()],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": f"mw-tool-index-{use_async}"}}
    turn = {"messages": [*conversation(6), HumanMessage("Check invoice 42 please")]}
    result = asyncio.run(agent.ainvoke(turn, cfg)) if use_async else agent.invoke(turn, cfg)
    kinds = [m.type for m in result["messages"][-4:]]
    assert kinds == ["human", "ai", "tool", "ai"]  # the tool exchange, then the reply
    assert [e["message_id"] for e in result["index"]] == [m.id for m in result["messages"]]
    assert result["librarian_metadata"]["indexing_total_count"] == len(result["messages"])


class _ReplyWithoutId(AgentMiddleware):  # type: ignore[type-arg]
    """An inner middleware answering itself, with a reply that has no message id."""

    def wrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
        return ModelResponse(result=[AIMessage("answered by the inner middleware")])


def test_a_reply_without_an_id_is_indexed_under_the_id_the_checkpoint_keeps():
    """A reply made by a middleware (no chat model run gave it an id) is indexed under
    the id ``add_messages`` gave it, and kept by the next turn."""
    agent = create_agent(
        answer_model(),
        middleware=[LibrarianMiddleware(), _ReplyWithoutId()],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "mw-no-id"}}
    result = agent.invoke({"messages": [HumanMessage("hello there")]}, cfg)
    reply = result["messages"][-1]
    assert reply.content == "answered by the inner middleware" and reply.id
    assert [e["message_id"] for e in result["index"]] == [m.id for m in result["messages"]]
    # the next turn keeps the reply's entry: only its own two messages are new
    result = agent.invoke({"messages": [HumanMessage("and again")]}, cfg)
    assert result["librarian_metadata"]["indexing_new_count"] == 2


def test_a_tool_turn_is_saved_whole_to_the_index_store(tmp_path):
    store = FileIndexStore(str(tmp_path / "index"))
    agent = create_agent(
        answer_model(),
        tools=[lookup_invoice],
        middleware=[LibrarianMiddleware(LibrarianConfig(store=store))],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "mw-store"}}
    result = agent.invoke({"messages": [HumanMessage("Check invoice 42 please")]}, cfg)
    saved = store.load("mw-store")
    assert saved is not None
    assert [e.message_id for e in saved] == [m.id for m in result["messages"]]


def test_a_passing_read_timeout_of_a_file_store_lets_the_turn_go_on(tmp_path, monkeypatch):
    # An NFS hiccup is no corruption: the turn fails open (the model gets every message)
    # and the next turn reads the index again.
    from pathlib import Path

    store = FileIndexStore(tmp_path)
    model = answer_model()
    agent = create_agent(
        model,
        tools=[],
        middleware=[LibrarianMiddleware(LibrarianConfig(store=store))],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "nfs"}}
    agent.invoke({"messages": conversation(3)}, cfg)
    real = Path.read_bytes
    failures = [TimeoutError(110, "Connection timed out")]

    def flaky(self: Path) -> bytes:
        if failures and self.suffix == ".json":
            raise failures.pop()
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", flaky)
    result = agent.invoke({"messages": [HumanMessage("and the budget?")]}, cfg)
    assert not failures and result["messages"][-1].type == "ai"
    assert "TimeoutError" in str(result["librarian_metadata"].get("store_error"))
    result = agent.invoke({"messages": [HumanMessage("thanks")]}, cfg)
    assert len(store.load("nfs") or []) == len(result["messages"])  # caught up


def test_the_way_out_of_a_corrupt_index_names_a_custom_namespace():
    store = InMemoryStore()
    index_store = LangGraphIndexStore(store, namespace=("app", "idx"))
    index_store.save("t", [])
    for item in store.search(("app", "idx")):
        if item.key.endswith("#m"):
            store.put(("app", "idx"), item.key, {"format": 2, "count": 2, "chunks": "oops"})
    with pytest.raises(IndexStoreError) as raised:
        index_store.load("t")
    way_out = "LangGraphIndexStore(store, namespace=('app', 'idx')).delete_thread('t')"
    assert way_out in str(raised.value)


class _CountingReads(InMemoryStore):
    """An in-memory store that counts the index reads (one manifest read per load)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def batch(self, ops):  # type: ignore[no-untyped-def]
        from langgraph.store.base import GetOp

        ops = list(ops)
        self.reads += sum(isinstance(op, GetOp) and op.key.endswith("#m") for op in ops)
        return super().batch(ops)

    async def abatch(self, ops):  # type: ignore[no-untyped-def]
        from langgraph.store.base import GetOp

        ops = list(ops)
        self.reads += sum(isinstance(op, GetOp) and op.key.endswith("#m") for op in ops)
        return await super().abatch(ops)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_tool_loop_reads_the_index_store_once_a_turn(mode: str) -> None:
    # Each model call of a turn selects (the cached selection re-hydrated with the tool
    # exchange); the index is read from the store by the first call only, and the
    # indexing step after the agent reuses that read.
    backing = _CountingReads()
    model = answer_model()
    agent = create_agent(
        model,
        tools=[lookup_invoice],
        middleware=[LibrarianMiddleware(LibrarianConfig(store=backing))],
        checkpointer=MemorySaver(),
    )
    cfg = {"configurable": {"thread_id": f"mw-reads-{mode}"}}

    async def turn(messages: list[Any]) -> dict[str, Any]:
        payload = {"messages": messages}
        return await agent.ainvoke(payload, cfg) if mode == "async" else agent.invoke(payload, cfg)

    await turn(conversation(10))
    reads, calls = backing.reads, len(model.calls)
    result = await turn([HumanMessage("Check invoice 42 against the budget")])
    assert len(model.calls) == calls + 2  # the tool call, then the answer
    assert backing.reads == reads + 1
    assert {m.id for m in model.calls[-1]} >= {"h2", "h8"}
    assert result["librarian_metadata"]["indexing_total_count"] == len(result["messages"])
