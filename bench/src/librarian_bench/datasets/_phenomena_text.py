# ruff: noqa: E501
# (prose banks: one sentence per line reads better than wrapped string fragments)
"""Text banks of the ``phenomena`` dataset: everyday chatter, names, places, tool noise.

Written for this dataset and independent of the older synthetic generator: none of its
names, places, families or sentences are reused. Filler sentences carry the slots
``{name}``, ``{town}``, ``{day}``, ``{n}``, ``{month}`` (and ``{money}``, ``{clock}``...
in incidental facts) and never state a fact that a question asks about; the generator
fills ``{name}`` and ``{town}`` only with names and towns that no question is about.
"""

from __future__ import annotations

__all__ = [
    "AI_CLOSERS",
    "AI_GENERIC",
    "AI_OPENERS",
    "BANKS",
    "FIRST_NAMES",
    "INCIDENTAL",
    "SAME_DAY",
    "SURNAMES",
    "TOPICS",
    "TOWNS",
    "USER_ASIDES",
    "assistant_lines",
    "user_lines",
]


def _lines(block: str) -> list[str]:
    return [line.strip() for line in block.strip().splitlines() if line.strip()]


FIRST_NAMES = _lines("""
Aoife
Bogdan
Callum
Delphine
Eitan
Farah
Gideon
Hyejin
Idris
Jolene
Kasimir
Leilani
Magnus
Nadia
Oisin
Paloma
Rafferty
Saoirse
Tariq
Ulla
Vesna
Wilbur
Yara
Zainab
Ansel
Birgit
Cosimo
Dagny
Elif
Fintan
Greta
Hamish
Ines
Jasper
Keiko
Lorcan
Mireille
Nils
Orla
Pietro
Rhea
Soren
Thea
Valentin
Wanjiru
Anouk
Benedikt
Clementine
Dorian
Esme
Florin
Gulnara
Henrike
Ilse
Joaquim
Kofi
Linnea
Marisol
Niamh
Odile
Perpetua
Ravi
Sigrun
Teodor
Ursula
""")

SURNAMES = _lines("""
Abernethy
Brannigan
Castellanos
Dufresne
Eklund
Fairweather
Gallagher
Halvorsen
Iwasaki
Jovanovic
Kowalczyk
Lindqvist
Moreau
Nakashima
Pemberton
Quigley
Rasmussen
Szabo
Thornbury
Varga
Whitcombe
Yilmaz
Zielinski
Achterberg
Okonkwo
""")

TOWNS = _lines("""
Whitby
Annecy
Tromsø
Matera
Hallstatt
Kotor
Oban
Sintra
Colmar
Ronda
Bled
Dinant
Girona
Tavira
Visby
Lucca
Alnwick
Nafplio
Rovinj
Eger
""")

TOPICS = ["work", "travel", "health", "home", "hobbies", "money", "family", "food"]

