"""Building blocks of the ``phenomena`` dataset: planted statements, items, value drawing.

An :class:`Item` is one question with the statements that support it (``evidence``)
and, for some phenomena, near-miss statements (``near``). The generator places each
statement in its own message, buried in chatter, and turns the item into a
:class:`~librarian_bench.datasets.phenomena.PhenomenonQuestion`.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from librarian_bench.datasets._phenomena_text import FIRST_NAMES, SURNAMES, TOWNS

__all__ = ["Ctx", "Derivation", "FrameText", "Item", "Plant", "Who", "long_date", "parse_frames"]

Who = Literal["user", "any", "tool"]
"""Who may state a planted sentence: the user only, either side, or a tool result."""

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@dataclass(frozen=True)
class Derivation:
    """How a temporal answer follows from the anchor dates stated in the evidence.

    Attributes:
        rule: ``"plus_days"`` (answer = ``dates[0] + days``, written ``"14 May"``),
            ``"days_between"`` (answer = ``"N days"``, N = distance between the two
            dates) or ``"earlier"`` (answer = the label of the event with the earlier date,
            stated in the message holding that date).
        dates: The anchor dates, in the order of ``support``.
        days: The offset for ``plus_days`` (negative: before the anchor).
    """

    rule: Literal["plus_days", "days_between", "earlier"]
    dates: tuple[datetime.date, ...]
    days: int = 0


@dataclass
class Plant:
    """A sentence (or, for ``who="tool"``, a record line of a tool result) to bury."""

    text: str
    topic: str
    who: Who = "user"
    tool: str = ""
    args: dict[str, str] = field(default_factory=dict)


@dataclass
class Item:
    """One question and the statements it rests on (see the module docstring)."""

    category: str
    question: str
    answer: str
    evidence: list[Plant]
    near: list[Plant] = field(default_factory=list)
    decoys: list[str] = field(default_factory=list)
    ordered: bool = False
    support: list[str] = field(default_factory=list)
    bridge: str = ""
    keywords: list[str] = field(default_factory=list)
    derivation: Derivation | None = None
    implicit: bool = False


@dataclass(frozen=True)
class FrameText:
    """One ``## name | field...`` block of tagged template lines (see _phenomena_templates)."""

    name: str
    fields: tuple[str, ...]
    lines: dict[str, list[str]]

    def say(self, c: Ctx, tag: str, **slots: str) -> str:
        """One line of ``tag``, chosen at random, with ``slots`` filled in."""
        return c.pick(self.lines[tag]).format(**slots)


def parse_frames(block: str) -> dict[str, FrameText]:
    """Blocks by name, in order; a line outside ``TAG: text`` or a block is an error."""
    frames: dict[str, FrameText] = {}
    current: FrameText | None = None
    for raw in block.strip().splitlines():
        line = raw.strip()
        if line.startswith("## "):
            name, *fields = (part.strip() for part in line[3:].split("|"))
            current = frames[name] = FrameText(name, tuple(fields), {})
        elif line:
            tag, sep, text = line.partition(": ")
            if current is None or not sep:
                raise ValueError(f"malformed frame line: {line!r}")
            current.lines.setdefault(tag, []).append(text)
    return frames


def long_date(day: datetime.date) -> str:
    """``"14 May"``: how derived dates are written in gold answers."""
    return f"{day.day} {MONTHS[day.month - 1]}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class Ctx:
    """Random draws for one conversation; names, towns and labels are used once each."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.year = rng.choice([2024, 2025, 2026])
        self.currency = rng.choice(["£", "€", "$"])
        self._used: set[str] = set()

    def pick(self, options: Sequence[str]) -> str:
        """Any one of ``options`` (may repeat across calls)."""
        return self.rng.choice(list(options))

    def fresh(self, options: Sequence[str]) -> str:
        """One of ``options`` not handed out before in this conversation."""
        left = [o for o in options if o not in self._used]
        if not left:
            raise ValueError("text bank exhausted; add entries or ask fewer questions")
        choice = self.rng.choice(left)
        self._used.add(choice)
        return choice

    def used(self, value: str) -> bool:
        """Whether ``value`` was handed out by :meth:`fresh` (or marked) already."""
        return value in self._used

    def mark(self, value: str) -> None:
        """Reserve ``value`` so that later :meth:`fresh` draws skip it."""
        self._used.add(value)

    def fresh_many(self, options: Sequence[str], k: int) -> list[str]:
        """``k`` distinct unused options."""
        return [self.fresh(options) for _ in range(k)]

    def first(self) -> str:
        return self.fresh(FIRST_NAMES)

    def surname(self) -> str:
        return self.fresh(SURNAMES)

    def town(self) -> str:
        return self.fresh(TOWNS)

    def money(self, low: int, high: int, step: int = 1) -> str:
        return f"{self.currency}{self.rng.randrange(low, high + 1, step):,}"

    def clock(self, earliest: int = 6, latest: int = 22) -> str:
        """A time such as ``"7:45 am"`` from ``earliest`` to ``latest`` o'clock, never reused."""
        while True:
            hour, minute = self.rng.randrange(earliest, latest), self.rng.randrange(0, 60, 5)
            text = f"{(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'}"
            if text not in self._used:
                self._used.add(text)
                return text

    def distinct(self, draw: Callable[[], str], k: int) -> list[str]:
        """``k`` distinct values of ``draw()``."""
        values: list[str] = []
        while len(values) < k:
            value = draw()
            if value not in values:
                values.append(value)
        return values

    def date(self, *, after: datetime.date | None = None, within: int = 60) -> datetime.date:
        """An unused date between March and early December of the conversation's year.

        With ``after``: 3 to ``within`` days after it. Staying inside March-December keeps
        every interval clear of 29 February.
        """
        start = datetime.date(self.year, 3, 1)
        end = datetime.date(self.year, 12, 1)
        if after is None:
            options = [start + datetime.timedelta(days=d) for d in range((end - start).days)]
        else:
            options = [after + datetime.timedelta(days=d) for d in range(3, within)]
        options = [d for d in options if start <= d <= end and d.isoformat() not in self._used]
        if not options:
            raise ValueError(f"no free date after {after}")
        day = self.rng.choice(options)
        self._used.add(day.isoformat())
        return day

    def render(self, day: datetime.date, style: int | None = None) -> str:
        """A date as people write it: ``Tuesday 14 May``, ``14 May``, ``May 14th``..."""
        month = MONTHS[day.month - 1]
        style = self.rng.randrange(4) if style is None else style
        if style == 0:
            return f"{WEEKDAYS[day.weekday()]} {day.day} {month}"
        if style == 1:
            return f"{day.day} {month}"
        if style == 2:
            return f"{month} {_ordinal(day.day)}"
        return f"the {_ordinal(day.day)} of {month}"
