"""Turn reports as HTML (the web inspector), Markdown (the offline reply) and plain text.

Every piece of message text is escaped: a message is data, it must not become markup
in the inspector.
"""

from __future__ import annotations

from html import escape
from typing import Any

from langgraph_librarian._engine.text import content_terms, one_line, split_sentences
from langgraph_librarian.ui._markdown import user_markdown
from langgraph_librarian.ui._report import STRATEGY_LABELS, MessageRow, SentRow, TurnReport

__all__ = [
    "DISPLAY_CHARS",
    "NO_MODEL",
    "clip",
    "inspector_html",
    "inspector_text",
    "offline_reply",
    "overview_html",
    "recall_summary",
]

DISPLAY_CHARS = 6_000
"""Characters of a message shown in the chat and in the inspector (the rest is kept)."""

_CONTEXT_LINES = 40
_EXCERPT = 160

NO_MODEL = "No chat model is configured"

_RECALL_OFF = "Scoped recall is off (--no-recall): nothing is recalled from other threads."
_RECALL_FAILED = ("unavailable", "misconfigured")


def clip(text: str, limit: int = DISPLAY_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[... {len(text) - limit:,} more characters, kept in the thread]"


def _one_line(text: str, limit: int = _EXCERPT) -> str:
    return one_line(text, limit)


def _role(role: str) -> str:
    return {"human": "user", "ai": "assistant"}.get(role, role)


# -- the offline reply -----------------------------------------------------------------------


def _sent_label(row: SentRow) -> str:
    if row.gist:
        return "gist (running summary)"
    if row.recalled:
        return "recalled from other threads"
    where = f"#{row.position} " if row.position is not None else ""
    return f"{where}{_role(row.role)}"


def offline_reply(report: TurnReport) -> str:
    """What the reply area says when no chat model is configured (Markdown).

    It says so plainly and lists the context the model would have received.
    """
    lines = [
        f"**{NO_MODEL}**, so there is no answer. Start the UI with "
        "`--model provider:model` to get one.",
        "",
        f"This is the context the model would have received ({report.strategy_label}): "
        f"{_count(len(report.sent), 'message')}, {_sent_tokens_text(report)}.",
        "",
    ]
    for n, row in enumerate(report.sent[:_CONTEXT_LINES], start=1):
        excerpt = user_markdown(_one_line(row.excerpt))
        lines.append(f"{n}. `{_sent_label(row)}` ({row.tokens:,} tokens): {excerpt}")
    hidden = report.sent[_CONTEXT_LINES:]
    if hidden:
        tokens = sum(r.tokens for r in hidden)
        lines.append(f"\n... and {len(hidden)} more messages ({tokens:,} tokens).")
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _sent_tokens_text(report: TurnReport) -> str:
    """The tokens sent, the thread's apart from what was recalled from other threads."""
    own = f"{report.thread_tokens_sent:,} of the thread's {report.history_tokens:,} tokens"
    recalled = report.recalled_tokens
    return f"{own} + {recalled:,} recalled from other threads" if recalled else own


# -- the inspector (HTML) --------------------------------------------------------------------


def _kpi(name: str, label: str, value: str) -> str:
    return (
        f'<div class="lib-kpi" data-kpi="{name}"><div class="lib-kpi-label">{escape(label)}</div>'
        f'<div class="lib-kpi-value">{escape(value)}</div></div>'
    )


def matching_sentence(text: str, question: str) -> str | None:
    """The sentence of ``text`` sharing the most content words with ``question`` (the
    passage a selection most likely rests on), or ``None`` when none shares any."""
    asked = set(content_terms(question))
    if not asked:
        return None
    best, best_shared = None, 0
    for sentence in split_sentences(text):
        shared = len(asked & set(content_terms(sentence)))
        if shared > best_shared:
            best, best_shared = sentence, shared
    return best


def _message_html(row: MessageRow, kind: str, question: str = "") -> str:
    tags = [f"#{row.position}", _role(row.role), f"{row.tokens:,} tokens"]
    badges = (
        '<span class="lib-badge lib-sent">sent</span>'
        if row.sent
        else ('<span class="lib-badge lib-unsent">not sent</span>')
    )
    if row.linked:
        badges += '<span class="lib-badge">linked</span>'
    if row.shortened:
        badges += '<span class="lib-badge lib-shortened">summary sent (too long)</span>'
    summary = row.summary or "(no summary yet)"
    # What in the message answers the question, when the summary does not show it (a
    # long message whose summary is about something else).
    match = matching_sentence(row.text, question) if question else None
    matched = (
        f'<div class="lib-match">matches: {escape(_one_line(match, 300))}</div>'
        if match and match not in summary
        else ""
    )
    return (
        f'<details class="lib-msg" data-kind="{kind}" data-position="{row.position}">'
        f'<summary><span class="lib-meta">{escape(" · ".join(tags))}</span> {badges}'
        f'<div class="lib-summary">{escape(_one_line(summary, 400))}</div>{matched}</summary>'
        f'<div class="lib-full"><div class="lib-id">id {escape(row.message_id)} · index: '
        f"{escape(row.status)}</div><pre>{escape(clip(row.text))}</pre></div></details>"
    )


def _strategy_table(report: TurnReport) -> str:
    rows = []
    for name, label in STRATEGY_LABELS.items():
        tokens = report.strategy_tokens.get(name)
        if tokens is None:
            continue
        mark = ' class="lib-current"' if name == report.strategy else ""
        rows.append(f"<tr{mark}><td>{escape(label)}</td><td>{tokens:,}</td></tr>")
    return (
        '<table class="lib-strategies" data-section="strategies"><thead><tr><th>strategy</th>'
        f"<th>tokens it sends for this turn</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _selection_html(report: TurnReport) -> str:
    if report.selection_skipped:
        return (
            f'<p class="lib-note">Selection skipped ({escape(str(report.skip_reason))}): '
            "the whole history fits, so all of it was passed on.</p>"
        )
    if not report.selected:
        return '<p class="lib-note">No earlier message was needed for this question.</p>'
    return "".join(_message_html(row, "selected", report.question) for row in report.selected)


def _fallback_html(report: TurnReport) -> str:
    if report.fallback_reason:
        return (
            '<div class="lib-warn" data-section="fallback"><b>Fallback:</b> the model selector '
            f"failed, the local selector answered. Reason: {escape(report.fallback_reason)}</div>"
        )
    engine = report.selection_strategy or "none"
    return f'<p class="lib-note" data-section="fallback">No fallback (selector: {engine}).</p>'


def _gist_html(report: TurnReport) -> str:
    if not report.gist_text:
        return '<p class="lib-note">No gist yet: nothing has left the recent turns.</p>'
    state = "sent with this turn" if report.gist_sent else "kept, not sent with this strategy"
    return (
        f'<p class="lib-note">{report.gist_tokens:,} tokens, {state}.</p>'
        f'<pre class="lib-gist">{escape(clip(report.gist_text))}</pre>'
    )


def _scope_name(recall: dict[str, Any]) -> str:
    scope = recall.get("scope")
    return f"Scope <b>{escape(str(scope))}</b>" if scope else "Scope"


def recall_summary(recall: dict[str, Any] | None) -> str:
    """One plain line on the turn's recall: what came back, or why nothing did."""
    if not recall:
        return _RECALL_OFF
    status = str(recall.get("status") or "")
    reason = str(recall.get("reason") or "")
    count = len(recall.get("records") or [])
    if status == "recalled":
        plural = "s" if count != 1 else ""
        return (
            f"{count} record{plural} recalled and put in front of the model input "
            "(not saved in this thread)."
        )
    if status in _RECALL_FAILED:
        return f"Recall failed ({status}): {reason}. This turn went on without it."
    return f"Nothing recalled ({status}: {reason or 'no reason given'})."


def _capture_html(capture: dict[str, Any] | None) -> str:
    if not capture:
        return ""
    if capture.get("status") == "captured":
        written = int(capture.get("records") or 0)
        return (
            f'<p class="lib-note" data-capture="captured">This turn was copied into the scope '
            f"({written} new record{'s' if written != 1 else ''}).</p>"
        )
    return (
        f'<div class="lib-warn" data-capture="failed"><b>Copying this turn into the scope '
        f"failed</b> ({escape(str(capture.get('status')))}): "
        f"{escape(str(capture.get('reason') or ''))}. The next turn tries again.</div>"
    )


def _recall_html(recall: dict[str, Any] | None, capture: dict[str, Any] | None = None) -> str:
    if not recall:
        return f'<p class="lib-note">{escape(_RECALL_OFF)}</p>'
    status = str(recall.get("status") or "")
    line = escape(recall_summary(recall))
    head = (
        f'<div class="lib-error" data-recall-status="{escape(status)}">{line}</div>'
        if status in _RECALL_FAILED
        else f'<p class="lib-note" data-recall-status="{escape(status)}">'
        f"{_scope_name(recall)}: {line}</p>"
    )
    items = "".join(
        f'<li class="lib-recalled" data-thread="{escape(str(r.get("thread_id") or ""))}">'
        f"{escape(_one_line(str(r.get('text', '')), 300))} <span class='lib-meta'>"
        f"{escape(_role(str(r.get('role') or '')))} · from thread "
        f"{escape(str(r.get('thread_id') or '(remembered)'))}</span></li>"
        for r in recall.get("records") or []
        if isinstance(r, dict)
    )
    listing = f"<ul>{items}</ul>" if items else ""
    return head + listing + _capture_html(capture)


def inspector_html(report: TurnReport) -> str:
    """The inspector panel for the last turn."""
    latency = (
        f"{report.selection_latency_ms:,.0f} ms" if report.selection_latency_ms is not None else "-"
    )
    error = (
        f'<div class="lib-error" data-section="error"><b>The model failed:</b> '
        f"{escape(report.error)}</div>"
        if report.error
        else ""
    )
    recalled = f" (+ {report.recalled_tokens:,} recalled)" if report.recalled_tokens else ""
    kpis = "".join(
        [
            _kpi("sent", "sent from this thread", f"{report.thread_tokens_sent:,} tokens"),
            _kpi("history", "whole thread", f"{report.history_tokens:,} tokens"),
            _kpi("saved", "of the thread not sent", f"{report.saved_pct:.1f}%"),
            _kpi("latency", "selection latency", latency),
        ]
    )
    extras = "".join(f" + {extra}" for extra in report.extras_sent())
    recent_rows = "".join(_message_html(row, "recent") for row in report.recent)
    return (
        f'<div class="lib-inspector" data-thread="{escape(report.thread_id)}" '
        f'data-strategy="{escape(report.strategy)}">'
        f'<div class="lib-question"><b>Last question:</b> {escape(_one_line(report.question, 300))}'
        f'</div><div class="lib-kpis">{kpis}</div>'
        f'<p class="lib-note">Strategy <b>{escape(report.strategy_label)}</b>: '
        f"{report.messages_sent} of {report.history_count} messages sent{escape(extras)}; "
        f"{report.sent_tokens:,} tokens in all{escape(recalled)}; "
        f"index: {report.index_size} entries.</p>{error}"
        f"{_fallback_html(report)}{_strategy_table(report)}"
        f"<h4>Selected by the Librarian ({len(report.selected)})</h4>"
        f'<div data-section="selected">{_selection_html(report)}</div>'
        f"<h4>Recent turns, always included ({len(report.recent)})</h4>"
        f'<div data-section="recent">{recent_rows}</div>'
        f'<h4>The gist (running summary)</h4><div data-section="gist">{_gist_html(report)}</div>'
        f"<h4>Recalled from other threads ({len(report.recalled)})</h4>"
        f'<div data-section="recall">{_recall_html(report.recall, report.capture)}</div></div>'
    )


def overview_html(thread_id: str, overview: dict[str, Any]) -> str:
    """The inspector for a thread with no turn yet (a new one, or the demo just loaded)."""
    gist = overview.get("gist") or ""
    gist_html = (
        f'<pre class="lib-gist">{escape(clip(gist))}</pre>'
        if gist
        else '<p class="lib-note">No gist yet.</p>'
    )
    return (
        f'<div class="lib-inspector" data-thread="{escape(thread_id)}" data-empty="true">'
        f'<p class="lib-note">No question asked on this thread yet. History: '
        f"{overview.get('messages', 0):,} messages, {overview.get('tokens', 0):,} tokens; "
        f"index: {overview.get('indexed', 0):,} entries.</p>"
        f'<h4>The gist (running summary)</h4><div data-section="gist">{gist_html}</div>'
        f'<h4>Recalled from other threads</h4><div data-section="recall">'
        f'<p class="lib-note">{_overview_recall(overview)}</p></div></div>'
    )


def _overview_recall(overview: dict[str, Any]) -> str:
    if not overview.get("recall"):
        return escape(_RECALL_OFF)
    scope = overview.get("scope")
    where = f"scope <b>{escape(str(scope))}</b>" if scope else "the scope"
    return (
        f"Recall is on ({where}): the first question recalls what other threads of the "
        "scope said about it."
    )


# -- plain text (the terminal chat) ----------------------------------------------------------


def _totals(report: TurnReport) -> str:
    """What was sent, each count against what it can be compared with.

    The thread's tokens and messages are compared with the thread; the recalled block
    comes from other threads, so it is added apart, never counted against this one.
    """
    thread = (
        f"{report.thread_tokens_sent:,} of the thread's {report.history_tokens:,} tokens "
        f"({report.saved_pct:.1f}% not sent)"
    )
    if report.recalled_tokens:
        head = (
            f"sent {report.sent_tokens:,} tokens: {thread} + {report.recalled_tokens:,} "
            "recalled from other threads"
        )
    else:
        head = f"sent {thread}"
    extras = "".join(f" + {extra}" for extra in report.extras_sent())
    return f"{head}; {report.messages_sent} of {report.history_count} messages{extras}"


def inspector_text(report: TurnReport) -> str:
    """The inspector as a few lines of text."""
    latency = (
        f"{report.selection_latency_ms:,.0f} ms" if report.selection_latency_ms is not None else "-"
    )
    lines = [
        f"strategy {report.strategy_label}: {_totals(report)}; selection {latency}"
        + (f"; FALLBACK: {report.fallback_reason}" if report.fallback_reason else ""),
    ]
    if report.selection_skipped:
        lines.append(f"selection skipped: {report.skip_reason}")
    for row in report.selected:
        mark = "sent" if row.sent else "not sent"
        # The sentence the selection most likely rests on, as the HTML inspector shows
        # it; the summary when no sentence shares a word with the question.
        shown = matching_sentence(row.text, report.question) or row.summary
        lines.append(
            f"  selected #{row.position} {_role(row.role)} [{mark}]: {_one_line(shown, 100)}"
        )
    positions = [row.position for row in report.recent]
    if positions:
        lines.append(f"  recent turns: #{positions[0]}..#{positions[-1]}")
    if report.gist_text:
        state = "sent" if report.gist_sent else "not sent"
        lines.append(f"  gist: {report.gist_tokens:,} tokens ({state})")
    if report.recall is not None:
        lines.append(f"  recall: {recall_summary(report.recall)}")
        for record in report.recalled:
            lines.append(
                f"    from {record.get('thread_id') or '(remembered)'}: "
                f"{_one_line(str(record.get('text', '')), 100)}"
            )
    if report.capture and report.capture.get("status") != "captured":
        lines.append(f"  copying this turn into the scope failed: {report.capture.get('reason')}")
    if report.error:
        lines.append(f"  model error: {report.error}")
    return "\n".join(lines)
