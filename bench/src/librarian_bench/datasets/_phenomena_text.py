"""Text banks of the ``phenomena`` dataset: everyday chatter, names, places, tool noise.

The banks live in ``librarian_bench/data/phenomena_text.txt``, one entry per line under
``## section`` headers.

Written for this dataset and independent of the older synthetic generator: none of its
names, places, families or sentences are reused. Filler sentences carry the slots
``{name}``, ``{town}``, ``{day}``, ``{n}``, ``{month}`` (and ``{money}``, ``{clock}``...
in incidental facts) and never state a fact that a question asks about; the generator
fills ``{name}`` and ``{town}`` only with names and towns that no question is about.
"""

from __future__ import annotations

from librarian_bench.datasets._files import data_sections

__all__ = [
    "AI_CLOSERS",
    "AI_GENERIC",
    "AI_OPENERS",
    "BANKS",
    "FIRST_NAMES",
    "INCIDENTAL",
    "SAME_DAY",
    "SURNAMES",
    "TOPICS",
    "TOWNS",
    "USER_ASIDES",
    "assistant_lines",
    "user_lines",
]


_SECTIONS = data_sections("phenomena_text.txt")

FIRST_NAMES = _SECTIONS["first names"]
SURNAMES = _SECTIONS["surnames"]
TOWNS = _SECTIONS["towns"]

TOPICS = ["work", "travel", "health", "home", "hobbies", "money", "family", "food"]

INCIDENTAL = _SECTIONS["incidental"]
USER_ASIDES = _SECTIONS["user asides"]
AI_OPENERS = _SECTIONS["ai openers"]
AI_GENERIC = _SECTIONS["ai generic"]
AI_CLOSERS = _SECTIONS["ai closers"]


def user_lines(topic: str) -> list[str]:
    """Filler sentences a user might write about ``topic``."""
    return list(_SECTIONS[f"user: {topic}"])


def assistant_lines(topic: str) -> list[str]:
    """Filler sentences an assistant might reply with about ``topic``."""
    return list(_SECTIONS[f"assistant: {topic}"])


# Values that questions ask about, drawn without repetition within a conversation.
BANKS: dict[str, list[str]] = {
    name[len("bank: ") :]: lines for name, lines in _SECTIONS.items() if name.startswith("bank: ")
}

# Spread "same day" pairs: the event asked about | the event whose date is stated | topic.
SAME_DAY: list[tuple[str, str, str]] = [
    (asked, dated, topic)
    for asked, dated, topic in (line.split(" | ") for line in _SECTIONS["same day"])
]
