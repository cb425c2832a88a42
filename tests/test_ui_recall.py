"""Recall across the chat's threads: what a New Session gets from the others, and when not."""

from __future__ import annotations

import io
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.store.base import BaseStore, Op, Result

from fakes import ScriptedChatModel
from langgraph_librarian.cli import main
from langgraph_librarian.recall import ScopeMemory
from langgraph_librarian.recall._result import RECALL_MESSAGE_ID
from langgraph_librarian.recall._scope import RecallConfigError
from langgraph_librarian.ui import ChatService
from langgraph_librarian.ui._recall import ScopeRecall
from langgraph_librarian.ui._render import inspector_html, inspector_text, overview_html
from langgraph_librarian.ui._service import MessageRejected, TurnFinished
from langgraph_librarian.ui._terminal import run_terminal_chat

ALLERGY = "I'm allergic to peanuts and tree nuts."
QUESTION = "Which nuts am I allergic to?"


class BrokenStore(BaseStore):
    """A store whose database is gone: every read and write fails."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        raise sqlite3.OperationalError("disk I/O error")

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        raise sqlite3.OperationalError("disk I/O error")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "chat.db"


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(script="Noted.")


def _finish(service: ChatService, thread: str, text: str) -> TurnFinished:
    events = list(service.send(thread, text, "librarian"))
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    return finished


def _recalled_block(messages: list[BaseMessage]) -> BaseMessage | None:
    return next((m for m in messages if m.id == RECALL_MESSAGE_ID), None)


def test_a_new_session_gets_the_fact_from_another_thread(db: Path) -> None:
    model = _model()
    service = ChatService(db, model=model)
    first = service.new_thread_id()
    _finish(service, first, ALLERGY)
    _finish(service, first, "Our oven only fits one tray.")
    second = service.new_thread_id()  # New Session
    finished = _finish(service, second, QUESTION)

    block = _recalled_block(model.calls[-1])
    assert block is not None and block.type == "system"
    assert model.calls[-1][0] is block  # in front of the model input
    assert ALLERGY in str(block.content)
    assert finished.reply == "Noted." and finished.error is None
    report = finished.report
    assert report.recall is not None and report.recall["status"] == "recalled"
    assert report.recall["scope"] == "default"
    allergy = [r for r in report.recalled if r["text"] == ALLERGY]
    assert allergy and allergy[0]["thread_id"] == first
    assert any(row.recalled for row in report.sent)  # the block is part of what was sent
    html = inspector_html(report)
    assert f"Recalled from other threads ({len(report.recalled)})" in html
    assert "allergic to peanuts" in html and f"from thread {first}" in html
    # Ephemeral: nothing recalled is saved in the new thread.
    saved = service.graph.get_state(service._config(second)).values["messages"]
    assert [m.type for m in saved] == ["human", "ai"]
    assert all(ALLERGY not in str(m.content) for m in saved)
    service.close()


def test_a_thread_never_recalls_its_own_messages(db: Path) -> None:
    model = _model()
    service = ChatService(db, model=model)
    thread = service.new_thread_id()
    _finish(service, thread, ALLERGY)
    finished = _finish(service, thread, QUESTION)
    assert finished.report.recall is not None
    assert finished.report.recall["status"] == "empty"  # only its own records exist
    assert finished.report.recalled == []
    assert _recalled_block(model.calls[-1]) is None

    other = service.new_thread_id()
    _finish(service, other, "Which nuts should I keep away from the kitchen?")
    finished = _finish(service, thread, "Remind me: which nuts?")
    threads = {r["thread_id"] for r in finished.report.recalled}
    assert threads == {other}  # the other thread's turn, never this thread's
    service.close()


def test_each_turn_is_copied_once_into_the_scope(db: Path) -> None:
    service = ChatService(db, model=_model())
    thread = service.new_thread_id()
    assert _finish(service, thread, ALLERGY).report.capture == {
        "status": "captured",
        "records": 2,
    }
    assert _finish(service, thread, "Thanks.").report.capture == {
        "status": "captured",
        "records": 2,
    }
    recall = service.recall
    assert isinstance(recall, ScopeRecall)
    records = recall.memory.records("default")
    assert [r.text for r in records] == [ALLERGY, "Noted.", "Thanks.", "Noted."]
    assert {r.thread_id for r in records} == {thread}
    service.close()


def test_a_broken_store_is_shown_and_the_turn_goes_on(db: Path) -> None:
    model = _model()
    broken = ScopeRecall(ScopeMemory(BrokenStore()), "default")
    service = ChatService(db, model=model, recall=broken)
    thread = service.new_thread_id()
    finished = _finish(service, thread, QUESTION)
    assert finished.reply == "Noted." and finished.error is None
    assert _recalled_block(model.calls[-1]) is None
    report = finished.report
    assert report.recall is not None and report.recall["status"] == "unavailable"
    assert "disk I/O error" in report.recall["reason"]
    assert report.capture is not None and report.capture["status"] == "unavailable"
    html = inspector_html(report)
    assert "Recall failed (unavailable)" in html and "disk I/O error" in html
    assert "Copying this turn into the scope" in html
    assert "recall: Recall failed" in inspector_text(report)
    assert [h["role"] for h in service.history(thread)] == ["user", "assistant"]
    service.close()


def test_a_recall_source_that_raises_is_reported_not_fatal(db: Path) -> None:
    def source(state: dict[str, Any], config: Any) -> tuple[BaseMessage | None, dict[str, Any]]:
        raise TimeoutError("memory server too slow")

    service = ChatService(db, model=_model(), recall=source)
    finished = _finish(service, service.new_thread_id(), QUESTION)
    assert finished.reply == "Noted."
    assert finished.report.recall == {
        "status": "unavailable",
        "reason": "TimeoutError: memory server too slow",
        "records": [],
    }
    assert finished.report.capture is None  # this source has no capture
    service.close()


def test_no_recall_recalls_and_copies_nothing(db: Path) -> None:
    model = _model()
    service = ChatService(db, model=model, scope=None)
    assert service.recall is None and service.scope_id is None
    _finish(service, service.new_thread_id(), ALLERGY)
    finished = _finish(service, service.new_thread_id(), QUESTION)
    assert _recalled_block(model.calls[-1]) is None
    assert finished.report.recall is None and finished.report.capture is None
    assert "Scoped recall is off" in inspector_html(finished.report)
    service.close()
    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "store" not in tables  # no memory was even created


def test_recall_survives_a_restart_on_the_same_file(db: Path) -> None:
    service = ChatService(db, model=_model())
    first = service.new_thread_id()
    _finish(service, first, ALLERGY)
    service.close()

    model = _model()
    reopened = ChatService(db, model=model)
    finished = _finish(reopened, reopened.new_thread_id(), QUESTION)
    assert [r["thread_id"] for r in finished.report.recalled if r["text"] == ALLERGY] == [first]
    block = _recalled_block(model.calls[-1])
    assert block is not None and ALLERGY in str(block.content)
    reopened.close()


def test_scopes_do_not_see_each_other(db: Path) -> None:
    work = ChatService(db, model=_model(), scope="work")
    _finish(work, work.new_thread_id(), ALLERGY)
    work.close()

    home = ChatService(db, model=_model(), scope="home")
    finished = _finish(home, home.new_thread_id(), QUESTION)
    assert finished.report.recall is not None
    assert finished.report.recall["scope"] == "home" and finished.report.recalled == []
    home.close()

    again = ChatService(db, model=_model(), scope="work")
    assert _finish(again, again.new_thread_id(), QUESTION).report.recalled
    again.close()


def test_an_empty_scope_is_refused(db: Path) -> None:
    with pytest.raises(RecallConfigError):
        ChatService(db, scope="")
    assert not db.exists()


def test_a_new_thread_says_recall_is_on(db: Path) -> None:
    service = ChatService(db, scope="team:alpha")
    thread = service.new_thread_id()
    html = overview_html(thread, service.overview(thread))
    assert "Recall is on" in html and "team:alpha" in html
    service.close()
    off = ChatService(db, scope=None)
    assert "Scoped recall is off" in overview_html(thread, off.overview(thread))
    off.close()


def test_the_terminal_chat_prints_what_was_recalled(db: Path) -> None:
    service = ChatService(db, model=_model())
    out = io.StringIO()
    script = io.StringIO(f"{ALLERGY}\n/new\n{QUESTION}\n/quit\n")
    assert run_terminal_chat(service, stdin=script, out=out) == 0
    text = out.getvalue()
    assert "recall scope default" in text
    assert "recall: 1 record recalled" in text
    assert "allergic to peanuts" in text.split("recall: 1 record recalled")[1]
    service.close()


def test_cli_scope_and_no_recall(db: Path, monkeypatch, capsys) -> None:
    served: list[ChatService] = []

    def fake_launch(service: ChatService, **kwargs: Any) -> None:
        served.append(service)
        assert service.recall is None if no_recall else service.scope_id == "project:x"

    monkeypatch.setattr("langgraph_librarian.ui.launch", fake_launch)
    no_recall = False
    assert main(["ui", "--db", str(db), "--scope", "project:x"]) == 0
    assert "recall scope of new threads: project:x" in capsys.readouterr().err
    no_recall = True
    assert main(["ui", "--db", str(db), "--no-recall"]) == 0
    assert "recall: off" in capsys.readouterr().err
    assert len(served) == 2

    monkeypatch.setattr("sys.stdin", io.StringIO("/quit\n"))
    assert main(["chat", "--db", str(db), "--scope", "project:x"]) == 0
    assert "recall scope project:x" in capsys.readouterr().out
    assert main(["chat", "--db", str(db), "--scope", ""]) == 2
    assert "--scope needs a name" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["ui", "--db", str(db), "--scope", "a", "--no-recall"])


def test_a_thread_keeps_its_scope_when_reopened_under_another(db: Path) -> None:
    work = ChatService(db, model=_model(), scope="work")
    thread = work.new_thread_id()
    _finish(work, thread, ALLERGY)
    work.close()

    home = ChatService(db, model=_model(), scope="home")
    assert home.scope_for(thread) == "work"
    finished = _finish(home, thread, "My sister is vegan and visits on Friday.")
    assert finished.report.recall is not None and finished.report.recall["scope"] == "work"
    memory = home.recall.memory  # type: ignore[union-attr]
    # The thread's new turn went into its own scope, not into the chat's "home".
    assert any(r.thread_id == thread for r in memory.search("work", "sister vegan Friday"))
    assert memory.search("home", "sister vegan Friday") == []
    fresh = home.new_thread_id()
    report = _finish(home, fresh, QUESTION).report
    assert report.recall is not None and report.recall["scope"] == "home"
    assert report.recalled == [] and home.scope_for(fresh) == "home"
    assert "work" in overview_html(thread, home.overview(thread))
    home.close()


def test_a_thread_list_from_before_scopes_gets_the_column(db: Path) -> None:
    with sqlite3.connect(db) as conn:  # the table as earlier versions made it
        conn.execute(
            "CREATE TABLE librarian_ui_threads (thread_id TEXT PRIMARY KEY, title TEXT NOT "
            "NULL, turns INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, "
            "updated_at REAL NOT NULL)"
        )
        conn.execute("INSERT INTO librarian_ui_threads VALUES ('chat-old', 'Old', 1, 1.0, 1.0)")
    service = ChatService(db, model=_model(), scope="team")
    assert service.scope_for("chat-old") == "team"  # unknown so far: the chat's scope
    _finish(service, "chat-old", ALLERGY)
    service.close()
    other = ChatService(db, model=_model(), scope="elsewhere")
    assert other.scope_for("chat-old") == "team"  # and from now on it keeps it
    assert [t.title for t in other.list_threads()] == ["Old"]
    other.close()


def test_the_totals_count_what_they_compare(db: Path) -> None:
    """A recalled block is counted apart: never "sent 133 of 9 tokens, 2 of 1 messages"."""
    service = ChatService(db, model=_model())
    _finish(service, service.new_thread_id(), ALLERGY)
    report = _finish(service, service.new_thread_id(), QUESTION).report
    assert report.recalled_tokens > 0
    assert report.sent_tokens == report.thread_tokens_sent + report.recalled_tokens
    assert report.thread_tokens_sent <= report.history_tokens
    assert report.messages_sent == report.history_count == 1
    line = inspector_text(report).splitlines()[0]
    assert (
        f"sent {report.sent_tokens:,} tokens: {report.thread_tokens_sent:,} of the thread's "
        f"{report.history_tokens:,} tokens ({report.saved_pct:.1f}% not sent) + "
        f"{report.recalled_tokens:,} recalled from other threads; 1 of 1 messages + the "
        "recalled block"
    ) in line
    html = inspector_html(report)
    assert f"{report.recalled_tokens:,} recalled" in html
    service.close()


def test_a_thread_id_from_the_page_is_checked(db: Path) -> None:
    service = ChatService(db)
    for bad in ["", "../etc", "a b", "x" * 200]:
        with pytest.raises(MessageRejected):
            list(service.send(bad, "hello", "librarian"))
    assert service.list_threads() == []
    service.close()


def test_the_demo_conversation_stays_out_of_your_threads_recall(db: Path) -> None:
    """The demo's 240 synthetic messages go to a scope of their own: asking in the demo
    thread copies them there, and a real thread still recalls your own fact."""
    model = _model()
    service = ChatService(db, model=model)
    real = service.new_thread_id()
    _finish(service, real, ALLERGY)
    demo = service.load_demo(n_messages=60)
    assert service.scope_for(demo.thread_id) == "default:demo"
    _finish(service, demo.thread_id, demo.questions[0])  # copies the demo into its scope
    asked = service.new_thread_id()
    finished = _finish(service, asked, "Can I eat pesto? Think of my nuts allergy.")
    recalled = {r["text"] for r in finished.report.recalled}
    assert ALLERGY in recalled
    demo_texts = {str(m.content) for m in service._values(demo.thread_id)["messages"]}
    assert not recalled & demo_texts
    service.close()


def test_the_offline_reply_counts_recalled_tokens_apart(db: Path) -> None:
    from langgraph_librarian.ui._render import offline_reply

    service = ChatService(db)  # no chat model: the reply shows the context
    first = service.new_thread_id()
    _finish(service, first, ALLERGY)
    second = service.new_thread_id()
    finished = _finish(service, second, QUESTION)
    report = finished.report
    assert finished.offline and report.recalled_tokens > 0
    text = offline_reply(report)
    own = f"{report.thread_tokens_sent:,} of the thread's {report.history_tokens:,} tokens"
    assert f"{own} + {report.recalled_tokens:,} recalled from other threads" in text
    service.close()