_USER: dict[str, str] = {
    "work": """
The quarterly planning session ran an hour over and we still left with more questions than answers.
{name} presented the roadmap again and, to be fair, it is much tighter than the version from {month}.
I have three reviews to write before {day} and I keep putting them off because they take real thought.
Our stand-ups have turned into status theatre, so I suggested we try doing them in writing for a fortnight.
The new ticketing tool is fine once you get used to it, but the migration ate most of my week.
I ended up pairing with {name} on the flaky integration tests and we found two genuine bugs along the way.
Half the team is on leave in {month}, which means anything ambitious has to land before then.
Someone in leadership floated the idea of a four-day week and the chat exploded for an entire afternoon.
I finally cleared my inbox down to single digits, which lasted about twenty minutes.
The client call on {day} was awkward because nobody on their side had read the proposal.
{name} keeps saying we need better documentation, and I agree, but nobody wants to write it.
I blocked out my mornings for deep work and it is amazing how much more I get done.
There is a hiring freeze rumour going round again, so people are a bit jumpy.
We shipped the small fix on {day} and, for once, nothing caught fire afterwards.
The retrospective was useful: we agreed to stop starting new things before finishing old ones.
My laptop has started making a noise like a hairdryer whenever I open more than {n} browser tabs.
I have been asked to mentor a graduate, which is flattering and also slightly terrifying.
The offsite agenda is full of workshops with names like 'alignment sprint' and I am already tired.
Our budget review slipped another week because the spreadsheet had circular references everywhere.
I spent {day} afternoon untangling permissions in the shared drive, which was as fun as it sounds.
We are trying to cut meetings by a third, starting with the ones that could have been an email.
{name} and I disagree about the release schedule, but it is a healthy disagreement.
""",
    "travel": """
I have been looking at trains versus flights to {town} and the trains win if you count the airport faff.
{name} swears the best way to see {town} is on foot, early, before the tour groups arrive.
Packing light is my eternal resolution and I have never once managed it.
The guidebook we bought is from a few years ago, so half the cafés in it have probably closed.
I am trying to learn a few phrases before we go, mostly greetings and how to order coffee.
We had a lovely long weekend in {town} last {month}, although it rained for most of it.
Travel insurance is one of those things I only think about at the last minute.
{name} recommended a walking route along the coast that apparently takes about {n} hours.
The kids want a beach, I want museums, and my partner wants to sleep, so we are negotiating.
I always forget an adapter plug and end up buying an overpriced one at the airport.
There is a night market in {town} that people rave about, so we will try to catch it.
I made a spreadsheet of possible day trips, which my family finds both useful and embarrassing.
Our passports are all valid, I checked twice, which is more than I can say for last year.
The last time we went away the car hire desk had a queue of about {n} families.
I would like to do one trip a year where nobody has to look at a screen.
The hotel reviews are a minefield: every place is either perfect or a crime scene.
{name} came back from {town} with a suitcase full of cheese and zero regrets.
We are thinking of going somewhere in {month} when it is quieter and cheaper.
I found a cheap ferry option but it leaves at an hour that should not exist.
Jet lag hits me harder every year, so I am trying to plan a gentle first day.
""",
    "health": """
I have been sleeping badly again, mostly because my brain decides to plan the week at three in the morning.
The physio exercises are boring but they are clearly working, so I am sticking with them.
I walked {n} thousand steps yesterday without trying, just by taking the stairs and the long way round.
{name} got me into cold showers, which I hate every single time and feel great afterwards.
I am trying to cut back on coffee after lunch, and the afternoons are rough.
The waiting room at the surgery was packed, so I read an entire magazine about sailing.
My back is better than it was in {month}, though long drives still set it off.
I finally booked an eye test after squinting at the TV for months.
{name} is doing a couch-to-5k programme and sends me updates after every run.
I have started stretching in the evenings, mostly while the kettle boils.
The pharmacy was out of the usual brand, so I came home with something in a different box.
I keep meaning to drink more water and then realising at four o'clock that I have had one glass.
A colleague recommended a meditation app and so far I have fallen asleep during every session.
I have been getting headaches on screen-heavy days, so I am trying the twenty-twenty-twenty rule.
The hay fever season arrived early this year and I am sneezing my way through {month}.
My knee clicks on the stairs, which the doctor says is normal and which I find alarming.
I ate properly all week, which mostly means I remembered to buy vegetables.
{name} lent me a foam roller and I now understand why people describe it as torture.
I want to get back to swimming but the pool timetable is impossible on weekdays.
Sunday was a proper rest day: a long walk, a nap, and nothing on the calendar.
""",
    "home": """
The washing machine has developed a squeak that sounds like a small animal in distress.
We are slowly clearing the loft, one box of mystery cables at a time.
{name} came round to help me put up shelves and we only drilled into the wrong place once.
The garden is a jungle after all the rain and I have given up pretending I will tame it this week.
Our heating makes a clanking noise at night that nobody else seems to hear.
I spent {day} sorting the cupboard under the stairs and found {n} umbrellas, none of which work.
The neighbours are having their kitchen redone, so there has been drilling since eight every morning.
We bought a cheap rug for the hallway and it has already changed the feel of the whole house.
The bathroom extractor fan is on its last legs and sounds like a distant helicopter.
I repainted the skirting boards and now everything else looks shabby by comparison.
The council changed the bin collection day and half the street missed it.
I finally fixed the dripping tap, after watching {n} videos and making two trips to the hardware shop.
{name} recommended a cleaner, but we are trying to manage on our own for a bit longer.
The smoke alarm battery chirped at two in the morning, as they always do.
Our internet keeps dropping in the back bedroom, so I moved the desk for the third time.
We are debating blinds versus curtains with the intensity of a constitutional crisis.
The fridge is making ice on the back wall again, which I suspect means the seal has gone.
I love the house in autumn; the light in the front room in the late afternoon is lovely.
There is a damp patch by the back door that I am choosing to ignore until {month}.
We finally hung the pictures that have been leaning against the wall since we moved in.
""",
    "hobbies": """
I have been learning to bind books, which is fiddly and extremely satisfying.
{name} dragged me to a climbing wall and my forearms have not forgiven either of us.
The choir is working on a piece in four parts and the tenors are, as ever, struggling.
I started a sourdough habit during a dull winter and it never quite went away.
Our pub quiz team came third on {day}, mainly thanks to a question about river lengths.
I bought a second-hand film camera and I am rationing the roll like it is gold.
The allotment is producing more courgettes than any household could reasonably eat.
{name} and I have been cycling on Sunday mornings, weather permitting, which is rarely.
I finished a {n}-piece jigsaw and immediately felt the urge to start another one.
The local history group meets on {day} evenings and the talks are surprisingly good.
I am learning chess openings from videos and still lose to my nephew.
Birdwatching sounded dull until I saw a kingfisher on the canal and got hooked.
I joined a beginners' pottery course and so far I have made {n} lopsided bowls.
The running club has a new route along the river that is flat and pleasantly quiet.
I have been sketching in a notebook on my lunch breaks, mostly trees and coffee cups.
{name} is teaching me to knit, and my first scarf is more of a long triangle.
We went to a folk night at the community hall and it was packed to the rafters.
I keep buying gardening books and then not reading them.
The board game group tried a new game that took {n} hours and nobody fully understood.
I have been practising the ukulele badly but with great enthusiasm.
""",
    "money": """
I sat down with the bank statements on {day} and the number of subscriptions we pay for is embarrassing.
We are trying the envelope method for groceries this month, with mixed results.
{name} asked for advice about pensions and I realised I know less than I thought.
The energy bill jumped again, so we are being stricter with the thermostat.
I moved some savings into an account with a slightly better rate, which felt very grown-up.
Our car is getting old and we are starting to think about what replaces it.
I keep a little spreadsheet of spending and it is both motivating and depressing.
The kids have discovered pocket money negotiations and they are ruthless.
We cancelled {n} streaming services and nobody noticed for a month.
I am trying to build up an emergency fund that could cover three months of bills.
{name} recommended an app that rounds up purchases into savings, which is painless.
Tax paperwork is on my list for {month}, which means I will do it at the last minute.
The price of a coffee near the office has gone up twice this year.
We are saving for a proper holiday next year, so this summer will be modest.
I finally read the small print on our phone contracts and we are overpaying.
The credit card statement had a charge I did not recognise, which turned out to be my own forgetfulness.
We have been cooking at home more and the savings are noticeable.
I want to put a little aside each month for the house repairs we know are coming.
Selling old furniture online brought in a surprising amount and cleared the garage.
{name} is trying a no-spend month and posting about it with great drama.
""",
    "family": """
{name} called for an hour on {day} and we covered everything from the garden to politics.
The kids have a school project on volcanoes and the kitchen table is covered in papier-mâché.
My parents are thinking about downsizing, which everyone has opinions about.
We are planning a family get-together in {month}, which means a group chat with {n} people in it.
The youngest has decided she only eats food that is beige, which is a phase, I hope.
My brother and I have been swapping old photos and laughing at our haircuts.
Parents' evening was reassuring, apart from a comment about handwriting.
{name} is visiting for the weekend, so the spare room needs clearing.
The teenagers have started cooking dinner once a week, and it is genuinely good.
I forgot my cousin's birthday and sent a very apologetic card three days late.
Grandad has discovered video calls and now rings at unpredictable hours.
We had a proper Sunday lunch with everyone round the table for the first time in months.
The school run is chaos on rainy days, with every parent driving at once.
My sister and I are planning a surprise for our parents' anniversary.
{name} lent us a travel cot, which saved us a lot of money and a lot of space.
The kids' bedtime has crept later over the summer and we are trying to pull it back.
We played a board game as a family and it ended, as usual, in an argument about the rules.
My aunt sends postcards from everywhere she goes and we have a wall of them now.
I spent {day} helping my dad set up his new phone, a task that required patience.
The dog has become the kids' favourite sibling and nobody is pretending otherwise.
""",
    "food": """
I tried a new curry recipe on {day} and it was good enough to make again.
{name} brought round a lemon cake that disappeared in about ten minutes.
We are trying to eat less meat during the week, mainly lentils and lots of beans.
The farmers' market has started selling proper tomatoes again and I am thrilled.
I burnt the garlic twice while talking on the phone, which says a lot about my multitasking.
Meal planning on Sundays has saved us from the nightly what-shall-we-eat debate.
The kids want pizza every Friday and I have stopped fighting it.
I have been making soup in big batches and freezing it in portions.
{name} has a theory that every dish improves with more butter, and I cannot argue.
We found a little bakery near the station that does excellent cinnamon buns.
I attempted homemade pasta and the kitchen looked like a flour explosion.
Our slow cooker has become the hero of weeknight dinners.
I keep buying fresh herbs and letting them wilt in the fridge.
We had friends over for dinner and I cooked far too much, as usual.
{name} recommended a cookbook of one-pot dishes, which suits our washing-up habits.
The spice drawer is a disaster of half-empty jars with faded labels.
I made jam from the blackberries on the lane and it set perfectly for once.
We tried a new Lebanese place in town and the flatbreads were incredible.
Breakfast has become porridge every day, with whatever fruit is going soft.
I am trying to get better at knife skills, and so far I still have all my fingers.
""",
}

