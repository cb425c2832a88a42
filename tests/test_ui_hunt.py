"""Bugs found by hunting the web chat as a demanding user would: each test drives the
page's own endpoints over HTTP (a real Gradio server on 127.0.0.1, called with
``gradio_client``), as the browser does."""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown_it
import pytest
from gradio_client import Client  # the ui extra brings it: required, never skipped
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk

from langgraph_librarian.ui import ChatService, launch
from langgraph_librarian.ui._markdown import reply_markdown
from langgraph_librarian.ui._service import MessageRejected
from langgraph_librarian.ui._terminal import run_terminal_chat

# The page renders GitHub's Markdown: tables too.
RENDER = markdown_it.MarkdownIt("commonmark", {"breaks": True, "html": True}).enable("table")
PIXEL = "http://127.0.0.1:9/pixel"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def _tags(markdown: str) -> list[str]:
    parser = _Tags()
    parser.feed(RENDER.render(markdown))
    return parser.tags


class ScriptedModel(GenericFakeChatModel):
    """Replies with the text after ``ECHO:`` in the question (what a prompt injection
    makes a model say); a question starting ``ERR:`` fails with the rest as the error."""

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        last = str(messages[-1].content)
        if last.startswith("ERR:"):
            raise ValueError(last[4:])
        yield ChatGenerationChunk(message=AIMessageChunk(content=last.removeprefix("ECHO:")))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    db = tmp_path_factory.mktemp("hunt") / "chat.db"
    model = ScriptedModel(messages=iter([AIMessage("unused")]))
    service = ChatService(db, model=model, model_label="scripted:model", scope=None)
    port = _free_port()
    app = launch(service, host="127.0.0.1", port=port, block=False, quiet=True)
    try:
        yield Client(f"http://127.0.0.1:{port}/", verbose=False)
    finally:
        app.close()
        service.close()


def _last_reply(client: Client, text: str, thread: str) -> str:
    chat = client.predict(text, thread, "librarian", "", api_name="/respond")[0]
    return str(chat[-1]["content"][0]["text"])


@pytest.mark.parametrize(
    "reply",
    [
        f'an escaped backslash, then a tag: \\\\<img src="{PIXEL}">',
        f"an escaped backslash, then an image: \\\\![x]({PIXEL})",
        f'two escaped backslashes, then a tag: \\\\\\\\<img src="{PIXEL}">',
    ],
)
def test_a_reply_cannot_load_an_image_behind_an_escaped_backslash(
    client: Client, reply: str
) -> None:
    # docs/ui.md: "raw HTML in a reply is shown as text and an image as a link, so a
    # reply cannot make the page load anything". A backslash written as "\\" before
    # the tag was taken for an escape of the tag: the image loaded.
    shown = _last_reply(client, f"ECHO:{reply}", "chat-hunt-reply")
    assert "img" not in _tags(shown)
    assert PIXEL in shown  # shown as text, not dropped


@pytest.mark.parametrize(
    "reply",
    [
        f'a run of two closes no code span of one: `<img src="{PIXEL}">`` end',
        f'an escaped backtick opens no code span: \\`<img src="{PIXEL}">` end',
        f'`a` then a run of two opens none: ``<img src="{PIXEL}">` end',
        f'no code span across a blank line: `a\n\n<img src="{PIXEL}">` end',
        f'no code span into a heading: `a\n# <img src="{PIXEL}">` end',
        # (markdown-it-py keeps a code span whole in a table cell; the page's renderer,
        # marked, splits the cell at the "|" and loaded the image)
        f'a table cell ends the span: | `a | <img src="{PIXEL}"> | b` |\n|---|---|---|',
    ],
)
def test_a_reply_cannot_load_an_image_from_what_only_looks_like_code(
    client: Client, reply: str
) -> None:
    # reply_markdown leaves code spans as they are (their "<" is text); it took
    # backticks for a code span that the renderer does not see as one, and the <img>
    # in between loaded.
    shown = _last_reply(client, f"ECHO:{reply}", "chat-hunt-code")
    assert "img" not in _tags(shown)
    assert PIXEL in shown


@pytest.mark.parametrize(
    "reply",
    [
        f'```<b>x</b>``` (backticks after a fence: no fence)\n<img src="{PIXEL}">\n```',
        f'1. a list item with a fence\n   ```\n<img src="{PIXEL}">\n   ```',
        # (markdown-it-py keeps the block open; marked closes it at "```~")
        f'```\ncode\n```~\n<img src="{PIXEL}">',
    ],
)
def test_a_reply_cannot_load_an_image_after_what_only_looks_like_a_fence(
    client: Client, reply: str
) -> None:
    # Lines after a fence were left as code, unescaped; the renderer saw no code block
    # there (or had closed it) and loaded the image.
    shown = _last_reply(client, f"ECHO:{reply}", "chat-hunt-fence")
    assert "img" not in _tags(shown)
    assert PIXEL in shown


