# ruff: noqa: E501
# (frames are prose templates, one sentence per line)
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
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from langgraph_librarian.evals.datasets._phenomena_model import (
    WEEKDAYS,
    Ctx,
    Derivation,
    Item,
    Plant,
    long_date,
)

__all__ = ["SPREAD_FRAMES", "TEMPORAL_FRAMES", "UPDATED_FRAMES"]

Frame = Callable[[Ctx], Item]
UpdateFrame = Callable[[Ctx, bool], Item]

HOTELS = [
    "Hotel Miramar",
    "the Lantana Inn",
    "Casa dos Ventos",
    "the Old Customs House",
    "Pension Adler",
    "the Harbourmaster's Lodge",
    "Villa Sorgente",
    "the Granary Rooms",
]
CROPS = [
    "purple sprouting broccoli",
    "runner beans",
    "Swiss chard",
    "rainbow carrots",
    "garlic",
    "sugar snap peas",
    "butternut squash",
    "leeks",
]
CONTAINERS = [
    "green biscuit tin",
    "red toolbox",
    "shoebox marked 'cables'",
    "blue document wallet",
    "old tea caddy",
    "wicker basket",
]
PLACES = [
    "the top shelf of the airing cupboard",
    "the bottom drawer of the hall dresser",
    "the loft, just left of the hatch",
    "the cupboard under the stairs, behind the hoover",
    "the garage, on the shelf above the bikes",
    "the spare room wardrobe",
]
FIRMS = [
    "Keyworth & Sons",
    "Brightbolt Locks",
    "Tumbler Security",
    "Latchford Ltd",
    "Anchor Keys",
    "Deadbolt Brothers",
]
ITEMS = [
    "the new desk chair",
    "the replacement kettle",
    "the garden bench",
    "the standing lamp",
    "the bookcase",
    "the bike rack",
]
CAFES = [
    "the Tin Kettle",
    "Marrow & Mint",
    "the Lido Café",
    "Hartley's",
    "the Orangery",
    "Crumb & Co",
    "the Boathouse",
    "Fig Tree Deli",
]
CODENAMES = ["Marigold", "Tamarind", "Pumice", "Sorrel", "Gannet", "Nimbus", "Quokka", "Obsidian"]
PICKUPS = [
    "the airport desk",
    "the station forecourt",
    "the harbour office",
    "the town-centre depot",
    "the hotel car park",
]
# (label as asked, topic, label in a calendar entry)
EVENTS = [
    ("the dentist check-up", "health"),
    ("the parents' evening", "family"),
    ("the car's MOT", "money"),
    ("the boiler service", "home"),
    ("the team away-day", "work"),
    ("the product demo", "work"),
    ("the village fete", "hobbies"),
    ("the allotment open day", "hobbies"),
    ("the vet appointment", "family"),
    ("the eye test", "health"),
    ("the home insurance renewal", "money"),
    ("the choir concert", "hobbies"),
]


def _code(c: Ctx) -> str:
    return f"{c.pick(['TQ', 'VK', 'LM', 'ZR', 'HW'])}{c.rng.randrange(100, 9999)}"


# -- spread --------------------------------------------------------------------------------


def _flight(c: Ctx) -> Item:
    flight, town, time = _code(c), c.town(), c.clock()
    booked = Plant(
        c.pick(
            [
                f"We're booked on {flight} to {town} for the long weekend.",
                f"Our tickets to {town} are on flight {flight}, going out on the Friday.",
            ]
        ),
        "travel",
    )
    record = f"{flight} | scheduled | departs {time} | terminal {c.rng.randrange(1, 6)} | gate {c.pick('ABCD')}{c.rng.randrange(1, 40)}"
    status = Plant(record, "travel", "tool", "flight_status", {"flight": flight})
    question = c.pick(
        [f"What time does our flight to {town} leave?", f"When do we take off for {town}?"]
    )
    return Item("spread", question, time, [booked, status], support=[time], bridge=flight)


