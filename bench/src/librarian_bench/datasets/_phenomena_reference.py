"""Phenomena about *which* thing is meant: paraphrase, indirect reference, distractors.

- ``paraphrase``: the question and the stating sentence share no content word;
  synonyms and a different register carry the meaning ("fiddle" for "violin").
- ``indirect``: the question names a person by role or by an earlier description; one
  message ties the name to the role, another states the fact about the name. Both are
  evidence; ``bridge`` is the name, which the question never contains.
- ``distractor``: other messages state the same attribute, in the same words, for other
  instances (another town's train, another person with the same first name); the right
  one is the evidence, the others are ``near`` with their values in ``decoys``.

The text lives in ``_phenomena_templates``; this module draws the values.
"""

from __future__ import annotations

from collections.abc import Callable

from librarian_bench.datasets._phenomena_model import (
    Ctx,
    FrameText,
    Item,
    Plant,
    parse_frames,
)
from librarian_bench.datasets._phenomena_templates import (
    DISTRACTOR,
    INDIRECT,
    PARAPHRASE,
    ROLES,
)
from librarian_bench.datasets._phenomena_text import BANKS

__all__ = ["DISTRACTOR_FRAMES", "INDIRECT_FRAMES", "PARAPHRASE_FRAMES"]

Frame = Callable[[Ctx], Item]
Draw = Callable[[Ctx], str]


def _race_time(c: Ctx) -> str:
    return f"1:{c.rng.randrange(38, 60):02d}:{c.rng.randrange(60):02d}"


def _passphrase(c: Ctx) -> str:
    return f"{c.pick(BANKS['words'])}-{c.pick(BANKS['words'])}-{c.rng.randrange(10, 99)}"


# The answer of each paraphrase frame.
_PARAPHRASE_VALUES: dict[str, Draw] = {
    "tutor": lambda c: f"{c.pick(['Mr', 'Ms'])} {c.surname()}",
    "pills": lambda c: f"{c.pick(['5', '10', '20', '40'])} milligrams",
    "puppy": lambda c: c.fresh(BANKS["pets"]),
    "rent": lambda c: c.money(900, 2400, 25),
    "race": _race_time,
    "gearbox": lambda c: c.money(300, 2200, 10),
    "router": _passphrase,
    "mum": lambda c: c.clock(),
    "refund": lambda c: c.money(200, 3000, 5),
    "book_circle": lambda c: c.fresh(BANKS["titles"]),
    "listing": lambda c: c.money(240_000, 780_000, 5_000),
    "boiler": lambda c: f"{c.first()} {c.surname()}",
    "cholesterol": lambda c: f"{c.rng.randrange(4, 8)}.{c.rng.randrange(10)}",
    "sitter": lambda c: c.money(8, 20),
    "expenses": lambda c: c.money(80, 1500),
    "ferry": lambda c: f"{c.rng.randrange(35, 145, 5)} minutes",
    "starter": lambda c: f"{c.pick(['80', '100', '120', '150'])} grams",
}


def _paraphrase(text: FrameText) -> Frame:
    def build(c: Ctx) -> Item:
        value = _PARAPHRASE_VALUES[text.name](c)
        statement = Plant(text.say(c, "S", v=value), text.fields[0])
        return Item("paraphrase", text.say(c, "Q"), value, [statement], support=[value])

    return build


PARAPHRASE_FRAMES: list[Frame] = [_paraphrase(t) for t in parse_frames(PARAPHRASE).values()]

_ROLES = parse_frames(ROLES)
# The fact each indirect frame states about the person.
_INDIRECT_VALUES: dict[str, Draw] = {
    "moved": lambda c: c.town(),
    "restaurant": lambda c: c.fresh(BANKS["restaurants"]),
    "daughter": lambda c: c.first(),
    "car": lambda c: c.fresh(BANKS["cars"]),
    "builder": lambda c: f"{c.first()} {c.surname()}",
    "instrument": lambda c: c.fresh(BANKS["instruments"]),
    "lent_book": lambda c: c.fresh(BANKS["titles"]),
    "fortnight": lambda c: c.town(),
}


