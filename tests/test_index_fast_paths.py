"""The indexing fast paths give exactly what the plain code gives.

Indexing tokenizes, scores and embeds every sentence of every message; the faster
forms (one tokenizer scan when a text has no CJK, case-sensitive cues on lower-cased
ASCII, a first-character check before the value alternatives, WordPiece tables filled
on first sight) are checked here against the straightforward versions on varied text.
"""

from __future__ import annotations

import random
import re
import unicodedata

import numpy as np

from langgraph_librarian._engine import text as text_module
from langgraph_librarian._engine.text import CHANGE_CUES, VALUE_PATTERN, has_change_cue, tokenize
from langgraph_librarian._engine.wordpiece import WordPieceTokenizer
from langgraph_librarian.index import extractive

PIECES = [
    *"aAbBsSkKiI ,.;:!?'\"-_/\\()[]{}$€£¥%0123456789\n\t",
    *["\n\n", "ſ", "\u212a", "İ", "ı", "Σ", "ß", "é", "ñ", "中文", "日本語", "한국어", "’", "—"],
    *["😀", "\u200b", "\u00ad", "ﬁ", "²", "①", "e.g.", "src/app.py", "my_var", "a.b", "x\\y"],
    *["Instead", "NO LONGER", "any more", "Jan", "DEC", "ſep", "Actually", "I'm", "We'll"],
    *["budget", "decided", "my", "I PREFER", "3.5", "12:30", "$40", "Paris London", "\u0301"],
    *["moved to Berlin", "now is", "push back", "going to", "allergic", "nov.", "May 5th"],
]


def _texts(count: int = 1500, seed: int = 3) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 40))) for _ in range(count)]


def _ascii_texts(count: int = 1500, seed: int = 4) -> list[str]:
    return [t for t in _texts(count, seed) if t.isascii()] + [
        "We decided to move the launch; actually I PREFER the old date, Jan 3rd at 12:30.",
        "My budget is $4,000 and the file is src/app.py (see e.g. config_v2.yaml).",
    ]


def test_tokenize_without_cjk_is_the_per_token_path():
    def reference(text: str) -> list[str]:
        tokens: list[str] = []
        lowered = text.lower()
        for token in text_module._TOKEN.findall(lowered):
            if text_module._CJK.search(token):
                tokens.extend(text_module._cjk_bigrams(token))
                tokens.extend(text_module._CJK.sub(" ", token).split())
            else:
                tokens.append(token)
        return tokens

    for text in _texts():
        assert tokenize(text) == reference(text), text


def test_cached_stems_are_the_stemmers():
    words = [t for text in [*_texts(), *_ascii_texts()] for t in tokenize(text)]
    words += ["running", "runs", "ran", "the", "a", "1", "x", "studies", "studying", "中文"]
    for _ in range(2):  # cold, then from the cache
        kept = [t for t in words if t not in text_module.STOPWORDS and (len(t) > 1 or t.isdigit())]
        written = [text_module.ABBREVIATIONS.get(t, t) for t in kept]
        assert text_module.stem_terms(words) == list(text_module._stemmer.stemWords(written))


def test_change_cues_on_lowered_ascii_match_the_case_insensitive_pattern():
    for text in [*_texts(), *_ascii_texts()]:
        assert has_change_cue(text) == (CHANGE_CUES.search(text) is not None), text
    assert has_change_cue("We SWITCHED vendors") and has_change_cue("inſtead")


def test_extractive_twins_on_lowered_ascii_match_the_originals():
    pairs = [
        (extractive._CHANGE_LOWER, CHANGE_CUES),
        (extractive._DECISION_LOWER, extractive._DECISION),
        (extractive._PERSONAL_LOWER, extractive._PERSONAL),
        (extractive._NUMBER_LOWER, extractive._NUMBER),
    ]
    for text in _ascii_texts():
        for twin, original in pairs:
            assert twin.findall(text.lower()) == [m.lower() for m in original.findall(text)]
        assert extractive._ident_count(text) == len(extractive._IDENT.findall(text)), text
    capitals = re.compile(extractive._CAPITALS)
    for text in _texts():
        assert extractive._ident_count(text) == len(extractive._IDENT.findall(text)), text
        assert extractive._CAPITAL.findall(text) == capitals.findall(text), text


