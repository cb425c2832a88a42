"""A question in another language is read without that language's function words.

The offline engine's stop words are English: in "¿Qué día firmaron la compra del piso?"
the words "qué", "la", "del", "de" matched most messages of a Spanish chat, counted
toward the share of the question a message covers, and put another question full of them
("¿Qué día es la reunión de la comunidad...?") ahead of the message that answers it.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.text import without_foreign_function_words
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector


@pytest.mark.parametrize(
    ("question", "read"),
    [
        (
            "¿Qué día firmaron la compra del piso de Benimaclet?",
            "día firmaron compra piso Benimaclet?",
        ),
        (
            "Für welches Datum war der Umzug schließlich angesetzt?",
            "Datum Umzug schließlich angesetzt?",
        ),
        ("Quand Thomas a-t-il fait la connaissance d'Inès ?", "Thomas connaissance d'Inès ?"),
        ("Dove ha comprato la macchina nuova?", "comprato macchina nuova?"),
        ("Hoe laat begint de les van mijn dochter?", "laat begint les dochter?"),
    ],
)
def test_a_foreign_question_loses_its_function_words(question: str, read: str) -> None:
    assert without_foreign_function_words(question) == read


@pytest.mark.parametrize(
    "question",
    [
        "When did his dog die?",  # one German word ("die") among English ones
        "Is the die cast for the war?",
        "What did Caroline do in Spain with la familia de Rosa?",  # English with names
        "What's the hat size?",
        "",
        "?",
        # Found by a review: English words and names that the lists hold too.
        "Will Ben come?",
        "Total solo trip cost USA?",
        "USA total solo?",
        "Flights to Los Angeles via Las Vegas?",
        "Die Hard or Die Another Day?",
        "Van der Berg's con?",
        # A question of function words alone is kept whole (nothing would be left).
        "Wer war das?",
        "Et toi ?",
    ],
)
def test_english_and_bare_function_words_are_never_touched(question: str) -> None:
    assert without_foreign_function_words(question) == question


@pytest.mark.parametrize(
    ("question", "read"),
    [
        ("¿Dónde está la hoja A4 del informe?", "hoja A4 informe?"),
        ("Chi usa C e C++ nel progetto?", "usa C C++ progetto?"),
        ("Quand commence le T1 de Marie ?", "commence T1 Marie ?"),
    ],
)
def test_codes_and_names_in_a_foreign_question_stay(question: str, read: str) -> None:
    assert without_foreign_function_words(question) == read


def test_a_spanish_question_finds_its_answer_not_another_question() -> None:
    chat = [
        (
            "¿Qué tal el fin de semana? ¿Qué hiciste el sábado por la tarde con la familia?",
            "Pues nada especial, que el sábado por la tarde estuvimos en casa de la abuela.",
        ),
        (
            "¿Y qué pasó al final con la cena del viernes de la que me hablaste?",
            "Que al final la cena del viernes se canceló, una pena, de verdad.",
        ),
        (
            "Por cierto, hemos firmado en la notaría esta mañana, ¡el piso de Benimaclet ya "
            "es nuestro!",
            "¡Enhorabuena! Qué ilusión, un piso propio.",
        ),
        (
            "¿Qué te parece si el domingo vamos a la playa de la Malvarrosa con los niños?",
            "Me parece muy bien, que hace buen tiempo.",
        ),
        (
            "¿Qué día es la reunión de la comunidad de vecinos del edificio?",
            "Creo que es el martes de la semana que viene.",
        ),
    ]
    messages: list = []
    for human, ai in chat:
        messages.append(HumanMessage(human, id=f"m{len(messages)}"))
        messages.append(AIMessage(ai, id=f"m{len(messages)}"))
    question = "¿Qué día firmaron la compra del piso de Benimaclet?"
    full = [*messages, HumanMessage(question, id="q")]
    entries = update_index(full, [], LibrarianConfig(embeddings=None)).entries[:-1]
    selection = LocalSelector().select(question, full, entries)
    assert selection.ids[0] == 4  # "hemos firmado en la notaría...", not the other question


def test_missing_word_lists_leave_questions_as_they_are(monkeypatch, caplog) -> None:
    """An optional refinement: a damaged install reads questions as written (logged)
    instead of failing every turn."""
    from pathlib import Path

    from langgraph_librarian._engine import text

    monkeypatch.setattr(text, "_FUNCTION_WORDS", Path("/nonexistent/function-words.txt"))
    text._function_words.cache_clear()
    text.without_foreign_function_words.cache_clear()
    try:
        question = "¿Qué día firmaron la compra del piso de Benimaclet?"
        assert without_foreign_function_words(question) == question
        assert "foreign questions are read as they are" in caplog.text
    finally:
        monkeypatch.undo()
        text._function_words.cache_clear()
        text.without_foreign_function_words.cache_clear()
    assert without_foreign_function_words(question) != question