_SAME_DAY = [
    ("the plumber's visit", "the kitchen delivery", "home"),
    ("the chimney sweep's visit", "the window cleaner's round", "home"),
    ("my follow-up scan", "the team away-day", "health"),
    ("the school photo", "the harvest assembly", "family"),
    ("the leaving drinks for the old boss", "the quarterly review", "work"),
    ("the allotment committee meeting", "the seed swap", "hobbies"),
]


def _same_day(c: Ctx) -> Item:
    label = c.fresh([x for x, y, _ in _SAME_DAY if not c.used(y)])
    x, y, topic = next(row for row in _SAME_DAY if row[0] == label)
    c.mark(y)  # a temporal question must not give this event a second date
    when = c.render(c.date())
    first = c.pick(
        [
            f"{x} is booked for the same day as {y}, which keeps things simple.",
            f"I've arranged {x} to coincide with {y}.",
        ]
    )
    second = c.pick(
        [f"{y} is confirmed for {when}.", f"Just had confirmation that {y} is on {when}."]
    )
    plants = [
        Plant(first[0].upper() + first[1:], topic),
        Plant(second[0].upper() + second[1:], topic, "any"),
    ]
    question = c.pick([f"What date is {x}?", f"On which day is {x} happening?"])
    return Item("spread", question, when, plants, support=[when], bridge=y)


def _keys(c: Ctx) -> Item:
    name, box, place = c.first(), c.fresh(CONTAINERS), c.fresh(PLACES)
    first = Plant(
        c.pick(
            [
                f"The spare keys for {name}'s flat are in the {box}.",
                f"I put {name}'s spare flat keys in the {box} for safekeeping.",
            ]
        ),
        "home",
    )
    second = Plant(
        c.pick([f"The {box} lives in {place}.", f"If you ever need the {box}, it's in {place}."]),
        "home",
        "any",
    )
    question = c.pick(
        [
            f"Where exactly would I find the spare keys to {name}'s flat?",
            f"In which part of the house are {name}'s spare flat keys kept?",
        ]
    )
    return Item("spread", question, place, [first, second], support=[place], bridge=box)


def _hotels(c: Ctx) -> Item:
    town, (one, two) = c.town(), c.fresh_many(HOTELS, 2)
    first = Plant(
        c.pick(
            [
                f"For {town}, {one} looks promising: it's near the old harbour.",
                f"First hotel on the list for {town}: {one}, with a roof terrace.",
            ]
        ),
        "travel",
    )
    second = Plant(
        c.pick(
            [
                f"Another option in {town} is {two}; the reviews rave about the breakfast.",
                f"I'm also adding {two} in {town} to the shortlist, mainly for the location.",
            ]
        ),
        "travel",
    )
    question = c.pick(
        [
            f"Which two hotels are on our shortlist for {town}?",
            f"What are the two places we're considering staying at in {town}?",
        ]
    )
    return Item("spread", question, f"{one}; {two}", [first, second], support=[one, two])


def _raised_bed(c: Ctx) -> Item:
    one, two = c.fresh_many(CROPS, 2)
    first = Plant(
        c.pick(
            [
                f"Today we put {one} into the new raised bed.",
                f"Half of the new raised bed is now {one}.",
            ]
        ),
        "hobbies",
    )
    second = Plant(
        c.pick(
            [
                f"The other half of the raised bed got {two}.",
                f"I finished planting the raised bed with {two} along the back.",
            ]
        ),
        "hobbies",
    )
    question = c.pick(
        [
            "What two crops did we plant in the new raised bed?",
            "Which two vegetables went into the new raised bed?",
        ]
    )
    return Item("spread", question, f"{one}; {two}", [first, second], support=[one, two])


def _locksmith(c: Ctx) -> Item:
    firm, amount = c.fresh(FIRMS), c.money(90, 480)
    slug = firm.split()[0].lower().strip("&")
    first = Plant(
        c.pick(
            [
                f"The locksmith who changed our locks works for a firm called {firm}.",
                f"We used {firm} for the emergency locksmith call-out.",
            ]
        ),
        "home",
    )
    record = f"From: accounts@{slug}.example | Subject: Invoice {c.rng.randrange(1000, 9999)} from {firm} | Amount due: {amount} | Payment within 14 days, thank you for your custom."
    email = Plant(record, "money", "tool", "search_email", {"query": "invoice"})
    question = c.pick(
        ["How much do we owe the locksmith?", "What is the amount due on the locksmith's invoice?"]
    )
    return Item("spread", question, amount, [first, email], support=[amount], bridge=firm)


