"""The shortcuts that keep a turn's cost to what is new give the same answers as the
long way: the head of a ranking, the best passage per message, prefix checks."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian._engine.view import clear_views, same_prefix, view_of
from langgraph_librarian.select.lexical import VALUE_BOOST, BM25Index
from langgraph_librarian.select.local import _best_first, _rest_of_ranking


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=0, max_size=80),
    st.integers(1, 90),
    st.data(),
)
def test_best_first_is_the_head_of_a_stable_sort(values, at_least, data):
    array = np.asarray(values, dtype=np.float64) / 3.0  # many ties
    slots = np.asarray(
        sorted(data.draw(st.sets(st.integers(0, max(len(values) - 1, 0)))) if values else []),
        dtype=np.int64,
    )
    full = slots[np.argsort(-array[slots], kind="stable")] if len(slots) else slots
    head = _best_first(array, slots, at_least)
    assert len(head) >= min(at_least, len(slots))
    assert head.tolist() == full[: len(head)].tolist()
    assert [*head.tolist(), *_rest_of_ranking(array, slots, len(head))] == full.tolist()


WORDS = [
    "budget",
    "venue",
    "figure",
    "Paris",
    "2024",
    "visa",
    "hotel",
    "we",
    "noted",
    "Anna",
    "latest",
]


def _reference_scores(index: BM25Index, query: str) -> tuple[np.ndarray, np.ndarray]:
    """The former implementation: dense boost, then a stable sort of every hit."""
    from langgraph_librarian._engine.text import tokenize

    n_docs, n = index._bound(None)
    owner = np.asarray(index._owner[:n], dtype=np.int64)
    passage = index._passage_scores(query, n)
    boost = np.asarray(index._has_value[:n], dtype=bool).copy()
    asked = {t.lower() for t in tokenize(query)}
    for value in asked & index._value_postings.keys():
        for pid in index._value_postings[value]:
            if pid < n and not (index.passage_values[pid] - asked):
                boost[pid] = False
    passage[boost] *= VALUE_BOOST
    # Copies of a recurring template weigh less, unless they hold a value the query names,
    # or a capitalized word of the query held by at most half of their template's copies,
    # or are their template's newest copy for a question about the latest.
    from langgraph_librarian._engine.text import content_terms
    from langgraph_librarian.select.lexical import _LATEST_QUESTION

    copies, templates, passages, newest = index._copies_weight(n)
    weights = np.array(copies)
    for value in asked & index._value_postings.keys():
        for pid in index._value_postings[value]:
            if pid < n:
                weights[pid] = 1.0
    for term in set(content_terms(query)) & index._slot_postings.keys():
        holding = [pid for pid in index._slot_postings[term] if pid < n]
        for pid in holding:
            held = sum(templates[other] == templates[pid] for other in holding)
            if 2 * held <= passages[templates[pid]]:
                weights[pid] = 1.0
    if _LATEST_QUESTION.search(query):
        weights[newest] = 1.0
    passage *= weights
    best = np.full(n_docs, -1, dtype=np.int64)
    scores = np.zeros(n_docs)
    hits = np.flatnonzero(passage > 0)
    if hits.size:
        ordered = hits[np.argsort(passage[hits], kind="stable")]
        scores[owner[ordered]] = passage[ordered]
        best[owner[ordered]] = ordered
    return scores, best


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.lists(st.sampled_from(WORDS), min_size=6, max_size=9), min_size=1, max_size=8),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
)
def test_best_passage_per_message_matches_a_full_sort(docs, query_words):
    index = BM25Index()
    for i, sentences in enumerate(docs):
        index.add(i, " ".join(" ".join(s) + "." for s in sentences))
    query = " ".join(query_words) + "?"
    scores, best = index.score_passages(query)
    ref_scores, ref_best = _reference_scores(index, query)
    assert np.array_equal(scores, ref_scores)
    assert np.array_equal(best, ref_best)


def test_same_prefix_by_identity_then_value():
    a = [HumanMessage("one", id="1"), AIMessage("two", id="2"), HumanMessage("three", id="3")]
    assert same_prefix([*a, HumanMessage("four")], a, 3)
    assert same_prefix(tuple(a), a, 3)
    copy = [a[0], a[1].model_copy(), a[2]]  # an equal object in the middle: still the same
    assert same_prefix(copy, a, 3)
    edited = [a[0], a[1].model_copy(update={"content": "changed"}), a[2]]
    assert not same_prefix(edited, a, 3)
    assert not same_prefix([a[0].model_copy(), *a[1:]], a, 3)  # a fresh copy: compare columns
    assert same_prefix([], [], 0)
    assert not same_prefix(a[:2], a, 3)


def test_a_recent_message_edited_in_place_is_read_again():
    clear_views()
    history = [HumanMessage(f"question {i}", id=f"m{i}") for i in range(10)]
    view, _ = view_of(history)
    before = view.hashes[9]
    history[9].content = "question nine, reworded after it was seen"
    again = [*history, AIMessage("reply", id="r")]
    view2, _ = view_of(again)
    assert view2.hashes[9] != before


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["append", "append", "replace", "delete", "same", "edit", "add key", "reread"]
            ),
            st.integers(0, 10**6),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_index_written_to_state_reuses_only_what_is_unchanged(steps):
    """The dicts the index node writes equal a fresh conversion after any edits: of the
    entries, and of the dicts it handed out (a caller editing them in place)."""
    import dataclasses

    from langgraph_librarian._engine import state_cache
    from langgraph_librarian._engine.state_cache import entries_to_state, state_entries
    from langgraph_librarian.entry import IndexEntry, entries_to_dicts

    state_cache._CACHE.clear()
    state_cache._WRITTEN.clear()

    def entry(i: int, tag: str = "") -> IndexEntry:
        return IndexEntry(
            id=i, role="human", summary=f"s{i}{tag}", message_id=f"m{i}", content_hash=f"h{i}{tag}"
        )

    entries = [entry(i) for i in range(70)]  # above the cache's minimum size
    written: list = []
    # Every (written, entries) since the last edit in place: an older state read again.
    # (Successive states may share dicts, as they share messages: an edit in place of
    # one state's dict shows in the others, so older states are not reread after one.)
    history: list = []
    for op, r in steps:
        if op == "reread" and history:
            old_written, old_entries = history[r % len(history)]
            assert state_entries({"index": old_written}) == old_entries
            continue
        if op in ("edit", "add key") and written:
            handed = written[r % len(written)]  # edited in place, anywhere in the list
            history.clear()
            if op == "edit":
                handed["summary"] = f"edited in place {r}"
            else:
                handed["extra"] = r
            continue
        if op == "append":
            entries = [*entries, entry(len(entries), "n")]
        elif op == "replace":
            i = r % len(entries)
            entries = [
                *entries[:i],
                # A new summary comes with new content (a summary is made once from its
                # content, and the read compares content hashes, not summaries).
                dataclasses.replace(entries[i], summary=f"edited {r}", content_hash=f"e{r}"),
                *entries[i + 1 :],
            ]
        elif op == "delete" and len(entries) > 65:
            i = 1 + r % (len(entries) - 1)  # the first entry anchors the cache
            entries = [*entries[:i], *entries[i + 1 :]]
        written = entries_to_state(entries)
        assert written == entries_to_dicts(entries)
        assert state_entries({"index": written}) == entries
        entries = state_entries({"index": written})
        history.append((list(written), entries))


def _graph_history(n: int) -> list:
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(f"Message {i} about topic {i % 7}.", id=f"g{i}")
        for i in range(n)
    ]


def test_index_node_rewrites_an_older_format_and_undoes_a_callers_edit_in_place():
    from langgraph_librarian import LibrarianConfig, index_messages
    from langgraph_librarian._engine import state_cache
    from langgraph_librarian.entry import IndexEntry, entries_from_dicts, entries_to_dicts

    state_cache._CACHE.clear()
    state_cache._WRITTEN.clear()
    cfg = {"configurable": {"librarian": LibrarianConfig(embeddings=None), "thread_id": "t"}}
    messages = _graph_history(80)
    index = index_messages({"messages": messages}, cfg)["index"]
    # As a 0.1 release wrote it: "keywords", no "vector_model".
    legacy = []
    for d in index:
        old = {k: v for k, v in d.items() if k != "vector_model"}
        old["keywords"] = ["x"]
        legacy.append(old)
    messages = [*messages, AIMessage("One more reply.", id="g80")]
    first = index_messages({"messages": messages, "index": legacy}, cfg)["index"]
    current = set(IndexEntry(id=0, role="human", summary="").to_dict())
    assert all(set(d) == current for d in first)
    assert not any(a is b for a, b in zip(legacy, first, strict=False))
    expected = entries_to_dicts(entries_from_dicts(first))
    # A caller editing the dicts of one turn's state in place (outside the last 64, which
    # a turn re-reads): the next state holds the index as the Librarian wrote it.
    first[0]["summary"] = "edited by the caller"
    first[1]["added"] = True
    messages = [*messages, HumanMessage("And another question?", id="g81")]
    second = index_messages({"messages": messages, "index": first}, cfg)["index"]
    assert second[:81] == expected
    assert second[0]["summary"] != "edited by the caller" and "added" not in second[1]
    # The dicts handed out are never the ones kept to check them: editing the second
    # state's dicts does not change what the third turn writes.
    second[2]["summary"] = "edited again"
    messages = [*messages, AIMessage("Noted.", id="g82")]
    third = index_messages({"messages": messages, "index": second}, cfg)["index"]
    assert third[:81] == expected


def test_messages_past_what_a_view_holds_are_still_converted():
    from langgraph_librarian._engine.history import as_messages

    clear_views()
    history = [HumanMessage(f"question {i}", id=f"c{i}") for i in range(5)]
    view_of(history)
    grown = as_messages([*history, {"role": "assistant", "content": "a dict reply"}])
    assert grown[:5] == history and isinstance(grown[5], AIMessage)
    assert as_messages(history) == history and as_messages(history) is not history
    # Another conversation's list (not the objects a view holds): every item is checked.
    other = as_messages([("user", "hello"), HumanMessage("again")])
    assert [m.type for m in other] == ["human", "human"]


TEMPLATED = [
    "Took my {} mg of the tablets this morning.",
    "The train got in at {}:10 pm, only ten minutes late.",
    "Looks good: {} tests passed on the main branch.",
    "We talked about the garden and the new fence at number {}.",
    "Nothing new today.",
]


def _reference_copies(index: BM25Index, n: int) -> tuple[np.ndarray, ...]:
    """Copy weights of the first ``n`` passages counted from scratch, as before they were
    extended turn by turn."""
    ids = np.asarray(index._template[:n], dtype=np.int64)
    first = np.asarray(index._template_first[:n], dtype=bool)
    has = ids >= 0
    size = len(index._template_ids) or 1
    documents = np.bincount(ids[first], minlength=size)
    passages = np.bincount(ids[has], minlength=size)
    copies = np.ones(n)
    copies[has] = documents[ids[has]]
    last = np.full(size, -1, dtype=np.int64)
    last[ids[has]] = np.flatnonzero(has)
    newest = np.zeros(n, dtype=bool)
    newest[last[last >= 0]] = True
    return 1.0 / (1.0 + np.log(copies)), np.where(has, ids, 0), passages, newest


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(TEMPLATED), st.integers(0, 30), st.booleans()),
        min_size=1,
        max_size=40,
    ),
    st.data(),
)
def test_copy_weights_extended_turn_by_turn_equal_a_count_from_scratch(docs, data):
    """The copy counts are extended from the last read (a turn adds a few passages); a
    shorter head read in between (an edited history's prefix) starts them over. Each
    read equals counting every passage again, bit for bit."""
    index = BM25Index()
    for i, (template, slot, twice) in enumerate(docs):
        line = template.format(slot)
        index.add(i, f"{line} {line}" if twice else line)
        n = index.passage_count
        for m in (n, data.draw(st.integers(0, n)), n):
            got = index._copies_weight(m)
            want = _reference_copies(index, m)
            assert np.array_equal(got[0], want[0])
            assert np.array_equal(got[1], want[1])
            assert np.array_equal(got[2][: len(want[2])], want[2])
            assert not got[2][len(want[2]) :].any()
            assert np.array_equal(got[3], want[3])


def test_appended_grows_in_place_and_never_changes_a_view_handed_out():
    from langgraph_librarian._engine.vectors import appended

    first = appended(None, np.arange(5, dtype=np.int64))
    assert first.base is None  # exactly its size until it grows
    grown_once = appended(first, np.arange(5, 7, dtype=np.int64))
    second = appended(grown_once, np.arange(7, 9, dtype=np.int64))
    assert second.base is grown_once.base  # room in the buffer: written in place
    assert second.tolist() == list(range(9)) and first.tolist() == list(range(5))
    assert grown_once.tolist() == list(range(7))
    grown = second
    for start in range(9, 400, 7):  # past the buffer: a new, larger one
        grown = appended(grown, np.arange(start, start + 7, dtype=np.int64))
    assert grown.tolist() == list(range(401))
    assert second.tolist() == list(range(9)) and not grown.flags.writeable


def test_a_prefix_of_postings_grows_apart_from_the_postings_it_was_cut_from():
    """A prefix (an edited history) shares no buffer with the longer postings: its new
    rows are never written over the rows the longer one's readers hold."""
    from langgraph_librarian._engine.postings import Postings

    whole = Postings(np.float64)
    for row in range(20):
        whole.add(row, {"visa": 1.0 + row})
    rows, weights = whole.arrays("visa")
    cut = whole.prefix(10)
    for row in range(10, 30):
        cut.add(row, {"visa": 100.0 + row})
    cut_rows, cut_weights = cut.arrays("visa")
    assert weights.tolist() == [1.0 + row for row in range(20)]
    assert whole.arrays("visa")[1].tolist() == weights.tolist()
    assert cut_weights.tolist() == [1.0 + r for r in range(10)] + [100.0 + r for r in range(10, 30)]
    assert rows.tolist() == list(range(20)) and cut_rows.tolist() == list(range(30))


def test_readers_of_an_index_being_extended_see_what_a_finished_index_gives():
    """The growing arrays are extended in place without a lock: threads scoring the
    first documents while another thread adds more get the scores of an index built
    first, and a prefix grown apart afterwards leaves the index it was cut from as it
    was."""
    import random
    import threading

    from helpers import run_together

    rng = random.Random(5)
    lines = [
        "Took my {n} mg of the tablets this morning.",
        "The train got in at {n}:10 pm.",
        "Looks good: {n} tests passed.",
        "Nothing new today.",
        "What about the {t} {x}?",
        "The {t} figure {x} was noted by person{n}.",
    ]
    topics = ["visa", "budget", "hotel", "flight", "Kofi", "Maria"]

    def line() -> str:
        n, x = rng.randint(0, 40), rng.randint(0, 999)
        return rng.choice(lines).format(n=n, x=x, t=rng.choice(topics))

    docs = [" ".join(line() for _ in range(rng.randint(1, 3))) for _ in range(800)]
    queries = ["What did we note about the visa figure 37?", "When did the train get in?"]
    queries += ["What was the latest test result?", "did I skip a dose?"]
    built = BM25Index()
    for i, doc in enumerate(docs):
        built.add(i, doc)
    shared = BM25Index()
    done = threading.Event()
    wrong: list[tuple[int, str]] = []
    reads = [0]

    def reader(seed: int) -> None:
        pick = random.Random(seed)
        while not done.is_set():
            k = len(shared)
            if not k:
                continue
            k, query = pick.randint(1, k), pick.choice(queries)
            got, want = shared.score_passages(query, docs=k), built.score_passages(query, docs=k)
            reads[0] += 1
            if not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])):
                wrong.append((k, query))

    def writer() -> None:
        for i, doc in enumerate(docs):
            shared.add(i, doc)
        done.set()

    run_together(lambda: reader(0), lambda: reader(1), writer, interval=1e-5)
    assert reads[0] > 20 and not wrong
    cut = shared.prefix(400)
    for i, doc in enumerate(reversed(docs[:300])):
        cut.add(1000 + i, doc)
    for query in queries:
        cut.score_passages(query)  # the cut's arrays grow (its own, not the shared ones)
    for query in queries:
        assert np.array_equal(shared.score_passages(query)[0], built.score_passages(query)[0])