_ASSISTANT: dict[str, str] = {
    "work": """
It may help to separate the decisions that need the whole team from the ones you can make alone.
A written stand-up works best when each person answers the same three short prompts.
If reviews feel heavy, draft the examples first and the judgements afterwards.
Protecting focus time is easier when it sits in the shared calendar rather than in your head.
When two priorities collide, ask which one is hardest to undo if it slips.
A short decision log can save hours of re-arguing the same point next month.
Flaky tests are usually worth a day of investigation, because they slowly erode trust in the suite.
For a new mentee, a standing half hour each week tends to work better than ad hoc chats.
Agreeing on what 'done' means up front prevents a lot of late surprises.
If a meeting has no decision to make, a written update usually serves people better.
Giving a graduate one small project they own end to end builds confidence quickly.
Pairing on a tricky bug tends to be faster than either person working alone.
A migration is a good moment to delete the things nobody has used in a year.
""",
    "travel": """
Trains often beat flights on door-to-door time for journeys under five hours.
It is worth photographing your documents and keeping a copy somewhere offline.
A gentle first day helps a lot with jet lag; daylight in the morning makes the biggest difference.
For day trips, grouping places by area usually saves more time than any clever ordering.
Local tourist offices often know about markets and events that never make it into guidebooks.
Packing cubes will not make you pack less, but they do make it easier to find things.
Checking the cancellation terms before booking is dull but usually pays off.
Booking the first and last night carefully matters more than the nights in between.
A small day bag with water, snacks and a charger saves a lot of detours.
Off-season trips are often cheaper and calmer, with shorter queues everywhere.
Splitting a long journey with one overnight stop can make it far more pleasant.
Learning a handful of local phrases goes a long way with the people you meet.
""",
    "health": """
Consistency matters more than intensity when building a new exercise habit.
A regular wake-up time, even at weekends, is one of the most reliable ways to steady your sleep.
If a symptom changes or gets worse, it is worth checking in with your doctor rather than waiting.
Small cues help: a glass of water next to the kettle is easier than an app reminder.
Short breaks from the screen every twenty minutes can ease eye strain noticeably.
Stretching after a warm shower tends to feel easier and safer than stretching cold.
It might be worth keeping a simple diary of the headaches to spot patterns.
Gentle, regular movement is usually better for a sore back than long rests.
Caffeine late in the day can affect sleep even when you do not feel it.
A short walk after meals is an easy habit that many people find helps their energy.
Physio exercises tend to work best when they are tied to something you already do daily.
Writing worries down before bed can make it easier to switch off.
""",
    "home": """
A lot of appliance noises come from something small, such as a loose panel or a worn bearing.
Tackling one cupboard at a time keeps a clear-out from taking over the weekend.
Damp near a door is often about ventilation or a failing seal, so it is worth checking early.
Getting two or three quotes for bigger jobs gives you a feel for a fair price.
A mesh Wi-Fi point can help more than moving furniture around the signal.
Labelling the boxes as you go saves a second round of sorting later.
A written list of small repairs makes it easier to batch them into one visit.
Bleeding the radiators before winter often fixes uneven heating and clanking.
A door seal that has gone is usually a cheap part and a short job.
Sorting by 'keep, donate, bin' keeps a loft clear-out moving.
Photographing the back of the router and the fuse box saves searching later.
Small repairs done early tend to stay small.
""",
    "hobbies": """
Hobbies tend to stick when there is a regular time and a small social element.
Keeping a simple log of what you practised makes progress visible on slow weeks.
Beginners' classes are often the best value, because the basics are where most of the learning is.
A small goal, like one finished piece a month, keeps things fun rather than pressured.
Local groups are a great way to borrow equipment before committing to buying it.
Rest days matter for physical hobbies as much as for training plans.
Joining a club's beginner sessions is a low-pressure way to see if you like it.
Film photography rewards slowing down and thinking about each frame.
A simple practice routine of fifteen minutes a day beats an occasional long session.
Many hobby groups lend equipment to newcomers for the first few weeks.
Sharing what you make, even informally, tends to keep the motivation up.
""",
    "money": """
Listing every subscription in one place usually reveals a few that are easy to cut.
An emergency fund is typically sized to cover three to six months of essential costs.
Automating savings on payday removes the temptation to decide every month.
Comparing the total cost over a contract term is more useful than the headline monthly price.
A short monthly money check-in tends to work better than an occasional big review.
It is worth keeping receipts for larger purchases together, in case of warranty claims.
Energy bills are often easier to manage with a fixed monthly payment and a yearly review.
Round-up savings are painless, but a fixed transfer on payday usually grows faster.
Checking for duplicate insurance cover can free up a surprising amount.
Selling things you no longer use is both tidy and a small boost to savings.
Keeping one month's bills in the current account smooths out the timing of payments.
""",
    "family": """
Shared calendars can take a lot of the friction out of family logistics.
Teenagers often respond better to being given a real responsibility than to reminders.
Small rituals, such as a weekly meal together, tend to matter more than big occasions.
For picky eaters, offering one familiar food alongside something new usually helps.
Planning a surprise is easier if one person owns the list and the others own single tasks.
Video calls go more smoothly with older relatives if you agree on a regular time.
Giving children a small say in plans makes them far more willing to join in.
A standing call time with grandparents turns a chore into a routine everyone expects.
Rotating who cooks once a week spreads the load and builds skills.
Rainy-day school runs are easier with a walking bus or a car share.
Writing a short list of who brings what keeps family gatherings calm.
""",
    "food": """
Batch cooking on a quiet afternoon can cover several busy weeknights.
Beans and lentils absorb flavour well, so spices and acidity make a big difference.
Herbs last longer stood in a glass of water in the fridge, like flowers.
A weekly plan with two flexible nights leaves room for leftovers and changes of mood.
Toasting spices briefly in a dry pan brings out much more flavour.
Freezing soup in single portions makes it easy to grab lunch on busy days.
Cooking a double batch on Sunday covers at least one busy weekday.
A squeeze of lemon at the end lifts most soups and stews.
Freezing bread in slices means nothing goes stale.
A simple pantry of tins, grains and spices makes last-minute meals easy.
Tasting as you go is the easiest way to improve any recipe.
""",
}

