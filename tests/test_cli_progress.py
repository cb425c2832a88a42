"""Long work is not silent, and bench does only the work its questions need, once."""

from __future__ import annotations

import io
import math

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage

from fakes import ScriptedChatModel
from helpers import long_text
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index.pipeline import aupdate_index, update_index
from librarian_bench.datasets.base import Conversation, Question
from librarian_bench.runner import (
    ProgressPrinter,
    describe_plan,
    plan_questions,
    run_bench,
)
from librarian_bench.strategies import SharedIndexing


class CountingEmbeddings(Embeddings):
    """Bag-of-letters vectors; records every document text embedded."""

    def __init__(self) -> None:
        self.documents: list[str] = []

    @staticmethod
    def _vec(text: str) -> list[float]:
        return [float(text.lower().count(c)) + 0.1 for c in "abcdefghijklmnopqrstuvwxyz"]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def short_history(n: int, prefix: str = "m") -> list:
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(
            f"note {i} about topic {i % 7}", id=f"{prefix}{i}"
        )
        for i in range(n)
    ]


# -- ProgressPrinter ------------------------------------------------------------------


def test_progress_in_logs_is_occasional_full_lines():
    log = io.StringIO()
    show = ProgressPrinter(log, tty=False, every_seconds=3600)
    for done in range(1001):
        show("vector: index c1", done, 1000)
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert 2 <= len(lines) <= 6  # start, each quarter, end: not one line per step
    assert lines[0].startswith("vector: index c1  0/1000")
    assert lines[-1].startswith("vector: index c1  1000/1000 (100%")


def test_progress_in_logs_also_prints_after_a_long_silence():
    log = io.StringIO()
    show = ProgressPrinter(log, tty=False, every_seconds=0)  # every call is "long after"
    for done in range(11):
        show("embedding", done, 100)
    assert len(log.getvalue().splitlines()) == 11


def test_progress_on_a_terminal_redraws_one_line_and_ends_it():
    screen = io.StringIO()
    show = ProgressPrinter(screen, tty=True)
    for done in range(4):
        show("questions", done, 3)
    show.note("done")
    text = screen.getvalue()
    assert text.count("\r") == 4 and text.endswith("3/3\ndone\n")


def test_progress_with_nothing_to_do_prints_nothing():
    log = io.StringIO()
    ProgressPrinter(log, tty=False)("librarian: index c1", 0, 0)
    assert log.getvalue() == ""


# -- update_index(progress=...) -------------------------------------------------------


def test_update_index_reports_embedding_progress_to_the_end():
    calls: list[tuple[int, int]] = []
    config = LibrarianConfig(embeddings=CountingEmbeddings())
    update = update_index(
        short_history(150), [], config, progress=lambda d, t: calls.append((d, t))
    )
    assert update.new_count == 150
    assert calls[0] == (0, 150) and calls[-1] == (150, 150)
    assert len(calls) >= 4  # batches of 64: 64, 128, then the end
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    # An up-to-date index has nothing slow left to do.
    again: list[tuple[int, int]] = []
    update_index(short_history(150), update.entries, config, progress=lambda *a: again.append(a))
    assert again == [(0, 0), (0, 0)]


def test_update_index_counts_model_summaries_in_chunks():
    model = ScriptedChatModel(script="A short summary of the message.")
    config = LibrarianConfig(indexer_model=model, embeddings=None, max_concurrency=2)
    history = [HumanMessage(long_text(f"topic {i}", words=120), id=f"l{i}") for i in range(40)]
    calls: list[tuple[int, int]] = []
    update = update_index(history, [], config, progress=lambda d, t: calls.append((d, t)))
    assert update.new_count == 40 and len(model.calls) == 40
    assert calls == [(0, 40), (32, 40), (40, 40)]  # chunks of max(4 x concurrency, 32)


async def test_aupdate_index_reports_summaries_then_embeddings():
    model = ScriptedChatModel(script="A short summary of the message.")
    embeddings = CountingEmbeddings()
    config = LibrarianConfig(indexer_model=model, embeddings=embeddings, max_concurrency=4)
    history = [HumanMessage(long_text(f"topic {i}", words=120), id=f"l{i}") for i in range(10)]
    calls: list[tuple[int, int]] = []
    await aupdate_index(history, [], config, progress=lambda d, t: calls.append((d, t)))
    assert calls[:2] == [(0, 20), (10, 20)]  # 10 summaries, then the 10 messages' passages
    assert calls[-1] == (20, 20) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    # Each message's passages are embedded for the selector (several per long message).
    assert model.async_calls == 10 and len(embeddings.documents) >= 10