def _class_teacher(c: Ctx) -> Item:
    kid, form = c.first(), f"{c.rng.randrange(3, 7)}{c.pick('BCDFGH')}"
    teacher = f"{c.pick(['Mr', 'Ms', 'Mrs'])} {c.surname()}"
    first = Plant(
        c.pick(
            [
                f"{kid} is in class {form} this year, along with most of {kid}'s friends.",
                f"The school letter says {kid} is going into class {form}.",
            ]
        ),
        "family",
    )
    second = Plant(
        c.pick(
            [
                f"Class {form} has {teacher} as its teacher this year.",
                f"The teacher for class {form} is {teacher}, who everyone says is lovely.",
            ]
        ),
        "family",
        "any",
    )
    question = c.pick(
        [f"Who is {kid}'s teacher this year?", f"Which teacher will {kid} have this year?"]
    )
    return Item(
        "spread", question, teacher, [first, second], support=[teacher], bridge=f"class {form}"
    )


def _order(c: Ctx) -> Item:
    thing, order = c.fresh(ITEMS), f"ORD-{c.rng.randrange(10000, 99999)}"
    when = c.render(c.date(), 0)
    first = Plant(
        c.pick(
            [
                f"{thing[0].upper()}{thing[1:]} is order {order}, paid for on the credit card.",
                f"I ordered {thing} online; the order number is {order}.",
            ]
        ),
        "home",
    )
    record = f"Order {order}: in transit with the courier, estimated delivery {when}"
    tracking = Plant(record, "home", "tool", "track_order", {"order": order})
    question = c.pick(
        [f"When is {thing} expected to arrive?", f"What's the delivery date for {thing}?"]
    )
    return Item("spread", question, when, [first, tracking], support=[when], bridge=order)


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

# -- temporal --------------------------------------------------------------------------------

# (anchor sentence with {date}, question, days from the anchor, topic, calendar label)
_OFFSET_IN_QUESTION = [
    (
        "My knee operation is booked for {date}.",
        "If I can't drive for six weeks after the knee operation, from what date can I drive again?",
        42,
        "health",
        "Knee operation",
    ),
    (
        "The fracture clinic fitted the cast on {date}.",
        "The cast comes off five weeks after it was fitted: on what date is that?",
        35,
        "health",
        "Fracture clinic",
    ),
    (
        "The passport appointment for the kids is on {date}.",
        "Allowing three weeks after the appointment, by what date should the kids' passports arrive?",
        21,
        "family",
        "Passport appointment",
    ),
    (
        "The big invoice to the Lindell account went out on {date}.",
        "With 30-day payment terms, on what date is the Lindell invoice due?",
        30,
        "work",
        "Lindell invoice sent",
    ),
    (
        "We sign the lease on the new flat on {date}.",
        "Notice must reach the old landlord 28 days before we sign the new lease: what is the last date to hand it in?",
        -28,
        "home",
        "Lease signing",
    ),
    (
        "The tomato seeds were sown on {date}.",
        "If the tomatoes get transplanted 45 days after sowing, on what date will that be?",
        45,
        "hobbies",
        "Sow tomatoes",
    ),
    (
        "My cousin's wedding is on {date}.",
        "RSVPs are due ten days before my cousin's wedding: by what date?",
        -10,
        "family",
        "Cousin's wedding",
    ),
]
# (anchor sentence, offset sentence with {n}, question, days per unit, topic, counts)
_OFFSET_IN_MESSAGE = [
    (
        "My hernia operation is on {date}.",
        "The surgeon was clear: no heavy lifting for {n} weeks after the operation.",
        "From what date am I allowed to lift heavy things again?",
        7,
        "health",
        (4, 6, 8),
    ),
    (
        "We collect the puppy on {date}.",
        "The breeder said the second jab is due {n} days after we collect her.",
        "On what date is the puppy's second vaccination due?",
        1,
        "family",
        (14, 21, 28),
    ),
    (
        "Our cottage stay starts on {date}.",
        "The cottage owner wants the balance paid {n} weeks before we arrive.",
        "By what date must we pay the balance for the cottage?",
        -7,
        "travel",
        (2, 3, 4, 6),
    ),
    (
        "I start at the new company on {date}.",
        "HR told me the probation review happens {n} days after the start date.",
        "What date is my probation review?",
        1,
        "work",
        (30, 60, 90),
    ),
]
_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 6: "six", 8: "eight"}


