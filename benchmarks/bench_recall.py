"""Scoped recall on LoCoMo: every session a separate thread, every question from a new one.

Run:
    python benchmarks/bench_recall.py --data ../shared/data/locomo/locomo10.json
        [--max-bytes 8000] [--budget 2000] [--no-embeddings] [--json bench-out/recall.json]
        [--conversations 0-4] [--misses]
    python benchmarks/bench_recall.py --fresh [-v]

For each conversation, each session is captured as its own thread of one scope (the
conversation), through ``ScopeMemory.capture``. Each question is then asked from a
fresh thread: the only thing the model would get is the recalled block
(``ScopeMemory.recall``, ``--max-bytes`` UTF-8 bytes, about ``--budget`` tokens). The
reference is the same conversation asked within one thread: the Librarian's in-thread
selection with ``context_token_budget=--budget`` (what ``librarian bench`` runs).

Evidence recall is the share of a question's gold evidence turns present in the
context. Conversations 0-4 and 5-9 are reported separately (nothing was tuned on
either). LoCoMo is CC BY-NC 4.0: read from its path, never bundled.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.embeddings import default_embeddings
from langgraph_librarian.recall import ScopeMemory
from langgraph_librarian.tokens import count_text_tokens
from librarian_bench.datasets.base import Conversation
from librarian_bench.datasets.locomo import load_locomo
from librarian_bench.metrics import evidence_recall
from librarian_bench.strategies import Librarian, question_message

_SESSION = re.compile(r":D(\d+):")
_UNRELATED_PER_CONVERSATION = 40


def sessions(messages: Sequence[BaseMessage]) -> dict[int, list[BaseMessage]]:
    """LoCoMo turns grouped by session number (from their ``...:D<session>:<turn>`` ids)."""
    grouped: dict[int, list[BaseMessage]] = defaultdict(list)
    for message in messages:
        match = _SESSION.search(str(message.id))
        grouped[int(match.group(1)) if match else 0].append(message)
    return dict(sorted(grouped.items()))


_WIDE_BYTES = 32_768
"""The wide recall bound (at least twice ``--max-bytes``): evidence found within it but
not within ``--max-bytes`` was ranked, and cut by the bound; evidence not found within it
was not ranked at all."""


def run_conversation(
    conv: Conversation, *, budget: int, max_bytes: int, embeddings: Any, misses: bool = False
) -> list[dict[str, Any]]:
    """One row per question: recall across threads vs the Librarian within one thread.

    With ``misses``, each row also says where its missing evidence went: past the byte
    bound (recalled within 32 KB), never ranked, or the recall was empty (the floor).
    """
    in_thread = Librarian(budget, embeddings=embeddings)
    in_thread.prepare(conv.messages)
    index = [e.to_dict() for e in in_thread.entries]
    memory = ScopeMemory(
        InMemoryStore(), config=LibrarianConfig(embeddings=embeddings), max_bytes=max_bytes
    )
    start = time.perf_counter()
    for number, turns in sessions(conv.messages).items():
        # The thread's Librarian index is reused: capture copies its summaries/vectors.
        memory.capture(conv.id, turns, thread_id=f"session-{number}", index=index)
    capture_s = time.perf_counter() - start
    unrelated = [
        memory.recall(conv.id, text).status == "empty"
        for text in unrelated_questions(_UNRELATED_PER_CONVERSATION, seed=len(conv.messages))
    ]
    rows = []
    for question in conv.questions:
        start = time.perf_counter()
        recalled = memory.recall(conv.id, question.text)
        recall_ms = (time.perf_counter() - start) * 1000
        present = {r.message_id for r in recalled.records}
        hits = sum(1 for e in question.evidence if e in present) / len(question.evidence)
        missing = [e for e in question.evidence if e not in present]
        where = {"bound": 0.0, "unranked": 0.0, "empty": 0.0}
        if misses and missing:
            if recalled.status != "recalled":
                where["empty"] = len(missing) / len(question.evidence)
            else:
                wide = memory.recall(
                    conv.id, question.text, max_bytes=max(_WIDE_BYTES, 2 * max_bytes)
                )
                found = {r.message_id for r in wide.records}
                bound = sum(1 for e in missing if e in found)
                where["bound"] = bound / len(question.evidence)
                where["unranked"] = (len(missing) - bound) / len(question.evidence)
        history = [*conv.messages, question_message(question.id, question.text)]
        baseline = in_thread.context(history, question.text)
        base_recall = evidence_recall(question.evidence, baseline.messages)
        rows.append(
            {
                "conversation": conv.id,
                "category": question.category,
                "recall": hits,
                "recall_tokens": count_text_tokens(recalled.text),
                "recall_bytes": len(recalled.text.encode("utf-8")),
                "recall_ms": recall_ms,
                "thread_recall": base_recall,
                "thread_tokens": baseline.context_tokens,
                "thread_ms": baseline.latency_ms,
                "capture_s": capture_s / max(len(conv.questions), 1),
                "recalled": recalled.status == "recalled",
                "unrelated_empty": statistics.fmean(unrelated),
                **{f"missed_{k}": v for k, v in where.items()},
            }
        )
    return rows


# Questions on subjects a personal chat between friends does not touch: specialised
# technical, legal and scientific matters. Each question is a frame around a subject;
# the set is generated, seeded, and never tuned against the conversations.
_UNRELATED_SUBJECTS = [
    "the torque spec for the cylinder head bolts",
    "the VPN client configuration on the build server",
    "the yen to won exchange rate on the invoice",
    "the Kubernetes pod eviction threshold",
    "the statute of limitations for the contract dispute",
    "the boiling point of the solvent in the lab protocol",
    "the firmware version on the warehouse scanners",
    "the API rate limit for the payments gateway",
    "the dosage schedule in the clinical trial protocol",
    "the load rating of the steel beams in the spec",
    "the SQL index on the orders table",
    "the tax code for the quarterly VAT return",
    "the satellite orbit inclination in the mission brief",
    "the baud rate of the serial console",
    "the TLS certificate expiry on the mail server",
    "the pipe diameter in the plumbing schematic",
    "the compiler flag for the ARM build",
    "the half-life of the isotope in the report",
    "the clause on indemnity in the supplier agreement",
    "the voltage of the backup battery bank",
    "the sample size in the survey methodology",
    "the mortgage amortization table for the loan",
    "the DNS TTL for the staging domain",
    "the gear ratio of the test rig gearbox",
]
_UNRELATED_FRAMES = [
    "What did we decide about {}?",
    "Can you remind me of {}?",
    "What was the number for {}?",
    "Did anyone confirm {}?",
    "Where did we note down {}?",
]


def unrelated_questions(count: int, seed: int = 0) -> list[str]:
    """``count`` questions about subjects the conversations never discuss (seeded)."""
    rng = random.Random(seed)
    pairs = [(f, s) for f in _UNRELATED_FRAMES for s in _UNRELATED_SUBJECTS]
    rng.shuffle(pairs)
    return [frame.format(subject) for frame, subject in pairs[:count]]


# A fresh scenario set, written for this benchmark (not from any dataset): simulated users,
# each with a few threads of everyday chat. Facts are stated once, changed later, or
# mentioned in passing inside a long message; questions paraphrase them, from a new
# thread; some questions were asked before in another thread (with their answer), and
# filler replies ("Reply 3.") sit among the turns. Evidence is "thread:turn".

# Each user: threads (user/assistant turns alternating, user first), questions asked
# from a new thread with the evidence turns ("thread:index"), unrelated questions.
_FRESH_USERS: list[dict[str, Any]] = [
    {
        "user": "maya",
        "threads": {
            "kitchen": [
                (
                    "I'm trying to cook more at home this year. Quick heads-up: I'm allergic to "
                    "sesame, so no tahini or sesame oil for me."
                ),
                "Noted, I'll keep sesame out of anything I suggest.",
                "Can you give me a weeknight pasta idea?",
                "A lemon and garlic spaghetti with spinach takes 20 minutes.",
                "Perfect, thanks!",
                "You're welcome.",
            ],
            "move": [
                (
                    "Long story, but we finally signed the lease last night after weeks of "
                    "viewings. The place is on Calloway Street, third floor, no lift, which my "
                    "knees will hate, but the light in the living room is incredible and the rent "
                    "is 1,450 a month, which is less than we pay now. My partner Jonas wants to "
                    "paint the bedroom green, I'm not sure yet. Anyway, the move is on the 14th."
                ),
                "Congratulations! Do you want a moving checklist?",
                "Yes please, keep it short.",
                "Book a van, pack by room, change your address, set up internet, label boxes.",
                "Ok.",
                "Reply 3.",
            ],
            "work": [
                "My manager asked me to lead the onboarding redesign project starting next month.",
                "That's a big step. How do you feel about it?",
                "Nervous but excited. The deadline for the first draft is the end of April.",
                "Break it into weekly milestones and you'll be fine.",
                (
                    "Actually they moved the first draft deadline to mid-May, which gives me "
                    "breathing room."
                ),
                "Great, more time for user interviews.",
            ],
            "kitchen2": [
                "Is tahini sauce a problem for me?",
                "Yes, tahini is made from sesame, so avoid it.",
                "Thanks.",
                "Noted.",
            ],
            "smalltalk": [
                (
                    "Rainy again today. I spent the morning reading a thriller my sister lent me, "
                    "it was so gripping I burned the toast."
                ),
                "Sounds like a cosy morning apart from the toast!",
                "Haha yes. Do you have any good podcast recommendations for the commute?",
                "Try a history podcast; episodes are about 40 minutes.",
            ],
        },
        "questions": [
            ("Can I use the dressing with sesame seeds on my salad?", ["kitchen:0", "kitchen2:1"]),
            ("What street is my new flat on?", ["move:0"]),
            ("How much rent are we paying at the new place?", ["move:0"]),
            ("When is the first draft of my project due?", ["work:4"]),
            ("Who is my partner again, and what did he want to do with the bedroom?", ["move:0"]),
            ("What project am I leading at work?", ["work:0"]),
            ("Who lent me the book I was reading that rainy morning?", ["smalltalk:0"]),
        ],
        "unrelated": [
            "What's the capital gains tax rate on crypto in Portugal?",
            "How many moons does Neptune have?",
            "What firmware did we flash on the router last time?",
            "Which vaccine schedule did the vet recommend for the puppy?",
        ],
    },
    {
        "user": "omar",
        "threads": {
            "health": [
                (
                    "My doctor diagnosed me with type 2 diabetes last spring; it's managed with "
                    "metformin for now."
                ),
                "Thanks for telling me. I'll keep that in mind for meal ideas.",
                "Also I walk about 8,000 steps most days.",
                "That's a great habit.",
            ],
            "health2": [
                (
                    "Update: the doctor switched me from metformin to gliclazide because of "
                    "stomach trouble."
                ),
                "Got it, thanks for the update.",
            ],
            "garden": [
                (
                    "We're building raised beds this weekend. I ordered cedar boards, 2 metres "
                    "long, and a ton of compost. My daughter Lina wants to grow strawberries and I"
                    " want tomatoes and chillies. Our soil is heavy clay so raised beds seemed "
                    "smarter than digging."
                ),
                "Cedar is a good choice; it resists rot. Strawberries and tomatoes both love sun.",
                "The beds will be against the south wall.",
                "That's the sunniest spot, ideal.",
            ],
            "car": [
                "The car failed its inspection because of worn brake pads.",
                "That's a common fix. Did they quote you?",
                "Yes, 280 euros at the garage on Mill Road. I'll get it done Friday.",
                "Sounds reasonable.",
                "Sounds good!",
                "Ok, cheers.",
            ],
            "travel": [
                (
                    "Thinking about a family trip in August. Lina has never seen the sea, so "
                    "somewhere coastal, not too far to drive, maybe Brittany or the Dutch coast. "
                    "My wife prefers somewhere with a bit of culture, old towns, museums, that "
                    "sort of thing."
                ),
                "Saint-Malo could suit both: beaches and an old walled town.",
                "Ooh, good shout. Let's keep that in mind.",
                "Happy to help plan later.",
            ],
        },
        "questions": [
            ("Which medication am I on for my blood sugar?", ["health2:0"]),
            ("What kind of wood are my garden beds made from?", ["garden:0"]),
            ("What does my daughter want to plant?", ["garden:0"]),
            ("How much will the brake repair cost?", ["car:2"]),
            ("Where did you suggest we go on holiday?", ["travel:1"]),
            ("Why did we go for raised beds instead of digging?", ["garden:0"]),
            ("What condition do I have that matters for meals?", ["health:0"]),
        ],
        "unrelated": [
            "What's the best way to learn Japanese kanji?",
            "How do I configure SSH keys on a new laptop?",
            "Explain how a mortgage offset account works.",
            "What's a good strategy for a chess endgame with rooks?",
        ],
    },
    {
        "user": "lena",
        "threads": {
            "pets": [
                "We adopted a rescue greyhound called Pixel! She's very shy but sweet.",
                "How lovely! Greyhounds are gentle dogs.",
                "She's scared of the vacuum cleaner, so I hoover when she's out on walks.",
                "Smart move.",
            ],
            "fitness": [
                "I signed up for the city half marathon in October. My target is under two hours.",
                "That's a good goal. How many runs a week?",
                "Three for now: two easy runs and one long run on Sundays.",
                "Add some strides to one easy run.",
                "I hurt my ankle, so I switched the half marathon to the 10k instead.",
                "Sorry to hear that. The 10k is a smart choice.",
            ],
            "books": [
                (
                    "My book club picked a novel about a lighthouse keeper for next month. "
                    "Honestly I wanted the sci-fi one about generation ships, but I was outvoted. "
                    "We meet at Clara's place on the first Thursday."
                ),
                "The lighthouse one sounds atmospheric at least.",
                "True. I'll give it a chance.",
                "Sure.",
            ],
            "home": [
                (
                    "Our boiler broke down again, the engineer says it's the pressure valve. The "
                    "landlord promised to replace the whole unit before winter, but I'll believe "
                    "it when I see it."
                ),
                "That's frustrating. Keep the promise in writing.",
                "Good idea, I'll email him.",
                "Great.",
            ],
        },
        "questions": [
            ("What's my dog's name?", ["pets:0"]),
            ("What frightens my dog?", ["pets:2"]),
            ("Which race am I running this autumn?", ["fitness:4"]),
            ("Where does the book club meet?", ["books:0"]),
            ("What did the engineer say was wrong with the heating?", ["home:0"]),
            ("What genre did I actually want for book club?", ["books:0"]),
            ("What's my weekly training routine?", ["fitness:2"]),
        ],
        "unrelated": [
            "What is the boiling point of ethanol?",
            "Can you summarize the plot of Hamlet?",
            "How do solar panel inverters work?",
            "What's the VAT rate on software licences in Ireland?",
        ],
    },
    {
        "user": "raj",
        "threads": {
            "job": [
                "I'm a backend engineer at a logistics startup; mostly Go and PostgreSQL.",
                "Nice stack. What are you working on?",
                "Route optimisation for delivery vans.",
                "Interesting problem.",
                (
                    "Big news: I accepted an offer from a fintech company, I start in June as a "
                    "staff engineer."
                ),
                "Congratulations on the new role!",
            ],
            "family": [
                (
                    "My parents are visiting from Pune for three weeks in July, so I need to plan "
                    "weekend trips that don't involve too much walking, my father had knee surgery"
                    " last year. My mum is vegetarian and loves gardens."
                ),
                "Kew Gardens would be ideal: flat paths and lots to see.",
                "Great idea, she'll love that.",
                "Enjoy the visit!",
            ],
            "money": [
                "I want to save for a deposit on a flat. I can put away 900 a month.",
                "At that rate you'd have about 21,600 in two years.",
                "I also have some shares from my old employer I could sell.",
                "That could speed things up.",
            ],
            "hobby": [
                "I've started learning the sitar, lessons every Wednesday evening.",
                "What a beautiful instrument!",
                "My teacher says my posture is the main problem.",
                "Posture takes time; keep at it.",
            ],
        },
        "questions": [
            ("Where do I work now?", ["job:4"]),
            ("What programming language did I use at my old job?", ["job:0"]),
            ("Where are my parents travelling from?", ["family:0"]),
            ("Where should I take my mother who likes plants?", ["family:1"]),
            ("How much do I save each month?", ["money:0"]),
            ("What instrument am I learning?", ["hobby:0"]),
            ("Which day are my music lessons?", ["hobby:0"]),
        ],
        "unrelated": [
            "What's the torque setting for a bicycle stem?",
            "How do tides work?",
            "What's the difference between a latte and a flat white?",
            "Which Kubernetes version deprecated PodSecurityPolicy?",
        ],
    },
    {
        "user": "sofia",
        "threads": {
            "wedding": [
                "We set the wedding date: 12 September, at a vineyard near Porto.",
                "Congratulations! A vineyard wedding sounds wonderful.",
                "We expect about 80 guests.",
                "Noted.",
                (
                    "Change of plan: the vineyard double-booked, so the wedding moved to 26 "
                    "September at my aunt's farm instead."
                ),
                "Oh no, but the farm sounds lovely too.",
            ],
            "diet": [
                "I've gone pescatarian since January: fish yes, meat no.",
                "Noted, no meat in suggestions.",
            ],
            "study": [
                (
                    "I'm doing an evening course in data analysis; the final project is about "
                    "bike-sharing usage in Lisbon and it's due in three weeks. My tutor, Mr "
                    "Ferreira, wants a dashboard plus a written report, which is a lot on top of "
                    "work."
                ),
                "That's a lot. Start with the dashboard, the report follows from it.",
                "Good plan.",
                "Good luck!",
            ],
            "chat": [
                "What do you think about pineapple on pizza?",
                "It's divisive! Some love the sweet and salty mix.",
                "I'm team no pineapple.",
                "Fair enough.",
            ],
        },
        "questions": [
            ("When is the wedding now?", ["wedding:4"]),
            ("Where will the ceremony take place?", ["wedding:4"]),
            ("How many people are coming to the wedding?", ["wedding:2"]),
            ("Can you suggest a dinner that fits my diet?", ["diet:0"]),
            ("What's my course project about?", ["study:0"]),
            ("Who is my tutor?", ["study:0"]),
            ("Do I like pineapple on pizza?", ["chat:2"]),
        ],
        "unrelated": [
            "How do I reset a forgotten BIOS password?",
            "What is the population of Canada?",
            "Explain the offside rule in ice hockey.",
            "Which solvent dissolves epoxy resin?",
        ],
    },
    {
        "user": "tom",
        "threads": {
            "boat": [
                "I bought an old sailing dinghy, a Mirror, for 600 pounds. Needs new varnish.",
                "A classic! Varnishing is a good winter project.",
                "I'll keep it at the sailing club on the reservoir.",
                "Nice.",
            ],
            "kids": [
                "My son Felix turns seven next week and wants a dinosaur party.",
                "Fun! A dinosaur egg hunt works well for that age.",
                "He's also allergic to eggs, so the cake needs to be egg-free.",
                "Noted: an egg-free cake.",
            ],
            "work": [
                (
                    "Quarterly review went well. My boss, Priya, hinted I might get the team lead "
                    "role after the reorg in spring, but nothing official. Meanwhile the coffee "
                    "machine on our floor has been broken for two weeks and morale is at an all-"
                    "time low, honestly."
                ),
                "Fingers crossed for the team lead role!",
                "Thanks. We'll see.",
                "Good luck.",
            ],
            "kids2": [
                "Can Felix eat a normal birthday cake?",
                "No, he needs an egg-free one because of his allergy.",
                "Right.",
                "Reply 4.",
            ],
        },
        "questions": [
            ("What kind of boat do I own?", ["boat:0"]),
            ("Where do I keep my boat?", ["boat:2"]),
            ("What theme does my son want for his birthday?", ["kids:0"]),
            ("Is there anything Felix can't eat?", ["kids:2"]),
            ("Who is my boss?", ["work:0"]),
            ("What promotion might I get?", ["work:0"]),
        ],
        "unrelated": [
            "How much does a Tesla Model 3 battery replacement cost?",
            "What's the Python syntax for a dataclass with slots?",
            "When was the Magna Carta signed?",
            "How do I descale an espresso machine?",
        ],
    },
    {
        "user": "ana",
        "threads": {
            "plants": [
                "My fiddle leaf fig keeps dropping leaves, it's by the north window.",
                "It probably wants more light; try a brighter spot.",
                "I moved it next to the balcony door and it's doing better now.",
                "Great to hear.",
            ],
            "languages": [
                "I'm learning Korean for a trip to Seoul next spring.",
                "How exciting! Are you using an app?",
                "An app plus a tutor on Saturdays.",
                "Good combination.",
            ],
            "budget": [
                (
                    "I went over my budget again this month, mostly takeaways and a concert ticket"
                    " I couldn't resist (the band was Little Dragon and it was worth it). My rent "
                    "is 1,100 and I earn about 2,800 after tax, so I should be fine but it keeps "
                    "slipping."
                ),
                "Try a weekly cap for takeaways.",
                "I'll set 40 a week.",
                "Sounds like a plan.",
            ],
            "cat": [
                "My cat Miso is 14 and was diagnosed with kidney disease.",
                "I'm sorry. A renal diet can help.",
                (
                    "The vet prescribed a special renal food and we check her bloods every three "
                    "months."
                ),
                "That's good care.",
            ],
        },
        "questions": [
            ("Where is my fig tree now?", ["plants:2"]),
            ("Why am I studying Korean?", ["languages:0"]),
            ("When do I meet my language tutor?", ["languages:2"]),
            ("Which band did I see in concert?", ["budget:0"]),
            ("How much can I spend on takeaways per week?", ["budget:2"]),
            ("What health problem does my cat have?", ["cat:0"]),
            ("How often does Miso get blood tests?", ["cat:2"]),
        ],
        "unrelated": [
            "What's the maximum payload of a Falcon 9?",
            "How do I write a cover letter for a nursing job?",
            "What's the difference between TCP and UDP?",
            "Which grape is used in Barolo?",
        ],
    },
]

# Everyday chat that bears on none of the questions: every user also has these threads
# (many records, so the byte bound and the floor matter as in a real scope).
_FRESH_SMALL_TALK = [
    [
        (
            "What's a good way to remember people's names at parties? I always forget them the "
            "second I hear them and it's so embarrassing, especially at work events where everyone"
            " seems to know everyone."
        ),
        "Repeat the name back when you're introduced and use it once more in the conversation.",
        "I'll try that next time.",
        "Let me know how it goes!",
    ],
    [
        "Can you explain how compound interest works in simple terms?",
        (
            "Interest is added to the balance, and the next period's interest is computed on the "
            "new total, so growth accelerates over time."
        ),
        "So starting early matters a lot.",
        "Exactly: time is the biggest factor.",
    ],
    [
        "Give me three ideas for a rainy Sunday afternoon.",
        "Bake bread, do a jigsaw puzzle, or watch a film series you've been saving.",
        "Jigsaw it is. Any tips for a 1000 piece one?",
        "Start with the edges, then sort by colour.",
    ],
    [
        (
            "I can't sleep lately, I keep waking up at 4am and my mind starts racing about "
            "everything I have to do the next day."
        ),
        (
            "Try writing a to-do list before bed and keep the room cool and dark. Avoid screens "
            "for an hour before sleeping."
        ),
        "Worth a try, thanks.",
        "Sleep well!",
    ],
    [
        "What's the difference between weather and climate?",
        "Weather is the day-to-day state of the atmosphere; climate is the average over decades.",
        "Makes sense.",
        "Glad it helps.",
    ],
    [
        "Recommend a classic film for tonight?",
        "Casablanca is a good choice: romance, war drama, great lines.",
        "Seen it. Something lighter?",
        "Some Like It Hot is a brilliant comedy.",
        "Perfect.",
        "Enjoy the film!",
    ],
    [
        (
            "How do I politely decline an invitation without sounding rude? A colleague keeps "
            "inviting me to her pottery workshops and I really don't have the time or, honestly, "
            "the interest."
        ),
        "Thank her warmly, say you can't commit right now, and wish her a good session.",
        "That works.",
        "Good luck!",
    ],
    [
        "What's a quick stretch routine for desk workers?",
        "Neck rolls, shoulder shrugs, a seated spinal twist and wrist stretches, 30 seconds each.",
        "Thanks!",
        "You're welcome.",
    ],
]


def run_fresh(*, max_bytes: int, embeddings: Any, verbose: bool = False) -> dict[str, float]:
    """The fresh scenario set through ``ScopeMemory``: each user's threads (and the
    everyday small talk every user also has) captured one thread at a time, then each
    question asked from a new thread. Returns evidence recall, success and the share of
    unrelated questions that recall nothing."""
    recalls: list[float] = []
    unrelated: list[bool] = []
    for user in _FRESH_USERS:
        memory = ScopeMemory(
            InMemoryStore(), config=LibrarianConfig(embeddings=embeddings), max_bytes=max_bytes
        )
        threads = dict(user["threads"])
        threads.update({f"talk-{n}": turns for n, turns in enumerate(_FRESH_SMALL_TALK)})
        for thread, turns in threads.items():
            messages = [
                (HumanMessage if i % 2 == 0 else AIMessage)(text, id=f"{thread}:{i}")
                for i, text in enumerate(turns)
            ]
            memory.capture(user["user"], messages, thread_id=thread)
        for question, evidence in user["questions"]:
            recalled = memory.recall(user["user"], question)
            present = {r.message_id for r in recalled.records}
            recalls.append(sum(e in present for e in evidence) / len(evidence))
            if verbose and recalls[-1] < 1:
                print(f"  missed: {user['user']}: {question} ({recalled.status})")
        for question in user["unrelated"]:
            recalled = memory.recall(user["user"], question)
            unrelated.append(recalled.status == "empty")
            if verbose and not unrelated[-1]:
                print(f"  unrelated recalled: {user['user']}: {question}")
    return {
        "questions": len(recalls),
        "recall": statistics.fmean(recalls),
        "recall_success": statistics.fmean(r == 1.0 for r in recalls),
        "unrelated": len(unrelated),
        "unrelated_empty": statistics.fmean(unrelated),
    }


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate question rows."""
    return {
        "questions": len(rows),
        "recall": statistics.fmean(r["recall"] for r in rows),
        "recall_success": statistics.fmean(r["recall"] == 1.0 for r in rows),
        "recall_tokens": statistics.fmean(r["recall_tokens"] for r in rows),
        "recall_max_bytes": max(r["recall_bytes"] for r in rows),
        "recall_p50_ms": _p([r["recall_ms"] for r in rows], 0.5),
        "recall_p95_ms": _p([r["recall_ms"] for r in rows], 0.95),
        "thread_recall": statistics.fmean(r["thread_recall"] for r in rows),
        "thread_success": statistics.fmean(r["thread_recall"] == 1.0 for r in rows),
        "thread_tokens": statistics.fmean(r["thread_tokens"] for r in rows),
        "thread_p50_ms": _p([r["thread_ms"] for r in rows], 0.5),
        "related_recalled": statistics.fmean(r["recalled"] for r in rows),
        "unrelated_empty": statistics.fmean(r["unrelated_empty"] for r in rows),
    }