INCIDENTAL = _lines("""
Parking at the hospital cost me {money} for two hours, which felt steep.
{name}'s train got in at {clock}, only ten minutes late for once.
The new kettle was {money} in the sale, down from almost double that.
We spent {money} at the garden centre, mostly on compost and one very optimistic fig tree.
The school concert starts at {clock}, so we'll eat early that day.
The plumber's call-out fee alone was {money}, before he even opened his toolbox.
{name} turns {age} in {month} and wants a party with a magician, apparently.
Our weekly shop came to {money}, which is more than it was a year ago.
The library fine was {money}, for a book I was sure I had returned.
I got the last bus at {clock}, after the quiz ran long.
The gym's off-peak membership is {money} a month, which is tempting.
{name} ran {km} kilometres on Sunday and then complained about it all week.
The taxi from the station was {money}, and the driver talked about football the whole way.
The council tax letter says the next payment leaves the account in {month}.
I was on hold for {mins} minutes before anyone answered at the bank.
Dinner at {name}'s was lovely; we didn't leave until after {clock}.
The cinema tickets were {money} each, so it had better be a good film.
The new neighbours' van turned up at {clock} and the unloading took all morning.
""")

USER_ASIDES = _lines("""
Sorry, this has turned into a long message; I think better when I type.
Anyway, that is the news from here.
I keep meaning to write these things down properly and then life happens.
It has been one of those weeks where every day feels like a Monday.
On a lighter note, the weather finally turned and we ate outside on {day}.
I will stop rambling in a second, I promise.
Let me know what you think, no rush at all.
{name} says hello, by the way.
I had a proper lie-in on {day}, which felt like a holiday in itself.
Honestly, most of this is small stuff, it just adds up.
I need to get better at saying no to things.
Remind me to tell you about the thing with the car park later.
""")