def test_update_index_without_progress_is_unchanged():
    model = ScriptedChatModel(script="A short summary of the message.")
    config = LibrarianConfig(indexer_model=model, embeddings=None, max_concurrency=2)
    history = [HumanMessage(long_text(f"topic {i}", words=120), id=f"l{i}") for i in range(40)]
    assert update_index(history, [], config).new_count == 40


# -- run_bench: plan, sharing, honest costs -------------------------------------------


def dataset(n_conversations: int = 3, questions_each: int = 3) -> list[Conversation]:
    conversations = []
    for c in range(n_conversations):
        messages = short_history(30, prefix=f"c{c}-")
        questions = [
            Question(f"c{c}-q{k}", f"What about topic {k}?", f"note {k}", [f"c{c}-{k}"])
            for k in range(questions_each)
        ]
        conversations.append(Conversation(f"c{c}", messages, questions))
    return conversations


def test_plan_takes_the_first_questions_and_only_their_conversations():
    data = dataset()
    plan = plan_questions(data, 4)
    assert [(c.id, len(q)) for c, q in plan] == [("c0", 3), ("c1", 1)]
    assert len(plan_questions(data)) == 3
    line = describe_plan("mini", data, plan, ["bm25", "librarian"])
    assert line == (
        "mini: 4 of 9 questions from 2 of 3 conversations (60 messages to index); "
        "2 strategies: bm25, librarian"
    )


def test_limited_bench_indexes_only_the_conversations_it_asks_about():
    embeddings = CountingEmbeddings()
    outcomes, _ = run_bench(
        "mini", dataset(), ["vector"], budget=500, embeddings=embeddings, limit=2
    )
    assert len(outcomes) == 2
    assert {t.split(" ")[1] for t in embeddings.documents} == set(map(str, range(30)))
    assert len(embeddings.documents) == 30  # one conversation of 30, not three


def count_indexing(monkeypatch) -> list[int]:
    import librarian_bench.strategies as strategies

    calls: list[int] = []
    real = strategies.update_index

    def counting(messages, entries, config, **kwargs):
        calls.append(len(messages))
        return real(messages, entries, config, **kwargs)

    monkeypatch.setattr(strategies, "update_index", counting)
    return calls


def test_identical_indexes_and_texts_are_built_once_and_charged_to_each(monkeypatch):
    indexed = count_indexing(monkeypatch)
    embeddings = CountingEmbeddings()
    shared = SharedIndexing(embeddings)
    log: list[tuple[str, int, int]] = []
    outcomes, seconds = run_bench(
        "mini",
        dataset(1),
        ["vector", "librarian", "librarian-lexical", "librarian-lexical"],  # twice: runs once
        budget=500,
        embeddings=embeddings,
        progress=lambda label, d, t: log.append((label, d, t)),
        shared=shared,
    )
    # Every text is embedded once, however many strategies read it (vector embeds the
    # messages; the Librarian embeds passages, with their context, when it selects).
    assert len(embeddings.documents) == len(set(embeddings.documents))
    assert indexed == [30, 30]  # librarian, librarian-lexical
    assert ("[librarian] index c0", 30, 30) in log  # embedding progress was shown
    # Reused work is charged at its original cost, so each strategy reports what it
    # would have spent alone: the sum is the wall time spent plus what was reused.
    assert shared.charged_seconds > 0
    assert math.isclose(
        sum(seconds.values()), shared.spent_seconds + shared.charged_seconds, rel_tol=1e-9
    )
    assert [o.strategy for o in outcomes].count("librarian-lexical") == 3


def test_without_embeddings_librarian_shares_the_lexical_index(monkeypatch):
    calls = count_indexing(monkeypatch)
    outcomes, _ = run_bench(
        "mini", dataset(2), ["librarian-lexical", "librarian"], budget=500, embeddings=None
    )
    assert calls == [30, 30]  # once per conversation, not once per strategy
    by = {(o.strategy, o.question): o.recall for o in outcomes}
    assert all(by[("librarian", q)] == by[("librarian-lexical", q)] for _, q in by)
