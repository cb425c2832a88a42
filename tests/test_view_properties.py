"""The incremental history view equals a fresh rebuild, whatever happens to the history.

Random sequences of what a thread goes through (turns with tool calls, ``RemoveMessage``,
``REMOVE_ALL_MESSAGES``, edits, re-sent histories, a checkpointer's fresh copies,
hand-made lists without ids) are applied through LangGraph's ``add_messages``; after
every step the view the process extended turn by turn equals one built from scratch
(and the library's plain whole-history functions), and ``select_and_hydrate`` gives
exactly what it gives with every cache empty.
"""

from __future__ import annotations

import pickle
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from langgraph_librarian import LibrarianConfig, index_messages, select_and_hydrate
from langgraph_librarian._engine import state_cache as _state_cache
from langgraph_librarian._engine import view as _view
from langgraph_librarian._engine.messages import content_hash, human_positions, tool_groups
from langgraph_librarian._engine.view import HistoryView, _Columns, view_of

WORDS = ["budget", "venue", "Lisbon", "flight", "hotel", "12,000", "moved", "menu", "Farah"]
OPERATIONS = [
    "human",
    "human",
    "ai",
    "tools",
    "tools",
    "orphan",
    "remove",
    "remove_all",
    "edit",
    "resend_new",
    "resend_same",
    "deserialize",
    "strip_ids",
    "index",
    "index",
]


def fresh_view(messages: list[BaseMessage]) -> HistoryView:
    view = HistoryView()
    view._append(messages, _Columns(messages))
    return view


def assert_same_view(view: HistoryView, n: int, messages: list[BaseMessage]) -> None:
    fresh = fresh_view(messages)
    assert n == len(messages) == len(fresh)
    assert view.types[:n] == fresh.types
    assert view.hashes[:n] == fresh.hashes == [content_hash(m) for m in messages]
    assert view.keys[:n] == fresh.keys
    assert view.prefixes[:n] == fresh.prefixes  # conversation_key reads these
    assert view.human_positions(n) == fresh.humans == human_positions(messages)
    assert view.system_positions(n) == fresh.systems
    assert view.orphan_positions(n) == fresh.orphans
    assert view.owner[:n] == fresh.owner
    groups = tool_groups(messages)
    for p in range(n):
        assert view.exchange(p, n) == fresh.exchange(p, n) == groups.get(p)
    assert {k: p for k, p in view.first_at.items() if p < n} == fresh.first_at
    assert (view.duplicate_at if view.duplicate_at < n else -1) == fresh.duplicate_at
    if len(view) == n:  # what the next appended messages will be read with
        assert view._seen == fresh._seen and view._call_owner == fresh._call_owner
        assert view._exchanges == fresh._exchanges


def comparable(update: dict[str, Any]) -> dict[str, Any]:
    metadata = {k: v for k, v in update["librarian_metadata"].items() if "latency" not in k}
    curated = [(m.id, m.type, m.content) for m in update["curated_messages"]]
    return {"curated": curated, "selected": update["selected_ids"], "metadata": metadata}


def cold_select(state: dict[str, Any], run_config: dict[str, Any]) -> dict[str, Any]:
    """``select_and_hydrate`` as the first call of a new process (caches put back after)."""
    views, parsed = OrderedDict(_view._VIEWS), OrderedDict(_state_cache._CACHE)
    _view._VIEWS.clear()
    _state_cache._CACHE.clear()
    try:
        return select_and_hydrate(state, run_config)
    finally:
        _view._VIEWS.clear()
        _view._VIEWS.update(views)
        _state_cache._CACHE.clear()
        _state_cache._CACHE.update(parsed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_incremental_view_equals_a_fresh_rebuild(data):
    # The parsed-index cache skips small indexes; here every index goes through it.
    smallest, _state_cache._MIN_CACHED = _state_cache._MIN_CACHED, 1
    try:
        _run_thread(data)
    finally:
        _state_cache._MIN_CACHED = smallest


@pytest.mark.embeddings
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_with_embeddings_too(data):
    """The same with the packaged embedding model: passage vectors grow with the view."""
    _run_thread(data, embeddings="auto")


def _run_thread(data: st.DataObject, embeddings: str | None = None) -> None:
    config = LibrarianConfig(
        embeddings=embeddings, always_include_recent_turns=1, context_token_budget=120
    )
    run_config = {"configurable": {"librarian": config, "thread_id": "view-test"}}
    messages: list[BaseMessage] = add_messages([], [SystemMessage("Be brief.", id="sys")])
    index: list[dict[str, Any]] = []
    operations = data.draw(st.lists(st.sampled_from(OPERATIONS), min_size=4, max_size=16))
    for step, op in enumerate(operations):
        text = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=10)))
        update: list[BaseMessage] = []
        if op == "human":
            update = [HumanMessage(f"Q{step}: {text}?", id=f"h{step}")]
        elif op == "ai":
            update = [AIMessage(f"A{step}: {text}.", id=f"a{step}")]
        elif op == "tools":
            # Call ids sometimes repeat an earlier one (a later call takes its results).
            ids = [
                f"c{data.draw(st.integers(0, step))}" for _ in range(data.draw(st.integers(1, 2)))
            ]
            calls = [{"name": "lookup", "args": {"q": text}, "id": c} for c in dict.fromkeys(ids)]
            update = [AIMessage("", tool_calls=calls, id=f"t{step}")]
            update += [
                ToolMessage(f"{c}: {text}", tool_call_id=c["id"], id=f"r{step}{i}")
                for i, c in enumerate(calls)
            ]
        elif op == "orphan":
            update = [ToolMessage(text, tool_call_id=f"gone{step}", id=f"o{step}")]
        elif op == "remove" and len(messages) > 1:
            victim = messages[data.draw(st.integers(0, len(messages) - 1))]
            update = [RemoveMessage(id=str(victim.id))]
        elif op == "remove_all":
            update = [RemoveMessage(id=REMOVE_ALL_MESSAGES)]
        elif op == "edit" and messages:
            old = messages[data.draw(st.integers(0, len(messages) - 1))]
            update = [old.model_copy(update={"content": f"EDITED {text}"})]
        elif op == "resend_new":
            update = [
                RemoveMessage(id=REMOVE_ALL_MESSAGES),
                HumanMessage(f"new start {text}", id=f"n{step}"),
                AIMessage(f"new reply {text}", id=f"m{step}"),
            ]
        elif op == "resend_same":
            update = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *[m.model_copy() for m in messages]]
        if update:
            messages = add_messages(messages, update)
        if op == "deserialize":  # a checkpointer's fresh copy of the same history
            messages = pickle.loads(pickle.dumps(messages))
        elif op == "index" and messages:
            written = index_messages({"messages": messages, "index": index}, run_config)
            index = written.get("index", index)
        checked = messages
        if op == "strip_ids":  # a hand-made list: keys come from contents (the thread goes on)
            checked = [m.model_copy(update={"id": None}) for m in messages]

        assert_same_view(*view_of(checked), checked)
        # With a new question, selection over the incremental caches equals a cold one.
        asked = [*checked, HumanMessage(f"What about the {text}?", id=f"q{step}")]
        state = {"messages": asked, "index": index}
        warm = select_and_hydrate(state, run_config)
        assert_same_view(*view_of(asked), asked)
        cold = cold_select(state, run_config)
        assert comparable(warm) == comparable(cold)