def test_value_pattern_first_character_check_changes_no_match():
    plain = re.compile(text_module._VALUES)
    for text in _texts():
        assert VALUE_PATTERN.findall(text) == plain.findall(text), text
    # Every character a value can start with passes the check, in all of Unicode.
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    first = re.compile(f"[{text_module._VALUE_FIRST_CHARS}]")
    starts = re.compile(r"[$€£¥]|\d|(?i:[jfmasond])|[A-Z]")
    assert set(starts.findall(everything)) <= set(first.findall(everything))


def test_wordpiece_lazy_tables_split_like_the_unicode_scan():
    punct: list[str] = []
    drop: list[int] = []
    marks: list[int] = []
    codes = [*range(0x3400), *range(0xFE00, 0x10000), *range(0x1F000, 0x1F700), 0xE0001]
    for code in codes:
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        category = unicodedata.category(char)
        ascii_punct = 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126
        if ascii_punct or category.startswith("P"):
            punct.append(re.escape(char))
        elif (category in ("Cc", "Cf") and char not in "\t\n\r") or code in (0, 0xFFFD):
            drop.append(code)
        elif category == "Mn":
            marks.append(code)
    cjk = "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff"
    words = re.compile(f"[{''.join(punct)}{cjk}]|[^\\s{''.join(punct)}{cjk}]+")

    def reference(text: str) -> list[str]:
        text = unicodedata.normalize("NFD", text.translate(dict.fromkeys(drop)))
        return words.findall(text.translate(dict.fromkeys(marks)).lower())

    tokenizer = WordPieceTokenizer(["[UNK]"])
    for start in range(0, len(codes), 256):
        chars = [chr(c) for c in codes[start : start + 256] if not 0xD800 <= c <= 0xDFFF]
        text = "é " + "".join(f"a{c}b {c}\u0301 x{c}{c} " for c in chars)
        assert tokenizer._split(text) == reference(text)
    for text in _texts():
        if not text.isascii():
            assert tokenizer._split(text) == reference(text), text


def test_static_array_embedding_is_embed_documents():
    from langgraph_librarian._engine.static import StaticEmbeddings

    model = StaticEmbeddings()
    texts = ["", "hello there", "Gdańsk café — “quoted” 東京", *_texts(50)]
    array = model.embed_documents_array(texts)
    assert array.dtype == np.float32
    assert np.array_equal(array, np.asarray(model.embed_documents(texts), dtype=np.float32))


_PASSAGE_PIECES = [
    *PIECES,
    *["Monday", "sun", "SAT", "may", "Mar", "O'Neill's", "don’t", "rock'n'roll", "a''b", "'"],
    *["ALL CAPS HERE", "Café", "École", "ǅemal", "Straße", "İstanbul", "3rd", "mp3", "B12"],
    *["Jasper ran 19 kilometres on Sunday.", "Took my 20 mg", "Skipped my 20 mg", "٣", "ǈ"],
]


def _passages(count: int = 3000, seed: int = 5) -> list[str]:
    rnd = random.Random(seed)
    words = [
        " ".join(rnd.choice(_PASSAGE_PIECES) for _ in range(rnd.randint(0, 25)))
        for _ in range(count)
    ]
    return [*words, *_texts(500, seed), "Die Katze schläft; der Hund bellt um 7 Uhr."]


def test_sentence_breaks_are_the_first_written_pattern():
    first = re.compile(r"(?<=[.!?。！？])\s+|\n{2,}|\n(?=\s*(?:[-*•]|\d+[.)])\s)")
    rnd = random.Random(6)
    alphabet = [*"ab .!?。！？\n\n \t\r-*•1)2(.\u3000\u2028\x0b", "\n- ", "\n12) ", "\n• "]
    texts = [*_texts(), *_passages()]
    for _ in range(20000):
        texts.append("".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30))))
    for text in texts:
        assert text_module._SENTENCE.split(text) == first.split(text), repr(text)


