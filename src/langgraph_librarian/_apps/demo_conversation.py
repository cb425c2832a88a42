"""The conversation of ``librarian demo``: long, noisy, with facts that change.

A seeded generator over a small data file (``demo_conversation.json``). The user
states facts (a budget, a deadline, a venue, a booking reference...), changes some of
them later (once or twice), and mentions others in passing without a value (near
misses); decoys state the same kind of fact about another entity. The questions, with
the ids of the messages needed to answer them, are:

- ``single``: a fact never changed (its statement);
- ``changed``: the current value of a changed fact (the latest change; the older values
  are listed as ``superseded``);
- ``history``: what changed (the statement and every change);
- ``multi``: two facts at once (both messages).

The evaluation's datasets are a separate package (langgraph-librarian-bench); this one
only feeds the demo and the web UI's demo thread.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

__all__ = ["NOISE_LEVELS", "DemoConversation", "DemoQuestion", "generate_conversation"]

NOISE_LEVELS: dict[str, tuple[int, int, float]] = {
    # words per message (min, max), share of messages that are near-miss distractors
    "low": (150, 300, 0.15),
    "medium": (250, 600, 0.3),
    "high": (500, 1000, 0.45),
}
_MONTHS = "January February March April May June July August September October November December"
_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


@dataclass
class DemoQuestion:
    """A question asked at the end of the conversation, with its gold answer and the
    ids of the messages that must be in context to answer it."""

    id: str
    text: str
    answer: str
    evidence: list[str]
    category: str = "single"
    superseded: list[str] = field(default_factory=list)


@dataclass
class DemoConversation:
    id: str
    messages: list[BaseMessage]
    questions: list[DemoQuestion] = field(default_factory=list)


@cache
def _data() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("demo_conversation.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _value(rng: random.Random, kind: str | list[str], data: dict[str, Any]) -> str:
    if isinstance(kind, list):
        return rng.choice(kind)
    if kind == "money":
        return f"${rng.randrange(8, 95) * 500:,}"
    if kind == "date":
        return f"{rng.choice(_MONTHS.split())} {rng.randrange(1, 29)}"
    if kind == "count":
        return str(rng.randrange(12, 400))
    if kind == "port":
        return str(rng.randrange(2000, 9999))
    if kind == "person":
        return f"{rng.choice(data['names'])} {rng.choice(data['words'])}son"
    return f"{rng.choice(_LETTERS)}{rng.choice(_LETTERS)}{rng.randrange(1000, 9999)}"  # code


def _entity(rng: random.Random, kind: str, data: dict[str, Any], used: set[str]) -> str:
    while True:
        word, word2 = rng.sample(data["words"], 2)
        name: str = data["entities"][kind].format(
            word=word,
            word2=word2,
            lword=word.lower(),
            name=rng.choice(data["names"]),
            city=rng.choice(data["cities"]),
            event=rng.choice(data["event_kinds"]),
            service=rng.choice(data["service_kinds"]),
        )
        if name not in used:
            used.add(name)
            return name


@dataclass
class _Fact:
    template: dict[str, Any]
    entity: str
    values: list[str]  # the first value, then each change

    def text(self, key: str, step: int = 0) -> str:
        old = self.values[step - 1] if step else ""
        return str(self.template[key]).format(e=self.entity, v=self.values[step], o=old)

    def stated(self, step: int) -> str:
        return self.text("change", step) if step else self.text("say")


def _fact(rng: random.Random, data: dict[str, Any], used: set[str], changes: int) -> _Fact:
    template = rng.choice(data["facts"])
    entity = _entity(rng, template["entity"], data, used)
    values: list[str] = []
    while len(values) < 1 + changes:
        value = _value(rng, template["values"], data)
        if value not in values:
            values.append(value)
    return _Fact(template, entity, values)


def _filler(rng: random.Random, data: dict[str, Any], words: int) -> list[str]:
    sentences: list[str] = []
    while sum(len(s.split()) for s in sentences) < words:
        sentences.append(
            rng.choice(data["filler"]).format(
                name=rng.choice(data["names"]),
                city=rng.choice(data["cities"]),
                noun=rng.choice(data["words"]).lower(),
                num=rng.randrange(2, 40),
            )
        )
    return sentences


def _message(rng: random.Random, data: dict[str, Any], planted: list[str], words: int) -> str:
    body = _filler(rng, data, max(20, words - sum(len(p.split()) for p in planted)))
    for sentence in planted:
        body.insert(rng.randrange(len(body) + 1), sentence)
    paragraphs = [" ".join(body[i : i + 5]) for i in range(0, len(body), 5)]
    return "\n\n".join(paragraphs)


def generate_conversation(
    seed: int,
    *,
    n_messages: int = 240,
    noise: str = "medium",
    n_facts: int = 12,
    conv_id: str | None = None,
) -> DemoConversation:
    """A conversation of ``n_messages`` messages about ``n_facts`` facts, and its questions.

    Deterministic for a given ``seed`` and parameters.

    Raises:
        ValueError: For an unknown ``noise`` level or fewer than 20 messages.
    """
    if noise not in NOISE_LEVELS:
        raise ValueError(f"unknown noise level {noise!r}; choose from {sorted(NOISE_LEVELS)}")
    if n_messages < 20:
        raise ValueError("n_messages must be at least 20")
    data, rng = _data(), random.Random(seed)
    low, high, near_share = NOISE_LEVELS[noise]
    prefix = conv_id or str(seed)
    used: set[str] = set()
    changes = [0] * n_facts
    for i in rng.sample(range(n_facts), k=n_facts // 2):
        changes[i] = 2 if rng.random() < 0.3 else 1
    facts = [_fact(rng, data, used, n) for n in changes]
    decoys = [_fact(rng, data, used, 0) for _ in range(max(2, n_facts // 2))]

    # The user speaks on even turns: statements first, changes later, never in the last turn.
    user_turns = list(range(2, n_messages - 2, 2))
    plan: dict[int, list[str]] = {}
    where: dict[tuple[int, int], str] = {}
    for i, fact in enumerate(facts):
        for step, turn in enumerate(sorted(rng.sample(user_turns, 1 + changes[i]))):
            plan.setdefault(turn, []).append(fact.stated(step))
            where[(i, step)] = f"{prefix}-m{turn}"
    for decoy in decoys:
        plan.setdefault(rng.choice(user_turns), []).append(decoy.stated(0))
    for turn in range(2, n_messages - 2):
        if turn not in plan and rng.random() < near_share:
            fact = rng.choice(facts)
            plan[turn] = [rng.choice(fact.template["near"]).format(e=fact.entity)]

    messages: list[BaseMessage] = []
    for turn in range(n_messages):
        text = _message(rng, data, plan.get(turn, []), rng.randrange(low, high + 1))
        if turn % 2:
            messages.append(
                AIMessage(f"{rng.choice(data['openers'])} {text}", id=f"{prefix}-m{turn}")
            )
        else:
            messages.append(HumanMessage(text, id=f"{prefix}-m{turn}"))

    questions: list[DemoQuestion] = []
    for i, fact in enumerate(facts):
        last = changes[i]
        older = [where[(i, s)] for s in range(last)]
        category = "changed" if last else "single"
        current = [where[(i, last)]]
        ask = fact.text("ask")
        questions.append(
            DemoQuestion(f"{prefix}-q{i}", ask, fact.values[last], current, category, older)
        )
        if last and rng.random() < 0.6:
            answer = " -> ".join(fact.values)
            asked = fact.text("ask_change")
            questions.append(
                DemoQuestion(f"{prefix}-q{i}h", asked, answer, [*older, *current], "history")
            )
    for a in rng.sample(range(n_facts), k=min(n_facts - 1, max(1, n_facts // 3))):
        b = (a + 1) % n_facts
        first, second = facts[a].text("ask"), facts[b].text("ask")
        questions.append(
            DemoQuestion(
                f"{prefix}-q{a}m",
                f"{first[:-1]}, and also: {second[0].lower()}{second[1:]}",
                f"{facts[a].values[-1]}; {facts[b].values[-1]}",
                [where[(a, changes[a])], where[(b, changes[b])]],
                "multi",
            )
        )
    return DemoConversation(prefix, messages, questions)
