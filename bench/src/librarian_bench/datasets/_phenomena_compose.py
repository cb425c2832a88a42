# ruff: noqa: E501
# (tool-result templates are single lines of sample data)
"""Turn planted statements into messages: chatter around them, and tool exchanges.

A prose message is filler from its topic (mostly) and from elsewhere (asides, another
topic), with the planted statements at random places, cut into paragraphs; its word
count lands on a target and never passes the upper bound. A tool exchange is an
assistant tool call and a tool result in which a planted record sits among noise records.
"""

from __future__ import annotations

import datetime

from librarian_bench.datasets._phenomena_model import MONTHS, WEEKDAYS, Ctx, Plant
from librarian_bench.datasets._phenomena_text import (
    AI_CLOSERS,
    AI_GENERIC,
    AI_OPENERS,
    FIRST_NAMES,
    INCIDENTAL,
    TOPICS,
    TOWNS,
    USER_ASIDES,
    assistant_lines,
    user_lines,
)

__all__ = ["NOISE_ARGS", "NOISE_TOOLS", "REQUESTS", "prose", "tool_call_line", "tool_result"]

# What the user says to prompt each tool call (never the looked-up value).
REQUESTS = {
    "flight_status": "Could you check the latest status of our flight?",
    "track_order": "Can you see where that parcel has got to?",
    "search_email": "Can you dig that out of my email for me?",
    "calendar_search": "Could you look that up in my calendar?",
    "weather_forecast": "What's the forecast looking like for the weekend?",
}
NOISE_TOOLS = ["weather_forecast", "search_email"]
NOISE_ARGS = {"weather_forecast": {"days": "3"}, "search_email": {"query": "school"}}
AFTER_TOOL = [
    "Here's what came back; the details are in the result above.",
    "That's the lookup done, and everything it returned is above.",
    "Got the result back, see above for the specifics.",
]
_ASSISTANT_PREFIXES = ["Noted: ", "For the record: ", "Summary so far: ", "Got it: "]
_EMAIL_NOISE = [
    "Subject: Your order has shipped | We thought you'd like to know your parcel is on its way.",
    "Subject: Newsletter: spring events | Talks, walks and a plant sale this month.",
    "Subject: Re: Saturday | Sounds good, see you at the usual place.",
    "Subject: Reminder: school trip form | Please return the consent slip by Friday.",
    "Subject: Your statement is ready | Log in to view your latest statement.",
    "Subject: Photos from the weekend | Attached a few of the better ones.",
    "Subject: Meeting notes | Summary and actions from this morning's call.",
    "Subject: Subscription renewal | Your plan renews automatically next month.",
]
_CALENDAR_NOISE = [
    "Haircut",
    "Book group",
    "Recycling collection",
    "Piano lesson",
    "Call with the bank",
    "Dinner with friends",
    "Car wash",
    "Yoga",
]
_FLIGHT_NOISE = [
    "Aircraft: A320neo",
    "Check-in closes 45 minutes before departure",
    "Baggage: 1 x 23 kg hold bag, 1 cabin bag",
    "Seat map available in the app",
    "On-time performance, last 30 days: 87%",
    "Boarding starts 40 minutes before departure",
]
_PARCEL_NOISE = [
    "Label created by the sender",
    "Parcel received at the regional depot",
    "Sorted at the hub",
    "Handed to the local courier",
    "Address checked",
]
_WEATHER = [
    "sunny spells",
    "light rain",
    "overcast",
    "showers clearing later",
    "bright and breezy",
    "low cloud",
]


def _unused(c: Ctx, bank: list[str]) -> str:
    """Chatter never names a person or a town that a question is about, so a gold answer
    (or a bridge name) occurs only where the dataset says it does."""
    return c.pick([value for value in bank if not c.used(value)])


def _slots(c: Ctx) -> dict[str, str]:
    hour, minute = c.rng.randrange(7, 23), c.rng.randrange(0, 60, 5)
    return {
        "name": _unused(c, FIRST_NAMES),
        "town": _unused(c, TOWNS),
        "day": c.pick(WEEKDAYS),
        "n": str(c.rng.randrange(2, 13)),
        "month": c.pick(MONTHS),
        "money": f"{c.currency}{c.rng.randrange(4, 160)}",
        "clock": f"{(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'}",
        "age": str(c.rng.randrange(4, 12)),
        "km": str(c.rng.randrange(5, 30)),
        "mins": str(c.rng.randrange(15, 70)),
    }


def _pool(c: Ctx, topic: str, assistant: bool) -> list[str]:
    """Filler for one message: its topic first, then asides and a second topic."""
    others = c.rng.sample([t for t in TOPICS if t != topic], 3)
    if assistant:  # an assistant's topic banks are short: a long reply needs three more
        main = assistant_lines(topic) + AI_GENERIC
        rest = [line for t in others for line in assistant_lines(t)]
    else:
        # Incidental facts (a taxi fare, a train time) that no question asks about make
        # the chatter look like the planted statements, as real chatter does.
        main = user_lines(topic) + c.rng.sample(INCIDENTAL, 4)
        rest = USER_ASIDES + user_lines(others[0]) + c.rng.sample(INCIDENTAL, 2)
    c.rng.shuffle(main)
    c.rng.shuffle(rest)
    # Mostly on topic, with a digression now and then, as people write.
    mixed: list[str] = []
    while main or rest:
        source = main if main and (not rest or c.rng.random() < 0.8) else rest
        mixed.append(source.pop())
    return [line.format(**_slots(c)) for line in mixed]


