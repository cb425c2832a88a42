"""The chat behind ``librarian ui`` (no browser): turns, strategies, persistence, bad input."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGenerationChunk
from pydantic import PrivateAttr

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.context import is_running_summary
from langgraph_librarian.memory import history_problems
from langgraph_librarian.ui import ChatService
from langgraph_librarian.ui._db import ChatDatabaseError
from langgraph_librarian.ui._render import inspector_html, offline_reply
from langgraph_librarian.ui._service import MessageRejected, TurnFinished, TurnToken, TurnWaiting


class StreamingModel(GenericFakeChatModel):
    """Streams its replies word by word, records every input, can fail mid-stream.

    ``fail_after`` chunks into a reply whose prompt's last message contains "FAIL" it
    raises; ``pause`` sleeps between chunks (to overlap two turns).
    """

    fail_after: int = 2
    pause: float = 0.0
    _inputs: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @property
    def inputs(self) -> list[list[BaseMessage]]:
        return self._inputs

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self._inputs.append(list(messages))
        failing = "FAIL" in str(messages[-1].content)
        for n, chunk in enumerate(super()._stream(messages, stop, run_manager, **kwargs)):
            if failing and n == self.fail_after:
                raise ConnectionError("stream cut by the server")
            if self.pause:
                time.sleep(self.pause)
            yield chunk


def _model(text: str = "Noted, thanks for telling me that.", **kwargs: Any) -> StreamingModel:
    return StreamingModel(messages=iter([AIMessage(text)] * 200), **kwargs)


def _turn(service: ChatService, thread: str, text: str, strategy: str = "librarian") -> list[Any]:
    return list(service.send(thread, text, strategy))  # type: ignore[arg-type]


FACTS = [
    "I'm allergic to peanuts and tree nuts, please remember it.",
    "Our flat has a tiny oven that only fits one tray.",
    "My sister visits on Friday and she is vegan.",
    "We had ramen for lunch yesterday, it was great.",
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "chat.db"


def test_offline_turn_says_no_model_and_shows_the_context(db: Path) -> None:
    service = ChatService(db)
    thread = service.new_thread_id()
    for text in FACTS:
        _turn(service, thread, text)
    events = _turn(service, thread, "Which nuts am I allergic to?")
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.offline
    assert not any(isinstance(e, TurnToken) for e in events)  # nothing streamed: no fake answer
    assert finished.reply == ""
    saved = service.graph.get_state(service._config(thread)).values["messages"]
    assert [m.type for m in saved] == ["human"] * 5  # no made-up assistant message
    report = finished.report
    assert report.model is None
    assert report.selected[0].position == 0  # the allergy message, selected first
    text = offline_reply(report)
    assert "No chat model is configured" in text
    assert "#0 user" in text and "allergic to peanuts" in text
    assert f"{report.sent_tokens:,} of the thread's {report.history_tokens:,} tokens" in text
    html = inspector_html(report)
    assert 'data-position="0"' in html
    # One thread only: its own turns are in the scope, and never recalled to it.
    assert "Nothing recalled (empty: the scope holds only what this thread already has)" in html
    service.close()


def test_reply_streams_token_by_token_and_is_saved(db: Path) -> None:
    model = _model("Porto it is, see you there.")
    service = ChatService(db, model=model, model_label="fake:streaming")
    thread = service.new_thread_id()
    events = _turn(service, thread, "The offsite is in Porto.")
    tokens = [e.text for e in events if isinstance(e, TurnToken)]
    assert len(tokens) > 3
    assert "".join(tokens) == "Porto it is, see you there."
    finished = events[-1]
    assert finished.reply == "Porto it is, see you there." and finished.error is None
    assert finished.report.model == "fake:streaming"
    assert service.history(thread)[-1] == {"role": "assistant", "content": finished.reply}
    service.close()


def test_the_strategy_switch_changes_the_input_not_the_thread(db: Path) -> None:
    model = _model()
    service = ChatService(db, model=model)
    thread = service.new_thread_id()
    for text in FACTS:
        _turn(service, thread, text)
    question = "Any dessert idea without nuts for Friday?"
    reports = {}
    for strategy in ("librarian", "running_summary", "both", "everything"):
        reports[strategy] = _turn(service, thread, question, strategy)[-1].report
    sent = {s: model.inputs[-4 + n] for n, s in enumerate(reports)}
    # Nothing was deleted: 4 facts + 4 questions, each answered.
    assert len(service.history(thread)) == 16
    everything = sent["everything"]
    assert len(everything) == 15 and not any(is_running_summary(m) for m in everything)
    assert not any(is_running_summary(m) for m in sent["librarian"])
    assert is_running_summary(sent["both"][0]) and is_running_summary(sent["running_summary"][0])
    assert any("allergic" in str(m.content) for m in sent["librarian"])  # selected in full
    summary_tail = [m for m in sent["running_summary"] if not isinstance(m, SystemMessage)]
    assert all("allergic" not in str(m.content) for m in summary_tail)  # only in the gist
    for strategy, report in reports.items():
        assert report.strategy == strategy
        assert report.sent_tokens == report.strategy_tokens[strategy]
        assert len(report.sent) == len(sent[strategy])
    # build_model_input repairs the running-summary input; the whole history is valid as is.
    assert not history_problems(sent["running_summary"])
    assert not history_problems(sent["everything"])
    assert reports["everything"].sent_tokens == reports["everything"].history_tokens
    assert reports["librarian"].sent_tokens < reports["everything"].sent_tokens
    service.close()


def test_a_model_failing_mid_stream_keeps_the_conversation(db: Path) -> None:
    model = _model("one two three four five six")
    service = ChatService(db, model=model)
    thread = service.new_thread_id()
    _turn(service, thread, FACTS[0])
    events = _turn(service, thread, "Please FAIL now")
    tokens = [e.text for e in events if isinstance(e, TurnToken)]
    finished = events[-1]
    assert tokens == ["one", " "]  # it had started streaming
    assert finished.error == "ConnectionError: stream cut by the server"
    assert finished.reply == "one "  # the partial text, shown with the error, not saved
    assert "The model failed" in inspector_html(finished.report)
    history = service.history(thread)
    assert [h["role"] for h in history] == ["user", "assistant", "user"]
    assert history[-1]["content"] == "Please FAIL now"
    after = _turn(service, thread, "Still there?")[-1]
    assert after.error is None and after.reply.startswith("one two")
    assert [h["role"] for h in service.history(thread)] == [
        "user", "assistant", "user", "user", "assistant",
    ]  # fmt: skip
    service.close()


def test_sending_a_failed_question_again_retries_it_without_a_second_copy(db: Path) -> None:
    # "Your message is saved in the thread; send again to retry": the retry added the
    # question a second time (two questions in a row, two turns counted, and the model
    # got the question twice).
    model = ScriptedChatModel(script=[RuntimeError("the provider is down"), "In Porto."])
    service = ChatService(db, model=model, scope=None)
    try:
        assert _turn(service, "chat-retry", "Where is the venue?")[-1].error
        finished = _turn(service, "chat-retry", "Where is the venue?")[-1]
        assert finished.error is None and finished.reply == "In Porto."
        assert finished.report.question == "Where is the venue?"
        assert [h["content"] for h in service.history("chat-retry")] == [
            "Where is the venue?", "In Porto.",
        ]  # fmt: skip
        assert [m.content for m in model.calls[-1]][-1:] == ["Where is the venue?"]
        assert len(model.calls[-1]) == 1
        [info] = service.list_threads()
        assert info.turns == 1
        # Once answered, the same text again is a new question, as any other.
        _turn(service, "chat-retry", "Where is the venue?")
        assert len(service.history("chat-retry")) == 4
    finally:
        service.close()


def test_a_reader_that_leaves_mid_reply_still_gets_the_turn_saved(db: Path) -> None:
    service = ChatService(db, model=_model("a complete answer in several words"))
    thread = service.new_thread_id()
    turn = service.send(thread, "Tell me something.", "librarian")
    assert isinstance(next(turn), TurnToken)
    turn.close()  # the browser tab closed after the first token
    assert service.history(thread) == [
        {"role": "user", "content": "Tell me something."},
        {"role": "assistant", "content": "a complete answer in several words"},
    ]
    assert service.overview(thread)["indexed"] == 2  # the whole turn ran, indexing included
    assert _turn(service, thread, "Next?")[-1].error is None  # the thread is not left locked
    service.close()


def test_a_thread_is_listed_only_once_its_first_turn_is_saved(db: Path) -> None:
    # The thread list was written before the graph ran: a page reading it mid-turn
    # listed a thread whose first message was not saved yet (reopened empty).
    listed_while_answering: list[list[str]] = []

    def reply(messages: list[BaseMessage]) -> str:
        listed_while_answering.append([t.thread_id for t in service.list_threads()])
        return "Porto it is."

    service = ChatService(db, model=ScriptedChatModel(script=reply))
    try:
        assert _turn(service, "chat-first", "The venue is Porto.")[-1].error is None
        assert listed_while_answering == [[]]
        [info] = service.list_threads()
        assert (info.thread_id, info.title, info.turns) == ("chat-first", "The venue is Porto.", 1)
    finally:
        service.close()


def test_a_first_turn_that_could_not_be_saved_leaves_no_thread_in_the_list(db: Path) -> None:
    # A reply the checkpoint cannot store (a client's raw object in additional_kwargs)
    # fails the turn after the thread list was written: the list showed a thread titled
    # with the message, "1 turn", that reopened empty.
    unstorable = AIMessage("ok", additional_kwargs={"raw": threading.Lock()})
    model = ScriptedChatModel(script=[unstorable, "Porto it is."])
    service = ChatService(db, model=model)
    try:
        with pytest.raises(TypeError, match="serializable"):
            _turn(service, "chat-unsaved", "The venue is Porto.")
        assert service.history("chat-unsaved") == []
        assert service.list_threads() == []
        assert _turn(service, "chat-unsaved", "Where is the venue?")[-1].error is None
        [info] = service.list_threads()
        assert (info.title, info.turns) == ("Where is the venue?", 1)
        assert [h["content"] for h in service.history("chat-unsaved")] == [
            "Where is the venue?", "Porto it is.",
        ]  # fmt: skip
    finally:
        service.close()


def test_empty_and_oversized_messages_change_nothing(db: Path) -> None:
    service = ChatService(db, max_message_chars=1_000)
    thread = service.new_thread_id()
    for bad in ["", "   \n ", "x" * 1_001]:
        with pytest.raises(MessageRejected):
            _turn(service, thread, bad)
    assert service.history(thread) == [] and service.list_threads() == []
    with pytest.raises(MessageRejected, match="1,001 characters; the limit is 1,000"):
        service.check_message("y" * 1_001)
    service.close()


INVISIBLE = [
    "\u200b",  # zero-width space
    "\ufeff",  # byte order mark
    "\u2060\u2060",  # word joiner
    " \u200b\u200c\u200d \n\t\u00a0",  # zero-width (non-)joiners among whitespace
    "\u00ad\u180e\u2061\u206f",  # soft hyphen and other format characters
    "\x00\x07\x1b\x7f\x85",  # control characters
    "\u202e\u2066\u200f",  # bidi controls
    "\U000e0041\U000e007f",  # tag characters
    "\u3164\uffa0\u115f\u1160",  # Hangul fillers (letters that print as nothing)
    "\u2800",  # braille blank
    "\ufe0f\u034f",  # a variation selector and the grapheme joiner with nothing to join
]


@pytest.mark.parametrize("text", INVISIBLE)
def test_a_message_of_invisible_characters_is_refused_like_an_empty_one(
    db: Path, text: str
) -> None:
    # Only str.strip() was checked: a zero-width space (or a BOM, a word joiner, a
    # Hangul filler...) was sent as a turn, answered, and listed as an "(untitled)" thread.
    model = ScriptedChatModel(script="A reply.")
    service = ChatService(db, model=model)
    try:
        with pytest.raises(MessageRejected, match="nothing visible"):
            _turn(service, "chat-invisible", text)
        assert service.history("chat-invisible") == [] and service.list_threads() == []
        assert model.calls == []
        for visible in [f"{text}ok{text}", "\u200b\U0001f44d\ufe0f", "e\u0301", "\ue000"]:
            assert service.check_message(visible) == visible
    finally:
        service.close()


def test_a_thread_title_leaves_out_invisible_characters(db: Path) -> None:
    # Text copied from a web page or a chat app often starts with zero-width characters:
    # the title kept them, so 60 of them made a title that shows nothing.
    service = ChatService(db)
    try:
        text = "\u200b\ufeff" * 35 + "Where\u00ad is \u2060Porto?\u200d"
        list(service.send("chat-title", text, "librarian"))
        [info] = service.list_threads()
        assert info.label().startswith("Where is Porto? · 1 turn · ")
        assert service.history("chat-title")[0]["content"] == text  # the message is kept as sent
    finally:
        service.close()


def test_a_100k_character_paste_is_taken_and_indexed(db: Path) -> None:
    model = _model("Got it.")
    service = ChatService(db, model=model)
    thread = service.new_thread_id()
    paste = ("The quarterly report says revenue grew in Porto. " * 2_100)[:100_000]
    _turn(service, thread, paste)
    _turn(service, thread, "Unrelated: a good pasta recipe?")
    finished = _turn(service, thread, "What did the report say about Porto?")[-1]
    assert finished.error is None
    assert finished.report.selected[0].position == 0
    assert len(finished.report.selected[0].text) == 100_000
    assert len(service.history(thread)[0]["content"]) == 100_000
    assert "more characters, kept in the thread" in inspector_html(finished.report)
    # ~25k tokens cannot fit the default budget: the model got the paste's summary.
    assert finished.report.selected[0].shortened
    assert "summary sent (too long)" in inspector_html(finished.report)
    service.close()


def test_two_tabs_on_one_thread_take_turns_and_lose_nothing(db: Path) -> None:
    model = _model("a b c d e f g h", pause=0.05)
    service = ChatService(db, model=model)
    thread = service.new_thread_id()
    results: dict[str, list[Any]] = {}

    def tab(name: str) -> None:
        results[name] = _turn(service, thread, f"message from {name}")

    first = threading.Thread(target=tab, args=("tab A",))
    first.start()
    while not model.inputs:  # tab A's model call is under way
        time.sleep(0.01)
    second = threading.Thread(target=tab, args=("tab B",))
    second.start()
    first.join(30)
    second.join(30)
    assert isinstance(results["tab B"][0], TurnWaiting)
    history = service.history(thread)
    assert [h["content"] for h in history] == [
        "message from tab A", "a b c d e f g h", "message from tab B", "a b c d e f g h",
    ]  # fmt: skip
    service.close()


def test_threads_persist_across_a_restart(db: Path) -> None:
    service = ChatService(db, model=_model("Sure."))
    old = service.new_thread_id()
    for text in FACTS[:3]:
        _turn(service, old, text)
    report = service.report(old)
    new = service.new_thread_id()
    _turn(service, new, "A new session starts here.")
    service.close()

    reopened = ChatService(db)
    listed = [t.thread_id for t in reopened.list_threads()]
    assert listed == [new, old]  # most recent first; the old thread was not deleted
    assert len(reopened.history(old)) == 6
    assert reopened.history(new)[0]["content"] == "A new session starts here."
    again = reopened.report(old)
    assert again is not None and report is not None
    assert again.question == report.question == FACTS[2]
    assert again.sent_tokens == report.sent_tokens
    assert reopened.threads.get(old) is not None and reopened.threads.get(old).turns == 3  # type: ignore[union-attr]
    reopened.close()


def test_a_deleted_thread_is_gone_from_the_list_the_file_and_recall(db: Path) -> None:
    service = ChatService(db, model=_model("Sure."))
    gone = service.new_thread_id()
    _turn(service, gone, "My locker code is 4471, keep it secret.")
    kept = service.new_thread_id()
    _turn(service, kept, "The garden needs water on Tuesday.")
    probe = _turn(service, service.new_thread_id(), "What is my locker code?")[-1].report
    assert any(r["thread_id"] == gone for r in probe.recalled)  # before: it is recalled
    assert service.delete_thread(gone) == 2  # the question and the answer, copied
    assert gone not in [t.thread_id for t in service.list_threads()]
    assert service.history(gone) == [] and service.report(gone) is None
    assert len(service.history(kept)) == 2
    asker = service.new_thread_id()
    report = _turn(service, asker, "What is my locker code?")[-1].report
    assert not any(r["thread_id"] == gone for r in report.recalled)
    service.close()
    reopened = ChatService(db)  # deleted for good, not only in this process
    assert reopened.threads.get(gone) is None and reopened.history(gone) == []
    reopened.close()


def test_a_thread_label_drops_the_bidi_controls_of_its_title(db: Path) -> None:
    """A first message with a right-to-left override (U+202E) made the thread list show
    the label's turns and date reversed after the title ("2026-... · nrut 1")."""
    service = ChatService(db, model=_model("Sure."))
    thread = service.new_thread_id()
    _turn(service, thread, "invoice \u202efdp.exe\u202c and \u2067شكرا\u2069 \u200fok")
    label = service.threads.get(thread).label()  # type: ignore[union-attr]
    assert label.startswith("invoice fdp.exe and شكرا ok · 1 turn · ")
    assert service.list_threads()[0].title.startswith("invoice \u202e")  # stored as typed
    service.close()


