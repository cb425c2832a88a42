"""Calendar days a message names ("Wednesday May 7", "14 June 2025", "June 10-19").

A question about two events at once ("What exam do I have the morning after Jess's
recital?", "Will I be able to go to Poppy's show?") is answered by two messages that share
no word but a date: "the recital is Wednesday May 7" and "my Orgo final is Thursday May 8";
"the show is on Saturday 14 June" and "we leave Tuesday 10 June and return Thursday 19
June". What links them is the calendar, which the lexical index does not read: this module
reads the days a text names so that the selector can compare them.

Only a month name beside a day number counts ("the 10th" alone names no month). A day is
its number within a 366-day year, with the year when the text gives one. A range of day
numbers ("June 10-19", "10-19 June") is a span, and so are two days that a range word
joins ("from June 10 to June 19", "leaving 10 June and returning 19 June", "July 28 and
back August 5") at most :data:`SPAN_DAYS` apart.
"""

from __future__ import annotations

import re
from datetime import date
from itertools import pairwise
from typing import NamedTuple

from langgraph_librarian._engine.text import MONTHS, memo_short_texts

__all__ = [
    "SPAN_DAYS",
    "YEAR_DAYS",
    "DaySpan",
    "day_spans",
    "days_apart",
    "month_names",
    "month_of",
]

SPAN_DAYS = 31
"""Two days a range word joins at most this far apart make a span."""
YEAR_DAYS = 366


class DaySpan(NamedTuple):
    """Days ``first`` to ``last`` of the year (1-366, a leap year), of ``year`` (0: not
    said)."""

    first: int
    last: int
    year: int = 0


_FULL = sorted((m for m in MONTHS if len(m) > 3), key=len, reverse=True)
_SHORT = sorted((m for m in MONTHS if len(m) <= 4 and m != "may"), key=len, reverse=True)
# Full names in any case ("june 14"); "May" and the abbreviations only with a capital
# ("you may 3D-print it", "mar the finish" are no dates).
_MONTH = "(?P<month>(?i:{})|May|(?:{})\\.?)".format(
    "|".join(_FULL), "|".join(s.capitalize() for s in _SHORT)
)
_NUMBER = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>(?:19|20)\d\d)\b)?"
_MONTH_FIRST = re.compile(
    # "May 7", "June 10-19", "Sept. 3rd", "June 14, 2025"; not "June 10:30" or "May 2024"
    rf"\b{_MONTH}\s+(?P<day>{_NUMBER})(?:\s*[-\u2013]\s*(?P<to>{_NUMBER}))?(?![\d:])(?![.,]\d)"
    + _YEAR
)
_DAY_FIRST = re.compile(
    # "7 May", "10-19 June", "the 14th of June 2025"; not "£30 June", "3.5 May", "2-1 May"
    # (a score: the dash then needs spaces or an en dash of a range)
    rf"(?<![\d$\u00a3\u20ac%.,/:-])\b(?P<day>{_NUMBER})(?:(?:\s+-\s+|\s*\u2013\s*)"
    rf"(?P<to>{_NUMBER})|-(?P<to_tight>{_NUMBER}))?\s+(?:of\s+)?{_MONTH}\b" + _YEAR
)
_RANGE_WORD = re.compile(
    r"^[^.!?\n]{0,60}?(?:\bto\b|\buntil\b|\btill\b|\bthrough\b|\bthru\b|[-\u2013\u2014]"
    r"|\band\s+(?:back|return|returning|home|fly(?:ing)?\s+(?:back|home))\b"
    r"|\breturn(?:ing)?\b|\bback\s+on\b)",
    re.IGNORECASE,
)
"""Between two days, what makes them one span (no sentence end between)."""


def _day_of_year(month: int, day: int) -> int | None:
    try:
        return date(2024, month, day).timetuple().tm_yday  # a leap year: 29 February counts
    except ValueError:
        return None


def _number(text: str | None) -> int | None:
    return int(text.rstrip("stndrh")) if text else None


def _found(text: str) -> list[tuple[int, int, DaySpan]]:
    """(start, end, span) of each date in ``text``, in order; a day number both before
    and after one month ("room 12 May 3rd") is read after it."""
    found: list[tuple[int, int, DaySpan]] = []
    month_first = list(_MONTH_FIRST.finditer(text))
    taken = {m.start("month") for m in month_first}
    day_first = [m for m in _DAY_FIRST.finditer(text) if m.start("month") not in taken]
    for match in sorted([*month_first, *day_first], key=lambda m: m.start()):
        month = MONTHS.get(match.group("month").lower().rstrip("."))
        first = _number(match.group("day"))
        if month is None or first is None:
            continue
        start = _day_of_year(month, first)
        if start is None:
            continue
        groups = match.groupdict()
        last = _number(groups.get("to") or groups.get("to_tight"))
        end = _day_of_year(month, last) if last else None
        year = int(match.group("year") or 0)
        span = DaySpan(start, end if end is not None and start < end else start, year)
        found.append((match.start(), match.end(), span))
    return found


@memo_short_texts(4096)  # the latest passages naming a month are read again each question
def day_spans(text: str) -> tuple[DaySpan, ...]:
    """The days ``text`` names, in order of mention, then the spans range words make.

    A single day is ``DaySpan(d, d)``; "June 10-19" is ``DaySpan(162, 171)``; two days a
    range word joins ("from June 10 to June 19") at most :data:`SPAN_DAYS` apart also
    give the span between them (across a year's end too: "Dec 28 to Jan 3").
    """
    found = _found(text)
    spans = [span for _, _, span in found]
    for (_, end, a), (start, _, b) in pairwise(found):
        gap = (b.first - a.last) % YEAR_DAYS
        if 0 < gap <= SPAN_DAYS and _RANGE_WORD.match(text[end:start]):
            last = a.last + gap
            spans.append(DaySpan(a.first, last, a.year or b.year))
    return tuple(spans)


def days_apart(ours: tuple[DaySpan, ...], theirs: tuple[DaySpan, ...]) -> int:
    """Fewest days between a span of ``ours`` and one of ``theirs`` (0: they overlap),
    counted around the year's end; spans of two different stated years never meet. A
    large number when either is empty."""
    best = 1 << 30
    for a in ours:
        for c in theirs:
            if a.year and c.year and a.year != c.year:
                continue
            gap = max(c.first - a.last, a.first - c.last)
            if gap > 0:  # apart: the other way round the year may be shorter
                gap = min(gap, YEAR_DAYS - (max(a.last, c.last) - min(a.first, c.first)))
            best = min(best, max(0, gap))
    return best


def month_of(day: int) -> int:
    """The month (1-12) of day ``day`` of the year, taken around the year (0 is 31
    December, 367 is 1 January)."""
    return date.fromordinal(_NEW_YEAR + (day - 1) % YEAR_DAYS).month


_NEW_YEAR = date(2024, 1, 1).toordinal()
"""1 January of the leap year days are counted in (:func:`_day_of_year`)."""


def month_names(month: int) -> list[str]:
    """The names :data:`MONTHS` gives ``month`` (lower case: the lexical index's terms)."""
    return [name for name, number in MONTHS.items() if number == month]
