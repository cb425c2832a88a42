"""BERT's uncased WordPiece tokenizer in plain Python, for the static embedding model.

Why not the ``tokenizers`` wheel: it drags ``huggingface-hub`` (and its HTTP and
download stack, ~35 MB) into every install, while a static model only needs token
ids. BERT's rules are short (clean, split CJK characters, lowercase, strip accents,
split on whitespace and punctuation, greedy longest-match WordPiece) and a per-word
cache makes repeated words a dictionary lookup. ``tests/test_embeddings.py`` checks
the ids against ``tokenizers`` on varied text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable

__all__ = ["WordPieceTokenizer"]

_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
_MAX_WORD_CHARS = 100
_CACHE_LIMIT = 200_000


_SCANNED = ((0, 0x2FFFF), (0xE0000, 0xE0FFF))
"""Where Unicode has punctuation and format characters (beyond: private use)."""


def _is_ascii_punct(code: int) -> bool:
    return 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126


def _char_class(codes: list[int]) -> str:
    """A compact regex class body: runs of consecutive code points become ranges."""
    parts: list[str] = []
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        low, high = re.escape(chr(codes[i])), re.escape(chr(codes[j]))
        parts.append(low if i == j else f"{low}-{high}")
        i = j + 1
    return "".join(parts)


def _kind(code: int) -> str:
    """How BERT's rules treat a code point: ``"punct"``, ``"drop"``, ``"mark"`` or ``""``."""
    if 0xD800 <= code <= 0xDFFF or not any(low <= code <= high for low, high in _SCANNED):
        return ""
    char = chr(code)
    category = unicodedata.category(char)
    if _is_ascii_punct(code) or category.startswith("P"):
        return "punct"
    if (category in ("Cc", "Cf") and char not in "\t\n\r") or code in (0, 0xFFFD):
        return "drop"
    if category == "Mn":
        return "mark"
    return ""


def _ascii_patterns() -> tuple[dict[int, None], re.Pattern[str]]:
    """(ASCII characters BERT deletes, words and single punctuation characters)."""
    punct = [code for code in range(128) if _kind(code) == "punct"]
    drop = [code for code in range(128) if _kind(code) == "drop"]
    p = _char_class(punct)
    return dict.fromkeys(drop), re.compile(f"[{p}]|[^\\s{p}]+")


_ASCII = _ascii_patterns()
_TABLE_LIMIT = 100_000


class _LazyTable(dict[int, str | None]):
    """A ``str.translate`` table that classifies each character the first time it is seen.

    Why not tables (or a regex class) built in advance, as for ASCII: those mean
    classifying the 200,000 code points of the scanned planes and compiling a class of
    thousands of ranges when the first non-ASCII text comes along (a tenth of a second
    or more, paid by whichever call indexes it), while texts hold a few hundred distinct
    characters. The result is the same: each character is classified by
    :func:`_kind` exactly as that scan did. Growth stops at ``_TABLE_LIMIT``
    characters (later ones are classified on each use).
    """

    def __init__(self, value: Callable[[int], str | None]) -> None:
        super().__init__()
        self._value = value

    def __missing__(self, code: int) -> str | None:
        value = self._value(code)
        if len(self) < _TABLE_LIMIT:
            self[code] = value
        return value


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK_RANGES)


_DROP = _LazyTable(lambda code: None if _kind(code) == "drop" else chr(code))
_ACCENTS = _LazyTable(lambda code: None if _kind(code) == "mark" else chr(code))
_SPACED = _LazyTable(
    lambda code: f" {chr(code)} " if _kind(code) == "punct" or _is_cjk(code) else chr(code)
)
"""Punctuation and CJK characters padded with spaces: each becomes a word of its own."""


class WordPieceTokenizer:
    """Token ids for BERT uncased vocabularies (``vocab.txt`` order), no special tokens.

    Args:
        vocabulary: The tokens, one per id (``vocab.txt`` lines).
        unknown: The token standing for a word WordPiece cannot spell.

    Example:
        >>> tok = WordPieceTokenizer(["[UNK]", "hello", "world", "##s", "!"])
        >>> tok.encode("Hello worlds!")
        [1, 2, 3, 4]
    """

    def __init__(self, vocabulary: Iterable[str], *, unknown: str = "[UNK]") -> None:
        self._vocab = {token: i for i, token in enumerate(vocabulary)}
        self._unknown = self._vocab[unknown]
        self._cache: dict[str, tuple[int, ...]] = {}

    def _word_ids(self, word: str) -> tuple[int, ...]:
        if len(word) > _MAX_WORD_CHARS:
            return (self._unknown,)
        ids: list[int] = []
        start, end = 0, len(word)
        vocab = self._vocab
        while start < end:
            stop = end
            while stop > start:
                piece = word[start:stop] if start == 0 else "##" + word[start:stop]
                found = vocab.get(piece)
                if found is not None:
                    ids.append(found)
                    break
                stop -= 1
            else:
                return (self._unknown,)
            start = stop
        return tuple(ids)

    def _split(self, text: str) -> list[str]:
        """Normalized words and punctuation: clean, strip accents, lowercase, split."""
        if text.isascii():
            drop, words = _ASCII
            if not text.isprintable():
                text = text.translate(drop)
            return words.findall(text.lower())
        text = unicodedata.normalize("NFD", text.translate(_DROP)).translate(_ACCENTS)
        # White space splits words; punctuation and CJK characters are words alone.
        return text.lower().translate(_SPACED).split()

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (without ``[CLS]``/``[SEP]``)."""
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        ids: list[int] = []
        for word in self._split(text):
            pieces = cache.get(word)
            if pieces is None:
                pieces = cache[word] = self._word_ids(word)
            ids.extend(pieces)
        return ids
