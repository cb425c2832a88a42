"""A seeded generator of long, noisy conversations with planted and later-changed facts.

Each conversation mixes many topics. Facts (a budget, a deadline, a venue, who leads
what...) are stated once, some are changed later (once or twice), and near-miss
messages share the fact's words without stating it: the same attribute for another
entity, or the entity and attribute discussed with no value. Messages are 150-1000
words depending on the noise level. Questions come with a gold answer and the ids of
the messages needed to answer:

- ``single``: a fact never changed (its statement);
- ``changed``: the current value of a changed fact (the latest change);
- ``history``: what changed (the statement and every change);
- ``multi``: two facts at once (both messages).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from librarian_bench.datasets._files import data_json
from librarian_bench.datasets.base import Conversation, Question

__all__ = ["NOISE_LEVELS", "generate_conversation", "generate_dataset"]

NOISE_LEVELS: dict[str, tuple[int, int, float]] = {
    # words per message (min, max), share of messages that are near-miss distractors
    "low": (150, 300, 0.15),
    "medium": (250, 600, 0.3),
    "high": (500, 1000, 0.45),
}

_DATA = data_json("synthetic.json")

FIRST: list[str] = _DATA["first"]
ADJ: list[str] = _DATA["adj"]
NOUN: list[str] = _DATA["noun"]
CITIES: list[str] = _DATA["cities"]
VENUES: list[str] = _DATA["venues"]
MONTHS: list[str] = _DATA["months"]
DBS: list[str] = _DATA["dbs"]
FOODS: list[str] = _DATA["foods"]
VENDORS: list[str] = _DATA["vendors"]
COLORS: list[str] = _DATA["colors"]
WEEKDAYS: list[str] = _DATA["weekdays"]
FILLER: list[str] = _DATA["filler"]
AI_OPENERS: list[str] = _DATA["ai_openers"]


@dataclass
class _Fact:
    kind: str
    entity: str
    values: list[str]
    say: Callable[[str], str]
    change: Callable[[str, str], str]
    ask: str
    ask_change: str
    near_miss: list[str]
    words: list[str] = field(default_factory=list)


def _money(rng: random.Random) -> str:
    return f"${rng.randrange(8, 95) * 500:,}"


def _date(rng: random.Random) -> str:
    return f"{MONTHS[rng.randrange(12)]} {rng.randrange(1, 29)}"


def _distinct(rng: random.Random, make: Callable[[random.Random], str], n: int) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        value = make(rng)
        if value not in out:
            out.append(value)
    return out


def _project(rng: random.Random) -> str:
    return f"Project {rng.choice(ADJ)} {rng.choice(NOUN)}"


def _fact(kind: str, rng: random.Random, entity: str) -> _Fact:
    if kind == "budget":
        return _Fact(
            kind,
            entity,
            _distinct(rng, _money, 3),
            lambda v: f"The budget for {entity} is {v}, and finance signed it off this morning.",
            lambda o, n: (
                f"Update on {entity}: the budget is no longer {o}; it changed to {n} after the review."
            ),
            f"What is the budget for {entity}?",
            f"How did the budget for {entity} change?",
            [
                f"We still need to sanity-check the budget spreadsheet for {entity} before anyone quotes numbers.",
                f"{entity} came up again: people keep asking about its budget, but nobody had the sheet open.",
            ],
        )
    if kind == "deadline":
        return _Fact(
            kind,
            entity,
            _distinct(rng, _date, 3),
            lambda v: f"We agreed that the launch deadline for {entity} is {v}.",
            lambda o, n: (
                f"Heads up: the {entity} deadline moved from {o} to {n}, so plan around the new date."
            ),
            f"When is the launch deadline for {entity}?",
            f"How did the deadline for {entity} change?",
            [
                f"The deadline for {entity} is the thing everyone is nervous about, even without a date in front of them.",
                f"Can we talk about the {entity} deadline at some point? I have concerns about the scope.",
            ],
        )
    if kind == "venue":

        def venue(r: random.Random) -> str:
            return f"{r.choice(VENUES)} in {r.choice(CITIES)}"

        return _Fact(
            kind,
            entity,
            _distinct(rng, venue, 3),
            lambda v: f"The venue for {entity} will be {v}; the booking is confirmed.",
            lambda o, n: f"Change of plans for {entity}: instead of {o}, the venue is now {n}.",
            f"Where is {entity} taking place?",
            f"How did the venue for {entity} change?",
            [
                f"I looked at photos of possible venues for {entity}, but nothing is decided.",
                f"The venue question for {entity} keeps getting postponed because of other priorities.",
            ],
        )
    if kind == "headcount":
        return _Fact(
            kind,
            entity,
            [str(v) for v in rng.sample(range(12, 400), 3)],
            lambda v: f"We are planning for {v} attendees at {entity}.",
            lambda o, n: f"Correction for {entity}: the attendee count is {n} now, not {o}.",
            f"How many attendees are expected at {entity}?",
            f"How did the attendee count for {entity} change?",
            [
                f"Registrations for {entity} are trickling in; the attendee numbers are hard to predict.",
                f"I asked about catering per attendee for {entity}, but the headcount was not in the email.",
            ],
        )
    if kind == "lead":

        def person(r: random.Random) -> str:
            return f"{r.choice(FIRST)} {r.choice(NOUN)}son"

        return _Fact(
            kind,
            entity,
            _distinct(rng, person, 3),
            lambda v: f"{v} will lead {entity} from now on and owns all decisions there.",
            lambda o, n: f"Leadership update: {o} handed {entity} over, so {n} leads it now.",
            f"Who leads {entity}?",
            f"How did the leadership of {entity} change?",
            [
                f"There was a debate about who should lead {entity}, and it went on for a while.",
                f"Whoever ends up leading {entity} will need more support than we gave last time.",
            ],
        )
    if kind == "database":
        return _Fact(
            kind,
            entity,
            rng.sample(DBS, 3),
            lambda v: f"For {entity} we decided to store everything in {v}.",
            lambda o, n: f"We switched the {entity} database from {o} to {n} after the load test.",
            f"Which database does {entity} use?",
            f"How did the database choice for {entity} change?",
            [
                f"The database discussion for {entity} is getting philosophical; benchmarks would help.",
                f"I drew a diagram of the {entity} storage layer, but the database box is still blank.",
            ],
        )
    if kind == "allergy":
        return _Fact(
            kind,
            entity,
            rng.sample(FOODS, 3),
            lambda v: f"Important for meals: {entity} is allergic to {v}, so keep it off the menu.",
            lambda o, n: (
                f"Actually the doctor clarified that {entity} is allergic to {n}, not {o}."
            ),
            f"What is {entity} allergic to?",
            f"How did what we know about {entity}'s allergy change?",
            [
                f"We should ask {entity} about food allergies before ordering anything for the trip.",
                f"The menu for the dinner with {entity} is not final; the allergy list needs checking.",
            ],
        )
    if kind == "booking":

        def code(r: random.Random) -> str:
            return f"{r.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{r.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{r.randrange(1000, 9999)}"

        return _Fact(
            kind,
            entity,
            _distinct(rng, code, 3),
            lambda v: f"The booking reference for {entity} is {v}; keep it handy at check-in.",
            lambda o, n: (
                f"The airline rebooked {entity}: the old reference {o} is cancelled and the new one is {n}."
            ),
            f"What is the booking reference for {entity}?",
            f"How did the booking reference for {entity} change?",
            [
                f"I could not find the booking confirmation for {entity} in my email, which is worrying.",
                f"Someone should double-check the booking for {entity} before the weekend.",
            ],
        )
    if kind == "port":
        return _Fact(
            kind,
            entity,
            [str(v) for v in rng.sample(range(2000, 9999), 3)],
            lambda v: f"The {entity} listens on port {v} in staging.",
            lambda o, n: f"We moved the {entity} from port {o} to port {n} because of a conflict.",
            f"Which port does the {entity} use?",
            f"How did the port of the {entity} change?",
            [
                f"The {entity} port configuration lives in three different files, which is a mess.",
                f"A firewall rule blocked the {entity} yesterday; nobody remembered which port it needs.",
            ],
        )
    if kind == "meeting":

        def slot(r: random.Random) -> str:
            return f"{r.choice(WEEKDAYS)} at {r.randrange(8, 17)}:{r.choice(['00', '30'])}"

        return _Fact(
            kind,
            entity,
            _distinct(rng, slot, 3),
            lambda v: f"The {entity} will happen every {v} starting next week.",
            lambda o, n: f"Calendar update: the {entity} is rescheduled from {o} to {n}.",
            f"When is the {entity}?",
            f"How did the time of the {entity} change?",
            [
                f"Half the team thinks the {entity} is a waste of time; the other half loves it.",
                f"I keep forgetting when the {entity} is, so I will put a reminder somewhere.",
            ],
        )
    if kind == "vendor":
        return _Fact(
            kind,
            entity,
            rng.sample(VENDORS, 3),
            lambda v: f"We signed with {v} as the supplier for {entity}.",
            lambda o, n: f"We dropped {o} as supplier for {entity}; {n} replaces them.",
            f"Who is the supplier for {entity}?",
            f"How did the supplier for {entity} change?",
            [
                f"Three suppliers pitched for {entity} and the quotes were surprisingly close.",
                f"Supplier contracts for {entity} need legal review before anything is signed.",
            ],
        )
    # color
    return _Fact(
        kind,
        entity,
        rng.sample(COLORS, 3),
        lambda v: f"The theme colour for {entity} is {v}; the designers already have it.",
        lambda o, n: (
            f"The designers revised the {entity} palette: {n} replaces {o} as the theme colour."
        ),
        f"What is the theme colour for {entity}?",
        f"How did the theme colour for {entity} change?",
        [
            f"People have strong opinions about colours for {entity}; I stayed out of it.",
            f"The mood board for {entity} has too many colours to choose from.",
        ],
    )


KINDS = [
    "budget",
    "deadline",
    "venue",
    "headcount",
    "lead",
    "database",
    "allergy",
    "booking",
    "port",
    "meeting",
    "vendor",
    "color",
]


def _entity(kind: str, rng: random.Random, used: set[str]) -> str:
    while True:
        if kind in {"budget", "deadline", "lead", "database", "color"}:
            name = _project(rng)
        elif kind in {"venue", "headcount", "vendor"}:
            name = rng.choice(
                [
                    f"the {rng.choice(CITIES)} offsite",
                    f"{rng.choice(FIRST)}'s wedding reception",
                    f"the {rng.choice(ADJ).lower()} hackathon",
                    f"the {rng.choice(CITIES)} summit",
                ]
            )
        elif kind in {"allergy", "booking"}:
            name = f"{rng.choice(FIRST)} {rng.choice(NOUN)}"
        elif kind == "port":
            name = f"{rng.choice(NOUN).lower()}-{rng.choice(['api', 'gateway', 'worker', 'search'])} service"
        else:
            name = f"{rng.choice(['design', 'planning', 'ops', 'sales', 'research'])} sync with {rng.choice(FIRST)}"
        if name not in used:
            used.add(name)
            return name


def _filler(rng: random.Random, words: int) -> list[str]:
    sentences: list[str] = []
    count = 0
    while count < words:
        template = rng.choice(FILLER)
        sentence = template.format(
            name=rng.choice(FIRST),
            city=rng.choice(CITIES),
            noun=rng.choice(NOUN).lower(),
            adj=rng.choice(ADJ),
            num=rng.randrange(2, 40),
        )
        sentences.append(sentence)
        count += len(sentence.split())
    return sentences


def _compose(rng: random.Random, planted: list[str], words: int, ai: bool) -> str:
    body = _filler(rng, max(20, words - sum(len(p.split()) for p in planted)))
    for sentence in planted:
        body.insert(rng.randrange(0, len(body) + 1), sentence)
    if ai:
        body.insert(0, rng.choice(AI_OPENERS))
    paragraphs: list[str] = []
    while body:
        take = rng.randrange(3, 7)
        paragraphs.append(" ".join(body[:take]))
        body = body[take:]
    return "\n\n".join(paragraphs)


def generate_conversation(
    seed: int,
    *,
    n_messages: int = 120,
    noise: str = "medium",
    n_facts: int = 10,
    conv_id: str | None = None,
) -> Conversation:
    """One conversation of ``n_messages`` messages with about ``n_facts`` asked-about facts.

    Deterministic for a given ``seed`` and parameters.
    """
    if noise not in NOISE_LEVELS:
        raise ValueError(f"unknown noise level {noise!r}; choose from {sorted(NOISE_LEVELS)}")
    if n_messages < 20:
        raise ValueError("n_messages must be at least 20")
    rng = random.Random(seed)
    low, high, distractor_share = NOISE_LEVELS[noise]
    used: set[str] = set()
    facts = [
        _fact(kind, rng, _entity(kind, rng, used))
        for kind in (rng.choice(KINDS) for _ in range(n_facts))
    ]
    # Same-attribute decoys: facts about other entities that are stated but never asked.
    decoys = [_fact(f.kind, rng, _entity(f.kind, rng, used)) for f in facts[: max(2, n_facts // 2)]]
    n_changes = [0] * len(facts)
    for i in rng.sample(range(len(facts)), k=len(facts) // 2):
        n_changes[i] = 2 if rng.random() < 0.3 else 1

    # Schedule: slot -> planted sentences; statements early, changes later.
    usable = list(range(2, n_messages - 2))
    plan: dict[int, list[tuple[str, int, int]]] = {}  # slot -> (kind, fact index, step)
    for i in range(len(facts)):
        steps = 1 + n_changes[i]
        cut = sorted(rng.sample(usable, steps))
        for step, slot in enumerate(cut):
            plan.setdefault(slot, []).append(("fact", i, step))
    for j in range(len(decoys)):
        plan.setdefault(rng.choice(usable), []).append(("decoy", j, 0))
    for slot in usable:
        if slot not in plan and rng.random() < distractor_share:
            plan[slot] = [("near", rng.randrange(len(facts)), 0)]

    messages: list[BaseMessage] = []
    where: dict[tuple[int, int], str] = {}
    for slot in range(n_messages):
        ai = slot % 2 == 1
        planted: list[str] = []
        for what, index, step in plan.get(slot, []):
            if what == "fact":
                fact = facts[index]
                planted.append(
                    fact.say(fact.values[0])
                    if step == 0
                    else fact.change(fact.values[step - 1], fact.values[step])
                )
                where[(index, step)] = f"{conv_id or seed}-m{slot}"
            elif what == "decoy":
                planted.append(decoys[index].say(decoys[index].values[0]))
            else:
                planted.append(rng.choice(facts[index].near_miss))
        # Facts are stated by the user; the assistant never restates them.
        if planted and ai:
            planted = [
                p
                for p in planted
                if not any(p == facts[i].say(facts[i].values[0]) for i in range(len(facts)))
            ]
        text = _compose(rng, planted, rng.randrange(low, high + 1), ai)
        cls = AIMessage if ai else HumanMessage
        messages.append(cls(content=text, id=f"{conv_id or seed}-m{slot}"))
    # Re-home facts that landed on assistant turns onto the previous user message.
    messages, where = _move_facts_to_user(messages, facts, where, plan)

    questions: list[Question] = []
    prefix = conv_id or str(seed)
    for i, fact in enumerate(facts):
        last = n_changes[i]
        current_id = where[(i, last)]
        category = "changed" if last else "single"
        older = [where[(i, s)] for s in range(last)]
        questions.append(
            Question(f"{prefix}-q{i}", fact.ask, fact.values[last], [current_id], category, older)
        )
        if last and rng.random() < 0.6:
            chain = [where[(i, s)] for s in range(last + 1)]
            answer = " -> ".join(fact.values[: last + 1])
            questions.append(Question(f"{prefix}-q{i}h", fact.ask_change, answer, chain, "history"))
    pairs = rng.sample(range(len(facts)), k=min(len(facts) - 1, max(1, len(facts) // 3)))
    for a in pairs:
        b = (a + 1) % len(facts)
        fa, fb = facts[a], facts[b]
        text = f"{fa.ask[:-1]}, and also: {fb.ask[0].lower()}{fb.ask[1:]}"
        answer = f"{fa.values[n_changes[a]]}; {fb.values[n_changes[b]]}"
        evidence = [where[(a, n_changes[a])], where[(b, n_changes[b])]]
        questions.append(Question(f"{prefix}-q{a}m", text, answer, evidence, "multi"))
    return Conversation(id=prefix, messages=messages, questions=questions)


def _move_facts_to_user(
    messages: list[BaseMessage],
    facts: list[_Fact],
    where: dict[tuple[int, int], str],
    plan: dict[int, list[tuple[str, int, int]]],
) -> tuple[list[BaseMessage], dict[tuple[int, int], str]]:
    """Statements were filtered from assistant turns; put them into the preceding user turn."""
    for slot, items in plan.items():
        if slot % 2 == 0:
            continue
        for what, index, step in items:
            if what != "fact" or step != 0:
                continue
            fact = facts[index]
            sentence = fact.say(fact.values[0])
            target = messages[slot - 1]
            target.content = f"{target.content}\n\n{sentence}"
            where[(index, 0)] = str(target.id)
    return messages, where


def generate_dataset(
    seed: int = 7,
    *,
    noise_levels: tuple[str, ...] = ("low", "medium", "high"),
    conversations_per_level: int = 3,
    n_messages: int = 120,
    n_facts: int = 10,
) -> list[Conversation]:
    """Conversations for every noise level (default: 3 x 120 messages, >= 45 questions per level)."""
    dataset: list[Conversation] = []
    for level_index, noise in enumerate(noise_levels):
        for k in range(conversations_per_level):
            conv_seed = seed * 1000 + level_index * 100 + k
            dataset.append(
                generate_conversation(
                    conv_seed,
                    n_messages=n_messages,
                    noise=noise,
                    n_facts=n_facts,
                    conv_id=f"{noise}-{k}",
                )
            )
    return dataset
