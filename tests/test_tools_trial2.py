"""Newcomer trial (second round): confident answers resting on one weak word, table words
a catalog also uses, and requests naming a tool plus a need."""

from __future__ import annotations

import pytest

from langgraph_librarian.tools import ToolIndex, format_search_result

_SPECS = [
    ("email_send", "Send an email message to a recipient.", "to, body"),
    ("email_read", "Read the latest emails in a mailbox folder.", "folder"),
    ("email_search", "Search emails by sender, subject or keyword.", "query"),
    (
        "calendar_create_event",
        "Create a calendar event with a title, start and end time.",
        "title, start",
    ),
    ("calendar_list_events", "List upcoming events in the calendar.", "days"),
    ("get_weather", "Get the current weather for a city.", "city"),
    ("weather_forecast", "Weather forecast for the coming days in a city.", "city"),
    ("github_create_issue", "Open a new issue in a GitHub repository.", "repo, title"),
    ("file_read", "Read the contents of a file on disk.", "path"),
    ("file_write", "Write text to a file on disk.", "path, text"),
    ("file_delete", "Delete a file from disk.", "path"),
    (
        "convert_currency",
        "Convert an amount between currencies at today's exchange rate.",
        "amount, src, dst",
    ),
    ("flight_search", "Search flights between two airports on a date.", "origin, dest, date"),
    ("hotel_book_room", "Book a hotel room.", "hotel_id"),
    ("music_play", "Play a song, album or playlist on the speakers.", "query"),
    ("notes_create", "Create a note with a title and body.", "title, body"),
    ("translate_text", "Translate text into another language.", "text, target"),
    ("calculator", "Evaluate an arithmetic expression.", "expression"),
    ("timer_set", "Set a countdown timer.", "minutes"),
    ("alarm_set", "Set an alarm clock for a time.", "time"),
    ("sms_send", "Send a text message (SMS) to a phone number.", "phone, text"),
    ("image_generate", "Generate an image from a text prompt.", "prompt"),
    ("web_search", "Search the web for pages matching a query.", "query"),
    ("medication_reminder", "Set a reminder to take medication.", "drug, time"),
]


def _schema(name: str, description: str, args: str) -> dict:
    names = [a.strip() for a in args.split(",") if a.strip()]
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": {a: {"type": "string"} for a in names}},
    }


def _catalog(*names: str) -> list[dict]:
    return [_schema(*spec) for spec in _SPECS if not names or spec[0] in names]


FACTURE = _schema("facture_envoyer", "Envoyer une facture au client par courriel.", "client")


# -- 1. a confident answer resting on one weak word --------------------------------


def test_argument_names_count_less_than_the_description_in_the_lexical_score():
    index = ToolIndex(
        [
            _schema("alarm_set", "Set an alarm clock.", "time"),
            _schema("clock_show", "Show the time in a city.", "city"),
            _schema("notes_create", "Create a note.", "title"),
        ],
        embeddings=None,
    )
    _, lexical = index.score_parts("time")
    scores = dict(zip(index.row_names(), lexical.tolist(), strict=True))
    assert scores["alarm_set"] < 0.8 * scores["clock_show"]


@pytest.mark.parametrize("query", ["what's 17 times 23", "write me a poem"])
def test_a_request_no_tool_serves_gets_no_confident_answer(query):
    # "times" is all the catalog knows of the first (the numbers dilute it like any
    # unknown word); "write" (a verb of file_write's name) all it knows of the second.
    result = ToolIndex(_catalog()).search(query)
    assert result.fallback != None  # noqa: E711 (None is the confident answer)
    assert result.low_confidence or not result.matches


@pytest.mark.parametrize("engine", ["auto", None])
def test_arithmetic_gets_no_confident_tool_from_a_catalog_without_a_calculator(engine):
    # docs/tools.md: an argument named "time" once made "what's 17 times 23" a confident
    # alarm tool; without a calculator nothing in the catalog serves it.
    index = ToolIndex([s for s in _catalog() if s["name"] != "calculator"], embeddings=engine)
    for query in ("what's 17 times 23", "what is 17 times 23?", "17 times 23"):
        result = index.search(query)
        assert result.fallback != None, query  # noqa: E711 (None is the confident answer)
        assert result.low_confidence or not result.matches