def _anchor(c: Ctx, sentence: str, topic: str, label: str) -> tuple[Plant, str, datetime.date]:
    day = c.date()
    if label and c.rng.random() < 0.35:  # the date comes from a calendar lookup
        when = c.render(day, 0)
        record = f"{when}, {c.clock()}: {label}"
        return (
            Plant(record, topic, "tool", "calendar_search", {"query": label.split()[0].lower()}),
            when,
            day,
        )
    when = c.render(day)
    return Plant(sentence.format(date=when), topic), when, day


def _offset_in_question(c: Ctx) -> Item:
    label = c.fresh([row[4] for row in _OFFSET_IN_QUESTION])
    sentence, question, days, topic, _ = next(r for r in _OFFSET_IN_QUESTION if r[4] == label)
    plant, when, day = _anchor(c, sentence, topic, label)
    return _plus_days(question, [plant], [when], day, days)


def _plus_days(
    question: str, plants: list[Plant], support: list[str], day: datetime.date, days: int
) -> Item:
    answer = long_date(day + datetime.timedelta(days=days))
    derivation = Derivation("plus_days", (day,), days)
    return Item("temporal", question, answer, plants, support=support, derivation=derivation)


def _offset_in_message(c: Ctx) -> Item:
    question = c.fresh([row[2] for row in _OFFSET_IN_MESSAGE])
    sentence, offset, _, unit, topic, counts = next(
        r for r in _OFFSET_IN_MESSAGE if r[2] == question
    )
    n = c.rng.choice(counts)
    # Weeks are written in words ("six weeks"), days in digits ("21 days"), as people do.
    amount = f"{_NUMBER_WORDS[n]} weeks" if abs(unit) == 7 else f"{n} days"
    anchor, when, day = _anchor(c, sentence, topic, "")
    stated = Plant(offset.format(n=amount.split()[0]), topic)
    return _plus_days(question, [anchor, stated], [when, amount], day, unit * n)


def _two_events(
    c: Ctx,
) -> tuple[list[Plant], list[str], tuple[str, str], tuple[datetime.date, datetime.date]]:
    a, b = c.fresh_many([label for label, _ in EVENTS], 2)
    first = c.date()
    while first.month > 9:  # leave room for the second date before December
        first = c.date()
    second = c.date(after=first, within=70)
    if c.rng.random() < 0.5:
        first, second = second, first
    plants: list[Plant] = []
    support: list[str] = []
    for label, day in ((a, first), (b, second)):
        topic = next(t for lab, t in EVENTS if lab == label)
        when = c.render(day)
        say = c.pick(
            [
                "Just confirmed: {label} is on {date}.",
                "Put it in the diary: {label} is on {date}.",
                "Reminder to self: {label} falls on {date}.",
            ]
        )
        plants.append(Plant(say.format(label=label, date=when), topic))
        support.append(when)
    return plants, support, (a, b), (first, second)


def _earlier(c: Ctx) -> Item:
    plants, support, (a, b), (day_a, day_b) = _two_events(c)
    question = c.pick(
        [f"Which comes first, {a} or {b}?", f"Which is earlier in the calendar: {a} or {b}?"]
    )
    answer = a if day_a < day_b else b
    derivation = Derivation("earlier", (day_a, day_b))
    return Item("temporal", question, answer, plants, support=support, derivation=derivation)


