"""Shared text processing for the offline engine: tokens, stems, stop words, sentences."""

from __future__ import annotations

import itertools
import logging
import re
import unicodedata
from collections.abc import Callable
from functools import cache, lru_cache, wraps
from pathlib import Path
from typing import TypeVar

import Stemmer

logger = logging.getLogger(__name__)

__all__ = [
    "ABBREVIATIONS",
    "CHANGE_CUES",
    "STOPWORDS",
    "VALUE_PATTERN",
    "WHITESPACE",
    "clean_text",
    "content_terms",
    "fence",
    "fold_accents",
    "has_change_cue",
    "has_more_tokens_than",
    "memo_short_texts",
    "one_line",
    "split_sentences",
    "stem_terms",
    "tokenize",
    "without_foreign_function_words",
]

# Function words plus chat filler; kept short on purpose: content words such as
# "changed", "instead" or "budget" must stay searchable.
STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "couldn",
        "did",
        "didn",
        "do",
        "does",
        "doesn",
        "doing",
        "don",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "hadn",
        "has",
        "hasn",
        "have",
        "haven",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "isn",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "ll",
        "me",
        "might",
        "more",
        "most",
        "must",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "re",
        "same",
        "shan",
        "she",
        "should",
        "shouldn",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "ve",
        "very",
        "was",
        "wasn",
        "we",
        "were",
        "weren",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "won",
        "would",
        "wouldn",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "yes",
        "yeah",
        "ok",
        "okay",
        "oh",
        "hi",
        "hey",
        "hello",
        "thanks",
        "thank",
        "please",
        "also",
        "really",
        "like",
        "well",
        "get",
        "got",
        "go",
        "going",
        "gonna",
        "want",
        "just",
        "s",
        "t",
        "d",
        "m",
        "o",
        "y",
    ]
)

MONTHS: dict[str, int] = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
"""English month names and abbreviations, lower case, to the month's number."""

DAYS: dict[str, int] = {
    name: i
    for i, names in enumerate(
        [
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        ]
    )
    for name in names
}
"""English weekday names and abbreviations, lower case, to the weekday (Monday 0)."""

CHANGE_CUES = re.compile(
    r"\b(instead|no longer|not anymore|any ?more|changed?|changing|update[sd]?|updating|"
    r"actually|correction|correct(?:ed)? that|scratch that|switch(?:ed)?|moved?|"
    r"replac(?:e|ed|ing)|revis(?:e|ed|ion)|rather than|now (?:is|are|it'?s|we)|"
    r"postpone[d]?|cancel(?:l?ed)?|push(?:ed|ing)? (?:[\w']+ ){0,3}?back|reschedul(?:e|ed|ing)|"
    r"put off(?! by (?:the|a|an|his|her|their|my|your|our|that|this|it|him|them|me|how|what)\b)|"
    r"called off|new (?:date|plan|budget|deadline))\b",
    re.IGNORECASE,
)
_CHANGE_CUES_LOWER = re.compile(CHANGE_CUES.pattern)


def has_change_cue(text: str) -> bool:
    """``CHANGE_CUES.search(text) is not None``, about 3x faster on ASCII text.

    On ASCII text, matching case-insensitively is matching the lower-cased text
    case-sensitively (same characters, same positions), and the regex engine rejects
    most alternatives at a glance when it need not fold case. Other text (where the
    Kelvin sign, a long s or a dotted capital I fold to ASCII letters) uses the
    original pattern.
    """
    if text.isascii():
        return _CHANGE_CUES_LOWER.search(text.lower()) is not None
    return CHANGE_CUES.search(text) is not None


_VALUES = (
    r"[$€£¥]?\d[\d,.:/-]*|(?i:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)"
    r"|(?<=[a-z,;:] )[A-Z][\w-]+"
)
_VALUE_FIRST_CHARS = "$€£¥\\dA-Zadfjmnosſ"
"""Every match of the value alternatives starts with one of these: a currency sign or
digit, a capital, or a month's first letter in either case (``ſ``, the long s, is an
``s`` to case-insensitive matching). Checking it first lets the regex engine leave
other positions after one test instead of trying the three alternatives at each
(indexing scans every passage: about 2x faster); the matches are the same."""
VALUE_PATTERN = re.compile(f"(?=[{_VALUE_FIRST_CHARS}])(?:{_VALUES})")
"""A passage that states a value: a number, an amount, a month, or a mid-sentence name."""