def test_code_spans_in_a_reply_still_show_their_markup_as_code() -> None:
    shown = reply_markdown("Use `<b>bold</b>` or ``a `<i>` b`` here.")
    html = RENDER.render(shown)
    assert "<code>&lt;b&gt;bold&lt;/b&gt;</code>" in html
    assert "<code>a `&lt;i&gt;` b</code>" in html


def test_a_model_error_is_shown_as_text_and_loads_nothing(client: Client) -> None:
    # The model's (or its server's) error message went into the chat as Markdown: an
    # <img> or ![](...) in it loaded from anywhere.
    error = f'bad request <img src="{PIXEL}"> ![y]({PIXEL}) **not bold**'
    shown = _last_reply(client, f"ERR:{error}", "chat-hunt-error")
    tags = _tags(shown)
    assert "img" not in tags and tags.count("strong") == 1  # only "The model failed"
    assert "The model failed" in shown


def test_the_terminal_chat_prints_no_control_sequences_from_saved_messages(
    tmp_path: Path,
) -> None:
    # A message typed in the web chat (any tab, any thread of the file) with terminal
    # escape sequences: `librarian chat` printed them raw in /threads, /open and the
    # turn's report, so the text could clear the screen, retitle the window or write
    # the clipboard (OSC 52) of whoever reads the same file in a terminal.
    hostile = "Hi \x1b]52;c;ZXZpbA==\x07 there \x1b[2J\x1b[31mred\x9b1m \r over"
    service = ChatService(tmp_path / "chat.db")
    try:
        list(service.send("chat-web", hostile, "librarian"))
        out = io.StringIO()
        lines = "/threads\n/open chat-web\nHi there red\n/quit\n"
        run_terminal_chat(service, stdin=io.StringIO(lines), out=out)
    finally:
        service.close()
    printed = out.getvalue()
    assert "Hi" in printed and "red" in printed and "over" in printed
    assert not {"\x1b", "\x07", "\x9b", "\r"} & set(printed)


def test_a_message_with_a_lone_surrogate_is_refused_not_a_crash(tmp_path: Path) -> None:
    # A line that is not UTF-8 in `librarian chat` (Python reads the byte 0xff as the
    # lone surrogate U+DCFF), or a lone surrogate sent by the page: SQLite could not
    # encode it, the terminal chat ended with a traceback and the web chat said "The
    # turn failed: UnicodeEncodeError". Now it is refused like any message that cannot
    # be sent, and the chat goes on.
    service = ChatService(tmp_path / "chat.db")
    try:
        with pytest.raises(MessageRejected, match="not valid Unicode"):
            list(service.send("chat-bytes", "caf\udce9 au lait", "librarian"))
        out = io.StringIO()
        lines = "bad \udcff byte\nthe next line is sent\n"
        assert run_terminal_chat(service, stdin=io.StringIO(lines), out=out) == 0
        assert "(not sent: " in out.getvalue()
        assert [t.title for t in service.list_threads()] == ["the next line is sent"]
    finally:
        service.close()


def test_the_terminal_chat_reopens_a_failed_turn_saying_the_model_failed(
    tmp_path: Path,
) -> None:
    # /open listed the failed question as if nothing had happened to it.
    from fakes import ScriptedChatModel

    model = ScriptedChatModel(script=[RuntimeError("the provider is down")])
    service = ChatService(tmp_path / "chat.db", model=model, scope=None)
    try:
        list(service.send("chat-failed", "Where is the venue?", "librarian"))
        out = io.StringIO()
        run_terminal_chat(service, stdin=io.StringIO("/open chat-failed\n"), out=out)
    finally:
        service.close()
    opened = out.getvalue().split("thread chat-failed: ", 1)[1]
    assert "user: Where is the venue?" in opened
    assert "the model failed: RuntimeError: the provider is down" in opened


def test_a_message_of_invisible_characters_is_refused_over_http(client: Client) -> None:
    # What the page's /respond endpoint is sent (by the page or any HTTP client): a
    # message of zero-width spaces and a BOM was taken as a turn.
    outputs = client.predict(
        "\u200b\ufeff \u2060", "chat-hunt-blank", "librarian", "", api_name="/respond"
    )
    status = str(outputs[3])
    assert "Not sent" in status and "nothing visible" in status
    assert outputs[0] in ([], None) or all("\u200b" not in str(line) for line in outputs[0])


def test_the_terminal_chat_refuses_a_line_of_invisible_characters(tmp_path: Path) -> None:
    service = ChatService(tmp_path / "chat.db")
    try:
        out = io.StringIO()
        lines = "\u200b\u200b\n\ufeff\nA real message\n"
        assert run_terminal_chat(service, stdin=io.StringIO(lines), out=out) == 0
        assert out.getvalue().count("nothing visible") == 2
        assert [t.title for t in service.list_threads()] == ["A real message"]
        [thread] = service.list_threads()
        assert [h["content"] for h in service.history(thread.thread_id)] == ["A real message"]
    finally:
        service.close()