@pytest.mark.parametrize(
    "content",
    [b"this is not a database at all, just text\n" * 50, b"SQLite format 3\x00" + b"\xff" * 4000],
)
def test_a_corrupt_database_is_refused_and_left_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "chat.db"
    path.write_bytes(content)
    with pytest.raises(ChatDatabaseError, match="left untouched"):
        ChatService(path)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.db"]  # no journal, no WAL


def test_paths_that_cannot_be_the_database(tmp_path: Path) -> None:
    with pytest.raises(ChatDatabaseError, match="is a directory"):
        ChatService(tmp_path)
    with pytest.raises(ChatDatabaseError, match="does not exist"):
        ChatService(tmp_path / "missing" / "chat.db")
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER)")
    before = foreign.read_bytes()
    with pytest.raises(ChatDatabaseError, match="another application's database"):
        ChatService(foreign)
    assert foreign.read_bytes() == before


def test_the_demo_loads_as_a_new_indexed_thread_with_a_gist(db: Path) -> None:
    service = ChatService(db)
    seen: list[tuple[int, int]] = []
    demo = service.load_demo(n_messages=60, progress=lambda done, total: seen.append((done, total)))
    overview = service.overview(demo.thread_id)
    assert overview["messages"] == overview["indexed"] == demo.messages == 60
    assert overview["gist"]  # folded by the graph's own index step
    assert demo.questions and seen and service.report(demo.thread_id) is None
    values = service.graph.get_state(service._config(demo.thread_id)).values
    from langgraph_librarian._apps.demo_conversation import generate_conversation

    conv = generate_conversation(11, n_messages=60, noise="medium", n_facts=12, conv_id="demo")
    question = conv.questions[0]
    report = _turn(service, demo.thread_id, question.text)[-1].report
    picked = {values["messages"][r.position].id for r in report.selected}
    assert set(question.evidence) <= picked  # the needed message was selected
    # The terminal inspector shows the sentence that matched (the summary of a long
    # message may be about something else).
    from langgraph_librarian.ui._render import inspector_text, matching_sentence

    text = inspector_text(report)
    for row in report.selected:
        if values["messages"][row.position].id in question.evidence:
            sentence = matching_sentence(row.text, question.text)
            assert sentence and " ".join(sentence.split())[:60] in text
    assert [t.title for t in service.list_threads()] == ["Demo conversation (60 messages)"]
    # its user messages are its turns (the list said "0 turns"), and a question adds one
    human = sum(m.type == "human" for m in conv.messages)
    assert [t.turns for t in service.list_threads()] == [human + 1]
    service.close()