def table(groups: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "| conversations | questions | setting | evidence recall | context success "
        "| context tokens | p50 / p95 ms |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for label, rows in groups.items():
        s = summarize(rows)
        lines.append(
            f"| {label} | {s['questions']} | scope recall, fresh thread | {s['recall']:.3f} | "
            f"{s['recall_success']:.1%} | {s['recall_tokens']:,.0f} | "
            f"{s['recall_p50_ms']:.1f} / {s['recall_p95_ms']:.1f} |"
        )
        lines.append(
            f"| {label} | {s['questions']} | Librarian, same thread | {s['thread_recall']:.3f} | "
            f"{s['thread_success']:.1%} | {s['thread_tokens']:,.0f} | "
            f"{s['thread_p50_ms']:.1f} / - |"
        )
    return "\n".join(lines)


def by_category(groups: dict[str, list[dict[str, Any]]]) -> str:
    categories = sorted({r["category"] for rows in groups.values() for r in rows})
    lines = [
        "| conversations | setting | " + " | ".join(categories) + " |",
        "|---|---|" + "---:|" * len(categories),
    ]
    for label, rows in groups.items():
        for key, name in (("recall", "scope recall"), ("thread_recall", "same thread")):
            cells = []
            for category in categories:
                subset = [r[key] for r in rows if r["category"] == category]
                cells.append(f"{statistics.fmean(subset):.3f} ({len(subset)})" if subset else "-")
            lines.append(f"| {label} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def missed_by_category(groups: dict[str, list[dict[str, Any]]]) -> str:
    """Where the missing evidence went, per category (shares of the evidence, so each row's
    cells add up to one minus its recall)."""
    categories = sorted({r["category"] for rows in groups.values() for r in rows})
    lines = [
        "| conversations | evidence missing | " + " | ".join(categories) + " |",
        "|---|---|" + "---:|" * len(categories),
    ]
    causes = (
        ("bound", "ranked, past the byte bound (recalled within 32 KB)"),
        ("unranked", "not recalled within 32 KB"),
        ("empty", "recall empty (the floor)"),
    )
    for label, rows in groups.items():
        for key, name in causes:
            cells = []
            for category in categories:
                subset = [r[f"missed_{key}"] for r in rows if r["category"] == category]
                cells.append(f"{statistics.fmean(subset):.3f}" if subset else "-")
            lines.append(f"| {label} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data/locomo/locomo10.json")
    parser.add_argument("--max-bytes", type=int, default=8000)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--no-embeddings", action="store_true")
    parser.add_argument("--limit", type=int, default=None, help="first N conversations only")
    parser.add_argument(
        "--conversations",
        default=None,
        help="a range of conversations, e.g. 0-4 (develop) or 5-9 (held out)",
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="run the fresh scenario set instead of LoCoMo (-v: list what it missed)",
    )
    parser.add_argument(
        "--misses",
        action="store_true",
        help="also say where the missing evidence went (past the byte bound, never ranked, "
        "empty recall), per category: one more recall per question",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    embeddings = None if args.no_embeddings else default_embeddings()
    if args.fresh:
        s = run_fresh(max_bytes=args.max_bytes, embeddings=embeddings, verbose=args.verbose)
        print(
            f"fresh scenarios: evidence recall {s['recall']:.3f} over {s['questions']} "
            f"questions (success {s['recall_success']:.1%}); {s['unrelated']} unrelated "
            f"questions empty {s['unrelated_empty']:.1%}"
        )
        return
    conversations = list(enumerate(load_locomo(args.data, categories={1, 2, 3, 4})))
    if args.conversations:
        first, _, last = args.conversations.partition("-")
        low, high = int(first), int(last or first)
        conversations = [(n, c) for n, c in conversations if low <= n <= high]
    conversations = conversations[: args.limit]
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for n, conv in conversations:
        rows += [
            {**row, "position": n}
            for row in run_conversation(
                conv,
                budget=args.budget,
                max_bytes=args.max_bytes,
                embeddings=embeddings,
                misses=args.misses,
            )
        ]
        print(f"conversation {n} ({conv.id}) done", file=sys.stderr)
    groups = {
        "0-4": [r for r in rows if r["position"] < 5],
        "5-9": [r for r in rows if r["position"] >= 5],
    }
    groups = {k: v for k, v in groups.items() if v}
    print(
        f"embeddings: {type(embeddings).__name__ if embeddings is not None else 'none (lexical)'}"
    )
    print(f"max_bytes={args.max_bytes}, in-thread budget={args.budget} tokens")
    print(table(groups))
    print()
    for label, group in groups.items():
        s = summarize(group)
        print(
            f"{label}: related questions recalled {s['related_recalled']:.1%}; "
            f"{_UNRELATED_PER_CONVERSATION} unrelated questions per conversation empty "
            f"{s['unrelated_empty']:.1%}"
        )
    print()
    print(by_category(groups))
    if args.misses:
        print()
        print(missed_by_category(groups))
    print(f"\nwall time: {time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        summary = {label: summarize(group) for label, group in groups.items()}
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
