"""The Gradio page: chat on the left, the inspector of the last turn on the right.

Only wiring lives here: every event calls :class:`~langgraph_librarian.ui.ChatService`
and renders its results with :mod:`langgraph_librarian.ui._render`.
"""

from __future__ import annotations

import logging
import os
import re
import time

# Before gradio is imported: no usage statistics sent anywhere from a user's machine.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from collections.abc import Iterator
from typing import Any

import gradio as gr

from langgraph_librarian.ui._markdown import reply_markdown, user_markdown
from langgraph_librarian.ui._render import (
    clip,
    inspector_html,
    offline_reply,
    overview_html,
)
from langgraph_librarian.ui._report import STRATEGY_LABELS
from langgraph_librarian.ui._service import (
    ChatService,
    MessageRejected,
    ThreadDeleted,
    TurnFinished,
    TurnSaving,
    TurnToken,
    TurnWaiting,
    has_visible_text,
)

__all__ = ["CSS", "build_app", "launch", "theme"]

logger = logging.getLogger("langgraph_librarian.ui")

CSS = """
#lib-inspector { max-height: 78vh; overflow-y: auto; }
.lib-inspector { font-size: 14px; line-height: 1.4; overflow-wrap: anywhere; }
#lib-chat .message, #lib-status { overflow-wrap: anywhere; }
.lib-question { margin-bottom: 8px; }
.lib-kpis { display: grid; grid-template-columns: repeat(4, 1fr); gap: 6px; margin: 6px 0; }
.lib-kpi { border: 1px solid var(--border-color-primary); border-radius: 6px; padding: 6px; }
.lib-kpi-label { font-size: 11px; opacity: .75; }
.lib-kpi-value { font-weight: 600; font-size: 16px; }
.lib-inspector h4 { margin: 12px 0 4px; }
.lib-note { margin: 4px 0; opacity: .85; }
.lib-msg { border: 1px solid var(--border-color-primary); border-radius: 6px;
           padding: 4px 8px; margin: 4px 0; }
.lib-msg summary { cursor: pointer; }
.lib-meta { font-family: var(--font-mono); font-size: 12px; }
.lib-summary { margin-top: 2px; }
.lib-match { margin-top: 2px; font-size: 13px; opacity: .85; }
.lib-full pre, .lib-gist { white-space: pre-wrap; font-size: 12px; max-height: 320px;
                           overflow-y: auto; }
.lib-badge { font-size: 11px; border-radius: 4px; padding: 0 4px; margin-left: 4px;
             border: 1px solid var(--border-color-primary); }
.lib-sent { background: #d7f5dd; color: #14532d; }
.lib-unsent { background: #eee; color: #444; }
.lib-shortened { background: #fff3cd; color: #664d03; }
.lib-warn { background: #fff4d6; color: #5c4400; border-radius: 6px; padding: 6px; }
.lib-error { background: #fde2e1; color: #7a1212; border-radius: 6px; padding: 6px; }
.lib-strategies { width: 100%; font-size: 13px; margin: 6px 0; }
.lib-strategies td, .lib-strategies th { padding: 2px 6px; text-align: left; }
.lib-current { font-weight: 700; background: #e8f0fe; color: #1a3a7a; }
/* The chat's clear icon is New Session: it waits for the answer, as New Session does. */
body:has(#lib-new:disabled) #lib-chat button[aria-label="Clear"] {
  opacity: .35; pointer-events: none; }
"""


def theme() -> Any:
    """Gradio's default theme with system fonts (no font downloads from the browser)."""
    return gr.themes.Default(
        font=["ui-sans-serif", "system-ui", "sans-serif"],
        font_mono=["ui-monospace", "Consolas", "monospace"],
    )


def _thread_choices(
    service: ChatService, current: str | None, *, pick: bool = True, **more: Any
) -> Any:
    """The Threads list with ``current`` picked (blank while it has no saved message).

    ``more`` goes into the same update (``interactive=``): a second update of the
    dropdown in one event replaces the first, it does not merge with it. ``pick=False``:
    the list only, the dropdown keeps the value it holds (see ``refresh_threads``).
    """
    choices = [(t.label(), t.thread_id) for t in service.list_threads()]
    if current and all(v != current for _, v in choices):
        info = service.threads.get(current)  # older than the newest listed: still shown
        if info is not None:
            choices.append((info.label(), info.thread_id))
    if not pick:
        return gr.update(choices=choices, **more)
    value = current if any(v == current for _, v in choices) else None
    return gr.update(choices=choices, value=value, **more)


def _questions(service: ChatService, thread_id: str) -> Any:
    """The demo's questions on a demo thread (also reopened), hidden on any other."""
    asked = service.demo_questions(thread_id) if thread_id else []
    return gr.update(choices=asked, value=None, visible=bool(asked))


