"""How the tool search reads a request (foreign or not) and keeps its row snapshot."""

from __future__ import annotations

from langgraph_librarian._engine.crosslingual import translate_words
from langgraph_librarian.tools import ToolIndex

CATALOG = [
    {"name": "lights_switch", "description": "Switch the lights of a room.", "parameters": {}},
    {"name": "shop_buy", "description": "Buy a product from an online shop.", "parameters": {}},
    {"name": "news_read", "description": "Read today's news headlines.", "parameters": {}},
]


def test_one_table_word_among_words_nothing_reads_is_a_foreign_request():
    # "giardino" is in the table; "irriga" and "aiuole" are neither in the table, nor
    # words of the model's vocabulary, nor catalog words: the request is not English,
    # so its one table word is read in English.
    assert translate_words("giardino") and not translate_words("irriga")
    assert not translate_words("aiuole")
    index = ToolIndex(CATALOG, embeddings=None)
    text, found = index.translated("irriga le aiuole del giardino")
    assert "giardino" in found and "garden" in text.split()


def test_english_words_outside_the_table_do_not_make_a_request_foreign():
    # "repo" is a table word; the other words are English words of the vocabulary.
    index = ToolIndex(CATALOG, embeddings=None)
    for query in ("push the latest fix to the repo", "please review the repo tonight"):
        assert index.translated(query) == (query, {})


def test_rows_added_or_removed_after_a_search_are_seen_by_the_next_one():
    index = ToolIndex(CATALOG, embeddings=None)
    assert index.rank("switch the lights", limit=1)[0][0] == "lights_switch"
    index.add({"name": "lamp_dim", "description": "Dim the desk lamp.", "parameters": {}})
    assert index.rank("dim the desk lamp", limit=1)[0][0] == "lamp_dim"
    index.remove("lamp_dim")  # one dead row of four: not compacted yet
    assert "lamp_dim" not in [n for n, _ in index.rank("dim the desk lamp", limit=4)]
    assert "lamp_dim" not in index.scores("dim the desk lamp")