def test_a_failing_selector_shows_its_fallback(db: Path) -> None:
    selector = ScriptedChatModel(script=[RuntimeError("selector is down")])
    config = LibrarianConfig(
        indexer_model="local", selector_model=selector, running_summary_tokens=200, max_retries=0
    )
    service = ChatService(db, librarian_config=config)
    thread = service.new_thread_id()
    for text in FACTS:
        _turn(service, thread, text)
    report = _turn(service, thread, "Which nuts should I avoid?")[-1].report
    assert report.selection_strategy == "local_fallback"
    assert "selector is down" in str(report.fallback_reason)
    assert "Fallback:" in inspector_html(report)
    service.close()


def test_recall_has_a_place_in_the_inspector(db: Path) -> None:
    calls: list[str] = []

    def recall(state: dict[str, Any], config: Any) -> tuple[BaseMessage | None, dict[str, Any]]:
        calls.append(config["configurable"]["thread_id"])
        record = {"text": "Allergic to peanuts.", "thread_id": "chat-old", "message_id": "m1"}
        return SystemMessage("Recalled: allergic to peanuts."), {
            "status": "recalled",
            "records": [record],
        }

    model = _model()
    service = ChatService(db, model=model, recall=recall)
    thread = service.new_thread_id()
    report = _turn(service, thread, "Dessert idea?")[-1].report
    assert calls == [thread]
    assert model.inputs[-1][0].content == "Recalled: allergic to peanuts."
    html = inspector_html(report)
    assert "Allergic to peanuts." in html and "chat-old" in html
    service.close()