NO_REPLY = "_(no reply saved for this message)_"
NO_MODEL = (
    "_(offline: no chat model answers here; the inspector shows the context a model "
    "would have been given)_"
)
"""What an unanswered message shows when the chat has no model: offline turns save no
reply, and "no reply saved" read, after a reload, as if an answer had been lost."""
EMPTY_REPLY = "_(the model sent an empty reply)_"
"""What a reply without visible text shows (a bubble with nothing in it looked broken)."""

# A new thread id made in the browser, so that New Session takes effect at the click:
# a message sent right after it must not read the previous id from a server round trip
# still on its way. getRandomValues works on plain http too (randomUUID does not).
_NEW_ID_JS = (
    "'chat-' + Array.from(crypto.getRandomValues(new Uint8Array(6)), "
    "b => b.toString(16).padStart(2, '0')).join('')"
)
NEW_SESSION_JS = f"() => [{_NEW_ID_JS}, [], null]"
"""New Session in the browser: a fresh thread id, an empty chat, no thread picked."""

_SWITCHES_OFF = "document.querySelector('#lib-new')?.disabled"
CLEAR_JS = f"(t, th) => {_SWITCHES_OFF} ? [t, [], th] : [{_NEW_ID_JS}, [], null]"
"""The chat's clear icon: New Session, unless an answer or the demo is on its way.

The icon cannot be disabled like the buttons; while they are (a turn streams into this
thread, or the demo is loading), the click keeps the thread, and the chat it emptied is
filled again by the turn.
"""

DELETE_JS = (
    "(t, picked) => [t && (picked !== t || confirm('Delete this thread? Its messages, and "
    "what recall copied from it, are deleted from the chat file for good.')) ? t : '', picked]"
)
"""Delete thread in the browser: asks first; a cancel sends no thread (nothing happens).

A thread with nothing saved yet (not picked in the thread list: it is listed once its
first turn is saved) is not asked about: there is nothing to delete, the page only goes
on in a new thread.
"""

_OFF = "{__type__: 'update', interactive: false}"
DEMO_START_JS = f"() => ['', {_OFF}, {_OFF}, {_OFF}, {_OFF}]"
"""The demo button in the browser: no thread until the demo arrives, switches off.

A message sent meanwhile is refused (it stays in the box) instead of starting a turn on
the previous thread whose reply would then stream over the demo; New Session and the
thread list wait, as they do for an answer, and a second click loads nothing twice.
"""

_REFRESH = "document.querySelector('#lib-threads-refresh')?.click()"
THREADS_JS = """() => {
  if (window.__libThreads) return;
  const s = (window.__libThreads = {opening: false});
  const list = () => document.querySelector('#lib-threads input');
  s.open = () => { if (s.opening) { s.opening = false; list()?.focus(); } };
  document.addEventListener('mousedown', (e) => {
    const i = list();
    if (!i || e.target !== i || i.disabled || document.activeElement === i) {
      s.opening = false;  // a click elsewhere meanwhile: the list stays closed
      return;
    }
    e.preventDefault();  // not focused (opened) yet: once the current list is in
    const mine = (s.opening = {});
    __REFRESH__;
    setTimeout(() => s.opening === mine && s.open(), 3000);  // no answer: as it is
  }, true);
  document.addEventListener('visibilitychange', () => {
    const i = list();
    const open = document.activeElement === i;  // left open: kept as it is
    if (document.visibilityState === 'visible' && i && !i.disabled && !open) __REFRESH__;
  });
}""".replace("__REFRESH__", _REFRESH)
"""The Threads list is refreshed before it opens: a click on it asks the server for the
list as saved now (a hidden button's click) and opens it once that is in (see
THREADS_OPEN_JS). Gradio's dropdown, while open, does not follow a change of its choices
(its tick stays on a row number, rows removed stay shown), hence not "on focus".
Back on a tab that was hidden (another tab or window was used meanwhile), the list is
refreshed once too, unless the list was left open. Neither while the list is disabled
(an answer or the demo is on its way: their end refreshes it). A list opened with the
keyboard (Tab) opens at once, with the list it had."""
THREADS_OPEN_JS = "() => { window.__libThreads?.open(); }"

_TAB_KEY = "lib-thread-id"
"""sessionStorage key of the tab's thread: a reload reopens it (a new tab starts anew)."""
_DRAFT_KEY = "librarian-draft"
"""sessionStorage key of the text in the message box, given back after a reload."""
_SENDING_KEY = "librarian-sending"
"""sessionStorage key of the message on its way, until its turn ends. The box is emptied
when the server takes a message, and the question is saved with its answer: a server
stopped mid-answer (the page reloads itself when it is back) lost the text for good.
A page opened with it still there puts it back in the box, unless the thread saved it."""
_THREAD_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+=-]{0,127}")