def _between(c: Ctx) -> Item:
    plants, support, (a, b), (day_a, day_b) = _two_events(c)
    question = c.pick(
        [f"How many days are there between {a} and {b}?", f"How many days separate {a} from {b}?"]
    )
    answer = f"{abs((day_b - day_a).days)} days"
    derivation = Derivation("days_between", (day_a, day_b))
    return Item("temporal", question, answer, plants, support=support, derivation=derivation)


TEMPORAL_FRAMES: list[Frame] = (
    [_offset_in_question] * 3 + [_offset_in_message] * 2 + [_earlier] * 2 + [_between] * 2
)

# -- updated ---------------------------------------------------------------------------------


def _versions(c: Ctx) -> int:
    return c.rng.choices([2, 3, 4], weights=[5, 3, 2])[0]


def _changing(
    c: Ctx,
    implicit_last: bool,
    topic: str,
    values: list[str],
    said: tuple[list[str], list[str], list[str]],
    question: str,
    keywords: list[str],
) -> Item:
    """``said`` = (first statements, implicit restatements, explicit changes with {old})."""
    first, implicit, explicit = said
    plants = [Plant(c.pick(first).format(v=values[0]), topic)]
    for i in range(1, len(values)):
        quiet = implicit_last if i == len(values) - 1 else c.rng.random() < 0.5
        template = c.pick(implicit if quiet else explicit)
        plants.append(Plant(template.format(v=values[i], old=values[i - 1]), topic))
    return Item(
        "updated",
        question,
        values[-1],
        [plants[-1]],
        near=plants[:-1],
        decoys=values[:-1],
        ordered=True,
        support=[values[-1]],
        keywords=keywords,
        implicit=implicit_last,
    )


def _photographer(c: Ctx, quiet: bool) -> Item:
    said = (
        [
            "We're meeting the wedding photographer at {v} on Thursday.",
            "The wedding photographer wants to meet us at {v} to go through the shot list.",
        ],
        [
            "See you at {v} for the photographer meeting; I've let her know.",
            "Thursday, {v}, wedding photographer: that's the plan.",
        ],
        [
            "Change of plan for the photographer: we're meeting at {v} instead of {old}.",
            "The photographer asked to switch from {old} to {v}.",
        ],
    )
    return _changing(
        c,
        quiet,
        "family",
        c.fresh_many(CAFES, _versions(c)),
        said,
        "Where are we meeting the wedding photographer?",
        ["photographer"],
    )


def _lunch(c: Ctx, quiet: bool) -> Item:
    said = (
        ["Sunday lunch is for {v} people, so I'll get a big joint of beef."],
        ["Sunday lunch: {v} of us, I've counted twice.", "I'm laying {v} places for Sunday lunch."],
        ["Update on Sunday lunch: it's {v} people now, not {old}."],
    )
    values = c.distinct(lambda: str(c.rng.randrange(5, 19)), _versions(c))
    return _changing(
        c,
        quiet,
        "food",
        values,
        said,
        "How many people are coming for Sunday lunch?",
        ["sunday", "lunch"],
    )


def _cat(c: Ctx, quiet: bool) -> Item:
    said = (
        [
            "{v} is going to feed the cat while we're away.",
            "{v} kindly offered to look after the cat while we're away.",
        ],
        [
            "{v} has the spare key and will pop in to feed the cat while we're away.",
            "Dropped the cat food round at {v}'s, so the cat is sorted while we're away.",
        ],
        ["{old} can't do it any more, so {v} will feed the cat instead."],
    )
    values = [c.first() for _ in range(_versions(c))]
    return _changing(
        c, quiet, "home", values, said, "Who's feeding the cat while we're away?", ["cat"]
    )


def _pickup(c: Ctx, quiet: bool) -> Item:
    said = (
        ["Pickup from holiday club is at {v}."],
        [
            "Holiday club finishes at {v}, so I'll leave work early.",
            "I'll be at the holiday club gate at {v} as usual.",
        ],
        ["Holiday club changed the pickup time from {old} to {v}."],
    )
    values = [c.clock(14, 19) for _ in range(_versions(c))]
    return _changing(
        c,
        quiet,
        "family",
        values,
        said,
        "What time do we collect the kids from holiday club?",
        ["holiday", "club"],
    )


