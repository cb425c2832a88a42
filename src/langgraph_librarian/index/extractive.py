"""Offline extractive summaries: pick the sentences that selection will need."""

from __future__ import annotations

import json
import re
from collections import Counter
from itertools import chain

from langgraph_librarian._engine.text import (
    CHANGE_CUES,
    WHITESPACE,
    split_sentences,
    stem_terms,
    tokenize,
)

__all__: list[str] = []

MAX_SUMMARY_CHARS = 420
_MAX_SENTENCE_WORDS = 45

_DECISION = re.compile(
    r"\b(decid\w*|agree\w*|confirm\w*|final\w*|approv\w*|deadline|budget|must|plan(?:ned)?|"
    r"schedul\w*|will|we'll|going to|remember|prefer\w*|allerg\w*)\b",
    re.IGNORECASE,
)
_PERSONAL = re.compile(
    r"\b(?:i am|i'm|i have|i've|i prefer|i like|i love|i hate|i can't|i cannot|i don't|"
    r"i never|i always|i need|i want|my)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"[$€£¥]?\d[\d,.:/-]*%?|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\b",
    re.IGNORECASE,
)
_IDENT = re.compile(r"(?<![\w.-])[\w.-]*[/\\][\w./\\-]+|\b\w+_\w+\b|\b\w+\.\w{1,5}\b")
_CAPITALS = r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+(?:\s[A-Z][a-zA-Z]+)*"
# A match starts with a capital: checking that first leaves other positions after one
# test instead of three assertions (same matches, about 2x faster).
_CAPITAL = re.compile(f"(?=[A-Z]){_CAPITALS}")
_CODE_BLOCK = re.compile(r"```[^\n]*\n(.*?)(?:```|$)", re.DOTALL)


def _flatten_code(text: str) -> str:
    def repl(match: re.Match[str]) -> str:
        first = next((ln.strip() for ln in match.group(1).splitlines() if ln.strip()), "")
        return f" [code: {first[:80]}] " + "\n\n"

    return _CODE_BLOCK.sub(repl, text)


def _describe_json(text: str) -> str | None:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(data, dict):
        parts = []
        for key, value in list(data.items())[:12]:
            shown = value if isinstance(value, str | int | float | bool) else type(value).__name__
            parts.append(f"{key}={str(shown)[:40]}")
        return "JSON object: " + ", ".join(parts)
    if isinstance(data, list):
        return f"JSON list of {len(data)} items"
    return None


def _clip_words(sentence: str, limit: int = _MAX_SENTENCE_WORDS) -> str:
    words = sentence.split()
    if len(words) <= limit:
        return sentence
    return " ".join(words[:limit]) + " …"


# Case-sensitive twins of the case-insensitive patterns, for sentences that are ASCII
# and lower-cased first: on ASCII text case-insensitive matching is exactly matching the
# lower-cased text (one-to-one, same positions), and the regex engine skips most
# alternatives at a glance when it need not fold case (about 3x faster). Text with other
# characters (Kelvin sign, long s, dotted I fold to ASCII letters) uses the originals.
_CHANGE_LOWER = re.compile(CHANGE_CUES.pattern)  # as in text.has_change_cue
_DECISION_LOWER = re.compile(_DECISION.pattern)
_PERSONAL_LOWER = re.compile(_PERSONAL.pattern)
_NUMBER_LOWER = re.compile(f"(?=[$€£¥\\djfmasond])(?:{_NUMBER.pattern})")  # a value's first char
_DOT_WORD = re.compile(r"\.\w")


def _ident_count(sentence: str) -> int:
    # Each alternative of _IDENT needs a slash, an underscore or a dot before a word
    # character; most sentences have none, and these checks cost less than the scan.
    if "/" in sentence or "\\" in sentence or "_" in sentence or _DOT_WORD.search(sentence):
        return len(_IDENT.findall(sentence))
    return 0


