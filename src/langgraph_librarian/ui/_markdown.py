"""Chat text as Markdown for the page: what a user typed, shown as typed; a model's reply,
rendered without raw HTML or images.

Gradio's chatbot renders every message as Markdown and sanitizes the HTML. That is right
for a model's reply, wrong for what a person typed: a pasted ``<img ...>`` or
``<script>`` was sanitized away (an empty bubble) and ``[x](javascript:...)`` became a
bare "x". Escaping per message keeps one chatbot for both (Gradio's switch,
``render_markdown``, is per chatbot, not per message).
"""

from __future__ import annotations

import re

__all__ = ["reply_markdown", "user_markdown"]

# Every ASCII punctuation character may be backslash-escaped in CommonMark (and in the
# chat's Markdown renderer), which makes it a literal character: no tag, link, list,
# heading or emphasis can start from what a user typed.
_MD_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_SPACES = re.compile(r"(?m)^[ \t]+| {2,}")


def _keep_spaces(match: re.Match[str]) -> str:
    run = match.group(0).replace("\t", "    ")
    if match.start() == 0 or match.string[match.start() - 1] == "\n":
        # Leading indentation would make a code block, and the renderer strips leading
        # whitespace, no-break spaces included; an entity is decoded after that.
        return "&nbsp;" * len(run)
    return " " + "\u00a0" * (len(run) - 1)  # runs of spaces would collapse to one


def user_markdown(text: str) -> str:
    """What someone typed, as Markdown that shows it exactly as text.

    ``<img src=x onerror=...>``, ``<script>``, ``[link](javascript:...)``, ``# title``
    or ``**bold**`` appear as typed, never as markup; line breaks and indentation stay.
    Replies from the model are not passed through this: they are the model's Markdown,
    which the chat renders and sanitizes.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _SPACES.sub(_keep_spaces, _MD_PUNCTUATION.sub(r"\\\1", text))


# A fence trusted to open a code block: at the start of the line (indented, it may sit
# in a list item, whose end leaves the lines below it outside any code block) and, with
# backticks, no backtick after it (CommonMark: then it is no fence).
_FENCE = re.compile(r"^(`{3,}(?=[^`]*$)|~{3,})")
_TICKS = re.compile(r"`+")
# A tag or an image after an even number of backslashes (none, or escaped backslashes
# such as \\<img ...>) is one: it gets an escaping backslash of its own.
_TAG_START = re.compile(r"(\\*)<(?=[A-Za-z/!?])")
_IMAGE = re.compile(r"(\\*)!\[")


def _code_spans(line: str) -> list[tuple[int, int]] | None:
    """The code spans of ``line`` as ``(start, end)``, or ``None`` if a backtick run on
    it does not make one the renderer surely sees.

    As CommonMark: a closing run has exactly as many backticks as the opening one, and
    a backslash before a run makes its first backtick literal. A run without its
    closing run on the line may close on another one, and a span with ``|`` in it is
    split by a table row; either way the pairing is not sure, and ``None`` has the
    whole paragraph escaped as plain text (a backslash shown in a rare code span).
    """
    spans: list[tuple[int, int]] = []
    end = pos = 0
    while (opening := _TICKS.search(line, pos)) is not None:
        start, run = opening.start(), len(opening.group(0))
        before = line[end:start]
        if (len(before) - len(before.rstrip("\\"))) % 2:  # "\`": one literal backtick
            start, run = start + 1, run - 1
        pos = opening.end()
        if not run:
            continue
        closing = next((c for c in _TICKS.finditer(line, pos) if len(c.group(0)) == run), None)
        if closing is None or "|" in line[start : closing.end()]:
            return None
        spans.append((start, closing.end()))
        end = pos = closing.end()
    return spans


def _outside_code_line(line: str, spans: list[tuple[int, int]]) -> str:
    parts = []
    end = 0
    for start, close in spans:
        parts.append(_plain(line[end:start]))
        parts.append(line[start:close])
        end = close
    parts.append(_plain(line[end:]))
    return "".join(parts)


def _outside_code(text: str) -> str:
    """``text`` (no fenced block in it) with what is not in a code span escaped."""
    out = []
    for paragraph in re.split(r"(\n[ \t]*\n)", text):  # a code span ends with its paragraph
        lines = paragraph.split("\n")
        spans = [_code_spans(line) for line in lines]
        if any(found is None for found in spans):
            out.append(_plain(paragraph))
        else:
            out.append("\n".join(map(_outside_code_line, lines, spans)))  # type: ignore[arg-type]
    return "".join(out)


def _escaped(match: re.Match[str]) -> str:
    backslashes = match.group(1)
    escape = "" if len(backslashes) % 2 else "\\"
    return f"{backslashes}{escape}{match.group(0)[len(backslashes) :]}"


def _plain(text: str) -> str:
    return _IMAGE.sub(_escaped, _TAG_START.sub(_escaped, text))


def reply_markdown(text: str) -> str:
    """A model's reply as Markdown the page can render without loading anything.

    The reply keeps its Markdown (bold, lists, code, links; the chat's sanitizer drops
    ``javascript:`` links), but raw HTML is shown as text and an image becomes a link:
    a reply cannot make the page fetch a URL (a tracking pixel, or data smuggled into
    one by a prompt injection). Code spans and fenced blocks are left as they are.
    """
    lines = text.split("\n")
    out: list[str] = []
    block: list[str] = []
    fence: str | None = None
    for line in lines:
        opened = _FENCE.match(line)
        if fence is None and opened:
            if block:
                out.append(_outside_code("\n".join(block)))
            block = []
            fence = opened.group(1)
            out.append(line)
        elif fence is not None:
            out.append(line)
            closing = line.strip()
            # Closed as soon as a renderer may close it (marked also takes "```~").
            if closing.startswith(fence) and not closing.strip("`~"):
                fence = None
        else:
            block.append(line)
    if block:
        out.append(_outside_code("\n".join(block)))
    return "\n".join(out)