def test_a_line_the_terminal_chat_refuses_is_not_printed_as_the_assistants_reply(
    tmp_path: Path,
) -> None:
    # "assistant: " was printed before the message was checked: a refused line read
    # "assistant: (not sent: ...)", as if the model had said so.
    service = ChatService(tmp_path / "chat.db", max_message_chars=10)
    try:
        out = io.StringIO()
        run_terminal_chat(service, stdin=io.StringIO("\u200b\nfar too long a line\n"), out=out)
    finally:
        service.close()
    refusals = [line for line in out.getvalue().splitlines() if "not sent" in line]
    assert len(refusals) == 2
    assert all(line.startswith("(not sent: ") for line in refusals), refusals


def test_the_terminal_chats_thread_list_says_when_it_is_empty(tmp_path: Path) -> None:
    # /threads on a new database printed nothing at all, as if the command were ignored.
    service = ChatService(tmp_path / "chat.db")
    try:
        out = io.StringIO()
        run_terminal_chat(service, stdin=io.StringIO("/threads\n"), out=out)
    finally:
        service.close()
    assert "no saved threads yet" in out.getvalue()


def test_a_turn_that_fails_in_the_terminal_chat_is_reported_and_the_chat_goes_on(
    tmp_path: Path,
) -> None:
    # The web chat says "The turn failed: ..." and goes on; `librarian chat` ended with a
    # traceback on the same failure (here a reply the checkpoint cannot store).
    import threading

    from fakes import ScriptedChatModel

    unstorable = AIMessage("ok", additional_kwargs={"raw": threading.Lock()})
    model = ScriptedChatModel(script=[unstorable, "In Porto."])
    service = ChatService(tmp_path / "chat.db", model=model, scope=None)
    try:
        out = io.StringIO()
        lines = "Where is the venue?\nWhere is the venue, again?\n"
        assert run_terminal_chat(service, stdin=io.StringIO(lines), out=out) == 0
        [thread] = service.list_threads()
        assert [h["content"] for h in service.history(thread.thread_id)] == [
            "Where is the venue, again?",
            "In Porto.",
        ]
    finally:
        service.close()
    assert "(the turn failed: TypeError: " in out.getvalue()


def test_a_demo_that_fails_to_load_in_the_terminal_chat_is_reported_and_the_chat_goes_on(
    tmp_path: Path,
) -> None:
    service = ChatService(tmp_path / "chat.db", scope=None)

    def broken_demo(**_: Any) -> Any:
        raise OSError("scripted: the disk is full")

    service.load_demo = broken_demo  # type: ignore[method-assign]
    try:
        out = io.StringIO()
        lines = "/demo\nStill here?\n"
        assert (
            run_terminal_chat(service, thread_id="chat-t", stdin=io.StringIO(lines), out=out) == 0
        )
        assert [t.thread_id for t in service.list_threads()] == ["chat-t"]
    finally:
        service.close()
    assert "(the demo could not be loaded: OSError: scripted: the disk is full)" in out.getvalue()


def test_ctrl_c_during_an_answer_stops_the_answer_not_the_terminal_chat(tmp_path: Path) -> None:
    # Ctrl-C while the model answered ended `librarian chat` ("librarian: interrupted"):
    # at a prompt, it stops the answer and the chat goes on (Ctrl-D or /quit to leave).
    from fakes import ScriptedChatModel

    model = ScriptedChatModel(script=[KeyboardInterrupt(), "Noted."])
    service = ChatService(tmp_path / "chat.db", model=model, scope=None)
    try:
        out = io.StringIO()
        lines = "The venue is Porto.\nLunch is at noon.\n"
        assert (
            run_terminal_chat(service, thread_id="chat-c", stdin=io.StringIO(lines), out=out) == 0
        )
        assert [h["content"] for h in service.history("chat-c")] == [
            "The venue is Porto.",
            "Lunch is at noon.",
            "Noted.",
        ]
        [info] = service.list_threads()
        assert info.turns == 2
    finally:
        service.close()
    assert "(interrupted: no answer; your message is saved: send it again" in out.getvalue()


def test_a_question_stopped_with_ctrl_c_sent_again_is_retried_not_copied(tmp_path: Path) -> None:
    from fakes import ScriptedChatModel

    model = ScriptedChatModel(script=[KeyboardInterrupt(), "In Porto."])
    service = ChatService(tmp_path / "chat.db", model=model, scope=None)
    try:
        out = io.StringIO()
        lines = "Where is the venue?\nWhere is the venue?\n"
        assert (
            run_terminal_chat(service, thread_id="chat-c", stdin=io.StringIO(lines), out=out) == 0
        )
        assert [h["content"] for h in service.history("chat-c")] == [
            "Where is the venue?",
            "In Porto.",
        ]
        assert [t.turns for t in service.list_threads()] == [1]
    finally:
        service.close()
