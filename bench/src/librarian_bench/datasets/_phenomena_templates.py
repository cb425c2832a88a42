"""Question frames of the ``phenomena`` dataset, as text (``data/phenomena_frames/*.txt``).

Each block starts with ``## name | field | field...`` and holds tagged template lines;
a frame picks one line per tag it needs. Tags: ``S`` a statement, ``Q`` a question,
``A``/``B`` the first and second statement of a pair, ``L`` a line tying a name to a
role, ``F`` a fact about that name, ``I``/``X`` a restatement without / with a change
cue. Slots are ``str.format`` fields filled by the frame code.
"""

from __future__ import annotations

from librarian_bench.datasets._files import data_text

__all__ = [
    "DISTRACTOR",
    "EVENTS",
    "EVENT_LINES",
    "INDIRECT",
    "OFFSET_IN_MESSAGE",
    "OFFSET_IN_QUESTION",
    "PARAPHRASE",
    "ROLES",
    "SPREAD",
    "UPDATED",
]


def _frames(name: str) -> str:
    return "\n" + data_text(f"phenomena_frames/{name}.txt")


# Paraphrase: {v} is the answer. No question shares a content word with its statements.
PARAPHRASE = _frames("paraphrase")

# Indirect reference, part 1: ## role as asked | its possessive | topic; L ties {name} to it.
ROLES = _frames("roles")

# Indirect reference, part 2: F states {v} about {name}; Q asks with {role} or {poss}.
INDIRECT = _frames("indirect")

# Distractors: ## name | topic | keywords. S states {v} for {inst}; Q asks about one {inst}.
DISTRACTOR = _frames("distractor")

# Spread: A and B are the two statements (T: a tool record instead of B); Q the question.
SPREAD = _frames("spread")

# Temporal, offset in the question: ## name | topic | days from the anchor | calendar label.
OFFSET_IN_QUESTION = _frames("offset_in_question")

# Temporal, offset in a second message: ## name | topic | days per unit | counts to draw.
OFFSET_IN_MESSAGE = _frames("offset_in_message")

# Temporal ordering and intervals: events (label | topic) and how a date is stated.
EVENTS: list[tuple[str, str]] = [
    (label, topic)
    for label, topic in (
        line.split(" | ") for line in data_text("phenomena_frames/events.txt").splitlines()
    )
]
EVENT_LINES = _frames("event_lines")

# Updates: ## name | topic | keywords. A first statement; I restatement with no change
# cue (no "changed", "instead", "now is"...); X a change said outright ({old} = before).
UPDATED = _frames("updated")