OPENING_NOTE = (
    "**Not sent:** the page is opening a thread (the demo conversation is being indexed). "
    "Your text is still in the box: send it once the thread is shown."
)
ANSWERING_NOTE = (
    "An answer is still being written in this thread (before the reload, or in another "
    "tab); it appears here, with its question, as soon as it is saved."
)
BUSY_NOTE = "Answering… Type your next message; it can be sent once this answer is in."
SAVING_NOTE = "Saving the answer… Your next message can be sent in a moment."
WAIT_NOTE = (
    "**Not sent:** the answer is still on its way. Your text is still in the box: "
    "press Enter again once the answer is in."
)
DELETED_NOTE = (
    "**Not sent:** the thread you were in was deleted (in another tab or window); it "
    "stays deleted. This is a new thread: your text is still in the box, press Enter to "
    "send it here."
)
GONE_NOTE = "The thread this tab had was deleted (in another tab or window). New thread."
RETRY_NOTE = (
    "The model failed; the conversation is kept. Your message is back in the box: press "
    "Enter to retry it."
)

# Enter (or Send) in the browser. While this page's answer streams or is being saved,
# the text is not sent: it stays in the box and the status line says so. A text that
# was queued instead (Gradio's "always_last") stayed in the box, and what was typed
# over it replaced it: the message the page had accepted was lost. ``pending`` covers
# the moment between the click and the server's first reply; ``running`` follows the
# hidden turn marker the server sets at the start and the end of every turn.
SEND_JS = """(text, thread, strategy, flag) => {
  const s = (window.__librarianSend ??= {pending: false, running: false, sent: null});
  if (s.pending || s.running) {
    // A second click on what was just sent, or an empty box: nothing to say.
    const repeat = (s.pending && text === s.sent) || !(text || '').trim();
    return [text, thread, strategy, repeat ? 'repeat' : 'busy'];
  }
  if ((text || '').trim()) {
    s.pending = true; s.sent = text; sessionStorage.setItem('__SENDING__', text);
  }
  return [text, thread, strategy, ''];
}""".replace("__SENDING__", _SENDING_KEY)
TURN_MARK_JS = """(mark) => {
  const s = (window.__librarianSend ??= {pending: false, running: false, sent: null});
  if (mark) { s.pending = false; s.running = mark.startsWith('running'); }
  if (mark && !s.running) sessionStorage.removeItem('__SENDING__');
}""".replace("__SENDING__", _SENDING_KEY)

# A text given back to the box: ``back(text, box)`` never drops what was typed in the
# box meanwhile (the next message, typed while the answer streamed): the text goes in
# front of it. ``gentle``: only into an empty box (the text is saved in the thread: a
# model that failed; there it is a shortcut to retry, not the only copy).
_BACK_JS = """const back = (t, b, gentle) => {
    if (!t) return b;
    if (!(b || '').trim()) return t;
    if (gentle || b.includes(t)) return b;
    return t + '\\n\\n' + b;
  };"""
RESTORE_JS = """(r, b) => {
  __BACK__
  sessionStorage.removeItem('__SENDING__');
  const at = (r || '').indexOf(':');
  const text = at < 0 ? '' : r.slice(at + 1);
  return [text ? back(text, b, r[at - 1] === '?') : (b ?? '')];
}""".replace("__BACK__", _BACK_JS).replace("__SENDING__", _SENDING_KEY)
"""The server's "give the text back" (``N:text``, or ``N?:text`` for an empty box only;
``N`` makes every one a change): merged into the box in the browser, which knows what
has been typed since."""
SEND_FAILED_JS = """(b) => {
  __BACK__
  const s = (window.__librarianSend ??= {pending: false, running: false, sent: null});
  const text = sessionStorage.getItem('__SENDING__') || '';
  sessionStorage.removeItem('__SENDING__');
  s.pending = false; s.running = false;
  const on = {__type__: 'update', interactive: true};
  return [back(text, b, false), on, on, on, on, on,
          '**Not sent:** the server could not be reached (or failed). Your text is back in '
          + 'the box: send it again once the server is back.'];
}""".replace("__BACK__", _BACK_JS).replace("__SENDING__", _SENDING_KEY)
"""When Gradio reports the send event as failed (the server's handler raised): the text
back in the box, the page free to send again. (A connection lost mid-answer is not
reported so; the page reloads itself when the server is back, and _SENDING_KEY gives the
text back then.)"""


def _error_text(exc: BaseException) -> str:
    """An exception for the page's Markdown, shown as text: its message may carry what
    a model, its server or a user wrote (an ``<img>`` in it must not load)."""
    return user_markdown(f"{type(exc).__name__}: {exc}")


