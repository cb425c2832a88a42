"""Process-wide caches are bounded by what they hold, not only by how many threads.

A long-running server sees thousands of threads; a cache counted in threads alone can
hold gigabytes when the threads are long (soak review: 32 history views of 10,000
messages, 16 parsed indexes of 10,000 entries).
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian._engine import state_cache, view
from langgraph_librarian.entry import IndexEntry


def _history(thread: int, n: int) -> list:
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(
            f"thread {thread} message {i}", id=f"t{thread}-{i}"
        )
        for i in range(n)
    ]


def test_history_views_hold_a_bounded_number_of_messages(monkeypatch):
    view.clear_views()
    monkeypatch.setattr(view, "_MAX_MESSAGES", 100)
    histories = [_history(t, 40) for t in range(6)]
    for messages in histories:
        view.view_of(messages)
        held = sum(len(v.messages) for kept in view._VIEWS.values() for v in kept)
        assert held <= 100
    last, n = view.view_of(histories[-1])
    assert n == 40 and len(last.messages) == 40  # the view just used is kept
    big = _history(99, 150)  # larger than the bound alone: kept while in use
    assert view.view_of(big)[1] == 150
    view.clear_views()


def test_parsed_index_caches_hold_a_bounded_number_of_entries(monkeypatch):
    monkeypatch.setattr(state_cache, "_MAX_ENTRIES", 100)
    for t in range(6):
        entries = [
            IndexEntry(
                id=i,
                role="human",
                summary=f"thread {t} note {i}",
                message_id=f"t{t}-{i}",
                content_hash=f"{t}-{i}",
            )
            for i in range(40)
        ]
        dicts = state_cache.entries_to_state(entries)
        assert [e.message_id for e in state_cache.state_entries({"index": dicts})] == [
            e.message_id for e in entries
        ]
        for cache, size in ((state_cache._CACHE, 2), (state_cache._WRITTEN, 1)):
            assert sum(len(value[size]) for value in cache.values()) <= 100


def test_passage_vectors_are_cached_under_a_digest_of_their_texts():
    from langgraph_librarian.select import lexical

    key = lexical._doc_key("model", ("a long passage " * 40, "another " * 30))
    assert isinstance(key, bytes) and len(key) == 16
    assert key != lexical._doc_key("other model", ("a long passage " * 40, "another " * 30))
    assert key != lexical._doc_key("model", ("a long passage " * 40 + "another " * 30,))