def _score(
    sentence: str, position: int, role: str, repeats_of: dict[str, int], terms: set[str]
) -> float:
    """``terms``: the sentence's content terms (``set(stem_terms(tokenize(sentence)))``);
    ``repeats_of``: each term's count in the message, less one, at most 3."""
    words = sentence.split()
    if not words:
        return -1.0
    if sentence.isascii():
        text = sentence.lower()
        change, decision, personal, number = (
            _CHANGE_LOWER,
            _DECISION_LOWER,
            _PERSONAL_LOWER,
            _NUMBER_LOWER,
        )
    else:
        text = sentence
        change, decision, personal, number = CHANGE_CUES, _DECISION, _PERSONAL, _NUMBER
    score = 0.0
    if position == 0:
        score += 1.5
    if change.search(text):
        score += 3.0
    if decision.search(text):
        score += 1.0
    score += min(3, len(number.findall(text))) * 1.0
    score += min(2, _ident_count(sentence)) * 0.75
    score += min(3, len(_CAPITAL.findall(sentence))) * 0.6
    if sentence.rstrip().endswith("?"):
        score += 2.0 if role == "human" else 0.5
    if role == "human" and personal.search(text):
        score += 1.0  # what the user says of themselves is what a chat must remember
    # Favour sentences whose content words recur in the message: they carry its topic.
    # Only recurrence counts: a word seen once is no evidence, and counting it would
    # simply favour long sentences.
    if terms:
        repeats = sum(map(repeats_of.__getitem__, terms))
        score += repeats / (len(terms) ** 0.5) * 0.4
    if len(words) < 4:
        score -= 1.5
    return score


def extractive_summary(text: str, role: str = "human", max_sentences: int = 3) -> str:
    """Up to ``max_sentences`` sentences of ``text`` (about 100 tokens), in original order.

    Sentences are scored for what later selection needs: numbers and dates, names,
    paths and identifiers, decisions, changes to earlier facts ("instead", "no
    longer"...) and questions. Code blocks become ``[code: first line]`` and a JSON
    message is described by its keys. Deterministic; no model involved.
    """
    if not text or not text.strip():
        return ""
    described = _describe_json(text)
    if described is not None:
        return described[:MAX_SUMMARY_CHARS]
    flat = _flatten_code(text)
    sentences = split_sentences(flat)
    if not sentences:
        return WHITESPACE.sub(" ", flat).strip()[:MAX_SUMMARY_CHARS]
    if len(sentences) > 400:
        # Huge message: consider the head, a middle slice and the tail only.
        sentences = (
            sentences[:200]
            + sentences[len(sentences) // 2 : len(sentences) // 2 + 50]
            + sentences[-150:]
        )
    # A sentence repeated word for word (a signature, boilerplate, a pasted block) says
    # nothing new the second time, and must not make its own words look like the topic.
    sentences = list(dict.fromkeys(sentences))
    # Each sentence is tokenized once: the message's term counts are the sum of its
    # sentences' (tokens never span the space the sentences were once joined with).
    per_sentence = [stem_terms(tokenize(sentence)) for sentence in sentences]
    # One count over every sentence's terms (the same counts as an update per
    # sentence, without Counter.update's Python-level checks on each of them).
    doc_freq = Counter(chain.from_iterable(per_sentence))
    repeats_of = {term: min(count, 4) - 1 for term, count in doc_freq.items()}
    scores = [
        _score(sentence, i, role, repeats_of, set(terms))
        for i, (sentence, terms) in enumerate(zip(sentences, per_sentence, strict=True))
    ]
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    chosen = sorted(ranked[:max_sentences])
    pieces: list[str] = []
    total = 0
    for i in chosen:
        piece = WHITESPACE.sub(" ", _clip_words(sentences[i])).strip()
        if total + len(piece) > MAX_SUMMARY_CHARS and pieces:
            break
        pieces.append(piece)
        total += len(piece) + 1
    summary = " ".join(pieces)
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[: MAX_SUMMARY_CHARS - 1].rstrip() + "…"
    return summary
