"""The incremental reconcile path gives exactly what reconciling from scratch gives."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.view import clear_views
from langgraph_librarian.index import reconcile_index, update_index

WORDS = ["budget", "venue", "Lisbon", "flight", "hotel", "12,000", "changed", "menu"]
OPERATIONS = [
    "turn",
    "turn",
    "turn",
    "index",
    "delete",
    "edit",
    "strip_ids",
    "dup_id",
    "resend_first",
    "drop",
    "rewind",
    "repeat",
    "repeat",
]


def from_scratch(messages, entries):
    clear_views()
    return reconcile_index(messages, entries)


def same(a, b) -> None:
    assert a.entries == b.entries
    assert a.keys == b.keys and a.hashes == b.hashes
    assert (a.dropped, a.reused) == (b.dropped, b.reused)
    assert a.missing == b.missing
    assert a.tokens == b.tokens == sum(e.original_tokens for e in a.complete())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_incremental_equals_full(data):
    clear_views()
    config = LibrarianConfig(embeddings=None)
    messages: list[BaseMessage] = []
    entries = []
    history = []
    operations = data.draw(st.lists(st.sampled_from(OPERATIONS), min_size=3, max_size=14))
    for counter, op in enumerate(operations, start=1):
        history.append((messages, entries))
        text = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12)))
        if op == "turn":
            messages = [*messages, HumanMessage(f"q{counter} {text}", id=f"h{counter}")]
            if data.draw(st.booleans()):
                call = {"name": "t", "args": {"n": counter}, "id": f"c{counter}"}
                messages += [
                    AIMessage("", tool_calls=[call], id=f"ai{counter}"),
                    ToolMessage(f"r {text}", tool_call_id=f"c{counter}", id=f"tm{counter}"),
                ]
            messages = [*messages, AIMessage(f"a{counter} {text}", id=f"a{counter}")]
        elif op == "index":
            entries = update_index(messages, entries, config).entries
        elif op == "delete" and messages:
            messages = [m for i, m in enumerate(messages) if i != counter % len(messages)]
        elif op == "edit" and messages:
            i = counter % len(messages)
            edited = messages[i].model_copy(update={"content": f"EDITED {text}"})
            messages = [*messages[:i], edited, *messages[i + 1 :]]
        elif op == "strip_ids":
            messages = [m.model_copy(update={"id": None}) for m in messages]
        elif op == "dup_id" and messages:
            messages = [*messages, HumanMessage(text, id=messages[0].id)]
        elif op == "resend_first" and messages:
            messages = [*messages, messages[0]]  # same id, same content
        elif op == "repeat":
            # A new message whose content was already summarized (a repeated "Noted."):
            # indexed by reusing that summary, then stored under its own id.
            messages = [*messages, AIMessage("Noted, thanks.", id=f"r{counter}")]
        elif op == "drop" and entries:
            entries = entries[: len(entries) // 2]
        elif op == "rewind":
            # Another caller with an older state of the same conversation leaves its
            # snapshot behind; the current state must not be misread through it.
            old_messages, old_entries = history[counter % len(history)]
            if old_messages:
                reconcile_index(old_messages, old_entries)
        incremental = reconcile_index(messages, entries)
        same(incremental, from_scratch(messages, entries))
        # and the next call (the snapshot now set) agrees too
        same(reconcile_index(messages, entries), from_scratch(messages, entries))
        reconcile_index(messages, entries)  # leave a snapshot for the next operation


def test_long_growth_shares_the_donors_and_equals_full():
    """Hundreds of turns, past the point where a snapshot's later donors are merged into
    its shared ones: each turn's result equals a reconciliation from scratch, and a turn
    that adds a few entries shares the earlier donors instead of copying them."""
    from langgraph_librarian._engine.view import view_of
    from langgraph_librarian.index.reconcile import _LAYER, _SNAPSHOT

    clear_views()
    config = LibrarianConfig(embeddings=None)
    messages: list[BaseMessage] = []
    entries: list = []
    shared = merged = 0
    for turn in range(3 * _LAYER):
        messages = [*messages, HumanMessage(f"question {turn} about the {WORDS[turn % 8]}")]
        if turn % 7 == 0:  # repeated content, no id: aligned by a donor
            messages = [*messages, AIMessage("Noted, thanks.")]
        else:
            messages = [*messages, AIMessage(f"answer {turn}", id=f"a{turn}")]
        before = view_of(messages)[0].cache.get(_SNAPSHOT)
        entries = update_index(messages, entries, config).entries
        after = view_of(messages)[0].cache[_SNAPSHOT]
        if before is not None and after is not before:
            shared += after.base is before.base
            merged += after.base is not before.base
        if turn % 300 == 0 or turn == 3 * _LAYER - 1:  # (from_scratch clears the views)
            incremental = reconcile_index(messages, entries)
            views_kept = view_of(messages)[0]
            same(incremental, from_scratch(messages, entries))
            # from_scratch cleared the views: the kept view's snapshot is not reused
            assert views_kept.cache.get(_SNAPSHOT) is not None
    assert shared > merged > 0, (shared, merged)


def test_the_public_result_holds_only_the_messages_given(monkeypatch):
    """The turn's reconciliation shares the history view's key list; another thread that
    extends the view before the public copy is made must not leak its keys into it."""
    import threading

    from langgraph_librarian._engine.view import view_of
    from langgraph_librarian.index import reconcile as module

    clear_views()
    short = [HumanMessage(f"q{i}", id=f"m{i}") for i in range(10)]
    longer = [*short, AIMessage("later", id="x1"), HumanMessage("again", id="x2")]
    shared = module.reconciled

    def then_another_thread_appends(messages, entries):
        rec = shared(messages, entries)
        worker = threading.Thread(target=view_of, args=(longer,))
        worker.start()
        worker.join()
        return rec

    monkeypatch.setattr(module, "reconciled", then_another_thread_appends)
    rec = reconcile_index(short, [])
    assert len(rec.keys) == len(rec.hashes) == len(rec.entries) == len(short)