def test_template_parts_is_the_plain_loop():
    from langgraph_librarian.select import lexical

    def reference(passage: str) -> tuple[str | None, list[str]]:
        digits = any(map(str.isdigit, passage))
        kept: list[str] = []
        capitalized: list[str] = []
        for token in lexical._TEMPLATE_TOKEN.findall(passage):
            if digits and any(map(str.isdigit, token)):
                continue
            if token[0].isupper():
                capitalized.append(token)
                continue
            low = token.lower()
            if low not in lexical._SLOT_WORDS:
                kept.append(low)
        return (" ".join(kept) if len(kept) >= lexical._MIN_TEMPLATE_WORDS else None), capitalized

    for passage in _passages():
        assert lexical._template_parts(passage) == reference(passage), passage
    # The digit test per token is skipped for words: no character is a letter and a digit.
    assert not any(chr(c).isalpha() and chr(c).isdigit() for c in range(0x110000))


def test_value_tokens_and_dates_are_the_match_loop():
    from langgraph_librarian.select import lexical

    for passage in _passages():
        found = {m.group(0).lower() for m in VALUE_PATTERN.finditer(passage)}
        assert lexical.value_tokens(passage) == frozenset(found), passage
        if not found:  # no value, no digit: a time of day needs one (add skips the scan)
            assert lexical._CLOCK.search(passage) is None, passage


def test_filler_check_reads_a_few_tokens_of_a_long_text():
    from langgraph_librarian.select import _evidence

    def reference(text: str) -> bool:
        words = tokenize(text)
        if not words or len(words) > _evidence._FILLER_MAX_WORDS:
            return not words or _evidence.is_non_answer(text)
        return all(
            w in _evidence._FILLER_WORDS or (w.isdigit() and len(words) <= 2) for w in words
        ) or _evidence.is_non_answer(text)

    texts = [*_texts(), *_passages()]
    texts += ["Noted, thanks." + " " * 80, "ok ok ok ok ok ok ... !!! " * 5, "中文日本語" * 20]
    for text in texts:
        assert _evidence.is_filler(text) == reference(text), text
        for n in (0, 1, 6):
            assert text_module.has_more_tokens_than(text, n) == (len(tokenize(text)) > n)


def test_new_terms_are_those_no_row_holds():
    from langgraph_librarian._engine.postings import Postings

    postings = Postings()
    postings.add(0, {"a": 1, "b": 2})
    assert postings.new_terms(["c", "a", "d", "b"]) == ["c", "d"]
    assert postings.new_terms({"b": 1}) == []


def test_repeated_passages_index_like_the_first():
    """Passage facts are cached by text: every column is what the plain calls give,
    for first sightings and copies alike, long passages (not cached) included."""
    from collections import Counter

    from langgraph_librarian._engine.text import content_terms, stem_terms
    from langgraph_librarian.select import lexical

    rnd = random.Random(7)
    sentences = [p for p in _passages(600, 8) if p.strip()]
    texts = [" ".join(rnd.choice(sentences) for _ in range(rnd.randint(1, 12))) for _ in range(300)]
    texts += [texts[5], texts[9] + " " + "word " * 600, "Took my 20 mg. " * 30]
    lexical._FACTS.clear()
    lexical._SEEN.clear()
    index = lexical.BM25Index()
    for i, text in enumerate(texts):
        index.add(i, text)
    # A passage is remembered at its second sighting: later copies share its facts.
    repeated = next(p for p in index._passages if index._passages.count(p) >= 3)
    sightings = [i for i, p in enumerate(index._passages) if p == repeated]
    assert index.passage_terms[sightings[1]] is index.passage_terms[sightings[-1]]
    slots: dict[str, list[int]] = {}
    for pid, passage in enumerate(index._passages):
        terms = content_terms(passage)
        assert index._lengths[pid] == len(terms)
        assert index.passage_terms[pid] == frozenset(terms)
        template, capitalized = lexical._template_parts(passage)
        assert (index._template[pid] == -1) == (template is None)
        if template is not None:
            assert index._template_ids[template] == index._template[pid]
            for term in set(stem_terms([w.lower() for w in capitalized])):
                slots.setdefault(term, []).append(pid)
        values = lexical.value_tokens(passage)
        assert index.passage_values[pid] == values
        dates = values & lexical._DATE_VALUES
        if "may" in dates and not lexical.MAY_MONTH.search(passage):
            dates = dates - {"may"}
        assert index._has_date[pid] == (bool(dates) or bool(lexical._CLOCK.search(passage)))
        assert index.passage_has_change[pid] == has_change_cue(passage)
        for term, count in Counter(terms).items():
            rows, weights = index._postings.arrays(term)  # type: ignore[misc]
            assert count == weights[list(rows).index(pid)]
    assert index._slot_postings == slots
