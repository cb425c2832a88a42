"""Reading a request as foreign: other languages' function words (issue 18, 2026-12-05)."""

from __future__ import annotations

from langgraph_librarian.tools import ToolIndex


def memory_forget(key: str) -> str:
    """Forget a fact the assistant remembered about the user."""
    return "ok"


def calendar_list_events(day: str) -> str:
    """List the events in the calendar for a day."""
    return "ok"


def weather_forecast(city: str) -> str:
    """Weather forecast for the coming days in a city."""
    return "rain"


def _index() -> ToolIndex:
    return ToolIndex([memory_forget, calendar_list_events, weather_forecast], embeddings=None)


def test_function_words_of_one_language_mark_a_request_as_foreign():
    # "que" and "tengo" are Spanish function words, none of the packaged markers: the
    # request used to read as English and "eventos" stayed unread.
    text, words = _index().translated("que eventos tengo hoy")
    assert "eventos" in words and text != "que eventos tengo hoy"


def test_other_languages_function_words_are_not_content_when_judging_a_request():
    # "olvida" (the table, by its dictionary form) and "direccion" (read by nothing) are
    # two of three content words once "tu" is set aside, not two of four.
    index = _index()
    text, words = index.translated("olvida tu antigua dirección")
    assert "forget" in text.split() and "olvida" in words
    assert index.rank("olvida tu antigua dirección", limit=1)[0][0] == "memory_forget"


def test_english_requests_with_foreign_function_words_are_left_alone():
    index = _index()
    for query in (
        "come and see my son",  # "come" is Italian, "son" French and Spanish
        "die hard is on tv tonight",  # "die" is German
        "was the weather in Nice any good",  # "was" is German
        "add a todo to buy gelato",
    ):
        assert index.translated(query) == (query, {})
