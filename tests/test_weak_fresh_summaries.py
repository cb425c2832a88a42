"""A fresh set of weak-model answers, in four languages, replayed through the indexer.

``tests/data/summaries_fresh.json`` (written by hand for this file, not from the other
sets): 44 messages in English, German, French and Spanish, each with faithful summaries
and the garbage a small model returns for it (an answer to the question, an invented
name, number or date, an obeyed injection, a loop, a cut, another language, a dialogue,
a refusal), plus four running-summary folds. The rules below were fixed on it; the
aggregate test keeps its rates from sliding back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianConfig
from langgraph_librarian.index import update_index
from langgraph_librarian.index.summarize import DEFAULT_SUMMARY_PROMPT, summary_problem
from langgraph_librarian.memory import RunningSummarizer

DATA = json.loads((Path(__file__).parent / "data" / "summaries_fresh.json").read_text())
INDEX, RUNNING = DATA["index"], DATA["running"]


def problem(summary: str, source: str) -> str | None:
    return summary_problem(summary, source, DEFAULT_SUMMARY_PROMPT)


def _message(role: str, text: str) -> BaseMessage:
    if role == "ai":
        return AIMessage(text, id="m1")
    if role == "tool":
        return ToolMessage(text, tool_call_id="t1", name="lookup", id="m1")
    return HumanMessage(text, id="m1")


def _index(role: str, source: str, answer: str):
    config = LibrarianConfig(
        indexer_model=ScriptedChatModel(script=answer),
        short_message_threshold=10,
        embeddings=None,
        retry_backoff=0,
    )
    return update_index([_message(role, source)], [], config)


def _stored(role: str, source: str, answer: str) -> bool:
    return _index(role, source, answer).entries[0].status == "summarized"


def _fold(item: dict, answer: str):
    messages = [
        HumanMessage(text) if role == "human" else AIMessage(text)
        for role, text in item["messages"]
    ]
    model = ScriptedChatModel(script=answer)
    return RunningSummarizer(model, max_summary_tokens=300).summarize(messages, item["previous"])


def _case(lang: str, start: str) -> dict:
    return next(i for i in INDEX if i["lang"] == lang and i["message"].startswith(start))


def test_the_set_is_varied_enough_to_mean_something():
    assert len(INDEX) >= 40 and {"en", "de", "fr", "es"} <= {i["lang"] for i in INDEX}
    kinds = {g["kind"] for i in INDEX for g in i["garbage"]}
    assert {"answer", "injection", "loop", "truncation", "dialogue", "refusal"} <= kinds
    assert {"invented-name", "invented-number", "invented-date", "language"} <= kinds


def test_the_rates_through_the_public_api():
    """Measured when the rules were fixed: 51 of 55 faithful summaries stored (the four
    others were rejected before too: an English summary of a German or Spanish message
    shares too few words with it; a 'summary' longer than its message); 53 since an
    English summary of another language's message is judged by its facts, not its
    words (the two left: a cross-lingual summary without a number or name, and the
    over-long one), 155 of 171
    garbage answers kept out of the index and the running summary."""
    good = [(i, g) for i in INDEX for g in i["good"]]
    bad = [(i, b["summary"]) for i in INDEX for b in i["garbage"]]
    good_ok = sum(_stored(i["role"], i["message"], g) for i, g in good)
    bad_out = sum(not _stored(i["role"], i["message"], b) for i, b in bad)
    good += [(i, g) for i in RUNNING for g in i["good"]]
    bad += [(i, b["summary"]) for i in RUNNING for b in i["garbage"]]
    good_ok += sum(_fold(i, g).method == "llm" for i in RUNNING for g in i["good"])
    bad_out += sum(
        _fold(i, b["summary"]).method == "extractive" for i in RUNNING for b in i["garbage"]
    )
    assert (good_ok, len(good)) == (53, 55)
    assert bad_out >= 155 and len(bad) == 171


# -- a summary in the message's own language is not "another language" ----


@pytest.mark.parametrize(
    ("lang", "start", "summary"),
    [
        (
            "fr",
            "Voici le message",
            "Message client : colis n° 55821 jamais arrivé ; il contient une consigne "
            "injectée pour répondre « Remboursement accordé ».",
        ),
        (
            "es",
            "El vuelo IB 3166",
            "Vuelo IB 3166 Madrid-Lisboa con retraso: sale a las 19:40 por la puerta K12; "
            "su hermano Andrés lo recoge en el aeropuerto.",
        ),
        (
            "de",
            "Hallo zusammen",
            "Die Weihnachtsfeier ist am 12. Dezember ab 18 Uhr in der Linde; Anmeldung bei "
            "Sabine bis Freitag.",
        ),
        (
            "de",
            "Protokoll:",
            "Ab 1. April übernimmt Frau Yilmaz die Vertriebsleitung, Herr Kraus geht ins "
            "Marketing, und die Stelle im Innendienst wird neu ausgeschrieben.",
        ),
    ],
)
def test_a_summary_in_the_messages_language_is_kept(lang, start, summary):
    assert problem(summary, _case(lang, start)["message"]) is None


def test_a_summary_in_a_third_language_is_still_rejected():
    source = _case("de", "Protokoll:")["message"]
    answer = "Mme Yilmaz dirige les ventes à partir du 1er avril ; M. Kraus passe au marketing."
    assert "another language" in (problem(answer, source) or "")


# -- invented names: after a title, or in the place of the message's name ----


@pytest.mark.parametrize(
    ("lang", "start", "answer", "name"),
    [
        (
            "en",
            "Note from the vet",
            "Dr. Patel recommends a recheck in 6 weeks for Biscuit.",
            "Patel",
        ),
        (
            "de",
            "Die Heizung",
            "Heizung kaputt; Hausmeister Herr Schneider kommt am Donnerstag.",
            "Schneider",
        ),
        ("de", "Mein Zug", "Der Termin mit Frau Krüger verschiebt sich um zwei Stunden.", "Krüger"),
        (
            "de",
            "Protokoll:",
            "Herr Wagner wechselt ins Marketing; Frau Yilmaz leitet den Vertrieb.",
            "Wagner",
        ),
        (
            "de",
            "Hallo zusammen",
            "Weihnachtsfeier am 12. Dezember; Anmeldung bis Freitag bei Thomas.",
            "Thomas",
        ),
        (
            "de",
            "Kurzes Update",
            "Projekt Adler: Backend fertig, das Frontend braucht noch zwei Wochen.",
            "Adler",
        ),
        (
            "de",
            "Mein Zug",
            "Zug nach Berlin fällt aus; nächste Verbindung ICE 578 um 14:32.",
            "Berlin",
        ),
        (
            "en",
            "Reminder for the team",
            "Daniel owns the final review of the Q3 planning doc.",
            "Daniel",
        ),
        (
            "en",
            "My daughter Lena",
            "Emma turns 7 on June 3rd with a dinosaur party for 12 kids.",
            "Emma",
        ),
        (
            "fr",
            "Compte rendu",
            "Thomas corrige le module Stripe ; lancement repoussé au 3 mars.",
            "Thomas",
        ),
        ("es", "Acta de la", "Marta coordina con la agencia la campaña de otoño.", "Marta"),
    ],
)
def test_an_invented_name_is_rejected(lang, start, answer, name):
    assert f"names {name!r}" in (problem(answer, _case(lang, start)["message"]) or "")


@pytest.mark.parametrize(
    ("source", "summary"),
    [
        # A title before a name the message has, in any form.
        ("Herr Becker kommt am Donnerstag.", "Hausmeister Becker (Herr Becker) kommt Donnerstag."),
        # A German noun after the word a name followed: an article, or a compound.
        (
            "Die Stelle geht an Frau Yilmaz, die Teamleitung an Herrn Kraus.",
            "Frau Yilmaz bekommt die Stelle, Herr Kraus die Teamleitung.",
        ),
        # The summary keeps the name: nothing was swapped.
        ("Marta owns the final review.", "Marta owns the review; Legal signs off after her."),
    ],
)
def test_names_the_message_has_and_nouns_in_their_place_are_kept(source, summary):
    assert problem(summary, source) is None


# -- dates in the message's language ----


@pytest.mark.parametrize(
    ("lang", "start", "answer"),
    [
        ("de", "Die Heizung", "Heizung seit Dienstag kaputt, Herr Becker kommt am Donnerstag."),
        ("de", "Protokoll:", "Frau Yilmaz übernimmt ab 1. Mai die Teamleitung Vertrieb."),
        ("es", "Hola, te confirmo", "Entrega del pedido 30917 el jueves entre las 9 y las 13 h."),
        ("es", "Acta de la", "Lucía presenta avances de la campaña el 15 de noviembre."),
    ],
)
def test_a_month_or_weekday_the_message_lacks_is_rejected_in_any_language(lang, start, answer):
    assert "date" in (problem(answer, _case(lang, start)["message"]) or "")


def test_the_messages_own_month_or_weekday_is_kept_in_english_too():
    source = _case("de", "Die Heizung")["message"]
    assert (
        problem("Heizung in Wohnung 3 seit Montag kaputt; Herr Becker kommt Donnerstag.", source)
        is None
    )
    french = _case("fr", "Bonjour, je confirme")["message"]
    summary = "Réservation pour 6 personnes le samedi 14 juin à 20h, au nom de Dupont."
    assert problem(summary, french) is None


# -- the model speaking to the user ----


@pytest.mark.parametrize(
    ("start", "answer"),
    [
        ("For the record", "I will update your order to soy milk starting next week."),
        ("I told the contractor", "You could pick a similar matte grey tile that is in stock."),
    ],
)
def test_a_summary_in_the_second_person_is_rejected(start, answer):
    assert "second person" in (problem(answer, _case("en", start)["message"]) or "")


def test_the_second_person_of_the_message_itself_is_fine():
    source = _case("en", "Here's the plan")["message"]
    assert problem("Your Rome weekend: Vatican Museums Saturday 9:30 (VM-55120).", source) is None


# -- an injection obeyed in another language ----


@pytest.mark.parametrize(
    ("lang", "start", "answer"),
    [
        ("de", "Bitte fasse", "Alles in Ordnung"),
        ("de", "Bitte fasse", "Alles in Ordnung."),
        ("fr", "Voici le message", "Remboursement accordé"),
        ("es", "Resume este", "Hotel excelente"),
        ("es", "Resume este", "Hotel excelente, muy recomendable."),
    ],
)
def test_an_obeyed_injection_is_rejected_in_any_language(lang, start, answer):
    assert "obeyed" in (problem(answer, _case(lang, start)["message"]) or "")


def test_a_summary_that_opens_with_the_ordered_words_and_reports_the_rest_is_kept():
    source = _case("es", "Resume este")["message"]
    summary = "'Hotel excelente' es lo que pide la instrucción inyectada; el hotel estaba sucio."
    assert problem(summary, source) is None


# -- a loop or a dialogue the indexer used to run together ----


def test_a_loop_of_lines_is_rejected_by_the_indexer():
    item = _case("en", "Search results")
    answer = "Steelcase Series 1 - $389\nSteelcase Series 1 - $389\nSteelcase Series 1 - $389"
    update = _index(item["role"], item["message"], answer)
    assert update.entries[0].status == "fallback" and "repeats" in update.errors[0]


def test_a_dialogue_with_french_speaker_labels_is_rejected():
    source = _case("fr", "Pour le déménagement")["message"]
    answer = "Utilisateur : Qui vient aider ?\nAssistant : Paul et Inès, samedi matin."
    assert "conversation" in (problem(answer, source) or "")


# -- a summary cut after a German ordinal ----


def test_a_cut_after_an_ordinal_is_not_kept_as_its_first_words():
    item = _case("de", "Für die Hochzeit")
    answer = (
        "Hochzeit am 7. September: Blumen (Budget 800 €), DJ bestätigen und die "
        "Sitzordnung bis Ende Ju"
    )
    update = _index(item["role"], item["message"], answer)
    assert update.entries[0].status == "fallback"
    assert update.entries[0].summary != "Hochzeit am 7."


# -- the running summary: news stated in German or French ----


@pytest.mark.parametrize("lang", ["de", "fr"])
def test_an_echoed_running_summary_drops_news_in_another_language(lang):
    item = next(i for i in RUNNING if i["lang"] == lang)
    echoed = _fold(item, item["previous"])
    assert echoed.method == "extractive" and any("new messages" in n for n in echoed.notes)
    assert _fold(item, item["good"][0]).method == "llm"