def test_numbers_count_in_the_lexical_coverage():
    index = ToolIndex(_catalog(), embeddings=None)
    with_numbers = index.scores("set an alarm for 7 and 9")["alarm_set"]
    without = index.scores("set an alarm")["alarm_set"]
    assert with_numbers < without


def test_a_verb_of_tool_names_counts_less_than_its_object():
    index = ToolIndex(_catalog(), embeddings=None)
    # "write" and "poem" are as rare in the catalog (one tool each at most): the verb
    # alone now covers a third of the request, not half of it.
    ratio = index.scores("write poem")["file_write"] / index.scores("write")["file_write"]
    assert 0.25 < ratio < 0.4


# -- 2. a table word the catalog also uses -------------------------------------------


def test_a_table_word_the_catalog_uses_is_read_in_english_and_kept():
    index = ToolIndex([*_catalog("email_send", "email_read", "sms_send"), FACTURE])
    text, words = index.translated("envoyer un courriel")
    assert "envoyer" in text.split() and "send" in text.split()
    assert "envoyer" in words
    ranked = [name for name, _ in index.rank("envoyer un courriel", limit=2)]
    # Both: the French tool's own word, and the email tool by "courriel" -> "email".
    assert sorted(ranked) == ["email_send", "facture_envoyer"]


def test_a_catalog_word_is_no_evidence_that_an_english_request_is_foreign():
    # "envoyer" is both a catalog word and a table word: it alone must not turn an
    # English request into a translated one.
    index = ToolIndex([*_catalog("email_send"), FACTURE])
    assert index.translated("envoyer the invoice to the client")[0] == (
        "envoyer the invoice to the client"
    )


# -- 3. a tool named exactly, plus a need --------------------------------------------


def test_a_named_tool_and_the_rest_of_the_request_are_both_served():
    index = ToolIndex(_catalog())
    result = index.search("email_send and also get the weather in Rome")
    assert result.fallback == "name"
    assert result.names[0] == "email_send"
    assert "get_weather" in result.names
    assert result.rest is not None and "weather" in result.rest_query
    text = format_search_result(result, index)
    assert text.startswith("Tools loaded by name:\n- email_send ")
    assert "For the rest of the request" in text and "get_weather" in text


def test_low_confidence_guesses_for_the_rest_are_not_loaded():
    # the rest is the named tool's arguments, not a second need
    result = ToolIndex(_catalog()).search("email_send the report to Ann")
    assert result.names == ["email_send"] and result.rest is None


@pytest.mark.parametrize(
    "query",
    ["email_send", "load email_send please", "email_send, sms_send", "use the email_send tool"],
)
def test_a_request_that_only_names_tools_loads_exactly_those(query):
    index = ToolIndex(_catalog())
    result = index.search(query)
    assert result.fallback == "name"
    assert set(result.names) <= {"email_send", "sms_send"}
    assert result.rest is None


# -- 5. tools described in another language ------------------------------------------

TERMIN = _schema("termin_erstellen", "Einen Termin im Kalender erstellen.", "titel")
SPOTIFY = _schema("spotify_create_playlist", "Create a Spotify playlist.", "name")


def test_a_tool_described_in_another_language_is_found_by_an_english_request():
    # "Termin" is read as appointment: "appointment" alone reaches the tool (the tool's
    # own words are far from it in spelling).
    tools = [*_catalog("email_send", "get_weather", "file_read", "music_play"), TERMIN]
    index = ToolIndex(tools)
    assert "termin_erstellen" in index.search("book me a dentist appointment").names
    assert ToolIndex(tools, embeddings=None).scores("appointment")["termin_erstellen"] > 0
    off = ToolIndex(tools, embeddings=None, crosslingual=False)
    assert off.scores("appointment")["termin_erstellen"] == 0


def test_an_english_description_is_never_read_as_foreign():
    # "spotify" is a table word ("spotlight"); the description's English "a" keeps it English.
    index = ToolIndex([*_catalog("email_send", "get_weather"), SPOTIFY], embeddings=None)
    assert index.scores("spotlight")["spotify_create_playlist"] == 0
