"""The Gradio page: chat on the left, the inspector of the last turn on the right.

Only wiring lives here: every event calls :class:`~langgraph_librarian.ui.ChatService`
and renders its results with :mod:`langgraph_librarian.ui._render`.
"""

from __future__ import annotations

import logging
import os

# Before gradio is imported: no usage statistics sent anywhere from a user's machine.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from collections.abc import Iterator
from typing import Any

import gradio as gr

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
    TurnFinished,
    TurnToken,
    TurnWaiting,
)

__all__ = ["CSS", "build_app", "launch", "theme"]

logger = logging.getLogger("langgraph_librarian.ui")

CSS = """
#lib-inspector { max-height: 78vh; overflow-y: auto; }
.lib-inspector { font-size: 14px; line-height: 1.4; }
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
"""


def theme() -> Any:
    """Gradio's default theme with system fonts (no font downloads from the browser)."""
    return gr.themes.Default(
        font=["ui-sans-serif", "system-ui", "sans-serif"],
        font_mono=["ui-monospace", "Consolas", "monospace"],
    )


def _thread_choices(service: ChatService, current: str | None) -> Any:
    choices = [(t.label(), t.thread_id) for t in service.list_threads()]
    value = current if any(v == current for _, v in choices) else None
    return gr.update(choices=choices, value=value)


NO_REPLY = "_(no reply saved for this message)_"


def _chat_lines(
    service: ChatService, thread_id: str, *, answer_last: bool = True
) -> list[dict[str, str]]:
    """The saved thread as chat lines; a user message that got no reply says so.

    Offline turns and failed model calls save no reply; showing two user messages in a
    row would look like a lost answer. ``answer_last=False`` leaves the last one open
    for the reply of the turn that just ended.
    """
    lines: list[dict[str, str]] = []
    history = service.history(thread_id)
    for n, line in enumerate(history):
        lines.append({**line, "content": clip(line["content"])})
        last = n == len(history) - 1
        unanswered = line["role"] == "user" and (last or history[n + 1]["role"] == "user")
        if unanswered and (answer_last or not last):
            lines.append({"role": "assistant", "content": NO_REPLY})
    return lines


def _inspector(service: ChatService, thread_id: str) -> str:
    report = service.report(thread_id)
    if report is not None:
        return inspector_html(report)
    return overview_html(thread_id, service.overview(thread_id))


def _status(service: ChatService, thread_id: str, note: str = "") -> str:
    model = f"model `{service.model_label}`" if service.model_label else "no chat model (offline)"
    line = f"Thread `{thread_id}` · {model} · `{service.db_path.name}`"
    return f"{line}  \n{note}" if note else line