def _offsite(c: Ctx, quiet: bool) -> Item:
    said = (
        ["The team offsite will be in {v} this year."],
        [
            "Booked the coach for the team offsite in {v}.",
            "Hotel rooms for the team offsite in {v} are sorted.",
        ],
        ["The team offsite has moved to {v} after the vote; {old} was too expensive."],
    )
    values = [c.town() for _ in range(_versions(c))]
    return _changing(
        c, quiet, "work", values, said, "Where is the team offsite being held?", ["offsite"]
    )


def _codename(c: Ctx, quiet: bool) -> Item:
    said = (
        ["The new app goes by the codename {v} internally."],
        [
            "Slides for the new app are in the {v} folder, since that's its codename.",
            "Everyone calls the new app {v} internally; it's on the roadmap under that codename.",
        ],
        ["Legal vetoed {old}, so the new app's codename is {v} now."],
    )
    return _changing(
        c,
        quiet,
        "work",
        c.fresh_many(CODENAMES, _versions(c)),
        said,
        "What is the new app's internal codename?",
        ["codename"],
    )


def _mortgage(c: Ctx, quiet: bool) -> Item:
    said = (
        ["The broker found us a fixed mortgage rate of {v}."],
        [
            "The mortgage offer letter arrived: {v} fixed for five years.",
            "Signed the mortgage paperwork at {v} fixed.",
        ],
        ["Rates moved, so the broker's mortgage quote went from {old} to {v}."],
    )
    values = c.distinct(lambda: f"{c.rng.randrange(3, 6)}.{c.rng.randrange(10, 99)}%", _versions(c))
    return _changing(
        c, quiet, "money", values, said, "What mortgage rate are we getting?", ["mortgage"]
    )


def _mileage(c: Ctx, quiet: bool) -> Item:
    said = (
        ["My coach has me running {v} a week at the moment."],
        [
            "This training block is {v} a week of running, says the coach.",
            "The coach's plan for me: {v} of running every week.",
        ],
        ["The coach bumped my weekly running target from {old} to {v}."],
    )
    values = c.distinct(lambda: f"{c.rng.randrange(15, 70, 5)} km", _versions(c))
    return _changing(
        c, quiet, "hobbies", values, said, "How far am I supposed to run each week?", ["run"]
    )


def _spin(c: Ctx, quiet: bool) -> Item:
    said = (
        ["My spin class is on {v} evenings."],
        [
            "Spin is {v} evenings these days, so I can't do dinner that night.",
            "{v} evening is spin, so count me out for the pub.",
        ],
        ["The gym moved spin class from {old} to {v} evenings."],
    )
    values = c.distinct(lambda: c.pick(WEEKDAYS[:5]), _versions(c))
    return _changing(c, quiet, "health", values, said, "Which evening is my spin class?", ["spin"])


def _christmas(c: Ctx, quiet: bool) -> Item:
    said = (
        ["{v} is hosting Christmas this year."],
        [
            "We're all going to {v}'s for Christmas; {v} is doing the turkey.",
            "Christmas at {v}'s this year, which means a very long table.",
        ],
        ["Scratch that, {old} can't host, so Christmas is at {v}'s now."],
    )
    values = [c.first() for _ in range(_versions(c))]
    return _changing(
        c, quiet, "family", values, said, "Who's hosting Christmas this year?", ["christmas"]
    )


def _hire_car(c: Ctx, quiet: bool) -> Item:
    said = (
        ["We collect the hire car from {v}."],
        [
            "The hire car will be waiting for us at {v}.",
            "Keys for the hire car are at {v}, ready when we land.",
        ],
        ["The rental company changed our hire car pickup from {old} to {v}."],
    )
    return _changing(
        c,
        quiet,
        "travel",
        c.fresh_many(PICKUPS, _versions(c)),
        said,
        "Where do we pick up the hire car?",
        ["hire", "car"],
    )


UPDATED_FRAMES: list[UpdateFrame] = [
    _photographer,
    _lunch,
    _cat,
    _pickup,
    _offsite,
    _codename,
    _mortgage,
    _mileage,
    _spin,
    _christmas,
    _hire_car,
]
