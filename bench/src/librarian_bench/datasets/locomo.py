"""Loader for LoCoMo-format files (e.g. ``locomo10.json``; CC BY-NC 4.0, never bundled).

Turns become messages: ``speaker_a`` is the user (``human``), ``speaker_b`` the
assistant side (``ai``); each turn keeps its speaker and session date, and an image's
caption is kept in the text. Evidence ``dia_id``s become message ids. Quirks handled:
evidence strings holding several ids ("D8:6; D9:17"), malformed ids ("D", "D:11:26"),
ids matching no turn, questions without evidence (skipped and counted), session keys
with a date but no turns. Category 5 (adversarial) is labelled apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from librarian_bench.datasets.base import Conversation, Question

__all__ = ["CATEGORIES", "LocomoFormatError", "LocomoStats", "load_locomo"]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DIA_ID = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)$")
_DATE = re.compile(r"(\d{1,2} \w+,? \d{4})")


class LocomoFormatError(ValueError):
    """The file is missing or not in LoCoMo's format."""


@dataclass
class LocomoStats:
    """What the loader had to repair or leave out."""

    conversations: int = 0
    turns: int = 0
    questions: int = 0
    empty_sessions: int = 0
    malformed_evidence: int = 0
    unknown_evidence: int = 0
    skipped_no_evidence: int = 0
    by_category: dict[str, int] = field(default_factory=dict)


def _short_date(raw: Any) -> str:
    match = _DATE.search(str(raw or ""))
    return match.group(1).replace(",", "") if match else str(raw or "").strip()


def _turn_text(turn: dict[str, Any], date: str) -> str:
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {caption}]".strip()
    speaker = str(turn.get("speaker", "?"))
    return f"({date}) {speaker}: {text}" if date else f"{speaker}: {text}"


def _evidence(raw: Any, known: set[str], prefix: str, stats: LocomoStats) -> list[str]:
    items = raw if isinstance(raw, list) else [raw]
    found: list[str] = []
    for item in items:
        ids = _DIA_ID.findall(str(item))
        if not ids or str(item).strip() not in ids:
            stats.malformed_evidence += 1
        for dia in ids:
            if dia in known:
                mid = f"{prefix}:{dia}"
                if mid not in found:
                    found.append(mid)
            else:
                stats.unknown_evidence += 1
    return found


def load_locomo(
    path: str | Path, *, categories: set[int] | None = None, stats: LocomoStats | None = None
) -> list[Conversation]:
    """Read a LoCoMo-format JSON file.

    Args:
        path: The file (e.g. ``locomo10.json``).
        categories: Keep only these question categories (default: all).
        stats: Filled with counts of what was repaired or skipped.

    Raises:
        LocomoFormatError: when the file does not exist or is not LoCoMo-shaped.
    """
    stats = stats if stats is not None else LocomoStats()
    file = Path(path)
    if not file.exists():
        raise LocomoFormatError(f"LoCoMo file not found: {file}")
    if not file.is_file():  # a device, a FIFO: reading it may never end
        raise LocomoFormatError(f"{file} is not a regular file; give the LoCoMo JSON file")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise LocomoFormatError(f"{file} is not valid JSON: {exc}") from exc
    if not isinstance(data, list) or not data:
        raise LocomoFormatError(
            f"{file} is not LoCoMo-shaped: expected a non-empty list of samples"
        )
    conversations: list[Conversation] = []
    seen: dict[str, int] = {}
    for n, sample in enumerate(data):
        if (
            not isinstance(sample, dict)
            or not isinstance(sample.get("conversation"), dict)
            or not isinstance(sample.get("qa"), list)
        ):
            raise LocomoFormatError(
                f"{file} is not LoCoMo-shaped: sample {n} lacks 'conversation' or 'qa'"
            )
        conv = sample["conversation"]
        prefix = str(sample.get("sample_id", f"conv-{n}"))
        if prefix in seen:  # its message ids would collide with the other sample's
            raise LocomoFormatError(
                f"{file} is not LoCoMo-shaped: samples {seen[prefix]} and {n} have the same "
                f"sample_id {prefix!r}"
            )
        seen[prefix] = n
        speaker_a = conv.get("speaker_a")
        sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION.match(key)))
        messages: list[BaseMessage] = []
        known: set[str] = set()
        for number, key in sessions:
            turns = conv.get(key)
            if not isinstance(turns, list) or not turns:
                stats.empty_sessions += 1
                continue
            date = _short_date(conv.get(f"session_{number}_date_time"))
            for turn in turns:
                if not isinstance(turn, dict) or "dia_id" not in turn:
                    continue
                dia = str(turn["dia_id"])
                known.add(dia)
                cls = HumanMessage if turn.get("speaker") == speaker_a else AIMessage
                messages.append(cls(content=_turn_text(turn, date), id=f"{prefix}:{dia}"))
        if not messages:
            continue
        questions: list[Question] = []
        for k, qa in enumerate(sample["qa"]):
            if not isinstance(qa, dict) or "question" not in qa:
                continue
            try:
                category = int(qa.get("category", 0) or 0)
            except (TypeError, ValueError, OverflowError):  # "x", [1], 1e400
                raise LocomoFormatError(
                    f"{file} is not LoCoMo-shaped: question {k} of sample {n} has category "
                    f"{qa.get('category')!r}, not a number"
                ) from None
            if categories is not None and category not in categories:
                continue
            evidence = _evidence(qa.get("evidence", []), known, prefix, stats)
            if not evidence:
                stats.skipped_no_evidence += 1
                continue
            answer = qa.get("answer", qa.get("adversarial_answer", ""))
            label = CATEGORIES.get(category, str(category))
            stats.by_category[label] = stats.by_category.get(label, 0) + 1
            questions.append(
                Question(f"{prefix}-q{k}", str(qa["question"]), str(answer), evidence, label)
            )
        stats.conversations += 1
        stats.turns += len(messages)
        stats.questions += len(questions)
        conversations.append(Conversation(prefix, messages, questions))
    if not conversations:
        raise LocomoFormatError(f"{file} is not LoCoMo-shaped: no conversation has turns")
    return conversations
