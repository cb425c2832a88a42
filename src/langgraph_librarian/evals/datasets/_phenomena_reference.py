# ruff: noqa: E501
# (frames are prose templates, one sentence per line)
"""Phenomena about *which* thing is meant: paraphrase, indirect reference, distractors.

- ``paraphrase``: the question and the stating sentence share (almost) no content word;
  synonyms and a different register carry the meaning ("fiddle" for "violin").
- ``indirect``: the question names a person by role or by an earlier description; one
  message ties the name to the role, another states the fact about the name. Both are
  evidence; ``bridge`` is the name, which the question never contains.
- ``distractor``: other messages state the same attribute, in the same words, for other
  instances (another town's train, another person with the same first name); the right
  one is the evidence, the others are ``near`` with their values in ``decoys``.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph_librarian.evals.datasets._phenomena_model import Ctx, Item, Plant

__all__ = ["DISTRACTOR_FRAMES", "INDIRECT_FRAMES", "PARAPHRASE_FRAMES"]

Frame = Callable[[Ctx], Item]

PETS = [
    "Biscuit",
    "Pickle",
    "Nutmeg",
    "Waffles",
    "Pretzel",
    "Mabel",
    "Crumpet",
    "Ziggy",
    "Dumpling",
    "Olive",
]
TITLES = [
    "The Salt Orchard",
    "A Map of Small Winters",
    "Nine Bridges Down",
    "The Glassblower's Niece",
    "Tides of Ash",
    "The Last Ferry to Inishmore",
    "Paper Kingdoms",
    "The Clockmaker's Garden",
    "Under the Linden",
    "A Season of Foxes",
]
RESTAURANTS = [
    "The Crooked Spoon",
    "Bramble & Rye",
    "Casa Lumi",
    "The Salt House",
    "Mizuna",
    "The Copper Pot",
    "Olive & Vine",
    "Little Hanoi",
]
CARS = [
    "Volvo 240",
    "Saab 900",
    "Citroën 2CV",
    "Land Rover Defender",
    "Fiat Panda",
    "Morris Minor",
    "Peugeot 205",
]
INSTRUMENTS = [
    "accordion",
    "cello",
    "bodhrán",
    "mandolin",
    "double bass",
    "banjo",
    "harmonica",
    "fiddle",
]
WORDS = [
    "otter",
    "basil",
    "quartz",
    "pepper",
    "cobalt",
    "thistle",
    "marble",
    "walnut",
    "saffron",
    "pebble",
]


def _one(category: str, topic: str, statement: str, question: str, answer: str) -> Item:
    return Item(category, question, answer, [Plant(statement, topic)], support=[answer])


# -- paraphrase -------------------------------------------------------------------------


def _tutor(c: Ctx) -> Item:
    who = f"{c.pick(['Mr', 'Ms'])} {c.surname()}"
    return _one(
        "paraphrase",
        "family",
        c.pick(
            [
                f"My sister's little girl has started violin lessons, and her tutor is a {who} who comes round after school.",
                f"Turns out my sister's daughter is learning the violin now, with a tutor called {who}.",
            ]
        ),
        c.pick(["Who teaches my niece the fiddle?", "Which person gives my niece fiddle classes?"]),
        who,
    )


def _pills(c: Ctx) -> Item:
    dose = f"{c.pick(['5', '10', '20', '40'])} milligrams"
    return _one(
        "paraphrase",
        "health",
        c.pick(
            [
                f"The GP has bumped my blood pressure pills up to {dose} a day.",
                f"At the surgery this morning they raised my blood pressure tablets to {dose} daily.",
            ]
        ),
        c.pick(
            [
                "What dose of hypertension medication have I been prescribed?",
                "How strong is the hypertension medicine the physician put me on?",
            ]
        ),
        dose,
    )


def _puppy(c: Ctx) -> Item:
    pet = c.fresh(PETS)
    return _one(
        "paraphrase",
        "family",
        c.pick(
            [
                f"The kids finally settled on a name for the puppy: {pet}.",
                f"After a week of arguing, the puppy is officially {pet}.",
            ]
        ),
        c.pick(["What do we call our young hound?", "Which moniker did we give the new dog?"]),
        pet,
    )


def _rent(c: Ctx) -> Item:
    amount = c.money(900, 2400, 25)
    return _one(
        "paraphrase",
        "home",
        c.pick(
            [
                f"Our landlord is putting the rent up to {amount} from next quarter.",
                f"A letter came from the landlord: the rent goes up to {amount} starting next quarter.",
            ]
        ),
        c.pick(
            [
                "What will our monthly housing payment to the property owner become?",
                "How much will we owe the property owner each month for the flat?",
            ]
        ),
        amount,
    )


def _race(c: Ctx) -> Item:
    time = f"1:{c.rng.randrange(38, 60):02d}:{c.rng.randrange(60):02d}"
    return _one(
        "paraphrase",
        "hobbies",
        c.pick(
            [
                f"I clocked {time} in the half marathon on Sunday, a new personal best!",
                f"Official result from Sunday's half marathon: {time}, my best yet.",
            ]
        ),
        c.pick(
            [
                "How long did the 21-kilometre race take me?",
                "What was my finishing time over 21 km at the weekend?",
            ]
        ),
        time,
    )


def _gearbox(c: Ctx) -> Item:
    amount = c.money(300, 2200, 10)
    return _one(
        "paraphrase",
        "money",
        c.pick(
            [
                f"The mechanic reckons the gearbox repair will come to {amount}.",
                f"The mechanic phoned: sorting out the gearbox will be {amount}.",
            ]
        ),
        c.pick(
            [
                "What did the garage quote for fixing the transmission?",
                "How much will the car workshop charge to mend the transmission?",
            ]
        ),
        amount,
    )


def _router(c: Ctx) -> Item:
    phrase = f"{c.pick(WORDS)}-{c.pick(WORDS)}-{c.rng.randrange(10, 99)}"
    return _one(
        "paraphrase",
        "home",
        c.pick(
            [
                f"The router passphrase is {phrase}; I've stuck it on the fridge door.",
                f"For the record, the broadband box's passphrase is {phrase}.",
            ]
        ),
        c.pick(
            [
                "What's the wireless key for our home network?",
                "Which password gets a guest onto our Wi-Fi?",
            ]
        ),
        phrase,
    )


def _mum(c: Ctx) -> Item:
    time = c.clock()
    return _one(
        "paraphrase",
        "travel",
        c.pick(
            [
                f"Mum's plane touches down at {time} on Saturday.",
                f"Mum texted: she lands at {time} on Saturday.",
            ]
        ),
        c.pick(
            ["When does my mother's flight arrive?", "At what hour is my mother's aircraft due in?"]
        ),
        time,
    )


def _refund(c: Ctx) -> Item:
    amount = c.money(200, 3000, 5)
    return _one(
        "paraphrase",
        "money",
        c.pick(
            [
                f"The accountant thinks we'll get roughly {amount} back from the taxman this year.",
                f"According to the accountant, the taxman owes us about {amount} this year.",
            ]
        ),
        c.pick(
            [
                "How big is our expected tax refund?",
                "What sum should the revenue service return to the household?",
            ]
        ),
        amount,
    )


def _book_circle(c: Ctx) -> Item:
    title = c.fresh(TITLES)
    return _one(
        "paraphrase",
        "hobbies",
        c.pick(
            [
                f"Our book circle voted to read {title} next.",
                f"The book circle has gone for {title} as the next one, to my delight.",
            ]
        ),
        c.pick(
            [
                "Which novel has the literature club picked for its coming session?",
                "What is the literature group working through for the upcoming meeting?",
            ]
        ),
        title,
    )


def _listing(c: Ctx) -> Item:
    amount = c.money(240_000, 780_000, 5_000)
    return _one(
        "paraphrase",
        "money",
        c.pick(
            [
                f"The estate agent listed the house at {amount} this morning.",
                f"We're officially on the market: the estate agent valued the house at {amount}.",
            ]
        ),
        c.pick(
            [
                "What asking price did the realtor put on our home?",
                "How much are we selling our home for?",
            ]
        ),
        amount,
    )


def _boiler(c: Ctx) -> Item:
    person = f"{c.first()} {c.surname()}"
    return _one(
        "paraphrase",
        "home",
        c.pick(
            [
                f"The boiler chap who fitted our combi last winter is called {person}.",
                f"Our boiler was put in last winter by {person}, who did a tidy job.",
            ]
        ),
        c.pick(
            [
                "Who installed our heating system?",
                "Which engineer set up the central heating for us?",
            ]
        ),
        person,
    )


def _cholesterol(c: Ctx) -> Item:
    level = f"{c.rng.randrange(4, 8)}.{c.rng.randrange(10)}"
    return _one(
        "paraphrase",
        "health",
        c.pick(
            [
                f"My cholesterol came back at {level}, which the nurse called borderline.",
                f"Blood results are in: cholesterol {level}, borderline according to the nurse.",
            ]
        ),
        c.pick(
            [
                "What lipid figure did my lab work show?",
                "What was the fat-level reading in my lab test?",
            ]
        ),
        level,
    )


def _sitter(c: Ctx) -> Item:
    amount = c.money(8, 20)
    return _one(
        "paraphrase",
        "family",
        c.pick(
            [
                f"The babysitter charges {amount} an hour, cash only.",
                f"Our sitter asks {amount} per hour, which is fair.",
            ]
        ),
        c.pick(
            [
                "How much does our childminder cost?",
                "What's the going rate of the person who minds the kids?",
            ]
        ),
        amount,
    )


def _expenses(c: Ctx) -> Item:
    amount = c.money(80, 1500)
    return _one(
        "paraphrase",
        "work",
        c.pick(
            [
                f"Finance approved my expenses claim for {amount} at last.",
                f"My expenses went through: {amount}, signed off by finance.",
            ]
        ),
        c.pick(
            [
                "How much reimbursement did accounts agree to pay me?",
                "What sum will the company refund me for costs?",
            ]
        ),
        amount,
    )


def _ferry(c: Ctx) -> Item:
    duration = f"{c.rng.randrange(35, 145, 5)} minutes"
    return _one(
        "paraphrase",
        "travel",
        c.pick(
            [
                f"The ferry crossing to the island takes {duration}, according to the timetable.",
                f"Timetable says the ferry over to the island is {duration} each way.",
            ]
        ),
        c.pick(
            [
                "How long is the boat journey to the isle?",
                "What's the sailing time across to the isle?",
            ]
        ),
        duration,
    )


def _starter(c: Ctx) -> Item:
    grams = f"{c.pick(['80', '100', '120', '150'])} grams"
    return _one(
        "paraphrase",
        "food",
        c.pick(
            [
                f"Gran's recipe card says the sourdough wants {grams} of starter per loaf.",
                f"For the sourdough, it's {grams} of starter in each loaf, as Gran wrote it.",
            ]
        ),
        c.pick(
            [
                "How much leaven goes into every bread?",
                "What quantity of levain does each bake need?",
            ]
        ),
        grams,
    )


PARAPHRASE_FRAMES: list[Frame] = [
    _tutor,
    _pills,
    _puppy,
    _rent,
    _race,
    _gearbox,
    _router,
    _mum,
    _refund,
    _book_circle,
    _listing,
    _boiler,
    _cholesterol,
    _sitter,
    _expenses,
    _ferry,
    _starter,
]

# -- indirect reference -------------------------------------------------------------------

# (role as asked, its possessive, sentences that tie a name to the role, topic)
_ROLES: list[tuple[str, str, list[str], str]] = [
    (
        "my manager",
        "my manager's",
        [
            "My manager, {name}, finally signed off the rota for next month.",
            "{name} has been my manager since the reorganisation, and honestly it has been a good change.",
        ],
        "work",
    ),
    (
        "my brother-in-law",
        "my brother-in-law's",
        [
            "My brother-in-law {name} came round to look at the damp patch in the hallway.",
            "{name}, who married my sister, is handy with this kind of thing.",
        ],
        "family",
    ),
    (
        "our next-door neighbour",
        "our next-door neighbour's",
        [
            "Our next-door neighbour, {name}, took a parcel in for us again.",
            "{name} from next door waved at me over the fence this morning.",
        ],
        "home",
    ),
    (
        "the kids' swimming coach",
        "the kids' swimming coach's",
        [
            "The kids' swimming coach is a patient soul called {name}.",
            "{name} coaches the children at the pool on Saturday mornings.",
        ],
        "family",
    ),
    (
        "my physio",
        "my physio's",
        [
            "My physiotherapist, {name}, has me doing exercises with a resistance band.",
            "I've started seeing a physio called {name} about the shoulder.",
        ],
        "health",
    ),
    (
        "my old university flatmate",
        "my old university flatmate's",
        [
            "{name}, who I shared a flat with at university, got in touch out of the blue.",
            "An old flatmate from my university days, {name}, messaged me last night.",
        ],
        "family",
    ),
    (
        "the retired pilot I met at pottery",
        "the pottery-class pilot's",
        [
            "At pottery on Tuesday I got chatting to a retired pilot called {name}.",
            "There's a retired airline pilot in my pottery class, {name}, who makes beautiful jugs.",
        ],
        "hobbies",
    ),
    (
        "my running partner",
        "my running partner's",
        [
            "{name} and I have been running together on Saturdays for a couple of years now.",
            "My running buddy {name} dragged me out in the rain again.",
        ],
        "hobbies",
    ),
    (
        "our accountant",
        "our accountant's",
        [
            "Our accountant, {name}, wants the receipts by the end of the month.",
            "{name} has done our tax returns for years and never once lost a receipt.",
        ],
        "money",
    ),
    (
        "the new starter on my team",
        "the new starter's",
        [
            "We have a new starter on my team, {name}, who joined from a fintech.",
            "{name} joined my team this month, straight from a fintech.",
        ],
        "work",
    ),
    (
        "our wedding planner",
        "our wedding planner's",
        [
            "Our wedding planner, {name}, sent over a colour-coded spreadsheet.",
            "{name} is organising the wedding for us, thank goodness.",
        ],
        "family",
    ),
]


def _indirect(c: Ctx, facts: list[str], question: str, answer: str, topic: str) -> Item:
    # fresh(): one person per role in a conversation, so "my manager" means one name.
    chosen = c.fresh([r[0] for r in _ROLES])
    role, possessive, links, link_topic = next(r for r in _ROLES if r[0] == chosen)
    name = c.first()
    link = Plant(c.pick(links).format(name=name), link_topic)
    fact = Plant(c.pick(facts).format(name=name), topic)
    text = question.format(role=role, poss=possessive)
    return Item(
        "indirect", text[0].upper() + text[1:], answer, [link, fact], support=[answer], bridge=name
    )


def _moved(c: Ctx) -> Item:
    town = c.town()
    facts = [
        f"{{name}} has just moved to {town}, apparently for a quieter life.",
        f"{{name}} packed up and relocated to {town} last month.",
    ]
    return _indirect(
        c,
        facts,
        c.pick(["Where has {role} moved to?", "Which town does {role} live in these days?"]),
        town,
        "family",
    )


def _restaurant(c: Ctx) -> Item:
    place = c.fresh(RESTAURANTS)
    facts = [
        f"{{name}} swears by a little place called {place} for Sunday lunch.",
        f"According to {{name}}, {place} does the best Sunday roast for miles.",
    ]
    return _indirect(
        c, facts, "Which restaurant does {role} recommend for Sunday lunch?", place, "food"
    )


def _daughter(c: Ctx) -> Item:
    child = c.first()
    facts = [
        f"{{name}}'s daughter is called {child}, and she has just started school.",
        f"{{name}} showed me photos of their little girl, {child}, who has just started school.",
    ]
    return _indirect(
        c,
        facts,
        c.pick(["What is {poss} daughter called?", "What's the name of {poss} little girl?"]),
        child,
        "family",
    )


def _car(c: Ctx) -> Item:
    car = c.fresh(CARS)
    facts = [
        f"{{name}} drives an ancient {car} and refuses to part with it.",
        f"{{name}} pulled up in a battered {car}, which they have had for ever.",
    ]
    return _indirect(c, facts, "What car does {role} drive?", car, "money")


def _builder(c: Ctx) -> Item:
    builder = f"{c.first()} {c.surname()}"
    facts = [
        f"{{name}} recommended a builder called {builder} for the loft conversion.",
        f"{{name}} gave me the number of {builder}, a builder they used for their loft.",
    ]
    return _indirect(c, facts, "Which builder did {role} suggest for the loft?", builder, "home")


def _instrument(c: Ctx) -> Item:
    instrument = c.fresh(INSTRUMENTS)
    facts = [
        f"{{name}} plays the {instrument} in a folk band at weekends.",
        f"Turns out {{name}} is a keen {instrument} player, gigs and all.",
    ]
    return _indirect(c, facts, "What instrument does {role} play?", instrument, "hobbies")


def _lent_book(c: Ctx) -> Item:
    title = c.fresh(TITLES)
    facts = [
        f"{{name}} lent me a novel called {title}.",
        f"{{name}} pressed a copy of {title} into my hands and told me to read it.",
    ]
    return _indirect(c, facts, "What book did {role} lend me?", title, "hobbies")


def _fortnight(c: Ctx) -> Item:
    town = c.town()
    month = c.pick(["June", "July", "August", "September"])
    facts = [
        f"{{name}} is off to {town} for a fortnight in {month}.",
        f"{{name}} has booked two weeks in {town} for {month}.",
    ]
    return _indirect(c, facts, "Where is {role} going on holiday for two weeks?", town, "travel")


INDIRECT_FRAMES: list[Frame] = [
    _moved,
    _restaurant,
    _daughter,
    _car,
    _builder,
    _instrument,
    _lent_book,
    _fortnight,
]

# -- distractors --------------------------------------------------------------------------


def _near_miss(
    c: Ctx,
    topic: str,
    instances: list[str],
    values: list[str],
    say: list[str],
    question: str,
    keywords: list[str],
) -> Item:
    """The first instance is asked about; the others state the same attribute."""
    plants = [
        Plant(c.pick(say).format(inst=inst, v=value), topic, "any")
        for inst, value in zip(instances, values, strict=True)
    ]
    return Item(
        "distractor",
        question.format(inst=instances[0]),
        values[0],
        [plants[0]],
        near=plants[1:],
        decoys=values[1:],
        support=[values[0]],
        keywords=keywords,
    )


def _count(c: Ctx) -> int:
    return 3 if c.rng.random() < 0.4 else 2


def _trains(c: Ctx) -> Item:
    k = _count(c) + 1
    towns = [c.town() for _ in range(k)]
    platforms = c.distinct(lambda: f"platform {c.rng.randrange(1, 15)}", k)
    say = [
        "The {inst} train goes from {v}.",
        "Trains to {inst} leave from {v}, according to the board.",
    ]
    return _near_miss(
        c,
        "travel",
        towns,
        platforms,
        say,
        "Which platform does the {inst} train leave from?",
        ["train", "platform"],
    )


def _insurance(c: Ctx) -> Item:
    k = _count(c) + 1
    kinds = c.fresh_many(["car", "home", "pet", "travel", "contents", "life"], k)
    prices = c.distinct(lambda: c.money(90, 900), k)
    say = [
        "The {inst} insurance renews at {v} a year.",
        "Renewal letter for the {inst} insurance came: {v} for the year.",
    ]
    return _near_miss(
        c,
        "money",
        kinds,
        prices,
        say,
        "How much is the {inst} insurance renewal?",
        ["insurance", "renew"],
    )


def _rooms(c: Ctx) -> Item:
    k = _count(c) + 1
    rooms = c.fresh_many(
        ["spare bedroom", "main bedroom", "box room", "kitchen", "living room", "study"], k
    )
    sizes = c.distinct(
        lambda: (
            f"{c.rng.randrange(2, 6)}.{c.rng.randrange(10)} by {c.rng.randrange(2, 5)}.{c.rng.randrange(10)} metres"
        ),
        k,
    )
    say = ["The {inst} measures {v}.", "I measured the {inst} at last: {v}."]
    return _near_miss(
        c, "home", rooms, sizes, say, "What are the measurements of the {inst}?", ["measurements"]
    )


def _extensions(c: Ctx) -> Item:
    k = _count(c) + 1
    first, other_first, surname, other_surname = c.first(), c.first(), c.surname(), c.surname()
    # Same first name, same surname, then a stranger: the words match, the person does not.
    people = [
        f"{first} {surname}",
        f"{first} {other_surname}",
        f"{other_first} {surname}",
        f"{c.first()} {c.surname()}",
    ][:k]
    numbers = c.distinct(lambda: str(c.rng.randrange(2000, 9999)), k)
    say = ["{inst}'s desk extension is {v}.", "You can reach {inst} on extension {v}."]
    return _near_miss(
        c, "work", people, numbers, say, "What is {inst}'s phone extension?", ["extension"]
    )


def _tickets(c: Ctx) -> Item:
    k = _count(c) + 1
    features = c.fresh_many(
        [
            "login page",
            "export button",
            "search bar",
            "settings screen",
            "upload dialog",
            "billing page",
        ],
        k,
    )
    prefix = c.pick(["OPS", "APP", "WEB", "CORE"])
    tickets = c.distinct(lambda: f"{prefix}-{c.rng.randrange(100, 999)}", k)
    say = [
        "The bug where the {inst} freezes is ticket {v}.",
        "Ticket {v} covers the {inst} freezing on older phones.",
    ]
    return _near_miss(
        c,
        "work",
        features,
        tickets,
        say,
        "Which ticket tracks the {inst} freezing?",
        ["ticket", "freezing"],
    )


def _shoes(c: Ctx) -> Item:
    k = _count(c) + 1
    kids = [c.first() for _ in range(k)]
    sizes = c.distinct(lambda: f"size {c.rng.randrange(9, 14)}", k)
    say = ["{inst} is now in {v} shoes.", "The shoe shop measured {inst} at a {v}."]
    return _near_miss(c, "family", kids, sizes, say, "What shoe size does {inst} take?", ["shoe"])


def _seats(c: Ctx) -> Item:
    k = _count(c) + 1
    people = [c.first() for _ in range(k)]
    seats = c.distinct(lambda: f"row {c.pick('ABCDEFGH')}, seat {c.rng.randrange(1, 30)}", k)
    say = ["{inst} is in {v} for the concert.", "For the concert, {inst} ended up in {v}."]
    return _near_miss(
        c, "hobbies", people, seats, say, "Where is {inst} sitting at the concert?", ["concert"]
    )


def _boosters(c: Ctx) -> Item:
    k = _count(c) + 1
    pets = c.fresh_many(PETS, k)
    dates = [c.render(c.date(), 1) for _ in range(k)]
    say = [
        "{inst}'s booster jab is due on {v}.",
        "The vet's reminder says {inst} needs a booster on {v}.",
    ]
    return _near_miss(c, "family", pets, dates, say, "When is {inst}'s booster due?", ["booster"])


def _cards(c: Ctx) -> Item:
    k = _count(c) + 1
    accounts = c.fresh_many(
        ["joint account", "savings account", "business account", "kids' account"], k
    )
    digits = c.distinct(lambda: str(c.rng.randrange(1000, 9999)), k)
    say = ["The {inst} card ends in {v}.", "The card for the {inst} is the one ending {v}."]
    return _near_miss(
        c,
        "money",
        accounts,
        digits,
        say,
        "What are the last four digits of the {inst} card?",
        ["card"],
    )


def _tables(c: Ctx) -> Item:
    k = _count(c) + 1
    nights = c.fresh_many(["Thursday", "Friday", "Saturday", "Sunday"], k)
    times = [c.clock(12, 22) for _ in range(k)]
    say = [
        "The table for {inst} night is booked for {v}.",
        "We've got a table on {inst} night at {v}.",
    ]
    return _near_miss(
        c,
        "food",
        nights,
        times,
        say,
        "What time is the table booked for on {inst} night?",
        ["table"],
    )


def _door_codes(c: Ctx) -> Item:
    k = _count(c) + 1
    people = [c.first() for _ in range(k)]
    codes = c.distinct(lambda: str(c.rng.randrange(1000, 9999)), k)
    say = [
        "The door code for {inst}'s building is {v}.",
        "To get into {inst}'s building, the door code is {v}.",
    ]
    return _near_miss(
        c,
        "home",
        people,
        codes,
        say,
        "What's the door code for {inst}'s building?",
        ["door", "code"],
    )


DISTRACTOR_FRAMES: list[Frame] = [
    _trains,
    _insurance,
    _rooms,
    _extensions,
    _tickets,
    _shoes,
    _seats,
    _boosters,
    _cards,
    _tables,
    _door_codes,
]