def test_message_text_is_escaped_in_the_inspector(db: Path) -> None:
    service = ChatService(db)
    thread = service.new_thread_id()
    report = _turn(service, thread, "<script>alert(1)</script> & <b>bold</b>")[-1].report
    html = inspector_html(report)
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>bold" not in html
    service.close()


def test_a_config_without_a_running_summary_gets_the_chat_default(db: Path) -> None:
    # launch(ChatService(db, librarian_config=LibrarianConfig(...))) as docs/ui.md shows:
    # the user's settings are kept, the running summary the chat compares gets 400.
    service = ChatService(db, librarian_config=LibrarianConfig(max_selected=7))
    assert service.config.running_summary_tokens == 400
    assert service.config.max_selected == 7
    service.close()


def test_unknown_strategy_is_refused_before_anything_is_saved(db: Path) -> None:
    service = ChatService(db)
    thread = service.new_thread_id()
    with pytest.raises(ValueError, match="unknown strategy"):
        _turn(service, thread, "hello", "all")
    assert service.history(thread) == []
    service.close()


def test_ai_chunks_of_the_librarian_are_not_streamed(db: Path) -> None:
    """With a model indexer and selector, only the agent's tokens reach the chat."""
    librarian = GenericFakeChatModel(
        messages=iter([AIMessage("IDs: [0]")] + [AIMessage("A short summary.")] * 100)
    )
    config = LibrarianConfig(
        indexer_model=librarian, selector_model=librarian, running_summary_tokens=200
    )
    model = _model("Only this.")
    service = ChatService(db, model=model, librarian_config=config)
    thread = service.new_thread_id()
    for text in FACTS[:3]:
        _turn(service, thread, text + " " + "padding words " * 40)
    events = _turn(service, thread, "Which nuts?")
    assert "".join(e.text for e in events if isinstance(e, TurnToken)) == "Only this."
    service.close()