def _words(text: str) -> int:
    return len(text.split())


def prose(
    c: Ctx,
    *,
    assistant: bool,
    topic: str,
    planted: list[str],
    target: int,
    limit: int,
    tail: str = "",
    after_tool: bool = False,
) -> tuple[str, list[str]]:
    """A message of about ``target`` words (at most ``limit``) holding ``planted``.

    Returns the text and the planted sentences as they appear in it (an assistant
    may preface a statement with "Noted:" and the like).
    """
    if assistant:
        planted = [c.pick(_ASSISTANT_PREFIXES) + p if c.rng.random() < 0.6 else p for p in planted]
        head = [c.pick(AFTER_TOOL if after_tool else AI_OPENERS)]
        end = [c.pick(AI_CLOSERS)]
    else:
        head, end = [], []
    tails = [tail] if tail else []
    # Bullet markers ("- ") count as words; keep room for one list of up to five.
    limit -= 5 if assistant else 0
    used = sum(_words(s) for s in [*head, *planted, *end, *tails])
    filler: list[str] = []
    for sentence in _pool(c, topic, assistant):
        if used >= target:
            break
        if used + _words(sentence) <= limit:
            filler.append(sentence)
            used += _words(sentence)
    body = list(filler)
    for sentence in planted:
        body.insert(c.rng.randrange(len(body) + 1), sentence)
    paragraphs: list[str] = []
    sentences = head + body
    listed = False  # at most one bulleted list, the one the word budget kept room for
    while sentences:
        take = c.rng.randrange(2, 6)
        chunk, sentences = sentences[:take], sentences[take:]
        bulleted = assistant and not listed and len(chunk) >= 3 and c.rng.random() < 0.25
        bulleted = bulleted and not set(chunk) & set(planted)
        listed = listed or bulleted
        paragraphs.append("\n".join(f"- {s}" for s in chunk) if bulleted else " ".join(chunk))
    closing = " ".join(end + tails)
    if closing:
        paragraphs.append(closing)
    return "\n\n".join(paragraphs), planted


def tool_call_line(c: Ctx) -> str:
    """The short text of an assistant message that calls a tool."""
    return c.pick(
        ["Let me look that up.", "Checking now.", "One moment, I'll pull that up.", "Let me check."]
    )


def _noise_date(c: Ctx) -> str:
    day = datetime.date(c.year, 3, 1) + datetime.timedelta(days=c.rng.randrange(270))
    return c.render(day, 0)


def _noise_records(c: Ctx, tool: str, count: int) -> list[str]:
    if tool == "search_email":
        return [
            f"From: {_unused(c, FIRST_NAMES).lower()}@mail.example | {c.pick(_EMAIL_NOISE)}"
            for _ in range(count)
        ]
    if tool == "calendar_search":
        return [
            f"{_noise_date(c)}, {c.rng.randrange(8, 20)}:{c.pick(['00', '15', '30', '45'])}: {c.pick(_CALENDAR_NOISE)}"
            for _ in range(count)
        ]
    if tool == "flight_status":
        return c.rng.sample(_FLIGHT_NOISE, min(count, len(_FLIGHT_NOISE)))
    if tool == "track_order":
        return [
            f"{c.pick(WEEKDAYS)}: {line}"
            for line in c.rng.sample(_PARCEL_NOISE, min(count, len(_PARCEL_NOISE)))
        ]
    town = _unused(c, TOWNS)
    return [
        f"{town}, {day}: {c.pick(_WEATHER)}, high {c.rng.randrange(8, 29)}°C"
        for day in WEEKDAYS[:count]
    ]


def tool_result(c: Ctx, tool: str, plant: Plant | None, short: bool) -> str:
    """The text of a tool result: a header and records, ``plant`` among them if given."""
    count = c.rng.randrange(1, 3) if short else c.rng.randrange(5, 10)
    records = _noise_records(c, tool, count)
    if plant is not None:
        # A flight or a parcel has one status line, first; a search lists hits in any order.
        at = 0 if tool in ("flight_status", "track_order") else c.rng.randrange(len(records) + 1)
        records.insert(at, plant.text)
    query = plant.args.get("query", "") if plant is not None else ""
    headers = {
        "search_email": f'{len(records)} messages match "{query or "school"}":',
        "calendar_search": f'{len(records)} events match "{query}":',
        "flight_status": "Flight status:",
        "track_order": "Tracking:",
        "weather_forecast": "Forecast:",
    }
    return "\n".join([headers[tool], *records])