AI_OPENERS = _lines("""
That sounds like a full week; here are a few thoughts.
Thanks for filling me in, there is a lot going on.
Good to hear from you, let me pick up a couple of points.
That all makes sense, and some of it is very relatable.
Happy to help you think this through.
Thanks for the detail, it helps to see the whole picture.
Some useful context there; a few suggestions below.
It sounds like things are moving, even if slowly.
""")

AI_GENERIC = _lines("""
One option is to pick the smallest next step and do just that today.
It might help to write down what a good outcome would look like before deciding.
If something keeps coming back to your list, it may need a fixed slot in the week.
Breaking a big job into a few named pieces often makes it feel far more manageable.
It is fine to park a decision until you have the one missing piece of information.
Asking someone who has done it before can save a surprising amount of time.
A quick check at the end of each week helps keep loose ends from piling up.
Keeping the plan simple usually beats a clever plan nobody follows.
If two options seem equally good, the cheaper one to reverse is often the safer choice.
Celebrating the small wins along the way is worth more than it sounds.
When a week is this full, it can help to decide in advance which things are allowed to slip.
A shared note that everyone involved can edit tends to beat a long chain of messages.
It is worth checking whether the deadline you are working to is real or just assumed.
Sometimes the quickest route is a five-minute phone call rather than another round of email.
If you are unsure, a small trial run will tell you more than another hour of planning.
Writing the question down precisely is often half of the answer.
A bit of slack in the schedule is what lets you absorb the surprises without stress.
It can be useful to ask what you would advise a friend to do in the same spot.
Try to finish one thing properly before opening the next, even if it is a small one.
Most plans survive contact with reality better when they have a clear first step.
It helps to know who is waiting on you, and who you are waiting on, at any moment.
A regular review, even a short one, turns a pile of loose threads into a list.
Energy matters as much as time, so it is worth doing the hard things when you are fresh.
If a task keeps getting postponed, it may be too big or too vague to start.
Getting a second opinion early costs less than fixing things late.
""")