WHITESPACE = re.compile(r"\s+")
"""Runs of white space (collapsed to one space in summaries)."""

_TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*|[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# Where prose breaks into sentences: white space after a sentence's end mark, a blank
# line, or a line break before a bullet or a numbered item. First written as
# r"(?<=[.!?。！？])\s+|\n{2,}|\n(?=\s*(?:[-*•]|\d+[.)])\s)"; this form finds the same
# breaks about twice as fast (indexing splits every message twice: for its summary and
# into passages). Every alternative of the first form starts with a white space
# character; leading with that one test lets the regex engine leave most
# positions at once, instead of trying a lookbehind and two branches at each. The mark
# is then looked for behind the space just read, and a line break checked behind it;
# branches in the same order, the same greedy runs: the same matches
# (tests/test_index_fast_paths.py checks both on generated text).
_SENTENCE = re.compile(r"\s(?:(?<=[.!?。！？]\s)\s*|(?<=\n)(?:\n+|(?=\s*(?:[-*•]|\d+[.)])\s)))")

_stemmer = Stemmer.Stemmer("english")
_stemmer.maxCacheSize = 200_000

ABBREVIATIONS: dict[str, str] = {
    "tues": "tuesday",
    "weds": "wednesday",
    "thur": "thursday",
    "thurs": "thursday",
    "wk": "week",
    "wks": "weeks",
    "hrs": "hours",
    "yr": "year",
    "yrs": "years",
}
"""Abbreviations that stand for one word whatever their case or place, lower case, to the
word: they stem as it does ("Thurs" matches "Thursday", "wks" matches "weeks"). Only
forms that are no word of code or of a common language in practice. Left out: those
that are also words, names or code ("may", "mar", "sun", "sat", "wed", "mon", "jan",
"jun", "thu", "apr"; "sep", "oct", "dec", "aug": ``sep=``, ``oct(8)``, decrement, data
aug; "tue", "fri", "jul", "sept": Italian "le tue", Norwegian "fri", Swedish "God jul",
French "sept"; "hr", "min", "sec": HR, minimum, SEC; "mins", which would part "25 min"
from "25 mins"). Reading those by their context (capitals, a day number beside them,
"on Thu") was built and withdrawn after two reviews: each found names read as dates
("Tom and Jan", "Sun Microsystems", "mid-Jan" missed), the question and the index or the
tool search reading the same text differently (lower case, accents folded first), and
no benchmark or trial question gained."""


def _cjk_bigrams(token: str) -> list[str]:
    chars = [c for c in token if _CJK.match(c)]
    if len(chars) <= 1:
        return chars
    return [a + b for a, b in itertools.pairwise(chars)]


def tokenize(text: str) -> list[str]:
    """Lower-case word, number and CJK-bigram tokens of ``text`` (stop words kept)."""
    lowered = text.lower()
    if lowered.isascii() or not _CJK.search(lowered):
        # No CJK character anywhere: every token is kept as found. One scan of the
        # text instead of a regex search per token (indexing tokenizes every sentence).
        return _TOKEN.findall(lowered)
    tokens: list[str] = []
    for token in _TOKEN.findall(lowered):
        if _CJK.search(token):
            tokens.extend(_cjk_bigrams(token))
            rest = _CJK.sub(" ", token).split()
            tokens.extend(rest)
        else:
            tokens.append(token)
    return tokens


_STEMS: dict[str, str | bool] = {}
"""token -> its stem, or ``False`` for a token :func:`stem_terms` drops."""
_STEMS_LIMIT = 200_000


def has_more_tokens_than(text: str, n: int) -> bool:
    """``len(tokenize(text)) > n``, reading only as far as the ``n + 1``-th token.

    Every token the word pattern finds gives :func:`tokenize` one token or more (a CJK
    run gives its bigrams, at least one), so ``n + 1`` of them settle it; fewer are
    counted exactly. A check on a whole message ("is it a short reply?") then reads a
    few words of it instead of tokenizing hundreds.
    """
    for found, _ in enumerate(_TOKEN.finditer(text.lower()), 1):
        if found > n:
            return True
    return len(tokenize(text)) > n


def stem_terms(tokens: list[str]) -> list[str]:
    """Stemmed content terms: stop words dropped, numbers and CJK kept as they are."""
    # One dictionary lookup per token answers both questions (dropped? stem?); indexing
    # stems every sentence of a message, then every passage, from a small vocabulary.
    # Snowball stems a word the same way every time, so the cache changes nothing.
    stems = _STEMS
    if len(stems) > _STEMS_LIMIT:
        stems.clear()
    out: list[str] = []
    for token in tokens:
        stem = stems.get(token)
        if stem is None:
            keep = token not in STOPWORDS and (len(token) > 1 or token.isdigit())
            word = ABBREVIATIONS.get(token, token)
            stem = stems[token] = _stemmer.stemWord(word) if keep else False
        if stem is not False:
            out.append(stem)  # type: ignore[arg-type]
    return out


@lru_cache(maxsize=4096)
def _cached_terms(text: str) -> tuple[str, ...]:
    return tuple(stem_terms(tokenize(text)))


def content_terms(text: str) -> list[str]:
    """``stem_terms(tokenize(text))``, cached for short repeated strings such as queries."""
    if len(text) <= 2000:
        return list(_cached_terms(text))
    return stem_terms(tokenize(text))


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences; bullet lines and paragraphs count as sentences."""
    pieces = _SENTENCE.split(text.strip())
    return [p.strip() for p in pieces if p and p.strip()]


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def clean_text(text: str) -> str:
    """``text`` without what stores reject: NUL (PostgreSQL) and lone surrogates (UTF-8).

    Both become U+FFFD. Most text passes through untouched (one encode to check).
    """
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


_CLOSING_TAG = re.compile(r"<\s*/")


def fence(text: str) -> str:
    """``text`` with every closing tag defused (``</x>``, ``</X >``, ``< /x>`` become
    ``<\\/...``), so text placed between ``<tag>`` and ``</tag>`` in a prompt cannot end
    the data it sits in, whatever the tag's case or spacing."""
    return _CLOSING_TAG.sub("<\\/", text)


_R = TypeVar("_R")
MEMO_TEXT_CHARS = 2000
"""Texts up to this long are memoized by :func:`memo_short_texts`."""


def memo_short_texts(maxsize: int) -> Callable[[Callable[[str], _R]], Callable[[str], _R]]:
    """Memoize a pure function of a text, for texts up to :data:`MEMO_TEXT_CHARS` only.

    The selector reads the best matches' texts again every turn; a bounded memo of
    bounded texts keeps that cheap without holding a pasted report in memory (a longer
    text is computed each time)."""

    def wrap(function: Callable[[str], _R]) -> Callable[[str], _R]:
        memo = lru_cache(maxsize=maxsize)(function)

        @wraps(function)
        def call(text: str) -> _R:
            return memo(text) if len(text) <= MEMO_TEXT_CHARS else function(text)

        return call

    return wrap


_FUNCTION_WORDS = Path(__file__).resolve().parent / "model_data" / "function-words.txt"
"""Function words of German, Spanish, French, Italian, Portuguese and Dutch (BSD-3-Clause
lists, see ``model_data/LICENSE-stop-words``), accent-folded."""
_COMMON_ENGLISH = 8000
"""The packaged vocabulary's most frequent words: a listed function word among them is
also English or a frequent name ("come", "total", "via", "van", "de"), so it is no
evidence that a text is foreign."""
_WORD = re.compile(r"[^\W\d_]+")
_PLAIN_PIECE = re.compile(r"[^\w]*[^\W\d_]+(?:['’-][^\W\d_]+)*[^\w]*")
"""A piece of text that is a word (or words joined by an apostrophe or a hyphen) between
punctuation: "¿Qué", "d'Inès", "a-t-il". Codes ("A4", "T1", "C++") are not."""
_ENDS_SENTENCE = re.compile(r"[.!?:;]['\"»”)]*$")


def fold_accents(text: str) -> str:
    """``text`` lower-cased without diacritics: ``"Hôtel"`` -> ``"hotel"``."""
    if text.isascii():  # NFKD leaves ASCII as it is, and none of it is combining
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _function_words() -> tuple[tuple[str, frozenset[str], frozenset[str]], ...]:
    """Per language: its function words, and those of them that only a text in that
    language uses (not English stop words, nor the most frequent words of English)."""
    # An optional refinement: a package whose data files are missing or damaged reads
    # every question as it is (logged once), instead of failing every turn.
    # The static model's module holds the vocabulary; imported here, not at the top: this
    # module is the engine's base, read before any model.
    from langgraph_librarian._engine.static import frequent_words

    try:
        common = frozenset(frequent_words(_COMMON_ENGLISH)) | STOPWORDS
        lines = _FUNCTION_WORDS.read_text(encoding="utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        logger.warning("foreign questions are read as they are: %s", exc)
        return ()
    languages = []
    for line in lines:
        code, tab, words = line.partition("\t")
        if tab and code and not line.startswith("#"):
            listed = frozenset(words.split())
            languages.append((code, listed, listed - common))
    return tuple(languages)


def _pieces(text: str) -> list[tuple[str, bool]]:
    """The whitespace-separated pieces of ``text``, each with whether it may be a
    function word: a plain word, not capitalized inside a sentence (a name: "Ben",
    "Los Angeles", "Van der Berg")."""
    out = []
    opens = True
    for piece in text.split():
        plain = _PLAIN_PIECE.fullmatch(piece) is not None
        letters = _WORD.search(piece)
        named = letters is not None and letters.group()[0].isupper() and not opens
        out.append((piece, plain and not named))
        opens = bool(_ENDS_SENTENCE.search(piece)) or piece in {"¿", "¡"}
    return out


def _foreign_words(pieces: list[tuple[str, bool]]) -> frozenset[str]:
    """The function words of the language the pieces are written in, when that is one
    of the lists' languages (else none).

    A language is read from its function words: at least two that are not English stop
    words, more than the English stop words the text holds, and one at least that only
    that language uses ("¿Qué día firmaron la compra del piso?": "qué", "la", "del";
    "When did his dog die?" holds one German word and four English ones; "Will Ben
    come?", "Total solo trip cost?" hold only words English uses too).
    """
    words = [fold_accents(w) for piece, free in pieces if free for w in _WORD.findall(piece)]
    english = sum(w in STOPWORDS for w in words)
    best: frozenset[str] = frozenset()
    hits = 1
    for _, listed, only in _function_words():
        found = sum(w in listed and w not in STOPWORDS for w in words)
        if found > hits and any(w in only for w in words):
            best, hits = listed, found
    return best if hits > english else frozenset()


@lru_cache(maxsize=512)
def without_foreign_function_words(text: str) -> str:
    """``text`` without its function words when it is written in German, Spanish,
    French, Italian, Portuguese or Dutch (as is otherwise).

    The offline engine's stop words and stemmer are English: in a question in another
    language "de", "la", "que", "die", "nach" stay content words, match most messages of
    the conversation, count toward the share of the question a message covers, and
    bring the static model's neighbours of what they spell in English ("die", "war").
    A question read for selection drops them (trials on German, Spanish and French
    chats: 31 -> 34 of 48 questions; held out, 24 -> 32). Words of English text are
    never dropped, nor names (capitalized inside a sentence), codes ("A4", "T1") or
    the whole text (a question of function words alone, "Wer war das?", stays).
    """
    pieces = _pieces(text)
    foreign = _foreign_words(pieces)
    if not foreign:
        return text
    kept = [
        piece
        for piece, free in pieces
        if not (free and all(fold_accents(w) in foreign for w in _WORD.findall(piece)))
    ]
    if not any(_WORD.search(piece) or any(c.isdigit() for c in piece) for piece in kept):
        return text
    return " ".join(kept)


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def edits1(word: str) -> set[str]:
    """Every string one Damerau-Levenshtein edit away from ``word`` (letters a-z): a
    letter deleted, two neighbours swapped, one changed or one inserted."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    swaps = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    changes = [a + c + b[1:] for a, b in splits if b for c in _LETTERS if c != b[0]]
    inserts = [a + c + b for a, b in splits for c in _LETTERS]
    return set(deletes + swaps + changes + inserts)