def build_app(service: ChatService, *, title: str = "Librarian chat") -> gr.Blocks:
    """The page over ``service``; launch it with :func:`launch` (it sets theme and CSS)."""
    app = gr.Blocks(title=title, analytics_enabled=False, fill_width=True)
    with app:
        thread = gr.State("")
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
                    demo_button = gr.Button(
                        "Load the demo conversation", elem_id="lib-demo", scale=1
                    )
                strategy = gr.Radio(
                    choices=[(label, name) for name, label in STRATEGY_LABELS.items()],
                    value="librarian",
                    label="Context sent to the model",
                    elem_id="lib-strategy",
                )
                chat = gr.Chatbot(elem_id="lib-chat", height=520, label="Conversation")
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

        def start() -> tuple[Any, ...]:
            thread_id = service.new_thread_id()
            return (
                thread_id,
                _thread_choices(service, thread_id),
                [],
                _inspector(service, thread_id),
                _status(service, thread_id, "New thread."),
            )

        def respond(
            text: str, thread_id: str, chosen: str, history: list[dict[str, Any]]
        ) -> Iterator[dict[Any, Any]]:
            try:
                service.check_message(text)
            except MessageRejected as exc:
                yield {status: _status(service, thread_id, f"**Not sent:** {exc}")}
                return
            shown = [*history, {"role": "user", "content": clip(text)}]
            yield {chat: [*shown, {"role": "assistant", "content": "…"}], box: ""}
            partial = ""
            try:
                for event in service.send(thread_id, text, chosen):  # type: ignore[arg-type]
                    if isinstance(event, TurnWaiting):
                        yield {status: _status(service, thread_id, event.note)}
                    elif isinstance(event, TurnToken):
                        partial += event.text
                        yield {chat: [*shown, {"role": "assistant", "content": partial}]}
                    elif isinstance(event, TurnFinished):
                        yield _finished(event, thread_id)
            except MessageRejected as exc:  # the thread stayed busy: give the text back
                yield {
                    chat: history,
                    box: text,
                    status: _status(service, thread_id, f"**Not sent:** {exc}"),
                }
            except Exception as exc:  # the graph or the database failed: say so, keep the text
                logger.exception("librarian ui: the turn failed")
                yield {
                    chat: _chat_lines(service, thread_id),
                    box: text,
                    status: _status(
                        service, thread_id, f"**The turn failed:** {type(exc).__name__}: {exc}"
                    ),
                }

        def _finished(event: TurnFinished, thread_id: str) -> dict[Any, Any]:
            lines = _chat_lines(service, thread_id, answer_last=not (event.offline or event.error))
            if event.offline:
                lines.append({"role": "assistant", "content": offline_reply(event.report)})
                note = "Offline: no chat model is configured."
            elif event.error:
                shown = f"{clip(event.reply)}\n\n" if event.reply else ""
                lines.append(
                    {
                        "role": "assistant",
                        "content": f"{shown}**The model failed:** {event.error}\n\n"
                        "Your message is saved in the thread; send again to retry.",
                    }
                )
                note = "The model failed; the conversation is kept."
            else:
                note = ""
            return {
                chat: lines,
                inspector: inspector_html(event.report),
                status: _status(service, thread_id, note),
                threads: _thread_choices(service, thread_id),
            }

        def new_session() -> tuple[Any, ...]:
            return start()

        def open_thread(thread_id: str | None, current: str) -> tuple[Any, ...]:
            if not thread_id or thread_id == current:
                return (current, gr.update(), gr.update(), gr.update())
            return (
                thread_id,
                _chat_lines(service, thread_id),
                _inspector(service, thread_id),
                _status(service, thread_id, "Reopened."),
            )

        def load_demo(progress: gr.Progress = gr.Progress()) -> tuple[Any, ...]:  # noqa: B008
            def step(done: int, total: int) -> None:
                if total:
                    progress((done, total), desc="Indexing the demo conversation")

            demo = service.load_demo(progress=step)
            note = (
                f"Demo conversation loaded: {demo.messages} messages, {demo.tokens:,} tokens, "
                "indexed. Ask one of its questions below, or anything else."
            )
            return (
                demo.thread_id,
                _chat_lines(service, demo.thread_id),
                _inspector(service, demo.thread_id),
                _status(service, demo.thread_id, note),
                _thread_choices(service, demo.thread_id),
                gr.update(choices=demo.questions, value=None, visible=True),
            )

        outputs = [thread, threads, chat, inspector, status]
        app.load(start, outputs=outputs)
        turn_outputs = [chat, box, inspector, status, threads]
        turn_inputs = [box, thread, strategy, chat]
        # The reply streaming in is the progress indicator; no spinner over every output.
        turn_options: dict[str, Any] = {"concurrency_limit": 8, "show_progress": "hidden"}
        box.submit(respond, turn_inputs, turn_outputs, **turn_options)
        send_button.click(respond, turn_inputs, turn_outputs, **turn_options)
        new_button.click(new_session, outputs=outputs)
        threads.input(open_thread, [threads, thread], [thread, chat, inspector, status])
        demo_button.click(
            load_demo,
            outputs=[thread, chat, inspector, status, threads, questions],
            show_progress_on=[chat],
        )
        questions.input(lambda q: q or gr.update(), questions, box)
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