def _chat_lines(
    service: ChatService, thread_id: str, *, answer_last: bool = True
) -> list[dict[str, str]]:
    """The saved thread as chat lines; a user message that got no reply says so.

    Offline turns and failed model calls save no reply; showing two user messages in a
    row would look like a lost answer. ``answer_last=False`` leaves the last one open
    for the reply of the turn that just ended. What the user typed is shown as typed
    (:func:`user_markdown`); replies are the model's Markdown, with no raw HTML or
    images (:func:`reply_markdown`).
    """
    lines: list[dict[str, str]] = []
    history = service.history(thread_id)
    failed = service.failed_question(thread_id) if answer_last else None
    offline = service.asked_offline(thread_id)
    for n, line in enumerate(history):
        content = clip(line["content"])
        if line["role"] == "user":
            content = user_markdown(content)
        else:
            content = reply_markdown(content) if has_visible_text(content) else EMPTY_REPLY
        lines.append({"role": line["role"], "content": content})
        last = n == len(history) - 1
        unanswered = line["role"] == "user" and (last or history[n + 1]["role"] == "user")
        if unanswered and last and failed is not None:
            lines.append({"role": "assistant", "content": _failed_reply(failed)})
        elif unanswered and (answer_last or not last):
            # Threads saved before the offline questions were recorded: the chat's model.
            if offline is not None and n < len(offline):
                was_offline = offline[n]
            else:
                was_offline = service.model is None
            missing = NO_MODEL if was_offline else NO_REPLY
            lines.append({"role": "assistant", "content": missing})
    return lines


def _failed_reply(error: str, partial: str = "") -> str:
    """What the chat shows in place of a reply the model failed to give (now or when
    the thread is reopened: the partial text streamed before the failure is not saved)."""
    shown = f"{reply_markdown(clip(partial))}\n\n" if partial else ""
    return (
        f"{shown}**The model failed:** {user_markdown(error)}\n\n"
        "Your message is saved in the thread; send again to retry."
    )


def _inspector(service: ChatService, thread_id: str) -> str:
    report = service.report(thread_id)
    if report is not None:
        return inspector_html(report)
    return overview_html(thread_id, service.overview(thread_id))


def _status(service: ChatService, thread_id: str, note: str = "") -> str:
    model = f"model `{service.model_label}`" if service.model_label else "no chat model (offline)"
    scope = service.scope_for(thread_id) if thread_id else None
    recall = f" · recall scope `{scope}`" if scope else ""
    if not thread_id:
        shown = "Opening a thread…"
    elif _THREAD_ID_RE.fullmatch(thread_id):
        shown = f"Thread `{thread_id}`"
    else:  # it came from the browser: never echoed into the Markdown
        shown = "Thread (not a valid id)"
    line = f"{shown} · {model}{recall} · `{service.db_path.name}`"
    return f"{line}  \n{note}" if note else line