AI_CLOSERS = _lines("""
Let me know how it goes.
Happy to go into more detail on any of this.
Shout if you want a second pair of eyes on the plan.
I hope the rest of the week is calmer.
Keep me posted.
Would it help if I drafted a checklist?
""")


def user_lines(topic: str) -> list[str]:
    """Filler sentences a user might write about ``topic``."""
    return _lines(_USER[topic])


def assistant_lines(topic: str) -> list[str]:
    """Filler sentences an assistant might reply with about ``topic``."""
    return _lines(_ASSISTANT[topic])


def _banks(block: str) -> dict[str, list[str]]:
    banks: dict[str, list[str]] = {}
    name = ""
    for line in _lines(block):
        if line.startswith("## "):
            name = line[3:].strip()
            banks[name] = []
        else:
            banks[name].append(line)
    return banks


# Values that questions ask about, drawn without repetition within a conversation.
BANKS = _banks("""
## pets
Biscuit
Pickle
Nutmeg
Waffles
Pretzel
Mabel
Crumpet
Ziggy
Dumpling
Olive
## titles
The Salt Orchard
A Map of Small Winters
Nine Bridges Down
The Glassblower's Niece
Tides of Ash
The Last Ferry to Inishmore
Paper Kingdoms
The Clockmaker's Garden
Under the Linden
A Season of Foxes
## restaurants
The Crooked Spoon
Bramble & Rye
Casa Lumi
The Salt House
Mizuna
The Copper Pot
Olive & Vine
Little Hanoi
## cars
Volvo 240
Saab 900
Citroën 2CV
Land Rover Defender
Fiat Panda
Morris Minor
Peugeot 205
## instruments
accordion
cello
bodhrán
mandolin
double bass
banjo
harmonica
fiddle
## words
otter
basil
quartz
pepper
cobalt
thistle
marble
walnut
saffron
pebble
## hotels
Hotel Miramar
the Lantana Inn
Casa dos Ventos
the Old Customs House
Pension Adler
the Harbourmaster's Lodge
Villa Sorgente
the Granary Rooms
## crops
purple sprouting broccoli
runner beans
Swiss chard
rainbow carrots
garlic
sugar snap peas
butternut squash
leeks
## containers
green biscuit tin
red toolbox
shoebox marked 'cables'
blue document wallet
old tea caddy
wicker basket
## places
the top shelf of the airing cupboard
the bottom drawer of the hall dresser
the loft, just left of the hatch
the cupboard under the stairs, behind the hoover
the garage, on the shelf above the bikes
the spare room wardrobe
## firms
Keyworth & Sons
Brightbolt Locks
Tumbler Security
Latchford Ltd
Anchor Keys
Deadbolt Brothers
## items
the new desk chair
the replacement kettle
the garden bench
the standing lamp
the bookcase
the bike rack
## cafes
the Tin Kettle
Marrow & Mint
the Lido Café
Hartley's
the Orangery
Crumb & Co
the Boathouse
Fig Tree Deli
## codenames
Marigold
Tamarind
Pumice
Sorrel
Gannet
Nimbus
Quokka
Obsidian
## pickups
the airport desk
the station forecourt
the harbour office
the town-centre depot
the hotel car park
## insurance
car
home
pet
travel
contents
life
## rooms
spare bedroom
main bedroom
box room
kitchen
living room
study
## features
login page
export button
search bar
settings screen
upload dialog
billing page
## accounts
joint account
savings account
business account
kids' account
## nights
Thursday
Friday
Saturday
Sunday
""")

# Spread "same day" pairs: the event asked about | the event whose date is stated | topic.
SAME_DAY = [
    ("the plumber's visit", "the kitchen delivery", "home"),
    ("the chimney sweep's visit", "the window cleaner's round", "home"),
    ("my follow-up scan", "the team away-day", "health"),
    ("the school photo", "the harvest assembly", "family"),
    ("the leaving drinks for the old boss", "the quarterly review", "work"),
    ("the allotment committee meeting", "the seed swap", "hobbies"),
]
