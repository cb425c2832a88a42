"""The cross-lingual word table and how the tool search reads foreign requests with it."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from langgraph_librarian._engine.crosslingual import (
    WORD_TABLE,
    base_forms,
    common_translations,
    extended_table,
    function_words,
    translate_inflected,
    translate_words,
    word_table_from_vectors,
    wordnet_lemmas,
)
from langgraph_librarian.embeddings import load_embeddings
from langgraph_librarian.tools import ToolIndex
from langgraph_librarian.tools._lexical import LexicalScorer
from librarian_bench.datasets.tool_phrasings import phrasing_catalog
from librarian_bench.datasets.tool_situations import situation_cases, situation_catalog

CATALOG = [
    {"name": "car_rent", "description": "Rent a car for a few days.", "parameters": {}},
    {"name": "shop_buy", "description": "Buy a product from an online shop.", "parameters": {}},
    {"name": "news_read", "description": "Read today's news headlines.", "parameters": {}},
    {"name": "sleep_track", "description": "Track how well you sleep.", "parameters": {}},
]


def test_table_is_small_sorted_and_maps_to_english_words():
    assert WORD_TABLE.stat().st_size < 600_000
    with gzip.open(WORD_TABLE, "rt", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    words = [line.split("\t")[0] for line in lines]
    assert words == sorted(words) and len(set(words)) == len(words) > 10_000
    for line in lines[:: max(1, len(lines) // 200)]:
        word, english = line.split("\t")
        assert word == word.lower() and 1 <= len(english.split()) <= 3


def test_translate_words_reads_foreign_words_and_leaves_english_alone():
    assert "car" in translate_words("voiture")
    assert translate_words("Voiture") == translate_words("voiture")
    assert translate_words("car") == ()
    assert translate_words("email") == ()
    assert translate_words("qwxzvb") == ()
    # Everyday English outside the model's vocabulary is set aside at build time.
    for english in ("login", "refund", "tweet", "pies", "vegan", "caches"):
        assert translate_words(english) == ()


def test_function_words_are_frequent_non_english_words():
    words = function_words()
    assert {"und", "je", "los"} <= words
    assert not words & {"the", "and", "for", "le", "la", "de"}


def test_the_table_offers_no_names_for_frequent_words():
    # e5 reads some frequent words by spelling; names it offered are set aside at build
    # time ("donde" was "honduras", "meine" "mia ich mimi").
    assert "honduras" not in translate_words("donde")
    assert not {"mia", "mimi"} & set(translate_words("meine"))
    assert "email" in translate_words("courriel")  # a word of e5's rarer pieces


def _wordnet(tmp_path):
    # Lines in WordNet's data format: offset, file, type, lemma count (hex), lemmas with
    # their lex ids, pointer count and pointers (symbol, offset, type, source/target).
    (tmp_path / "data.noun").write_text(
        "  header line\n"
        "01 03 n 01 Honduras 0 001 @i 07 n 0000 | a country\n"
        "02 03 n 01 meeting 0 000 | x\n"
        "03 03 n 02 child 0 woman 0 000 | x\n"
        "04 03 n 01 Monday 0 001 @ 08 n 0000 | a day of the week\n"
        "05 03 n 01 SAM 0 001 @ 09 n 0000 | a missile\n",
        encoding="latin-1",
    )
    (tmp_path / "noun.exc").write_text("children child\n", encoding="latin-1")
    for pos in ("verb", "adj", "adv"):
        (tmp_path / f"data.{pos}").write_text("", encoding="latin-1")
        (tmp_path / f"{pos}.exc").write_text("", encoding="latin-1")
    return wordnet_lemmas(tmp_path)


def test_common_translations_keep_lower_case_wordnet_words_and_their_forms(tmp_path):
    lower, every = _wordnet(tmp_path)
    # "Monday" is a kind of day (a word); "Honduras" an instance (a name); "SAM" an acronym.
    assert lower == {"meeting", "child", "children", "woman", "monday"}
    assert {"honduras", "sam"} <= every
    table = {
        "donde": ("honduras",),
        "reuniones": ("meetings", "mimi"),
        "ninos": ("children",),
        "lunes": ("monday", "sam"),
        "mujeres": ("women",),  # an inflection whose stem is short ("wo" + "man")
    }
    assert common_translations(table, lower) == {
        "reuniones": ("meetings",),
        "ninos": ("children",),
        "lunes": ("monday",),
        "mujeres": ("women",),
    }
    old = {"reunion": ("meeting",)}
    new = {"reunion": ("other",), "meeting": ("meeting",), "tareas": ("tasks",)}
    assert extended_table(old, new, every) == {"reunion": ("meeting",), "tareas": ("tasks",)}


def test_table_from_vectors_drops_lookalikes_and_hubs():
    english = ["car", "dog", "cart", "the"]
    vectors = np.eye(4, dtype=np.float32)
    foreign = ["voiture", "carte", "hund"]
    # voiture is near "car"; carte is nearest to its lookalike "cart"; hund near "dog".
    foreign_vectors = np.array(
        [[0.9, 0.0, 0.1, 0.0], [0.1, 0.0, 0.9, 0.0], [0.0, 0.95, 0.0, 0.05]], dtype=np.float32
    )
    table = word_table_from_vectors(
        foreign, foreign_vectors, english, vectors, per_word=1, neighbours=1, max_lookalike=0.3
    )
    assert table["voiture"] == ("car",)
    assert table["hund"] == ("dog",)
    assert "carte" not in table or table["carte"] != ("cart",)


def test_query_is_read_in_english_for_the_embedding_and_lexical_halves():
    index = ToolIndex(CATALOG, embeddings=None)
    text, found = index.translated("louer une voiture")
    assert "car" in text.split() and "voiture" in found
    assert "une" not in found  # a function word marks the language, nothing to read
    assert index.translated("rent a car") == ("rent a car", {})
    index.crosslingual = False
    assert index.translated("louer une voiture") == ("louer une voiture", {})


def test_english_requests_with_jargon_are_left_alone():
    # "repo" is in the table (jargon the static vocabulary lacks): one table word in an
    # English request is not a reason to rewrite it. "todo" is a Spanish function word:
    # the glossary silences the table's reading of it.
    assert translate_words("repo") and not translate_words("todo")
    index = ToolIndex(CATALOG, embeddings=None)
    for query in (
        "push the fix to the repo",
        "todo: buy printer ink",
        "show my todos",
        "add a todo to buy gelato",  # "todo" is a Spanish function word too
        "what's the sla for the dns provider",  # short words are not read
    ):
        assert index.translated(query) == (query, {})
    # Two table words, or more foreign function words than English ones, read as foreign.
    assert index.translated("voiture louer")[1]
    assert "voiture" in index.translated("ich brauche voiture")[1]


def test_a_word_the_catalog_uses_is_kept_and_only_read_in_a_foreign_request():
    catalog = [*CATALOG, {"name": "code_push", "description": "Push to a repo.", "parameters": {}}]
    index = ToolIndex(catalog, embeddings=None)
    text, found = index.translated("pousser le code sur le repo, une voiture")
    assert "voiture" in found and "voiture" not in text.split()
    assert "repo" in text.split()  # kept as it is (and read in English as well)
    # alone in an English request it is neither evidence of a foreign one nor read
    assert index.translated("push the code to the repo")[1] == {}


class _Other:
    """A LangChain-style embeddings object the library does not know."""

    model = "text-embedding-3-small"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


def test_the_table_is_on_only_for_english_only_engines():
    assert ToolIndex(CATALOG, embeddings=None).crosslingual
    assert ToolIndex(CATALOG, embeddings=load_embeddings("static")).crosslingual
    assert not ToolIndex(CATALOG, embeddings=_Other()).crosslingual  # type: ignore[arg-type]
    assert ToolIndex(CATALOG, embeddings=_Other(), crosslingual=True).crosslingual  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["none", "static"])
def test_foreign_request_finds_the_english_tool(engine):
    index = ToolIndex(CATALOG, embeddings=load_embeddings(engine))
    assert index.rank("louer une voiture pour le week-end", limit=1)[0][0] == "car_rent"
    assert index.rank("ich will neue Schuhe kaufen", limit=1)[0][0] == "shop_buy"


def test_lexical_translations_count_like_the_word_times_their_weight():
    scorer = LexicalScorer()
    scorer.add(0, [("rent a car", 1.0)])
    scorer.add(1, [("buy a product", 1.0)])
    plain = scorer.scores("voiture", 2)
    full = scorer.scores("voiture", 2, translations={"voiture": [("car", 1.0)]})
    half = scorer.scores("voiture", 2, translations={"voiture": [("car", 0.5)]})
    assert plain[0] == 0 and full[0] > 0 and full[1] == 0
    assert half[0] == pytest.approx(full[0] * 0.5, rel=1e-5)


def test_situations_check_is_a_separate_set_searched_with_the_phrasing_catalog():
    cases = situation_cases()
    names = {t["function"]["name"] for t in situation_catalog()}
    phrasing = {t["function"]["name"] for t in phrasing_catalog()}
    assert len(names) == len(phrasing) + 30
    assert {c.gold for c in cases if c.gold} <= names - phrasing
    assert sum(c.style == "indirect" for c in cases) == 60
    assert sum(c.style == "foreign" for c in cases) == 60
    assert sum(c.gold is None for c in cases) == 16


def test_base_forms_read_conjugations_participles_and_plurals():
    assert "envoyer" in base_forms("envoie")  # French -oyer verb
    assert "chercher" in base_forms("cherchez")
    assert "reserver" in base_forms("reservee")  # participle, accents folded
    assert "buscar" in base_forms("busca")  # Spanish
    assert "schicken" in base_forms("schickt")  # German
    assert "buchen" in base_forms("gebucht")
    assert "voiture" in base_forms("voitures")
    assert base_forms("abc") == () and base_forms("e-mail") == ()


def test_a_conjugated_form_reads_like_the_dictionary_form_the_table_holds():
    # The table holds a word's frequent forms (here the infinitive), not every conjugation.
    assert translate_words("envoies") == () and translate_words("envoyer")
    assert translate_inflected("envoies") == translate_words("envoyer")
    # A form the computed table reads by its spelling reads as the glossary's verb.
    assert translate_words("envoient") != translate_words("envoyer")
    assert translate_inflected("envoient") == translate_words("envoyer")
    assert translate_inflected("voiture") == translate_words("voiture")  # exact first
    index = ToolIndex(phrasing_catalog())
    for request in ("envoyer un courriel à Marie", "envoie un courriel à Marie"):
        assert "email_send" in index.search(request).names, request
    _, found = index.translated("envoie un courriel à Marie")
    assert [w for w, _ in found["envoie"]] == list(translate_words("envoyer"))


def test_words_the_model_reads_are_never_read_as_inflections():
    # "marie" and "cases" are words of the model's vocabulary (a name, an English
    # plural): their look-alike dictionary forms ("marier", "caser") stay unread.
    assert translate_inflected("marie") and translate_inflected("cases")
    index = ToolIndex(CATALOG)
    _, found = index.translated("envoie un courriel à Marie")
    assert "envoie" in found and "marie" not in found
    assert index.translated("show me the open cases") == ("show me the open cases", {})


def test_the_glossary_merges_languages_and_drops_english_words_and_unknown_english(tmp_path):
    from langgraph_librarian._engine.crosslingual import core_glossary

    (tmp_path / "fr.tsv").write_text(
        "Vol\tflight theft\npain\tbread\néteindre\toff switch\nlundi\tmonday\n", encoding="utf-8"
    )
    (tmp_path / "nl.tsv").write_text("vol\tfull\nkoffer\tsuitcase zzqx\n", encoding="utf-8")
    table = core_glossary(
        sorted(tmp_path.glob("*.tsv")),
        english=frozenset({"pain"}),
        vocabulary=frozenset({"flight", "theft", "full", "switch", "off", "monday", "suitcase"}),
    )
    assert table == {
        "vol": ("flight", "theft", "full"),  # both languages, in file order
        "eteindre": ("switch",),  # accents folded; "off" is a stop word
        "lundi": ("monday",),
        "koffer": ("suitcase",),  # "zzqx" is no word of the model's vocabulary
    }  # "pain" is a frequent English word: left out


def test_the_packaged_glossary_wins_over_the_computed_table():
    # The computed table read these frequent words by their spelling.
    assert translate_words("lundi") == ("monday",)
    assert translate_words("neun") == ("nine",)
    assert "dentist" in translate_words("zahnarzt")
    assert translate_inflected("schickst") == translate_words("schicken")