def test_threads_sharing_a_history_each_read_a_consistent_view():
    """Threads extending, forking and reading one conversation's views concurrently."""
    import threading

    base = [HumanMessage(f"Q{i} {WORDS[i % len(WORDS)]}?", id=f"h{i}") for i in range(300)]
    config = LibrarianConfig(embeddings=None, always_include_recent_turns=1)
    run_config = {"configurable": {"librarian": config}}
    index = index_messages({"messages": base}, run_config)["index"]
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        try:
            messages = list(base)
            for turn in range(30):
                if turn % 7 == seed % 7:  # an edited last message: a fork
                    messages = [*messages[:-1], HumanMessage(f"edit {seed} {turn}", id="x")]
                else:
                    messages = [*messages, AIMessage(f"a {seed} {turn}", id=f"a{seed}-{turn}")]
                assert_same_view(*view_of(messages), messages)
                asked = [*messages, HumanMessage("Q7 hotel?", id=f"q{seed}-{turn}")]
                update = select_and_hydrate({"messages": asked, "index": index}, run_config)
                assert not update["librarian_metadata"]["selection_skipped"]
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]


def test_selecting_while_another_thread_warms_a_longer_history() -> None:
    """A reader never sees half of an appended passage, and the shared index stays usable.

    Background indexing warms (extends) the view of a history while a turn selects over a
    prefix of it: the postings' arrays and the passage bound are read from one snapshot.
    """
    from helpers import run_together
    from langgraph_librarian.index import update_index
    from langgraph_librarian.select import LocalSelector

    config = LibrarianConfig(embeddings=None)
    history = [
        HumanMessage(
            f"Note {i}: the budget for kitchen item {i} is {i * 3} dollars, agreed with "
            f"Alice on day {i % 28}.",
            id=f"race-{i}",
        )
        for i in range(1200)
    ]
    entries = update_index(history, [], config).entries
    selector = LocalSelector(embeddings=None)
    query = "what is the kitchen budget for item 12 agreed with Alice?"
    errors: list[BaseException] = []

    def reader() -> None:
        for k in range(100, 1190, 5):
            try:
                selector.select(query, history[: k + 1], entries[:k])
            except BaseException as exc:
                errors.append(exc)
                return

    def writer() -> None:
        for k in range(100, 1190, 5):
            selector.warm(history[: k + 8], entries[: k + 8])

    run_together(reader, writer)  # switching threads as often as possible
    assert not errors, errors[0]
    assert selector.select(query, history, entries[:-1]).ids  # and still usable afterwards


def test_conversations_without_a_human_message_have_their_own_keys():
    from langchain_core.messages import AIMessage

    from langgraph_librarian._engine.view import conversation_key, turn_key

    a = [AIMessage(f"step {i} of A", id=f"m{i}") for i in range(4)]
    b = [AIMessage(f"step {i} of B", id=f"m{i}") for i in range(4)]
    assert conversation_key(a) != conversation_key(b)
    assert turn_key("t", a) != turn_key("t", b)  # with a thread id too


def test_a_fork_copies_the_cache_while_another_thread_adds_to_it():
    """The latest view's cache gains entries under its derived_lock while a fork of the
    history copies it under the view's lock: the copy must not iterate the live dict."""
    from langchain_core.messages import AIMessage, HumanMessage

    from langgraph_librarian._engine.view import view_of

    history = [HumanMessage("first question", id="a"), AIMessage("first answer", id="b")]
    latest, _ = view_of(history)

    class Inserting:
        def valid_below(self, p: int) -> bool:
            latest.cache["added meanwhile"] = object()  # what another thread may do
            return True

    latest.cache["entry"] = Inserting()
    edited = [history[0], AIMessage("an edited answer", id="b2")]
    forked, n = view_of(edited)
    assert n == 2 and forked is not latest and "entry" in forked.cache
