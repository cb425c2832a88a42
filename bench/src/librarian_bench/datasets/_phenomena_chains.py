"""Phenomena that need several messages or an order: spread facts, dates, updates.

- ``spread``: the answer needs two statements in two messages, either a bridge (one
  message says which flight, a tool result says when that flight leaves; ``bridge`` is
  the shared key, absent from the question) or two halves of a list ("which two hotels").
- ``temporal``: date arithmetic or ordering over anchor dates stated in the evidence
  (``Derivation`` says how); the offset is in the question or in a second message.
- ``updated``: a value stated and then restated differently one to three times; the
  question asks for the current value. Evidence is the latest statement only (it is
  self-contained); the superseded ones are ``near``. With ``implicit=True`` the latest
  statement carries no change cue at all (no "changed", "instead", "now is"...).

The text lives in ``_phenomena_templates``; this module draws the values.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from librarian_bench.datasets._phenomena_model import (
    WEEKDAYS,
    Ctx,
    Derivation,
    FrameText,
    Item,
    Plant,
    long_date,
    parse_frames,
)
from librarian_bench.datasets._phenomena_templates import (
    EVENT_LINES,
    EVENTS,
    OFFSET_IN_MESSAGE,
    OFFSET_IN_QUESTION,
    SPREAD,
    UPDATED,
)
from librarian_bench.datasets._phenomena_text import BANKS, SAME_DAY

__all__ = ["SPREAD_FRAMES", "TEMPORAL_FRAMES", "UPDATED_FRAMES"]

Frame = Callable[[Ctx], Item]
UpdateFrame = Callable[[Ctx, bool], Item]
_SPREAD = parse_frames(SPREAD)


def _capital(text: str) -> str:
    return text[0].upper() + text[1:]


def _spread(
    c: Ctx,
    frame_name: str,
    topic: str,
    answer: str,
    slots: dict[str, str],
    *,
    bridge: str = "",
    tool: tuple[str, dict[str, str]] | None = None,
) -> Item:
    """Statement A, then B (or with ``tool`` = (name, args), tool record T); the question."""
    frame = _SPREAD[frame_name]
    first = Plant(frame.say(c, "A", **slots), topic)
    if tool is not None:
        second = Plant(frame.say(c, "T", **slots), topic, "tool", tool[0], tool[1])
    else:
        second = Plant(frame.say(c, "B", **slots), topic, "any")
    question = frame.say(c, "Q", **slots)
    parts = answer.split("; ")
    return Item("spread", question, answer, [first, second], support=parts, bridge=bridge)


def _flight(c: Ctx) -> Item:
    flight = f"{c.pick(['TQ', 'VK', 'LM', 'ZR', 'HW'])}{c.rng.randrange(100, 9999)}"
    time, gate = c.clock(), f"{c.pick('ABCD')}{c.rng.randrange(1, 40)}"
    terminal = str(c.rng.randrange(1, 6))
    slots = {"flight": flight, "town": c.town(), "time": time, "terminal": terminal, "gate": gate}
    tool = ("flight_status", {"flight": flight})
    return _spread(c, "flight", "travel", time, slots, bridge=flight, tool=tool)


def _same_day(c: Ctx) -> Item:
    x = c.fresh([x for x, y, _ in SAME_DAY if not c.used(y)])
    _, y, topic = next(row for row in SAME_DAY if row[0] == x)
    c.mark(y)  # a temporal question must not give this event a second date
    when = c.render(c.date())
    slots = {"x": x, "X": _capital(x), "y": y, "Y": _capital(y), "when": when}
    return _spread(c, "same_day", topic, when, slots, bridge=y)


def _keys(c: Ctx) -> Item:
    box, place = c.fresh(BANKS["containers"]), c.fresh(BANKS["places"])
    slots = {"name": c.first(), "box": box, "place": place}
    return _spread(c, "keys", "home", place, slots, bridge=box)


def _hotels(c: Ctx) -> Item:
    one, two = c.fresh_many(BANKS["hotels"], 2)
    slots = {"town": c.town(), "one": one, "two": two}
    return _spread(c, "hotels", "travel", f"{one}; {two}", slots)


def _raised_bed(c: Ctx) -> Item:
    one, two = c.fresh_many(BANKS["crops"], 2)
    return _spread(c, "raised_bed", "hobbies", f"{one}; {two}", {"one": one, "two": two})


def _locksmith(c: Ctx) -> Item:
    firm, amount = c.fresh(BANKS["firms"]), c.money(90, 480)
    slug = firm.split()[0].lower()
    number = str(c.rng.randrange(1000, 9999))
    slots = {"firm": firm, "slug": slug, "number": number, "amount": amount}
    tool = ("search_email", {"query": "invoice"})
    return _spread(c, "locksmith", "home", amount, slots, bridge=firm, tool=tool)


def _class_teacher(c: Ctx) -> Item:
    form = f"{c.rng.randrange(3, 7)}{c.pick('BCDFGH')}"
    teacher = f"{c.pick(['Mr', 'Ms', 'Mrs'])} {c.surname()}"
    kid = c.first()
    slots = {"kid": kid, "form": form, "teacher": teacher}
    return _spread(c, "class_teacher", "family", teacher, slots, bridge=f"class {form}")


def _order(c: Ctx) -> Item:
    thing, order = c.fresh(BANKS["items"]), f"ORD-{c.rng.randrange(10000, 99999)}"
    when = c.render(c.date(), 0)
    slots = {"thing": thing, "Thing": _capital(thing), "order": order, "when": when}
    tool = ("track_order", {"order": order})
    return _spread(c, "order", "home", when, slots, bridge=order, tool=tool)


SPREAD_FRAMES: list[Frame] = [
    _flight,
    _same_day,
    _keys,
    _hotels,
    _raised_bed,
    _locksmith,
    _class_teacher,
    _order,
]

# -- temporal ------------------------------------------------------------------------------

_IN_QUESTION = parse_frames(OFFSET_IN_QUESTION)
_IN_MESSAGE = parse_frames(OFFSET_IN_MESSAGE)
_EVENT = parse_frames(EVENT_LINES)["event"]
_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 6: "six", 8: "eight"}


def _plus_days(
    question: str, plants: list[Plant], support: list[str], day: datetime.date, days: int
) -> Item:
    answer = long_date(day + datetime.timedelta(days=days))
    derivation = Derivation("plus_days", (day,), days)
    return Item("temporal", question, answer, plants, support=support, derivation=derivation)


def _offset_in_question(c: Ctx) -> Item:
    frame = _IN_QUESTION[c.fresh(list(_IN_QUESTION))]
    topic, days, label = frame.fields[0], int(frame.fields[1]), frame.fields[2]
    day = c.date()
    if c.rng.random() < 0.35:  # the date comes from a calendar lookup
        when = c.render(day, 0)
        query = {"query": label.split()[0].lower()}
        anchor = Plant(f"{when}, {c.clock()}: {label}", topic, "tool", "calendar_search", query)
    else:
        when = c.render(day)
        anchor = Plant(frame.say(c, "A", date=when), topic)
    return _plus_days(frame.say(c, "Q"), [anchor], [when], day, days)


def _offset_in_message(c: Ctx) -> Item:
    frame = _IN_MESSAGE[c.fresh(list(_IN_MESSAGE))]
    topic, unit = frame.fields[0], int(frame.fields[1])
    n = c.rng.choice([int(k) for k in frame.fields[2].split(",")])
    # Weeks are written in words ("six weeks"), days in digits ("21 days"), as people do.
    amount = f"{_NUMBER_WORDS[n]} weeks" if abs(unit) == 7 else f"{n} days"
    day = c.date()
    when = c.render(day)
    anchor = Plant(frame.say(c, "A", date=when), topic)
    offset = Plant(frame.say(c, "B", n=amount.split()[0]), topic)
    return _plus_days(frame.say(c, "Q"), [anchor, offset], [when, amount], day, unit * n)


def _two_events(c: Ctx) -> tuple[list[Plant], list[str], list[str], list[datetime.date]]:
    labels = c.fresh_many([label for label, _ in EVENTS], 2)
    first = c.date()
    while first.month > 9:  # leave room for the second date before December
        first = c.date()
    days = [first, c.date(after=first, within=70)]
    c.rng.shuffle(days)
    plants, support = [], []
    for label, day in zip(labels, days, strict=True):
        when = c.render(day)
        topic = dict(EVENTS)[label]
        plants.append(Plant(_EVENT.say(c, "A", label=label, date=when), topic))
        support.append(when)
    return plants, support, labels, days


def _earlier(c: Ctx) -> Item:
    plants, support, (a, b), days = _two_events(c)
    answer = a if days[0] < days[1] else b
    derivation = Derivation("earlier", tuple(days))
    question = _EVENT.say(c, "Q", a=a, b=b)
    return Item("temporal", question, answer, plants, support=support, derivation=derivation)


def _between(c: Ctx) -> Item:
    plants, support, (a, b), days = _two_events(c)
    answer = f"{abs((days[1] - days[0]).days)} days"
    derivation = Derivation("days_between", tuple(days))
    question = _EVENT.say(c, "B", a=a, b=b)
    return Item("temporal", question, answer, plants, support=support, derivation=derivation)


# How often each kind is drawn: offsets in the question are the most varied family.
_TEMPORAL_WEIGHTS: list[tuple[Frame, int]] = [
    (_offset_in_question, 3),
    (_offset_in_message, 2),
    (_earlier, 2),
    (_between, 2),
]
TEMPORAL_FRAMES: list[Frame] = [f for f, n in _TEMPORAL_WEIGHTS for _ in range(n)]

# -- updated -------------------------------------------------------------------------------


def _versions(c: Ctx) -> int:
    return c.rng.choices([2, 3, 4], weights=[5, 3, 2])[0]


# The values an updated fact goes through (k of them, all different).
_UPDATED_VALUES: dict[str, Callable[[Ctx, int], list[str]]] = {
    "photographer": lambda c, k: c.fresh_many(BANKS["cafes"], k),
    "lunch": lambda c, k: c.distinct(lambda: str(c.rng.randrange(5, 19)), k),
    "cat": lambda c, k: [c.first() for _ in range(k)],
    "pickup": lambda c, k: [c.clock(14, 19) for _ in range(k)],
    "offsite": lambda c, k: [c.town() for _ in range(k)],
    "codename": lambda c, k: c.fresh_many(BANKS["codenames"], k),
    "mortgage": lambda c, k: c.distinct(
        lambda: f"{c.rng.randrange(3, 6)}.{c.rng.randrange(10, 99)}%", k
    ),
    "mileage": lambda c, k: c.distinct(lambda: f"{c.rng.randrange(15, 70, 5)} km", k),
    "spin": lambda c, k: c.distinct(lambda: c.pick(WEEKDAYS[:5]), k),
    "christmas": lambda c, k: [c.first() for _ in range(k)],
    "hire_car": lambda c, k: c.fresh_many(BANKS["pickups"], k),
}


def _updated(text: FrameText) -> UpdateFrame:
    def build(c: Ctx, implicit_last: bool) -> Item:
        values = _UPDATED_VALUES[text.name](c, _versions(c))
        topic, keywords = text.fields[0], [w.strip() for w in text.fields[1].split(",")]
        plants = [Plant(text.say(c, "A", v=values[0]), topic)]
        for i in range(1, len(values)):
            quiet = implicit_last if i == len(values) - 1 else c.rng.random() < 0.5
            said = text.say(c, "I" if quiet else "X", v=values[i], old=values[i - 1])
            plants.append(Plant(said, topic))
        return Item(
            "updated",
            text.say(c, "Q"),
            values[-1],
            plants[-1:],
            near=plants[:-1],
            decoys=values[:-1],
            ordered=True,
            support=values[-1:],
            keywords=keywords,
            implicit=implicit_last,
        )

    return build


UPDATED_FRAMES: list[UpdateFrame] = [_updated(t) for t in parse_frames(UPDATED).values()]
