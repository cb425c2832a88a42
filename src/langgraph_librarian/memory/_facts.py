"""Offline running summary: one fact line per message, merged and kept under a budget.

No model is involved. Each summarized message becomes one line (``- User: ...``):
short messages verbatim, longer ones through the offline engine's extractive
summarizer. The lines of the previous summary are kept and the new lines appended.
When the whole exceeds the budget it is re-compressed: long lines are shortened first,
then the least important lines are dropped until it fits. Importance favours what a
long-running assistant must not forget: what the user said about themselves
(preferences, constraints such as allergies or diets, names), decisions, changes to
earlier facts, and concrete values; ties go to the newer line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from langgraph_librarian._messages import message_text
from langgraph_librarian._text import content_terms
from langgraph_librarian.index.extractive import extractive_summary
from langgraph_librarian.tokens import TokenCounter, count_text_tokens

__all__ = ["compress_lines", "merge_facts", "message_fact", "parse_summary"]

_VERBATIM_CHARS = 240
"""Messages up to this length are kept word for word (after whitespace clean-up)."""
_MAX_FACT_CHARS = 320
_SHORT_FACT_WORDS = 30
_DEDUPE_WINDOW = 200
_WS = re.compile(r"\s+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_LABELLED = re.compile(r"^(?:User|Assistant|Tool[^:\n]{0,60}):")
_ROLE_LABELS = {"human": "User", "ai": "Assistant", "tool": "Tool"}
_ROLE_WEIGHT = {"User": 2.0, "Assistant": 1.0, "Tool": 0.5}
_PROSE_WEIGHT = 1.5  # lines without a role label, e.g. from a model-written summary
_MEMORY_CUES = re.compile(
    r"\b(allerg\w*|intoleran\w*|vegetarian|vegan|gluten|lactose|kosher|halal|diet\w*|"
    r"avoid\w*|prefer\w*|favou?rite|love[sd]?|hate[sd]?|dislike[sd]?|can'?t (?:eat|have|stand)|"
    r"don'?t (?:eat|like|want)|never|always|my name|call me|i am|i'm|remember|important|"
    r"must|need to|deadline|budget|birthday|live[sd]? in|work(?:s|ed)? (?:at|as|for))\b",
    re.IGNORECASE,
)
# Own cue lists (not the indexer's): they rank facts for a chat memory, not for search.
_CHANGES = re.compile(
    r"\b(instead|no longer|not anymore|any ?more|changed?|switch(?:ed)?|actually|correction|"
    r"scratch that|replac(?:e|ed|ing)|rather than|moved?|postpone[d]?|cancel(?:l?ed)?|"
    r"now (?:is|are|it'?s|i|we))\b",
    re.IGNORECASE,
)
_VALUES = re.compile(
    r"[$€£¥]?\d[\d,.:/-]*|(?i:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)"
    r"|(?<=[a-z,;:] )[A-Z][\w-]+"
)
_DECISIONS = re.compile(
    r"\b(decid\w*|agree\w*|confirm\w*|book(?:ed)?|chose|chosen|settled|plan(?:ned)?|"
    r"schedul\w*|will|going to)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Line:
    text: str
    order: int

    @property
    def label(self) -> str | None:
        head, sep, _ = self.text.partition(":")
        if sep and (head in _ROLE_WEIGHT or head.startswith("Tool ")):
            return "Tool" if head.startswith("Tool") else head
        return None


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def message_fact(message: BaseMessage) -> str:
    """One summary line for ``message`` (``""`` for empty and system messages)."""
    if message.type == "system":
        return ""
    text = _WS.sub(" ", message_text(message)).strip()
    if not text:
        return ""
    label = _ROLE_LABELS.get(message.type, message.type.capitalize())
    name = getattr(message, "name", None)
    if message.type == "tool" and name:
        label = f"Tool {name}"
    if len(text) > _VERBATIM_CHARS:
        role = "human" if message.type == "human" else "ai"
        text = extractive_summary(message_text(message), role, max_sentences=2) or text
        text = _WS.sub(" ", text).strip()
    return f"{label}: {_clip(text, _MAX_FACT_CHARS)}"


def parse_summary(summary: str) -> list[str]:
    """Fact lines of a previous summary: its bullet lines, or its sentences for prose."""
    lines: list[str] = []
    for raw in summary.splitlines():
        line = _BULLET.sub("", raw).strip()
        if not line:
            continue
        if _BULLET.match(raw) or _LABELLED.match(line):
            lines.append(line)
        else:
            lines.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+", line) if s.strip())
    return lines


def _importance(line: _Line, newest: int) -> float:
    label = line.label
    score = _ROLE_WEIGHT.get(label, _PROSE_WEIGHT) if label else _PROSE_WEIGHT
    body = line.text.partition(":")[2] if label else line.text
    if _MEMORY_CUES.search(body):
        score += 2.0
    if _CHANGES.search(body):
        score += 2.0
    if _DECISIONS.search(body):
        score += 1.0
    score += min(2, len(_VALUES.findall(body))) * 0.5
    if label == "User" and body.rstrip().endswith("?"):
        score -= 0.5  # a question asked is less durable than a fact stated
    return score + 0.75 * (line.order / max(newest, 1))


def _dedupe(lines: list[_Line]) -> list[_Line]:
    """Drop a line whose content words a newer line repeats (mostly) in full.

    Only the next ``_DEDUPE_WINDOW`` lines are compared, which bounds the cost of a
    first summary over thousands of messages.
    """
    terms = [frozenset(content_terms(line.text)) for line in lines]
    kept: list[_Line] = []
    for i, line in enumerate(lines):
        mine = terms[i]
        later = range(i + 1, min(len(lines), i + 1 + _DEDUPE_WINDOW))
        if not (mine and any(len(mine & terms[j]) >= 0.85 * len(mine) for j in later)):
            kept.append(line)
    return kept


def _render(lines: Sequence[_Line]) -> str:
    return "\n".join(f"- {line.text}" for line in lines)


def _shorten(line: _Line) -> _Line:
    label = line.label
    head, _, body = line.text.partition(":") if label else ("", "", line.text)
    if len(body.split()) <= _SHORT_FACT_WORDS:
        return line
    short = extractive_summary(body, "human", max_sentences=1) or body
    words = short.split()
    if len(words) > _SHORT_FACT_WORDS:
        short = " ".join(words[:_SHORT_FACT_WORDS]) + " …"
    return _Line(f"{head}: {short.strip()}" if label else short.strip(), line.order)


def compress_lines(
    lines: Sequence[str], max_tokens: int, counter: TokenCounter | None = None
) -> tuple[str, bool]:
    """Render ``lines`` (oldest first) as a summary of at most ``max_tokens`` tokens.

    Returns the summary and whether anything had to be shortened or dropped.
    """
    texts = [t for t in lines if t.strip()]
    items = _dedupe([_Line(text, i) for i, text in enumerate(texts)])
    changed = len(items) != len(texts)
    text = _render(items)
    if count_text_tokens(text, counter) <= max_tokens:
        return text, changed
    items = [_shorten(line) for line in items]
    newest = max((line.order for line in items), default=0)
    # Drop the least important lines (the oldest among equals) until the rest fits:
    # estimate with per-line counts first, then confirm on the rendered text.
    ranked = sorted(items, key=lambda line: (_importance(line, newest), line.order))
    cost = {line.order: count_text_tokens(f"- {line.text}", counter) + 1 for line in items}
    total = sum(cost.values())
    dropped: set[int] = set()
    for line in ranked:
        if total <= max_tokens:
            break
        dropped.add(line.order)
        total -= cost[line.order]
    kept = [line for line in items if line.order not in dropped]
    text = _render(kept)
    for line in ranked:
        if count_text_tokens(text, counter) <= max_tokens or not kept:
            break
        if line.order not in dropped:
            dropped.add(line.order)
            kept = [k for k in kept if k.order != line.order]
            text = _render(kept)
    if not kept and texts:
        # Not even one shortened line fits: keep the start of the most important one.
        best = max(items, key=lambda line: _importance(line, newest))
        text = _hard_clip(f"- {best.text}", max_tokens, counter)
    return text, True


def _hard_clip(text: str, max_tokens: int, counter: TokenCounter | None) -> str:
    limit = max(1, max_tokens * 4)
    clipped = _clip(text, limit)
    while len(clipped) > 1 and count_text_tokens(clipped, counter) > max_tokens:
        limit = max(1, int(limit * 0.8))
        clipped = _clip(text, limit)
    return clipped


def merge_facts(
    previous_summary: str,
    messages: Sequence[BaseMessage],
    max_tokens: int,
    counter: TokenCounter | None = None,
) -> tuple[str, bool]:
    """Previous summary plus one line per message, re-compressed to ``max_tokens``."""
    lines = parse_summary(previous_summary)
    lines.extend(fact for fact in (message_fact(m) for m in messages) if fact)
    return compress_lines(lines, max_tokens, counter)