def build_app(service: ChatService, *, title: str = "Librarian chat") -> gr.Blocks:
    """The page over ``service``; launch it with :func:`launch` (it sets theme and CSS)."""
    app = gr.Blocks(title=title, analytics_enabled=False, fill_width=True)
    with app:
        # The thread id lives in the page (not in server-side gr.State): every event
        # carries the id the page showed when it was triggered, so an event still on its
        # way cannot move the page back to another thread.
        thread = gr.Textbox(visible="hidden", elem_id="lib-thread-id", show_label=False)
        # "running N" while this page's turn runs, "idle N" after (N: each mark differs,
        # so every one reaches SEND_JS); and what SEND_JS says about a send.
        turn_mark = gr.Textbox(visible="hidden", elem_id="lib-turn-mark", show_label=False)
        send_flag = gr.Textbox(visible="hidden", elem_id="lib-send-flag", show_label=False)
        # Text to give back to the message box (see RESTORE_JS): "N:text" or "N?:text".
        restore = gr.Textbox(visible="hidden", elem_id="lib-restore", show_label=False)
        # Clicked by THREADS_JS: the Threads list as saved now (before it opens).
        threads_refresh = gr.Button(visible="hidden", elem_id="lib-threads-refresh")
        gr.Markdown(
            "### Librarian chat\nEach answer gets the messages the Librarian selects from "
            "the whole thread. The inspector shows what was chosen and what it saved."
        )
        with gr.Row():
            with gr.Column(scale=3):
                with gr.Row():
                    threads = gr.Dropdown(
                        label="Threads", choices=[], elem_id="lib-threads", scale=3
                    )
                    new_button = gr.Button("New Session", elem_id="lib-new", scale=1)
                    delete_button = gr.Button(
                        "Delete thread", elem_id="lib-delete", scale=1, variant="stop"
                    )
                    demo_button = gr.Button(
                        "Load the demo conversation", elem_id="lib-demo", scale=1
                    )
                strategy = gr.Radio(
                    choices=[(label, name) for name, label in STRATEGY_LABELS.items()],
                    value="librarian",
                    label="Context sent to the model",
                    elem_id="lib-strategy",
                )
                # No LaTeX: "$$" in what someone types or pastes stays text.
                chat = gr.Chatbot(
                    elem_id="lib-chat", height=520, label="Conversation", latex_delimiters=[]
                )
                with gr.Row():
                    box = gr.Textbox(
                        placeholder="Message (Enter to send)",
                        show_label=False,
                        elem_id="lib-message",
                        scale=5,
                        lines=1,
                        max_lines=8,
                    )
                    send_button = gr.Button("Send", variant="primary", elem_id="lib-send")
                status = gr.Markdown(elem_id="lib-status")
                questions = gr.Dropdown(
                    label="Questions about the demo conversation (pick one to ask it)",
                    choices=[],
                    visible=False,
                    elem_id="lib-questions",
                )
            with gr.Column(scale=2):
                gr.Markdown("#### Inspector: the last turn")
                inspector = gr.HTML(elem_id="lib-inspector")

        def start(saved: str | None = None, sending: str = "") -> Iterator[tuple[Any, ...]]:
            # A reload of this tab reopens its thread (the page keeps the id in the tab's
            # sessionStorage); a new tab, or a thread that is gone, starts a new one.
            if saved and _THREAD_ID_RE.fullmatch(saved) and service.answering(saved):
                # A reload mid-answer: the question and its answer are saved together
                # when the answer ends; until then the page says so, then shows them.
                first = _opened(saved)
                yield (*first[:4], _status(service, saved, ANSWERING_NOTE), first[5], gr.update())
                service.wait_until_answered(saved)
            opened = _opened(saved)
            yield (*opened, _given_back(opened[0], sending))

        def _given_back(thread_id: str, sending: str) -> str:
            """The message a page had on its way when it was left (see _SENDING_KEY), to
            put back in the box, unless the thread saved it (``N:``: nothing)."""
            history = service.history(thread_id) if sending else []
            asked = [line["content"] for line in history if line["role"] == "user"]
            taken = not sending or (asked and asked[-1] == sending)
            return f"{next(marks)}:" if taken else f"{next(marks)}:{sending}"

        def _opened(saved: str | None) -> tuple[Any, ...]:
            # A thread is listed once its first turn is saved: one still answering its
            # first message is reopened too (the answer shows when it is saved).
            known = saved and (service.threads.get(saved) or service.answering(saved))
            if saved and _THREAD_ID_RE.fullmatch(saved) and known:
                return (
                    saved,
                    _thread_choices(service, saved),
                    _chat_lines(service, saved),
                    _inspector(service, saved),
                    _status(service, saved, "Reopened after a reload."),
                    _questions(service, saved),
                )
            gone = bool(saved and _THREAD_ID_RE.fullmatch(saved) and service.is_deleted(saved))
            thread_id = service.new_thread_id()
            return (
                thread_id,
                _thread_choices(service, thread_id),
                [],
                _inspector(service, thread_id),
                _status(service, thread_id, GONE_NOTE if gone else "New thread."),
                _questions(service, ""),
            )

        # While a turn runs, switching threads would let its reply stream into another
        # thread's page: the switches wait for the turn (a few seconds at most).
        switches = (threads, new_button, demo_button, delete_button)

        def switching(enabled: bool) -> dict[Any, Any]:
            return {c: gr.update(interactive=enabled) for c in switches}

        last_sent: dict[str, float] = {}  # thread -> when its last message went out
        marks = iter(range(1, 1 << 62))

        def respond(
            text: str, thread_id: str, chosen: str, flag: str = ""
        ) -> Iterator[dict[Any, Any]]:
            if flag == "repeat":  # Enter, then a quick click on Send: it is on its way
                # Nothing changes, but a dict with no component in it is one output
                # value to Gradio, which then shows an error pop-up ("didn't return
                # enough output values"); an update of the status that changes nothing
                # is a valid empty answer.
                yield {status: gr.update()}
                return
            if flag == "busy":  # this page's answer is still coming: the text stays put
                yield {status: _status(service, thread_id, WAIT_NOTE)}
                return
            ended = False
            try:
                for update in _respond(text, thread_id, chosen):
                    ended = turn_mark in update and update[turn_mark].startswith("idle")
                    yield update
            except Exception as exc:  # unforeseen: say so, keep the text, free the page
                logger.exception("librarian ui: the message could not be handled")
                note = f"**Not sent:** {_error_text(exc)}"
                yield _ended(
                    {
                        restore: f"{next(marks)}:{text}",
                        status: _status(service, thread_id, note),
                        **switching(True),
                    }
                )
                return
            if not ended:  # every send ends this page's turn, whatever happened
                yield _ended({})

        def _ended(update: dict[Any, Any]) -> dict[Any, Any]:
            """``update``, and the page may send again: in the same update as the turn's
            last words (a message sent right after them must not find the page busy)."""
            return {
                **update,
                turn_mark: f"idle {next(marks)}",
                send_button: gr.update(interactive=True),
            }

        def _respond(text: str, thread_id: str, chosen: str) -> Iterator[dict[Any, Any]]:
            if not (text or "").strip() and time.monotonic() - last_sent.get(thread_id, -1e9) < 3:
                # Enter and a quick click on Send (or a double click): the second event
                # finds the box already emptied by the first. Not a mistake to report;
                # nothing on the page changes (a generator that yields nothing would
                # clear its outputs).
                yield _ended({})
                return
            if not thread_id:  # the demo is loading: the page has no thread for it yet
                yield _ended({status: _status(service, "", OPENING_NOTE)})
                return
            try:
                service.check_thread_id(thread_id)
                service.check_message(text)
            except MessageRejected as exc:
                yield _ended({status: _status(service, thread_id, f"**Not sent:** {exc}")})
                return
            if service.is_deleted(thread_id):  # in another tab: it must not come back
                yield _ended(_left_deleted())  # the text stays in the box
                return
            last_sent[thread_id] = time.monotonic()
            # The saved thread, not the page's copy: the page may still show another one.
            history = _chat_lines(service, thread_id)
            shown = [*history, {"role": "user", "content": user_markdown(clip(text))}]
            yield {
                chat: [*shown, {"role": "assistant", "content": "…"}],
                box: "",
                status: _status(service, thread_id, BUSY_NOTE),
                turn_mark: f"running {next(marks)}",
                send_button: gr.update(interactive=False),
                **switching(False),
            }
            partial = ""
            try:
                for event in service.send(thread_id, text, chosen):  # type: ignore[arg-type]
                    if isinstance(event, TurnWaiting):
                        yield {status: _status(service, thread_id, event.note)}
                    elif isinstance(event, TurnToken):
                        partial += event.text
                        reply = reply_markdown(partial)
                        yield {chat: [*shown, {"role": "assistant", "content": reply}]}
                    elif isinstance(event, TurnSaving):
                        yield {status: _status(service, thread_id, SAVING_NOTE)}
                    elif isinstance(event, TurnFinished):
                        last_sent[thread_id] = time.monotonic()  # a queued 2nd click ends here
                        # The thread list last: its update carries the refreshed choices
                        # and the re-enabling together (the later of two would win).
                        finished = {**switching(True), **_finished(event, thread_id)}
                        if event.error:  # saved, unanswered: the same text retries it
                            finished[restore] = f"{next(marks)}?:{text}"
                        yield _ended(finished)
            except ThreadDeleted:  # deleted while this turn waited for the thread
                yield _ended({**_left_deleted(), restore: f"{next(marks)}:{text}"})
            except MessageRejected as exc:  # the thread stayed busy: give the text back
                yield _ended(
                    {
                        chat: history,
                        restore: f"{next(marks)}:{text}",
                        status: _status(service, thread_id, f"**Not sent:** {exc}"),
                        **switching(True),
                    }
                )
            except Exception as exc:  # the graph or the database failed: say so, keep the text
                logger.exception("librarian ui: the turn failed")
                note = f"**The turn failed:** {_error_text(exc)}"
                yield _ended(
                    {
                        chat: _chat_lines(service, thread_id),
                        restore: f"{next(marks)}:{text}",
                        status: _status(service, thread_id, note),
                        **switching(True),
                    }
                )

        def _left_deleted() -> dict[Any, Any]:
            """The page's thread was deleted elsewhere: it goes on in a new thread."""
            new_id = service.new_thread_id()
            return {
                **switching(True),
                thread: new_id,
                chat: [],
                inspector: _inspector(service, new_id),
                status: _status(service, new_id, DELETED_NOTE),
                threads: _thread_choices(service, new_id, interactive=True),
                questions: _questions(service, ""),
            }

        def _finished(event: TurnFinished, thread_id: str) -> dict[Any, Any]:
            lines = _chat_lines(service, thread_id, answer_last=not (event.offline or event.error))
            if event.offline:
                lines.append({"role": "assistant", "content": offline_reply(event.report)})
                note = "Offline: no chat model is configured."
            elif event.error:
                lines.append(
                    {"role": "assistant", "content": _failed_reply(event.error, event.reply)}
                )
                note = RETRY_NOTE
            else:
                note = ""
            return {
                chat: lines,
                inspector: inspector_html(event.report),
                status: _status(service, thread_id, note),
                threads: _thread_choices(service, thread_id, interactive=True),
            }

        def show_new_thread(thread_id: str) -> tuple[Any, ...]:
            """The server's half of New Session (the page already switched to the id)."""
            if not thread_id:  # the clear icon while the demo loads: the demo decides
                return (gr.update(), gr.update(), gr.update(), gr.update())
            try:
                service.check_thread_id(thread_id)
            except MessageRejected as exc:
                error = _status(service, "", f"**Error:** {exc}")
                return (gr.update(), gr.update(), error, gr.update())
            if service.threads.get(thread_id) is not None or service.answering(thread_id):
                # Not a new thread: the clear icon was ignored during an answer, or a
                # message already went to the new one (its turn shows the page).
                return (gr.update(), gr.update(), gr.update(), gr.update())
            return (
                _thread_choices(service, None),
                _inspector(service, thread_id),
                _status(service, thread_id, "New thread."),
                _questions(service, ""),  # the demo's questions are not this thread's
            )

        def open_thread(picked: str | None, current: str) -> Iterator[tuple[Any, ...]]:
            # The dropdown also sends "input" when it loses focus, with the value it
            # holds; only a pick of another saved thread switches.
            unchanged = tuple(gr.update() for _ in range(6))
            if picked and picked != current and service.is_deleted(picked):
                # Deleted in another tab since this page's list was made: say so (the
                # pick did nothing, silently) and list what is left.
                note = "That thread was deleted (in another tab or window)."
                yield (
                    *unchanged[:3],
                    _status(service, current, note),
                    gr.update(),
                    _thread_choices(service, current),
                )
                return
            if not picked or picked == current or service.threads.get(picked) is None:
                yield unchanged
                return
            if service.answering(picked):  # another tab's answer: shown once it is saved
                yield (
                    picked,
                    _chat_lines(service, picked),
                    _inspector(service, picked),
                    _status(service, picked, ANSWERING_NOTE),
                    _questions(service, picked),
                    gr.update(),
                )
                service.wait_until_answered(picked)
            yield (
                picked,
                _chat_lines(service, picked),
                _inspector(service, picked),
                _status(service, picked, "Reopened."),
                _questions(service, picked),
                gr.update(),
            )

        def refresh_threads(current: str) -> Any:
            """The Threads list as saved now, before it opens (or when the tab is shown
            again): threads saved or deleted in another tab or process appear or go.

            The list only: the dropdown keeps the value it holds, and nothing is
            opened or switched here. A value sent with the list would undo a pick made
            while this reply was on its way (the page would switch to the pick while
            the list went back to show the previous thread).
            """
            return _thread_choices(service, current, pick=False)

        def delete_thread(thread_id: str, _picked: str | None = None) -> tuple[Any, ...]:
            """Delete the page's thread (the browser asked first) and open a new one.

            A thread with nothing saved (new, or deleted in another tab) is left alone:
            the page goes on in a new thread and says there was nothing to delete.
            """
            if not thread_id:  # not confirmed, or no thread (the demo is loading)
                return tuple(gr.update() for _ in range(6))
            existed = not service.answering(thread_id) and service.is_saved(thread_id)
            try:
                service.delete_thread(thread_id)
            except MessageRejected as exc:
                note = f"**Not deleted:** {exc}"
                return (
                    *(gr.update() for _ in range(4)),
                    _status(service, thread_id, note),
                    gr.update(),
                )
            if existed:
                note = "Thread deleted (with what recall copied from it). New thread."
            elif service.is_deleted(thread_id):
                note = "This thread was already deleted (in another tab or window). New thread."
            else:
                note = "Nothing to delete: this thread has no saved message yet. New thread."
            new_id = service.new_thread_id()
            return (
                new_id,
                [],
                _thread_choices(service, new_id),
                _inspector(service, new_id),
                _status(service, new_id, note),
                _questions(service, ""),
            )

        def load_demo(
            previous: str,
            progress: gr.Progress = gr.Progress(),  # noqa: B008
        ) -> tuple[Any, ...]:
            def step(done: int, total: int) -> None:
                if total:
                    progress((done, total), desc="Indexing the demo conversation")

            on = (gr.update(interactive=True),) * 3
            try:
                demo = service.load_demo(progress=step)
            except Exception as exc:  # the page has no thread now: back to the one it had
                logger.exception("librarian ui: the demo conversation could not be loaded")
                thread_id, _, lines, shown, _, asked = _opened(previous)
                note = f"**The demo could not be loaded:** {_error_text(exc)}"
                return (
                    thread_id,
                    lines,
                    shown,
                    _status(service, thread_id, note),
                    _thread_choices(service, thread_id, interactive=True),
                    asked,
                    *on,
                )
            note = (
                f"Demo conversation loaded: {demo.messages} messages, {demo.tokens:,} tokens, "
                "indexed. Ask one of its questions below, or anything else."
            )
            return (
                demo.thread_id,
                _chat_lines(service, demo.thread_id),
                _inspector(service, demo.thread_id),
                _status(service, demo.thread_id, note),
                _thread_choices(service, demo.thread_id, interactive=True),
                gr.update(choices=demo.questions, value=None, visible=True),
                *on,
            )

        app.load(
            start,
            inputs=[thread, restore],
            outputs=[thread, threads, chat, inspector, status, questions, restore],
            js=(
                f"() => [sessionStorage.getItem('{_TAB_KEY}') || '',"
                f" sessionStorage.getItem('{_SENDING_KEY}') || '']"
            ),
        )
        restore.change(None, [restore, box], [box], js=RESTORE_JS)
        thread.change(
            None, [thread], None, js=f"(t) => {{ if (t) sessionStorage.setItem('{_TAB_KEY}', t); }}"
        )
        # What is typed in the box survives a reload of the tab: Gradio reloads the page
        # by itself when the server comes back after a restart, and the text typed while
        # it was away (never sent) was lost. Kept in the browser only, per tab; the box
        # emptied by a sent message empties it too, while a message the server did not
        # take keeps it (its box is left as it was). The box's first (empty) value,
        # before the draft is read back, must not overwrite it.
        box.change(
            None,
            [box],
            None,
            js=(
                "(t) => { if (window.__libDraftRead)"
                f" sessionStorage.setItem('{_DRAFT_KEY}', t || ''); }}"
            ),
        )
        app.load(
            None,
            None,
            [box],
            js=(
                "() => { window.__libDraftRead = true;"
                f" return [sessionStorage.getItem('{_DRAFT_KEY}') || '']; }}"
            ),
        )
        # One event for Enter and Send. Every Enter is an event of its own ("multiple"):
        # one during this page's answer is refused at once, with its reason (SEND_JS).
        turn_outputs = [chat, box, inspector, status, turn_mark, send_button, *switches]
        sent = gr.on(
            [box.submit, send_button.click],
            respond,
            [box, thread, strategy, send_flag],
            [*turn_outputs, thread, restore, questions],
            concurrency_limit=8,
            show_progress="hidden",  # the reply streaming in is the progress indicator
            trigger_mode="multiple",
            js=SEND_JS,
        )
        # The event failed (an error Gradio reports): the text back, the page free.
        sent.failure(None, [box], [box, send_button, *switches, status], js=SEND_FAILED_JS)
        turn_mark.change(None, [turn_mark], None, js=TURN_MARK_JS)
        new_thread_outputs = [threads, inspector, status, questions]
        new_button.click(None, None, [thread, chat, threads], js=NEW_SESSION_JS).then(
            show_new_thread, [thread], new_thread_outputs, show_progress="hidden"
        )
        # The chat's own clear (trash) icon emptied the view while the thread went on:
        # the next message brought it all back. It is New Session (nothing is deleted).
        chat.clear(None, [thread, threads], [thread, chat, threads], js=CLEAR_JS).then(
            show_new_thread, [thread], new_thread_outputs, show_progress="hidden"
        )
        threads.input(
            open_thread,
            [threads, thread],
            [thread, chat, inspector, status, questions, threads],
            show_progress="hidden",
        )
        # Opening the list shows the threads saved now, not those of this tab's last
        # event (another tab, window or process on the same file may have added or
        # deleted some since).
        threads_refresh.click(refresh_threads, [thread], [threads], show_progress="hidden").then(
            None, None, None, js=THREADS_OPEN_JS
        )
        app.load(None, None, None, js=THREADS_JS)
        demo_button.click(None, None, [thread, *switches], js=DEMO_START_JS).then(
            load_demo,
            inputs=[thread],
            outputs=[
                *[thread, chat, inspector, status, threads, questions],
                *[new_button, demo_button, delete_button],
            ],
            # The thread the tab had (sessionStorage keeps it), to go back to on a failure.
            js=f"() => [sessionStorage.getItem('{_TAB_KEY}') || '']",
            show_progress_on=[chat],
        )
        questions.input(lambda q: q or gr.update(), questions, box)
        delete_button.click(
            delete_thread,
            [thread, threads],
            [thread, chat, threads, inspector, status, questions],
            js=DELETE_JS,
            show_progress="hidden",
        )
    return app


def launch(
    service: ChatService,
    *,
    host: str = "127.0.0.1",
    port: int = 7860,
    block: bool = True,
    quiet: bool = False,
) -> gr.Blocks:
    """Build the page and serve it (blocks until interrupted unless ``block=False``)."""
    app: gr.Blocks = build_app(service)
    app.queue(default_concurrency_limit=8)
    app.launch(
        server_name=host,
        server_port=port,
        prevent_thread_lock=not block,
        share=False,
        quiet=quiet,
        theme=theme(),
        css=CSS,
        footer_links=[],
        show_error=True,
    )
    return app
