"""``librarian ui`` end to end: a real server process, a real headless Chromium.

The browser is Debian's ``chromium`` package driven by Playwright (never a downloaded
browser). The chat model is the real ``ChatOpenAI`` client talking to a scripted
OpenAI-compatible server on 127.0.0.1 that streams word by word, can stream slowly, and
can fail in the middle of a reply. The page may not fetch anything from outside
127.0.0.1 (fonts, analytics): every test checks that.

In CI (``CI=true``) a missing browser or Playwright is a failure, never a skip.

Set ``LIBRARIAN_UI_SCREENSHOT=docs/ui-inspector.png`` to save the inspector screenshot
of the demo test there (the README and docs/ui.md show it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

CI = os.environ.get("CI", "").lower() == "true"
CHROMIUM = shutil.which("chromium")
try:
    from playwright.sync_api import Browser, Page, sync_playwright
except ImportError:  # pragma: no cover - exercised only where Playwright is missing
    sync_playwright = None  # type: ignore[assignment]

BROWSER_ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
START_TIMEOUT = 180.0  # importing Gradio on a loaded 2-core machine takes a while
TURN_TIMEOUT_MS = 60_000


def _require_browser() -> None:
    missing = []
    if sync_playwright is None:
        missing.append("playwright (pip install -e '.[test]')")
    if CHROMIUM is None:
        missing.append("chromium (apt-get install -y chromium)")
    if missing:
        message = "browser tests need " + " and ".join(missing)
        if CI:
            pytest.fail(message)
        pytest.skip(message)


# -- a scripted OpenAI-compatible server that streams -----------------------------------------


class StreamingChatServer:
    """``POST /v1/chat/completions`` with ``stream: true``, answered word by word.

    The reply names how many messages the model got. A last user message containing
    ``FAIL`` gets two words and then an error event (the client raises mid-stream);
    ``SLOW`` streams slowly (to overlap two tabs); ``STALL`` stops for eight seconds
    after two words (to reload the page mid-answer); ``MARKUP`` gets a reply in Markdown
    with bold text, a ``javascript:`` link and raw HTML (for the chat's sanitizer).
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handle(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(body)
                last = str(body["messages"][-1].get("content") or "")
                words = f"I read {len(body['messages'])} messages and here is my answer .".split()
                if "MARKUP" in last:
                    words = MARKUP_REPLY.split(" ")
                pause = 0.4 if "SLOW" in last else 0.12
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for n, word in enumerate(words):
                    if "FAIL" in last and n == 2:
                        self._event({"error": {"message": "scripted failure mid-stream"}})
                        return
                    self._event(_chunk(word + (" " if n < len(words) - 1 else "")))
                    time.sleep(8.0 if "STALL" in last and n == 1 else pause)
                self._event(_chunk("", finish="stop"))
                self.wfile.write(b"data: [DONE]\n\n")

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handle)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


MARKUP_REPLY = (
    "A **bold** word, [a bad link](javascript:window.__pwned='bot-link') and "
    "<img src=x onerror=\"window.__pwned='bot-img'\"> end ."
)


def _chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": text} if text else {}
    return {
        "id": "chatcmpl-ui",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


# -- the UI server process ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class UiProcess:
    """``librarian ui`` in its own process, on a free loopback port."""

    def __init__(
        self, db: Path, log: Path, model_url: str | None = None, port: int | None = None
    ) -> None:
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        command = [sys.executable, "-m", "langgraph_librarian.cli", "ui", "--db", str(db)]
        command += ["--host", "127.0.0.1", "--port", str(self.port)]
        env = {**os.environ, "LIBRARIAN_EMBEDDINGS": "none", "GRADIO_ANALYTICS_ENABLED": "False"}
        if model_url:
            command += ["--model", "openai:gpt-4o-mini"]
            env.update(OPENAI_BASE_URL=model_url, OPENAI_API_KEY="sk-scripted")
        self.log = log
        self._log_file = log.open("ab")
        self.process = subprocess.Popen(
            command, env=env, stdout=self._log_file, stderr=subprocess.STDOUT
        )
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"librarian ui exited early:\n{self.log.read_text()[-3000:]}")
            with contextlib.suppress(OSError), urllib.request.urlopen(self.url, timeout=2) as page:
                if page.status == 200:
                    return
            time.sleep(0.5)
        self.stop()
        pytest.fail(f"librarian ui did not start in time:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._log_file.close()


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    _require_browser()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def chat_model() -> Iterator[StreamingChatServer]:
    server = StreamingChatServer()
    yield server
    server.stop()


class Pages:
    """Opens pages that may only talk to 127.0.0.1; records anything else they try."""

    def __init__(self, browser: Browser) -> None:
        self.context = browser.new_context(viewport={"width": 1600, "height": 1150})
        self.outside: list[str] = []
        self.context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        if re.match(r"^(https?|wss?)://127\.0\.0\.1[:/]", route.request.url):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def open(self, url: str) -> Page:
        page = self.context.new_page()
        page.goto(url)
        page.wait_for_selector("#lib-status :text('Thread')", timeout=TURN_TIMEOUT_MS)
        return page


@pytest.fixture
def pages(browser: Browser) -> Iterator[Pages]:
    opened = Pages(browser)
    yield opened
    opened.context.close()
    assert opened.outside == [], "the page fetched from outside 127.0.0.1"


# -- page helpers ---------------------------------------------------------------------------------


def _thread_id(page: Page) -> str:
    match = re.search(r"Thread (chat-[0-9a-f]+)", page.inner_text("#lib-status"))
    assert match, page.inner_text("#lib-status")
    return match.group(1)


def _bots(page: Page) -> list[str]:
    return page.locator('#lib-chat [data-testid="bot"]').all_inner_texts()


def _users(page: Page) -> list[str]:
    return page.locator('#lib-chat [data-testid="user"]').all_inner_texts()


def _send(page: Page, text: str) -> None:
    page.fill("#lib-message textarea", text)
    page.press("#lib-message textarea", "Enter")


def _wait_turn(page: Page, question: str) -> None:
    """Until the inspector shows the turn that asked ``question`` (it is saved then)."""
    page.wait_for_function(
        "q => (document.querySelector('#lib-inspector .lib-question') || {}).innerText"
        "?.includes(q)",
        arg=" ".join(question.split())[:60],  # the inspector shows the question on one line
        timeout=TURN_TIMEOUT_MS,
    )


def _ask(page: Page, text: str) -> None:
    _send(page, text)
    _wait_turn(page, text)


def _wait_status_leaves(page: Page, thread: str) -> None:
    """Until the status line no longer names ``thread`` (the page moved to another)."""
    page.wait_for_function(
        "t => !document.querySelector('#lib-status').innerText.includes(t)", arg=thread
    )


def _open_threads(page: Page) -> None:
    """Opens the Threads list (it opens once the server sent the current one)."""
    page.click("#lib-threads input")
    page.wait_for_selector("ul[role=listbox] li", timeout=5_000)


def _pick_thread(page: Page, title: str) -> None:
    page.click("#lib-threads input")
    page.locator("ul[role=listbox] li", has_text=title).first.click()
    page.wait_for_function(
        "t => document.querySelector('#lib-status').innerText.includes('Reopened')",
        arg=title,
        timeout=TURN_TIMEOUT_MS,
    )


def _kpi(page: Page, name: str) -> int:
    text = page.inner_text(f"#lib-inspector [data-kpi='{name}'] .lib-kpi-value")
    return int(re.sub(r"[^0-9]", "", text.split(" ")[0]))


FACTS = [
    "I'm allergic to peanuts and tree nuts, please remember it.",
    "Our flat has a tiny oven that only fits one tray.",
    "My sister visits on Friday and she is vegan.",
    "We had ramen for lunch yesterday, it was great.",
]
QUESTION = "Which nuts am I allergic to?"


# -- the tests ------------------------------------------------------------------------------------


def test_chat_streams_inspects_and_reopens_after_a_restart(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    db = tmp_path / "chat.db"
    server = UiProcess(db, tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        first_thread = _thread_id(page)
        for fact in FACTS:
            _ask(page, fact)
        assert len(_bots(page)) == 4

        _send(page, QUESTION)
        seen: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            texts = _bots(page)
            if len(texts) == 5:
                seen.append(texts[-1])
            inspector = page.inner_text("#lib-inspector .lib-question")
            if QUESTION in inspector:
                break
            time.sleep(0.03)
        final = _bots(page)[-1]
        assert final.startswith("I read ") and final.endswith("here is my answer .")
        partial = [t for t in seen if t.strip() not in {"", "…"} and t != final]
        assert partial, f"no partial reply was ever shown: {seen[:5]}"
        assert all(final.startswith(p.strip()) for p in partial)  # it grew word by word

        # The inspector: the allergy message was selected; its full text opens on demand.
        selected = page.locator("#lib-inspector [data-section='selected'] details")
        assert selected.first.get_attribute("data-position") == "0"
        full = selected.first.locator(".lib-full")
        assert not full.is_visible()
        selected.first.locator("summary").click()
        assert FACTS[0] in full.inner_text()
        assert page.locator("#lib-inspector [data-section='recent'] details").count() >= 1
        assert 0 < _kpi(page, "sent") <= _kpi(page, "history")
        # Recall is on by default; this thread's own messages are never recalled into it.
        assert "Nothing recalled" in page.inner_text("#lib-inspector [data-section='recall']")

        page.click("#lib-new")
        _wait_status_leaves(page, first_thread)
        assert _bots(page) == [] and _users(page) == []
        second_thread = _thread_id(page)
        assert "Recall is on" in page.inner_text("#lib-inspector [data-section='recall']")
        _ask(page, "A second session: which nuts should I avoid?")
        assert _users(page) == ["A second session: which nuts should I avoid?"]
        # The New Session recalls the allergy from the first thread, and says where from.
        recalled = page.locator("#lib-inspector [data-section='recall'] li.lib-recalled")
        sources = dict(
            zip(
                recalled.all_inner_texts(),
                recalled.evaluate_all("items => items.map(i => i.dataset.thread)"),
                strict=True,
            )
        )
        allergy = [text for text in sources if FACTS[0][:30] in text]
        assert allergy and sources[allergy[0]] == first_thread
        assert "Recalled from other threads" in page.inner_text("#lib-inspector")
    finally:
        server.stop()

    restarted = UiProcess(db, tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(restarted.url)
        _pick_thread(page, FACTS[0][:40])
        assert _thread_id(page) == first_thread != second_thread
        assert _users(page) == [*FACTS, QUESTION]
        assert len(_bots(page)) == 5
        assert QUESTION in page.inner_text("#lib-inspector .lib-question")
        _ask(page, "And which day does my sister come?")  # the old thread goes on
        assert len(_users(page)) == 6
    finally:
        restarted.stop()


def test_bad_input_in_the_browser(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        # An empty message: refused, nothing added.
        page.press("#lib-message textarea", "Enter")
        page.wait_for_selector("#lib-status :text('Not sent')")
        assert _users(page) == []

        # Zero-width spaces, a BOM and a word joiner: nothing to see, refused the same way.
        _send(page, "\u200b\ufeff \u2060")
        page.wait_for_selector("#lib-status :text('nothing visible')")
        assert _users(page) == [] and _bots(page) == []

        # A 100k-character paste: taken, answered, shown clipped.
        paste = ("The quarterly report says revenue grew in Porto. " * 2_100)[:100_000]
        _ask(page, paste)
        assert "more characters, kept in the thread" in _users(page)[0]
        assert _bots(page)[-1].endswith("here is my answer .")

        # Over the limit: refused, and the text stays in the box.
        too_long = "z" * 200_001
        page.fill("#lib-message textarea", too_long)
        page.press("#lib-message textarea", "Enter")
        page.wait_for_selector("#lib-status :text('200,001 characters')")
        assert len(page.input_value("#lib-message textarea")) == 200_001
        assert len(_users(page)) == 1

        # A model that fails mid-stream: the error is shown, the conversation is kept.
        _ask(page, "Please FAIL in the middle")
        page.wait_for_selector("#lib-chat :text('The model failed')")
        assert "I read" in _bots(page)[-1]  # the words that did arrive
        assert "scripted failure mid-stream" in page.inner_text("#lib-inspector")
        _ask(page, "Are you back?")
        assert _users(page)[-2:] == ["Please FAIL in the middle", "Are you back?"]
        assert "no reply saved for this message" in _bots(page)[-2]
        assert _bots(page)[-1].endswith("here is my answer .")

        # Two tabs on one thread: turns wait for each other; nothing is lost.
        page.click("#lib-new")
        _ask(page, "Shared thread opened in two tabs")
        other = pages.open(server.url)
        _pick_thread(other, "Shared thread opened in two tabs")
        _send(page, "SLOW message from tab one")
        page.wait_for_function(
            "() => document.querySelectorAll('#lib-chat [data-testid=\"bot\"]').length >= 2"
        )
        _send(other, "message from tab two")
        _wait_turn(other, "message from tab two")
        assert _users(other) == [
            "Shared thread opened in two tabs",
            "SLOW message from tab one",
            "message from tab two",
        ]
        assert len(_bots(other)) == 3 and all(b.endswith("my answer .") for b in _bots(other))
    finally:
        server.stop()


def test_offline_demo_strategy_switch_and_screenshot(pages: Pages, tmp_path: Path) -> None:
    from langgraph_librarian._apps.demo_conversation import generate_conversation

    conv = generate_conversation(11, n_messages=240, noise="medium", n_facts=12, conv_id="demo")
    question = conv.questions[0]
    ids = [m.id for m in conv.messages]
    needed = [ids.index(e) for e in question.evidence]

    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log")
    try:
        page = pages.open(server.url)
        page.click("#lib-demo")
        page.wait_for_selector(
            "#lib-status :text('Demo conversation loaded')", timeout=TURN_TIMEOUT_MS * 3
        )
        assert len(_users(page)) + len(_bots(page)) == 240
        assert "240 messages" in page.inner_text("#lib-inspector")

        page.click("#lib-questions input")
        page.locator("ul[role=listbox] li", has_text=question.text).first.click()
        page.wait_for_function(
            "q => document.querySelector('#lib-message textarea').value === q", arg=question.text
        )
        page.click("#lib-send")
        _wait_turn(page, question.text)

        reply = _bots(page)[-1]
        assert "No chat model is configured" in reply
        assert "context the model would have received" in reply
        positions = [
            int(p)
            for p in page.locator("#lib-inspector [data-section='selected'] details").evaluate_all(
                "els => els.map(e => e.dataset.position)"
            )
        ]
        assert set(needed) <= set(positions), (needed, positions)
        assert f"#{needed[0]} user" in reply or f"#{needed[0]} assistant" in reply
        assert _kpi(page, "sent") < _kpi(page, "history") / 5

        needed_row = page.locator(
            f"#lib-inspector [data-section='selected'] details[data-position='{needed[0]}']"
        )
        needed_row.locator("summary").click()
        assert question.answer in needed_row.locator(".lib-full").inner_text()
        target = os.environ.get("LIBRARIAN_UI_SCREENSHOT")
        page.screenshot(path=target or str(tmp_path / "ui-inspector.png"))

        # The same question with every message, then with the running summary.
        page.click("#lib-strategy label:has-text('Everything')")
        _ask(page, f"Again: {question.text}")
        page.wait_for_selector("#lib-inspector .lib-inspector[data-strategy='everything']")
        assert _kpi(page, "sent") == _kpi(page, "history")
        page.click("#lib-strategy label:has-text('Running summary')")
        _ask(page, "And the launch deadline for Project Coral Meadow?")
        page.wait_for_selector("#lib-inspector .lib-inspector[data-strategy='running_summary']")
        assert "sent with this turn" in page.inner_text("#lib-inspector [data-section='gist']")
        assert _kpi(page, "sent") < _kpi(page, "history") / 5
        assert len(_users(page)) == 120 + 3  # nothing deleted by any strategy
    finally:
        server.stop()


def _status_thread_stays(page: Page, expected: str, seconds: float) -> None:
    """The page shows ``expected`` (status, inspector, hidden id) for ``seconds``, sampled.

    ``page.wait_for_timeout``, not ``time.sleep``: the routed requests of the page are
    answered by this process, which must keep running meanwhile.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert _thread_id(page) == expected
        assert page.get_attribute("#lib-inspector .lib-inspector", "data-thread") == expected
        page.wait_for_timeout(250)


def test_new_session_stays_new_and_takes_the_next_message(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """New Session must not bounce back to the previous thread, seconds after the click.

    The cause was the thread dropdown: it sends an ``input`` event whenever it loses
    focus, so a click on New Session with the list focused raced that event against
    the new thread (the page showed the new id while messages went to the old thread).
    """
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        page.set_viewport_size({"width": 1280, "height": 800})
        _ask(page, "The first thread is about peanuts.")
        seen = [_thread_id(page)]
        for run in range(3):
            _open_threads(page)  # the list has focus, as after a look at it
            page.wait_for_timeout(150)
            page.click("#lib-new")
            page.wait_for_function(
                "t => !document.querySelector('#lib-status').innerText.includes(t)",
                arg=seen[-1],
            )
            new = _thread_id(page)
            assert new not in seen
            _status_thread_stays(page, new, 2.0)  # two seconds later: still the new one
            assert _users(page) == [] and _bots(page) == []
            _ask(page, f"Message {run} of the new session")
            _status_thread_stays(page, new, 1.0)
            assert _users(page) == [f"Message {run} of the new session"]
            seen.append(new)

        # A message sent right after the click goes to the new thread.
        page.click("#lib-new")
        _send(page, "Sent at once after New Session")
        _wait_turn(page, "Sent at once after New Session")
        newest = _thread_id(page)
        assert newest not in seen
        _status_thread_stays(page, newest, 2.0)
        assert _users(page) == ["Sent at once after New Session"]
        # ... and every earlier thread kept exactly its own messages.
        _pick_thread(page, "The first thread is about peanuts.")
        assert _thread_id(page) == seen[0]
        assert _users(page) == ["The first thread is about peanuts."]
    finally:
        server.stop()


TYPED = [
    "<img src=x onerror=\"window.__pwned='img'\">",
    "<script>window.__pwned='script'</script> after the script",
    "<svg onload=\"window.__pwned='svg'\"><circle r=5></circle></svg>",
    "[click me](javascript:window.__pwned='link') and **not bold** # not a heading",
    "def f():\n    return '<b>x</b>'  # two spaces kept",
]


def test_what_a_user_types_is_shown_as_typed(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        for text in TYPED:
            _ask(page, text)
        shown = [u.replace("\xa0", " ").rstrip("\n") for u in _users(page)]
        assert shown == TYPED
        # The model's Markdown is rendered, and sanitized: bold is bold, the link and the
        # raw HTML do nothing.
        _ask(page, "MARKUP please")
        bot = page.locator('#lib-chat [data-testid="bot"]').last
        assert bot.locator("strong", has_text="bold").count() == 1
        assert "a bad link" in bot.inner_text()
        assert "<img src=x onerror=" in bot.inner_text()  # raw HTML from the model: text
        # Reload: the saved thread is shown the same way.
        page.reload()
        page.wait_for_selector("#lib-status :text('Thread')", timeout=TURN_TIMEOUT_MS)
        _pick_thread(page, TYPED[0][:30])
        shown = [u.replace("\xa0", " ").rstrip("\n") for u in _users(page)]
        assert shown == [*TYPED, "MARKUP please"]
        assert page.evaluate("() => window.__pwned") is None
        chat = page.locator("#lib-chat")
        assert chat.locator("img, script, svg circle").count() == 0
        hrefs = chat.locator("a").evaluate_all("links => links.map(a => a.href)")
        assert not [h for h in hrefs if h.lower().startswith("javascript:")]
    finally:
        server.stop()


def test_a_message_sent_while_an_answer_streams_is_never_lost(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """Enter during an answer said "queued" and kept the text in the box; the next
    message typed over it replaced it, and only that one was sent: the first was lost
    although the page had accepted it. Now Enter during an answer sends nothing, says
    so, and the text stays in the box (Send is greyed out) until the answer is in."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _send(page, "SLOW first question")
        page.wait_for_function(
            "() => document.querySelectorAll('#lib-chat [data-testid=\"bot\"]').length >= 1"
        )
        _send(page, "Second question, typed while the first is answered")
        with contextlib.suppress(Exception):
            page.wait_for_selector("#lib-status :text('Not sent')", timeout=5_000)
        assert "Not sent" in page.inner_text("#lib-status"), page.inner_text("#lib-status")
        assert page.locator("#lib-send").is_disabled()
        assert page.input_value("#lib-message textarea") == (
            "Second question, typed while the first is answered"
        )
        _send(page, "Third question, typed over the second")  # told it was not sent
        _wait_turn(page, "SLOW first question")
        _wait_idle(page)
        page.wait_for_timeout(1500)  # anything still pending has arrived by now
        assert _users(page) == ["SLOW first question"]
        assert page.input_value("#lib-message textarea") == "Third question, typed over the second"
        assert not page.locator("#lib-send").is_disabled()
        page.press("#lib-message textarea", "Enter")  # sent now, once
        _wait_turn(page, "Third question, typed over the second")
        assert _users(page) == ["SLOW first question", "Third question, typed over the second"]
        assert all(b.endswith("here is my answer .") for b in _bots(page))
        assert page.input_value("#lib-message textarea") == ""
    finally:
        server.stop()


def test_a_reload_mid_answer_shows_the_answer_once_it_is_saved(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """A reload while an answer streamed showed the thread without the question (the
    turn is saved when the answer ends) and nothing more until the next reload: the
    message looked lost. The page now says an answer is being written, then shows it."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "A first question.")
        _send(page, "STALL then reload the page")
        page.wait_for_function(
            "() => { const b = document.querySelectorAll('#lib-chat [data-testid=\"bot\"]');"
            " return b.length == 2 && b[1].innerText.startsWith('I read'); }"
        )
        page.reload()
        said = True
        try:
            page.wait_for_selector("#lib-status :text('still being written')", timeout=8_000)
        except Exception:
            said = False
        page.wait_for_timeout(12_000)  # the answer has been saved by now (no 2nd reload)
        assert _users(page) == ["A first question.", "STALL then reload the page"]
        assert said, "the page did not say that an answer was on its way"
        assert _bots(page)[-1].endswith("here is my answer .")
        assert "still being written" not in page.inner_text("#lib-status")
        # Saved with its answer: the message is not also given back to the box.
        assert page.input_value("#lib-message textarea") == ""
    finally:
        server.stop()


def test_a_reload_mid_first_answer_stays_in_the_thread(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """A thread is listed once its first turn is saved: a reload during that first
    answer must still reopen it (not start another thread), then show the answer."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        thread = _thread_id(page)
        _send(page, "STALL on the very first message")
        page.wait_for_function(
            "() => { const b = document.querySelectorAll('#lib-chat [data-testid=\"bot\"]');"
            " return b.length == 1 && b[0].innerText.startsWith('I read'); }"
        )
        page.reload()
        page.wait_for_selector("#lib-status :text('still being written')", timeout=8_000)
        assert _thread_id(page) == thread
        assert page.evaluate("sessionStorage.getItem('lib-thread-id')") == thread
        _wait_turn(page, "STALL on the very first message")
        assert _thread_id(page) == thread
        assert _users(page) == ["STALL on the very first message"]
        assert _bots(page)[-1].endswith("here is my answer .")
    finally:
        server.stop()


def test_delete_thread_asks_then_deletes_it_for_good(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """A thread could not be deleted from the page (newcomer trial: a secret typed into
    the wrong thread stayed in the list, the file and recall)."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "A thread to keep.")
        kept = _page_thread(page)
        page.click("#lib-new")
        _wait_status_leaves(page, kept)
        _ask(page, "My locker code is 4471, oops.")
        doomed = _page_thread(page)
        page.once("dialog", lambda dialog: dialog.dismiss())  # Cancel: nothing happens
        page.click("#lib-delete")
        page.wait_for_timeout(1500)
        assert _page_thread(page) == doomed and len(_users(page)) == 1
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#lib-delete")
        page.wait_for_selector("#lib-status :text('Thread deleted')")
        assert _page_thread(page) not in {doomed, kept} and _users(page) == []
        _open_threads(page)
        options = page.locator("ul[role=listbox] li").all_inner_texts()
        assert len(options) == 1 and "A thread to keep." in options[0]
        page.keyboard.press("Escape")
        _ask(page, "What is my locker code?")  # not recalled from the deleted thread
        recall = page.inner_text("#lib-inspector [data-section='recall']")
        assert "4471" not in recall and doomed not in page.content()
    finally:
        server.stop()


def test_the_chats_clear_icon_starts_a_new_session(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """The chat's trash icon emptied the view while the thread went on (the next message
    brought it all back); it is New Session now, and nothing is deleted."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "Remember the blue folder.")
        before = _thread_id(page)
        page.click('#lib-chat button[aria-label="Clear"], #lib-chat button[title="Clear"]')
        _wait_status_leaves(page, before)
        after = _thread_id(page)
        assert after != before and _users(page) == []
        _ask(page, "A new question.")
        assert _users(page) == ["A new question."]  # the old thread did not come back
        _pick_thread(page, "Remember the blue folder.")
        assert _thread_id(page) == before and _users(page) == ["Remember the blue folder."]
    finally:
        server.stop()


def test_a_reload_reopens_the_tabs_thread_and_a_new_tab_starts_anew(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "Keep this after a reload.")
        before = _thread_id(page)
        page.reload()
        page.wait_for_function(
            "t => { const e = document.querySelector('#lib-status');"
            " return e && e.innerText.includes(t); }",
            arg=before,
        )
        assert _thread_id(page) == before
        assert _users(page) == ["Keep this after a reload."]
        # Text typed and not sent survives a reload (Gradio reloads the page by itself
        # when a restarted server comes back); once sent, the box stays empty.
        page.fill("#lib-message textarea", "Half a thought, not sent yet")
        page.wait_for_timeout(300)
        page.reload()
        page.wait_for_function(
            "() => (document.querySelector('#lib-message textarea') || {}).value"
            " === 'Half a thought, not sent yet'"
        )
        # (the page has its thread back once it says so: a send before that is refused)
        page.wait_for_selector("#lib-status :text('Reopened')", timeout=TURN_TIMEOUT_MS)
        page.press("#lib-message textarea", "Enter")
        _wait_turn(page, "Half a thought, not sent yet")
        page.reload()
        page.wait_for_selector("#lib-status :text('Reopened')", timeout=TURN_TIMEOUT_MS)
        page.wait_for_timeout(500)
        assert page.input_value("#lib-message textarea") == ""
        other = pages.open(server.url)  # another tab: its own, new thread
        other.wait_for_function(
            "() => { const e = document.querySelector('#lib-status');"
            " return e && /Thread chat-/.test(e.innerText); }"
        )
        assert _thread_id(other) != before and _users(other) == []
    finally:
        server.stop()


def test_enter_then_a_quick_click_on_send_sends_once_and_reports_no_error(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        page.fill("#lib-message textarea", "Only once, please.")
        page.press("#lib-message textarea", "Enter")
        page.click("#lib-send")
        page.click("#lib-send")
        _wait_turn(page, "Only once, please.")
        page.wait_for_timeout(1500)  # the queued clicks have run by now
        assert _users(page) == ["Only once, please."]
        assert "Not sent" not in page.inner_text("#lib-status")
        # A double click on Send: sent once, and no error pop-up (the ignored click's
        # handler must return a valid update; an empty one made Gradio show an error).
        page.wait_for_timeout(3000)
        page.fill("#lib-message textarea", "A double click.")
        page.dblclick("#lib-send")
        _wait_turn(page, "A double click.")
        page.wait_for_timeout(1500)
        assert _users(page) == ["Only once, please.", "A double click."]
        assert "output values" not in page.inner_text("body")
        log_text = server.log.read_text(errors="replace")
        assert "didn't return enough output values" not in log_text
        # An empty message on its own still says why nothing was sent.
        page.wait_for_timeout(2000)
        page.press("#lib-message textarea", "Enter")
        page.wait_for_function(
            "() => document.querySelector('#lib-status').innerText.includes('Not sent')"
        )
    finally:
        server.stop()


def _thread_shown(page: Page) -> str:
    """What the Threads list shows as picked (its text box)."""
    return page.input_value("#lib-threads input")


def _wait_thread_shown(page: Page, title: str) -> None:
    try:
        page.wait_for_function(
            "t => (document.querySelector('#lib-threads input') || {}).value?.startsWith(t)",
            arg=title,
            timeout=5_000,
        )
    except Exception:
        pytest.fail(f"the Threads list shows {_thread_shown(page)!r}, not {title!r}")


def test_the_thread_list_shows_the_thread_being_chatted_in(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """The Threads list stayed blank while chatting (newcomer trial): the turn's end
    refreshed it, but the same update also re-enabled it, and the second one won."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "First thread: the blue folder.")
        _wait_thread_shown(page, "First thread: the blue folder.")
        first = _thread_id(page)
        _ask(page, "Still the first thread.")
        _wait_thread_shown(page, "First thread: the blue folder. · 2 turns")

        page.click("#lib-new")
        _wait_status_leaves(page, first)
        _ask(page, "Second thread: the red folder.")
        _wait_thread_shown(page, "Second thread: the red folder.")
        _open_threads(page)  # the new thread is in the list, newest first
        options = page.locator("ul[role=listbox] li").all_inner_texts()
        assert [o.split(" · ")[0].strip(" ✓\n") for o in options] == [
            "Second thread: the red folder.",
            "First thread: the blue folder.",
        ]
        page.locator("ul[role=listbox] li", has_text="First thread").first.click()
        page.wait_for_selector("#lib-status :text('Reopened')")
        assert _thread_id(page) == first
        _ask(page, "Back in the first thread.")
        _wait_thread_shown(page, "First thread: the blue folder. · 3 turns")
        page.reload()
        page.wait_for_function(
            "t => (document.querySelector('#lib-status') || {}).innerText?.includes(t)", arg=first
        )
        _wait_thread_shown(page, "First thread: the blue folder. · 3 turns")
    finally:
        server.stop()


def _page_thread(page: Page) -> str:
    """The thread the page shows, after checking that all of the page agrees on it.

    The status line, the inspector and the hidden id (where the next message goes) must
    name the same thread.
    """
    hidden = page.input_value("#lib-thread-id textarea")
    inspected = page.get_attribute("#lib-inspector .lib-inspector", "data-thread")
    assert _thread_id(page) == hidden == inspected, (_thread_id(page), hidden, inspected)
    return hidden


def _wait_idle(page: Page) -> None:
    """Until no answer is on its way (New Session is enabled again)."""
    page.wait_for_function(
        "() => !document.querySelector('#lib-new').disabled", timeout=TURN_TIMEOUT_MS
    )


def test_the_chats_clear_icon_waits_for_the_answer(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """The trash icon during an answer emptied the page onto a new thread, then the answer
    streamed back into it: the page showed thread A and its status named A while the next
    message went to the new thread. Like New Session, it waits for the answer now."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "First message in this thread.")
        first = _page_thread(page)
        _send(page, "SLOW second message in this thread")
        page.wait_for_function(
            "() => document.querySelectorAll('#lib-chat [data-testid=\"bot\"]').length >= 2"
        )
        clear = page.locator('#lib-chat button[aria-label="Clear"]')
        assert clear.evaluate("b => getComputedStyle(b).pointerEvents") == "none"
        clear.dispatch_event("click")  # as by keyboard, which pointer-events do not stop
        _wait_turn(page, "SLOW second message in this thread")
        _wait_idle(page)
        page.wait_for_timeout(1000)  # anything the click set off has arrived
        assert _page_thread(page) == first
        assert _users(page) == [
            "First message in this thread.",
            "SLOW second message in this thread",
        ]
        _ask(page, "Third message, where the page is.")
        assert _page_thread(page) == first and len(_users(page)) == 3
        # Once the answer is in, the icon is New Session again.
        page.click('#lib-chat button[aria-label="Clear"]')
        _wait_status_leaves(page, first)
        assert _page_thread(page) != first and _users(page) == []
    finally:
        server.stop()


def test_a_message_sent_while_the_demo_loads_is_not_lost_in_another_thread(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """A message sent while the demo conversation was loading went to the previous
    thread and its answer streamed over the demo once that arrived: the page named one
    thread, showed another and sent the next message to the demo."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "A question before the demo.")
        page.click("#lib-demo")
        _send(page, "SLOW question typed while the demo loads")
        page.wait_for_function(
            "() => document.querySelector('#lib-status').innerText.includes('opening a thread')"
            " && document.querySelector('#lib-new').disabled",
            polling="raf",
        )
        # The clear icon meanwhile changes nothing either (and reports no error).
        page.locator('#lib-chat button[aria-label="Clear"]').dispatch_event("click")
        error_shown = page.evaluate(
            "() => new Promise(done => { const end = Date.now() + 1500; (function look() {"
            " if (document.querySelector('#lib-status').innerText.includes('Error')) done(true);"
            " else if (Date.now() > end) done(false); else requestAnimationFrame(look); })(); })"
        )
        assert not error_shown
        page.wait_for_selector("#lib-status :text('Demo conversation loaded')", timeout=180_000)
        page.wait_for_timeout(6000)  # a SLOW answer, had it been sent, has streamed by now
        demo = _page_thread(page)
        assert len(_users(page)) + len(_bots(page)) == 240
        # The text waited in the box; sent now, it goes to the demo thread.
        assert page.input_value("#lib-message textarea") == (
            "SLOW question typed while the demo loads"
        )
        page.press("#lib-message textarea", "Enter")
        _wait_turn(page, "SLOW question typed while the demo loads")
        _wait_idle(page)
        assert _page_thread(page) == demo and len(_users(page)) == 121
    finally:
        server.stop()


def test_a_demo_that_fails_to_load_gives_the_page_its_thread_back(
    pages: Pages, tmp_path: Path
) -> None:
    """While the demo loads the page has no thread and its switches are off; a load that
    fails must give both back (the page would be stuck, every message refused)."""
    from langgraph_librarian.ui import ChatService, launch

    service = ChatService(tmp_path / "chat.db", scope=None)

    def broken_demo(**_: Any) -> Any:
        raise OSError("scripted: the disk is full")

    service.load_demo = broken_demo  # type: ignore[method-assign]
    port = _free_port()
    app = launch(service, host="127.0.0.1", port=port, block=False, quiet=True)
    try:
        page = pages.open(f"http://127.0.0.1:{port}/")
        _ask(page, "Before the demo.")
        before = _page_thread(page)
        page.click("#lib-demo")
        page.wait_for_selector("#lib-status :text('The demo could not be loaded')")
        page.wait_for_selector("#lib-status :text('the disk is full')")
        _wait_idle(page)
        assert _page_thread(page) == before
        assert _users(page) == ["Before the demo."]
        assert not page.locator("#lib-demo").is_disabled()
        _ask(page, "After the failed demo.")
        assert _page_thread(page) == before and len(_users(page)) == 2
    finally:
        app.close()
        service.close()


HOSTILE_IDS = [
    "x` <img src=x onerror=\"window.__pwned='id-img'\"> `",
    "x` [a link](javascript:window.__pwned='id-link') `",
    "../../etc/passwd",
    "a" * 129,
    "chat-000000000000",  # well formed, but no such thread
]


def test_hostile_thread_ids_in_session_storage_and_in_the_page(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """The thread id comes from the browser (sessionStorage, the page's hidden field): one
    that is not an id of a saved thread opens nothing, saves nothing and shows no markup
    (an id with a backtick closed the status line's code span: its HTML was rendered)."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "The only real thread.")
        real = _page_thread(page)
        for bad in HOSTILE_IDS:
            page.evaluate("v => sessionStorage.setItem('lib-thread-id', v)", bad)
            page.reload()
            page.wait_for_selector("#lib-status :text('New thread')", timeout=TURN_TIMEOUT_MS)
            assert _page_thread(page) not in {bad, real} and _users(page) == []
        for bad in HOSTILE_IDS[:4]:
            page.evaluate(
                "v => { const t = document.querySelector('#lib-thread-id textarea');"
                " t.value = v; t.dispatchEvent(new Event('input', {bubbles: true})); }",
                bad,
            )
            _send(page, "Sent with a forged thread id")
            page.wait_for_selector("#lib-status :text('Not sent')")
            status = page.locator("#lib-status")
            assert status.locator("img, a, script").count() == 0, status.inner_html()
            assert page.input_value("#lib-message textarea") == "Sent with a forged thread id"
        assert page.evaluate("() => window.__pwned") is None
        _open_threads(page)
        options = page.locator("ul[role=listbox] li").all_inner_texts()
        assert len(options) == 1 and "The only real thread." in options[0]
    finally:
        server.stop()


def test_the_demo_questions_belong_to_the_demo_thread(pages: Pages, tmp_path: Path) -> None:
    """The demo's question list stayed under the chat after New Session (a question picked
    there was asked in the new thread, which knows nothing of the demo) and was gone
    after a reload of the demo thread."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log")
    try:
        page = pages.open(server.url)
        assert not page.locator("#lib-questions").is_visible()
        page.click("#lib-demo")
        page.wait_for_selector(
            "#lib-status :text('Demo conversation loaded')", timeout=TURN_TIMEOUT_MS * 3
        )
        demo = _page_thread(page)
        assert page.locator("#lib-questions").is_visible()
        page.click("#lib-new")
        page.wait_for_selector("#lib-questions", state="hidden")
        _ask(page, "A thread of my own.")
        assert not page.locator("#lib-questions").is_visible()
        _pick_thread(page, "Demo conversation")
        assert _page_thread(page) == demo
        page.wait_for_selector("#lib-questions", state="visible")
        page.reload()
        page.wait_for_selector("#lib-status :text('Reopened after a reload')")
        page.wait_for_selector("#lib-questions", state="visible")
        page.click("#lib-questions input")
        assert page.locator("ul[role=listbox] li").count() == 20
    finally:
        server.stop()


def test_a_message_that_fails_is_given_back_to_the_box(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """A message whose sending failed was gone from the box: after a model failure the
    user had to type it again (exactly, for it to be retried), and a server stopped
    mid-answer lost it for good (the question is saved with its answer, and the draft
    kept for a reload had been emptied when the server took the message)."""
    db = tmp_path / "chat.db"
    server = UiProcess(db, tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "A first question.")
        failed = "Please FAIL in the middle"
        _ask(page, failed)
        page.wait_for_selector("#lib-chat :text('The model failed')")
        _wait_idle(page)
        assert page.input_value("#lib-message textarea") == failed
        assert "back in the box" in page.inner_text("#lib-status")
        page.press("#lib-message textarea", "Enter")  # Enter retries it: not added twice
        page.wait_for_function("() => document.querySelector('#lib-message textarea').value === ''")
        _wait_idle(page)
        page.wait_for_selector("#lib-chat :text('The model failed')")
        assert _users(page) == ["A first question.", failed]
        assert page.input_value("#lib-message textarea") == failed

        # What was typed while the failing answer streamed is kept as typed (the failed
        # message is saved in the thread: it does not go in front of the new text).
        page.fill("#lib-message textarea", "SLOW and then FAIL")
        page.press("#lib-message textarea", "Enter")
        page.wait_for_function(
            "() => { const b = document.querySelectorAll('#lib-chat [data-testid=\"bot\"]');"
            " return b.length == 3 && b[2].innerText.startsWith('I read'); }"
        )
        page.fill("#lib-message textarea", "my next message")
        page.wait_for_function(
            "() => { const b = document.querySelectorAll('#lib-chat [data-testid=\"bot\"]');"
            " return b.length == 3 && b[2].innerText.includes('The model failed'); }"
        )
        _wait_idle(page)
        assert page.input_value("#lib-message textarea") == "my next message"

        # The server stops mid-answer: the message is not saved (it would be with its
        # answer). Back on the same port, the page reloads itself: the text is in the box.
        stalled = "STALL while the server stops"
        _send(page, stalled)
        page.wait_for_function(
            "() => { const b = document.querySelectorAll('#lib-chat [data-testid=\"bot\"]');"
            " return b.length == 4 && b[3].innerText.startsWith('I read'); }"
        )
        assert page.input_value("#lib-message textarea") == ""
        thread = _page_thread(page)
        server.stop()
        server = UiProcess(db, tmp_path / "ui.log", chat_model.url, port=server.port)
        page.wait_for_function(
            "() => (document.querySelector('#lib-status')?.innerText || '')"
            ".includes('Reopened after a reload')",
            timeout=TURN_TIMEOUT_MS,
        )
        page.wait_for_function(
            "t => document.querySelector('#lib-message textarea')?.value === t",
            arg=stalled,
            timeout=10_000,
        )
        assert _page_thread(page) == thread and stalled not in _users(page)
        page.press("#lib-message textarea", "Enter")
        _wait_turn(page, stalled)
        assert _users(page)[-1] == stalled
        assert page.input_value("#lib-message textarea") == ""
    finally:
        server.stop()


def test_a_thread_deleted_in_another_tab_does_not_come_back(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """A tab still showing a thread that another tab deleted sent its next message to
    it: the thread came back, with only that message, in every thread list. The other
    tab is served by a second server process on the same --db file here."""
    db = tmp_path / "chat.db"
    first = UiProcess(db, tmp_path / "ui.log", chat_model.url)
    second = UiProcess(db, tmp_path / "ui2.log", chat_model.url)
    try:
        page = pages.open(first.url)
        _ask(page, "My locker code is 4471.")
        doomed = _page_thread(page)
        other = pages.open(second.url)
        _pick_thread(other, "My locker code is 4471.")
        other.once("dialog", lambda dialog: dialog.accept())
        other.click("#lib-delete")
        other.wait_for_selector("#lib-status :text('Thread deleted')")

        _send(page, "And the code of the bike lock?")
        page.wait_for_selector("#lib-status :text('was deleted')")
        _wait_idle(page)
        moved = _page_thread(page)
        assert moved != doomed and _users(page) == []
        assert page.input_value("#lib-message textarea") == "And the code of the bike lock?"
        page.press("#lib-message textarea", "Enter")  # sent now, into the new thread
        _wait_turn(page, "And the code of the bike lock?")
        assert _page_thread(page) == moved
        assert _users(page) == ["And the code of the bike lock?"]
        for tab in (page, other):
            tab.reload()
            tab.wait_for_selector("#lib-status :text('Thread')", timeout=TURN_TIMEOUT_MS)
            _open_threads(tab)
            listed = tab.locator("ul[role=listbox] li").all_inner_texts()
            tab.keyboard.press("Escape")
            assert len(listed) == 1 and "bike lock" in listed[0], listed
        assert doomed not in page.content()

        # A tab reloaded on the deleted thread says so and starts a new one.
        other.evaluate("t => sessionStorage.setItem('lib-thread-id', t)", doomed)
        other.reload()
        other.wait_for_selector("#lib-status :text('was deleted')", timeout=TURN_TIMEOUT_MS)
        assert _page_thread(other) != doomed
    finally:
        first.stop()
        second.stop()


def _open_list_until(page: Page, condition: str, arg: str) -> list[str]:
    """Opens the Threads list and waits (5 s) until ``condition(texts, arg)`` holds for
    its options' texts; gives the texts (the list stays open)."""
    page.click("#lib-threads input")
    texts = "[...document.querySelectorAll('ul[role=listbox] li')].map(li => li.innerText)"
    try:
        page.wait_for_function(f"a => ({condition})({texts}, a)", arg=arg, timeout=5_000)
    except Exception:
        listed = page.locator("ul[role=listbox] li").all_inner_texts()
        pytest.fail(f"the opened Threads list shows {listed!r}")
    return page.locator("ul[role=listbox] li").all_inner_texts()


def test_the_thread_list_is_current_when_it_is_opened(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """A thread saved or deleted in another tab was listed (or still listed) in this
    tab's Threads list only once this tab did something that rebuilt it, or reloaded.
    Opening the list asks for the current one; it neither switches nor resets the pick."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "Tab A: the blue folder.")
        mine = _page_thread(page)
        _wait_thread_shown(page, "Tab A: the blue folder.")
        other = pages.open(server.url)
        _ask(other, "Tab B: the green folder.")

        listed = _open_list_until(page, "(t, a) => t.some(o => o.includes(a))", "green folder")
        assert [o.split(" · ")[0].strip(" ✓\n") for o in listed] == [
            "Tab B: the green folder.",
            "Tab A: the blue folder.",
        ]
        ticked = [o for o in listed if o.startswith("✓")]  # the page's thread, still
        assert len(ticked) == 1 and "Tab A: the blue folder." in ticked[0], listed
        page.click("#lib-status")  # the list closes (the dropdown sends "input" then)
        page.wait_for_timeout(1000)
        _wait_thread_shown(page, "Tab A: the blue folder.")
        assert _page_thread(page) == mine and "Reopened" not in page.inner_text("#lib-status")
        assert _users(page) == ["Tab A: the blue folder."]

        other.once("dialog", lambda dialog: dialog.accept())
        other.click("#lib-delete")
        other.wait_for_selector("#lib-status :text('Thread deleted')")
        listed = _open_list_until(
            page, "(t, a) => t.length && !t.some(o => o.includes(a))", "green folder"
        )
        assert len(listed) == 1 and listed[0].startswith("✓"), listed
        assert "Tab A: the blue folder." in listed[0], listed
        page.keyboard.press("Escape")
        page.click("#lib-status")
        page.wait_for_timeout(1000)
        _wait_thread_shown(page, "Tab A: the blue folder.")
        assert _page_thread(page) == mine and "Reopened" not in page.inner_text("#lib-status")

        # Back on a tab that was hidden: the list is refreshed (the pick's turn count).
        _pick_thread(other, "Tab A: the blue folder.")
        _ask(other, "Tab B writes in tab A's thread.")
        _wait_thread_shown(page, "Tab A: the blue folder. · 1 turn")
        page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
        _wait_thread_shown(page, "Tab A: the blue folder. · 2 turns")
        assert _page_thread(page) == mine and "Reopened" not in page.inner_text("#lib-status")

        # A thread listed by the refresh is picked as any other (a click right away).
        other.click("#lib-new")
        _ask(other, "Tab B: the red folder.")
        _pick_thread(page, "Tab B: the red folder.")
        assert _page_thread(page) == _page_thread(other)
        assert _users(page) == ["Tab B: the red folder."]
        _wait_thread_shown(page, "Tab B: the red folder.")
    finally:
        server.stop()


def test_delete_on_a_thread_with_nothing_saved_asks_nothing_and_deletes_nothing(
    pages: Pages, chat_model: StreamingChatServer, tmp_path: Path
) -> None:
    """Delete thread on a new thread (no message saved yet) asked to delete "its messages
    for good" and said "Thread deleted": there was nothing to delete."""
    server = UiProcess(tmp_path / "chat.db", tmp_path / "ui.log", chat_model.url)
    try:
        page = pages.open(server.url)
        _ask(page, "A thread to keep.")
        kept = _page_thread(page)
        page.click("#lib-new")
        _wait_status_leaves(page, kept)
        fresh = _page_thread(page)
        asked: list[str] = []
        page.on("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
        page.click("#lib-delete")
        page.wait_for_selector("#lib-status :text('Nothing to delete')")
        assert asked == [] and _users(page) == []
        assert _page_thread(page) != fresh
        _open_threads(page)
        listed = page.locator("ul[role=listbox] li").all_inner_texts()
        page.keyboard.press("Escape")
        assert len(listed) == 1 and "A thread to keep." in listed[0]
        _ask(page, "The page goes on.")
        assert _users(page) == ["The page goes on."]
    finally:
        server.stop()


def test_a_send_whose_handler_fails_gives_the_text_back_and_frees_the_page(
    pages: Pages, tmp_path: Path
) -> None:
    """A send whose handler raised (the database failing, and failing again while the
    error was reported) left the box empty and the page refusing every message."""
    from langgraph_librarian.ui import ChatService, launch

    service = ChatService(tmp_path / "chat.db", scope=None)
    broken = {"on": False}
    send, scope_for = service.send, service.scope_for

    def failing(real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if broken["on"]:
                raise sqlite3.OperationalError("scripted: disk I/O error")
            return real(*args, **kwargs)

        return call

    service.send = failing(send)  # type: ignore[method-assign]
    service.scope_for = failing(scope_for)  # type: ignore[method-assign]
    port = _free_port()
    app = launch(service, host="127.0.0.1", port=port, block=False, quiet=True)
    try:
        page = pages.open(f"http://127.0.0.1:{port}/")
        _ask(page, "Before the disk failed.")
        broken["on"] = True
        _send(page, "Sent while the disk fails")
        page.wait_for_selector("#lib-status :text('Your text is back in the box')")
        assert page.input_value("#lib-message textarea") == "Sent while the disk fails"
        broken["on"] = False
        page.press("#lib-message textarea", "Enter")
        _wait_turn(page, "Sent while the disk fails")
        assert _users(page) == ["Before the disk failed.", "Sent while the disk fails"]
    finally:
        app.close()
        service.close()
