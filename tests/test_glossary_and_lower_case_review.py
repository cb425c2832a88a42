"""A review of the glossary and the lower-case-writer rules: each test failed on their
first version (ecaa18c)."""

from __future__ import annotations

import pytest

from langgraph_librarian._engine.crosslingual import translate_words
from langgraph_librarian.tools import ToolIndex
from librarian_bench.datasets.tool_phrasings import phrasing_catalog
from test_local_selector import LOWER_CASE_SPLIT_FACT, lower_case_chat, select


@pytest.mark.parametrize(
    ("word", "wrong"),
    [
        ("hier", "yesterday"),  # German/Dutch "here" (de.tsv, nl.tsv: "here", a stop word)
        ("dort", "sleep"),  # German "there" (de.tsv: "there", a stop word)
        ("da", "give"),  # German "there"
        ("andere", "change"),  # German/Dutch "other"; "ändere" (I change) folds onto it
        ("tres", "three"),  # French "très" (very), folded
        ("nee", "born"),  # Dutch "no"
        ("devo", "owe"),  # Italian "I must"
    ],
)
def test_a_function_word_of_one_language_does_not_get_another_languages_meaning(word, wrong):
    # core_glossary drops a language's stop-word translations ("hier<TAB>here"), so
    # the entry of another language for the same spelling ("hier<TAB>yesterday") is the
    # only one left: a frequent function word is read as a content word.
    assert wrong not in translate_words(word)


def test_a_german_request_about_here_does_not_ask_about_yesterday():
    index = ToolIndex(phrasing_catalog(), embeddings=None)
    text, _ = index.translated("Wie wird das Wetter hier morgen?")
    assert "yesterday" not in text.split()


def test_a_french_very_is_not_three():
    index = ToolIndex(phrasing_catalog(), embeddings=None)
    text, _ = index.translated("Mets la musique très fort")
    assert "three" not in text.split()


@pytest.mark.parametrize(
    "request_",
    [
        "add the responders to the retirees list",  # responders -> answer, retirees -> remove
        "the dries are broken, order new hoses",  # dries -> three, hoses -> trousers
        "schedule the darn meeting with the organisers",  # darn -> give
    ],
)
def test_an_english_request_is_not_read_as_foreign(request_):
    # English words outside the static vocabulary and pyspellchecker's list reach the
    # glossary through base_forms ("responders" -> "responder"), or are in it
    # ("centre", "programme", "organise"): two of them make an English request foreign.
    index = ToolIndex(phrasing_catalog(), embeddings=None)
    assert index.translated(request_) == (request_, {})


def test_a_lower_case_writer_whose_phone_capitalizes_i_still_bridges():
    # Phones autocorrect "i'm" to "I'm": the capital after the first word makes the
    # passage read as a writer of capitals, and "bastian" no longer bridges.
    texts = list(LOWER_CASE_SPLIT_FACT)
    texts[0] = "my coworker bastian covers for me when I'm out"
    ids = select(
        lower_case_chat(*texts),
        "when will the colleague who covers for me be away?",
    )
    assert ids[0] == 0
    assert 4 in ids


def test_a_title_case_heading_of_the_assistant_does_not_make_a_common_word_a_name():
    # written_as_name(also_lower=True) ignores every lower-case use and needs one capital
    # inside a sentence: a Title Case heading or label ("Kombucha Brewing Tips"), which
    # assistants write often, makes a lower-case user's common word a name that bridges.
    texts = [
        "my coworker covers for me when i'm out, he also brews the kombucha",
        "Good to know. Here are some Kombucha Brewing Tips for him.",
        "the climbing gym by the station raised its prices again",
        "Annoying.",
        "the kombucha tasted like vinegar this week",
        "Noted.",
        "our team lunch moved to friday this month",
    ]
    ids = select(lower_case_chat(*texts), "who covers for me when i'm out?")
    assert ids[0] == 0
    assert 4 not in ids


@pytest.mark.parametrize("question", ["What did Émile say?", "what did łukasz say?"])
def test_a_name_with_a_non_ascii_letter_is_asked_about(question):
    # _CAPITALIZED reads [A-Z] and _LOWER_WORD [a-zà-ÿ] with \b: "Émile" is no name in
    # proper case (yet "émile" is in lower case), and "łukasz" none in lower case.
    from langgraph_librarian.select.lexical import BM25Index, IndexHead
    from langgraph_librarian.select.local import _asked_names

    index = BM25Index()
    for i, line in enumerate(["I met Łukasz and Émile today.", "Later Łukasz and Émile left."]):
        index.add(i, line)
    asked = _asked_names(question, IndexHead(index, 2))
    assert asked & {"émile", "łukasz"}
