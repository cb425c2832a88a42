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
from collections.abc import Iterable

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


def _patterns(full: bool) -> tuple[dict[int, None], re.Pattern[str], dict[int, None]]:
    """(characters BERT deletes, words and single punctuation/CJK characters, accents).

    Deletions are ``str.translate`` tables: a dictionary lookup per character, where a
    regex class of thousands of code points is scanned range by range. The ASCII set
    is cheap; the full set scans the Unicode tables (a fraction of a second), so it is
    built only when a non-ASCII text first comes along.
    """
    punct: list[int] = []
    drop: list[int] = []
    marks: list[int] = []
    ranges = _SCANNED if full else ((0, 127),)
    for low, high in ranges:
        for code in range(low, high + 1):
            if 0xD800 <= code <= 0xDFFF:
                continue
            char = chr(code)
            category = unicodedata.category(char)
            if _is_ascii_punct(code) or category.startswith("P"):
                punct.append(code)
            elif (category in ("Cc", "Cf") and char not in "\t\n\r") or code in (0, 0xFFFD):
                drop.append(code)
            elif category == "Mn":
                marks.append(code)
    p = _char_class(punct)
    cjk = "".join(f"{chr(a)}-{chr(b)}" for a, b in _CJK_RANGES) if full else ""
    words = re.compile(f"[{p}{cjk}]|[^\\s{p}{cjk}]+")
    return dict.fromkeys(drop), words, dict.fromkeys(marks)


_ASCII = _patterns(full=False)
_FULL: list[tuple[dict[int, None], re.Pattern[str], dict[int, None]]] = []


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
            drop, words, _ = _ASCII
            if not text.isprintable():
                text = text.translate(drop)
            return words.findall(text.lower())
        if not _FULL:
            _FULL.append(_patterns(full=True))
        drop, words, accents = _FULL[0]
        text = unicodedata.normalize("NFD", text.translate(drop)).translate(accents)
        return words.findall(text.lower())

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
