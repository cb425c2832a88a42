"""The Gradio page's helpers, without a browser (tests/test_ui_browser.py drives the page)."""

from __future__ import annotations

from pathlib import Path

from langgraph_librarian.ui import ChatService
from langgraph_librarian.ui._app import _thread_choices


def test_the_thread_list_shows_the_current_thread_also_past_the_newest_200(
    tmp_path: Path,
) -> None:
    service = ChatService(tmp_path / "chat.db", scope=None)
    try:
        service.threads.touch("chat-oldest", "The oldest thread")
        for n in range(200):
            service.threads.touch(f"chat-{n:03d}", f"Thread {n}")
        update = _thread_choices(service, "chat-oldest", interactive=True)
        assert update["value"] == "chat-oldest"
        assert update["choices"][-1][0].startswith("The oldest thread")
        assert len(update["choices"]) == 201 and update["interactive"] is True
        newest = _thread_choices(service, "chat-199")
        assert newest["value"] == "chat-199" and len(newest["choices"]) == 200
        assert _thread_choices(service, "chat-unsaved")["value"] is None
    finally:
        service.close()


def test_an_offline_thread_reopened_says_no_model_answered_not_that_a_reply_was_lost(
    tmp_path: Path,
) -> None:
    from langgraph_librarian.ui._app import NO_MODEL, NO_REPLY, _chat_lines

    service = ChatService(tmp_path / "chat.db", scope=None)
    try:
        for text in ["The venue is Porto.", "Where is the venue?"]:
            list(service.send("chat-offline", text, "librarian"))
        lines = _chat_lines(service, "chat-offline")
        assert [line["role"] for line in lines] == ["user", "assistant", "user", "assistant"]
        assert lines[1]["content"] == lines[3]["content"] == NO_MODEL
        assert NO_REPLY not in {line["content"] for line in lines}
    finally:
        service.close()


def test_a_failed_turn_reopened_still_says_the_model_failed(tmp_path: Path) -> None:
    # After a reload the failed message only said "no reply saved for this message":
    # the error the page had shown (and the inspector still showed) was gone from the chat.
    from fakes import ScriptedChatModel
    from langgraph_librarian.ui._app import NO_REPLY, _chat_lines

    model = ScriptedChatModel(script=[RuntimeError("the provider is down"), "In Porto."])
    service = ChatService(tmp_path / "chat.db", model=model, scope=None)
    try:
        assert list(service.send("chat-failed", "Where is the venue?", "librarian"))[-1].error
        lines = _chat_lines(service, "chat-failed")
        assert [line["role"] for line in lines] == ["user", "assistant"]
        assert "The model failed" in lines[1]["content"]
        assert "the provider is down" in lines[1]["content"]
        list(service.send("chat-failed", "So, where is it?", "librarian"))
        replies = [line["content"] for line in _chat_lines(service, "chat-failed")][1::2]
        assert replies == [NO_REPLY, "In Porto."]
    finally:
        service.close()


def test_an_empty_reply_is_shown_as_empty_not_as_a_reply_that_was_never_saved(
    tmp_path: Path,
) -> None:
    # A model that answers with no text (a content filter, a reasoning model out of
    # tokens): the empty reply was saved, yet the chat said "no reply saved for this
    # message", live and after a reload, and `librarian chat` printed nothing at all.
    import io

    from fakes import ScriptedChatModel
    from langgraph_librarian.ui._app import EMPTY_REPLY, NO_REPLY, _chat_lines
    from langgraph_librarian.ui._terminal import run_terminal_chat

    model = ScriptedChatModel(script=["", "\u200b", "In Porto."])
    service = ChatService(tmp_path / "chat.db", model=model, scope=None)
    try:
        out = io.StringIO()
        lines = "Where is the venue?\nAnd now?\nThird time?\n"
        run_terminal_chat(service, thread_id="chat-empty", stdin=io.StringIO(lines), out=out)
        assert out.getvalue().count("(the model sent an empty reply)") == 2
        replies = [line["content"] for line in _chat_lines(service, "chat-empty")][1::2]
        assert replies == [EMPTY_REPLY, EMPTY_REPLY, "In Porto."]
        assert NO_REPLY not in replies
    finally:
        service.close()


def test_offline_turns_reopened_with_a_model_still_say_no_model_answered(tmp_path: Path) -> None:
    # Tried without --model first, then restarted with one: the offline turns of the
    # same file read "no reply saved for this message", as if answers had been lost.
    from fakes import ScriptedChatModel
    from langgraph_librarian.ui._app import NO_MODEL, NO_REPLY, _chat_lines

    db = tmp_path / "chat.db"
    offline = ChatService(db, scope=None)
    try:
        list(offline.send("chat-both", "The venue is Porto.", "librarian"))
    finally:
        offline.close()
    model = ScriptedChatModel(script=[RuntimeError("the provider is down"), "Noted."])
    online = ChatService(db, model=model, scope=None)
    try:
        list(online.send("chat-both", "Lunch is at noon.", "librarian"))  # fails
        list(online.send("chat-both", "Where is the venue?", "librarian"))
        replies = [line["content"] for line in _chat_lines(online, "chat-both")][1::2]
        assert replies == [NO_MODEL, NO_REPLY, "Noted."]
    finally:
        online.close()
    offline = ChatService(db, scope=None)  # and back without a model
    try:
        replies = [line["content"] for line in _chat_lines(offline, "chat-both")][1::2]
        assert replies == [NO_MODEL, NO_REPLY, "Noted."]
    finally:
        offline.close()