def _indirect(text: FrameText) -> Frame:
    def build(c: Ctx) -> Item:
        # fresh(): one person per role in a conversation, so "my manager" means one name.
        role = _ROLES[c.fresh(list(_ROLES))]
        possessive, role_topic = role.fields
        name, value = c.first(), _INDIRECT_VALUES[text.name](c)
        month = c.pick(["June", "July", "August", "September"])
        link = Plant(role.say(c, "L", name=name), role_topic)
        fact = Plant(text.say(c, "F", name=name, v=value, month=month), text.fields[0])
        question = text.say(c, "Q", role=role.name, poss=possessive)
        question = question[0].upper() + question[1:]
        return Item("indirect", question, value, [link, fact], support=[value], bridge=name)

    return build


INDIRECT_FRAMES: list[Frame] = [_indirect(t) for t in parse_frames(INDIRECT).values()]


def _metres(c: Ctx) -> str:
    return f"{c.rng.randrange(2, 6)}.{c.rng.randrange(10)}"


def _people(c: Ctx, k: int) -> list[str]:
    """Same first name, same surname, then strangers: the words match, the person does not."""
    first, surname = c.first(), c.surname()
    people = [f"{first} {surname}", f"{first} {c.surname()}", f"{c.first()} {surname}"]
    return [*people, f"{c.first()} {c.surname()}"][:k]


# (instances, one value) of each distractor frame; the first instance is asked about.
_DISTRACTOR_VALUES: dict[str, tuple[Callable[[Ctx, int], list[str]], Draw]] = {
    "trains": (
        lambda c, k: [c.town() for _ in range(k)],
        lambda c: f"platform {c.rng.randrange(1, 15)}",
    ),
    "insurance": (lambda c, k: c.fresh_many(BANKS["insurance"], k), lambda c: c.money(90, 900)),
    "rooms": (
        lambda c, k: c.fresh_many(BANKS["rooms"], k),
        lambda c: f"{_metres(c)} by {_metres(c)} metres",
    ),
    "extensions": (_people, lambda c: str(c.rng.randrange(2000, 9999))),
    "tickets": (
        lambda c, k: c.fresh_many(BANKS["features"], k),
        lambda c: f"OPS-{c.rng.randrange(100, 999)}",
    ),
    "shoes": (
        lambda c, k: [c.first() for _ in range(k)],
        lambda c: f"size {c.rng.randrange(9, 14)}",
    ),
    "seats": (
        lambda c, k: [c.first() for _ in range(k)],
        lambda c: f"row {c.pick('ABCDEFGH')}, seat {c.rng.randrange(1, 30)}",
    ),
    "boosters": (lambda c, k: c.fresh_many(BANKS["pets"], k), lambda c: c.render(c.date(), 1)),
    "cards": (
        lambda c, k: c.fresh_many(BANKS["accounts"], k),
        lambda c: str(c.rng.randrange(1000, 9999)),
    ),
    "tables": (lambda c, k: c.fresh_many(BANKS["nights"], k), lambda c: c.clock(18, 22)),
    "door_codes": (
        lambda c, k: [c.first() for _ in range(k)],
        lambda c: str(c.rng.randrange(1000, 9999)),
    ),
}


def _distractor(text: FrameText) -> Frame:
    def build(c: Ctx) -> Item:
        k = 4 if c.rng.random() < 0.4 else 3  # the right instance and two or three others
        instances_of, value_of = _DISTRACTOR_VALUES[text.name]
        instances, values = instances_of(c, k), c.distinct(lambda: value_of(c), k)
        topic, keywords = text.fields[0], [w.strip() for w in text.fields[1].split(",")]
        plants = [
            Plant(text.say(c, "S", inst=inst, v=value), topic, "any")
            for inst, value in zip(instances, values, strict=True)
        ]
        return Item(
            "distractor",
            text.say(c, "Q", inst=instances[0]),
            values[0],
            plants[:1],
            near=plants[1:],
            decoys=values[1:],
            support=values[:1],
            keywords=keywords,
        )

    return build


DISTRACTOR_FRAMES: list[Frame] = [_distractor(t) for t in parse_frames(DISTRACTOR).values()]