def test_the_inspector_shows_the_sentence_a_selection_matches() -> None:
    """A long message whose summary is about something else: the card also shows the
    sentence that shares the question's words (the demo's "why was this picked")."""
    from langgraph_librarian.ui._render import _message_html, matching_sentence
    from langgraph_librarian.ui._report import MessageRow

    text = (
        "Amara mentioned that the team in Cork had a similar problem last spring. "
        "The coffee machine broke again. "
        "The budget for Project Beacon Willow is $37,500, approved on Monday."
    )
    question = "What is the budget for Project Beacon Willow?"
    assert matching_sentence(text, question) == (
        "The budget for Project Beacon Willow is $37,500, approved on Monday."
    )
    row = MessageRow(
        position=124,
        message_id="m124",
        role="human",
        summary="Amara mentioned that the team in Cork had a similar problem last spring.",
        status="extractive",
        text=text,
        tokens=40,
        sent=True,
    )
    html = _message_html(row, "selected", question)
    assert 'class="lib-match"' in html and "$37,500" in html.split("lib-full")[0]
    assert 'class="lib-match"' not in _message_html(row, "recent")  # only for selections
    assert matching_sentence(text, "Unrelated words entirely?") is None


def test_a_demo_thread_offers_its_questions_again_and_no_other_thread_does(db: Path) -> None:
    service = ChatService(db)
    demo = service.load_demo(n_messages=60)
    other = service.new_thread_id()
    _turn(service, other, "Demo conversation (60 messages)")  # a title like the demo's
    service.close()
    reopened = ChatService(db)  # a restart: the questions come from the thread list
    assert reopened.demo_questions(demo.thread_id) == demo.questions
    assert reopened.demo_questions(other) == []
    assert reopened.demo_questions("chat-000000000000") == []
    seeded = reopened.load_demo(n_messages=40, seed=5)
    assert reopened.threads.get(seeded.thread_id).title == (  # type: ignore[union-attr]
        "Demo conversation (40 messages, seed 5)"
    )
    assert reopened.demo_questions(seeded.thread_id) == seeded.questions != demo.questions
    reopened.close()
