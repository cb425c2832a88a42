# ruff: noqa: E501
# (prose templates: one sentence per line reads better than wrapped string fragments)
"""Question frames of the ``phenomena`` dataset, as text.

Each block starts with ``## name | field | field...`` and holds tagged template lines;
a frame picks one line per tag it needs. Tags: ``S`` a statement, ``Q`` a question,
``A``/``B`` the first and second statement of a pair, ``L`` a line tying a name to a
role, ``F`` a fact about that name, ``I``/``X`` a restatement without / with a change
cue. Slots are ``str.format`` fields filled by the frame code.
"""

from __future__ import annotations

__all__ = [
    "DISTRACTOR",
    "EVENTS",
    "EVENT_LINES",
    "INDIRECT",
    "OFFSET_IN_MESSAGE",
    "OFFSET_IN_QUESTION",
    "PARAPHRASE",
    "ROLES",
    "SPREAD",
    "UPDATED",
]

# Paraphrase: {v} is the answer. No question shares a content word with its statements.
PARAPHRASE = """
## tutor | family
S: My sister's little girl has started violin lessons, and her tutor is a {v} who comes round after school.
S: Turns out my sister's daughter is learning the violin now, with a tutor called {v}.
Q: Who teaches my niece the fiddle?
Q: Which person gives my niece fiddle classes?
## pills | health
S: The GP has bumped my blood pressure pills up to {v} a day.
S: At the surgery this morning they raised my blood pressure tablets to {v} daily.
Q: What dose of hypertension medication have I been prescribed?
Q: How strong is the hypertension medicine the physician put me on?
## puppy | family
S: The kids finally settled on a name for the puppy: {v}.
S: After a week of arguing, the puppy is officially {v}.
Q: What do we call our young hound?
Q: Which moniker did we give the new dog?
## rent | home
S: Our landlord is putting the rent up to {v} from next quarter.
S: A letter came from the landlord: the rent goes up to {v} starting next quarter.
Q: What will our monthly housing payment to the property owner become?
Q: How much will we owe the property owner each month for the flat?
## race | hobbies
S: I clocked {v} in the half marathon on Sunday, a new personal best!
S: Official result from Sunday's half marathon: {v}, my best yet.
Q: How long did the 21-kilometre race take me?
Q: What was my finishing time over 21 km at the weekend?
## gearbox | money
S: The mechanic reckons the gearbox repair will come to {v}.
S: The mechanic phoned: sorting out the gearbox will be {v}.
Q: What did the garage quote for fixing the transmission?
Q: How much will the car workshop charge to mend the transmission?
## router | home
S: The router passphrase is {v}; I've stuck it on the fridge door.
S: For the record, the broadband box's passphrase is {v}.
Q: What's the wireless key for our home network?
Q: Which password gets a guest onto our Wi-Fi?
## mum | travel
S: Mum's plane touches down at {v} on Saturday.
S: Mum texted: she lands at {v} on Saturday.
Q: When does my mother's flight arrive?
Q: At what hour is my mother's aircraft due in?
## refund | money
S: The accountant thinks we'll get roughly {v} back from the taxman this year.
S: According to the accountant, the taxman owes us about {v} this year.
Q: How big is our expected tax refund?
Q: What sum should the revenue service return to the household?
## book_circle | hobbies
S: Our book circle voted to read {v} next.
S: The book circle has gone for {v} as the next one, to my delight.
Q: Which novel has the literature club picked for its coming session?
Q: What is the literature group working through for the upcoming meeting?
## listing | money
S: The estate agent listed the house at {v} this morning.
S: We're officially on the market: the estate agent valued the house at {v}.
Q: What asking price did the realtor put on our home?
Q: How much are we selling our home for?
## boiler | home
S: The boiler chap who fitted our combi last winter is called {v}.
S: Our boiler was put in last winter by {v}, who did a tidy job.
Q: Who installed our heating system?
Q: Which engineer set up the central heating for us?
## cholesterol | health
S: My cholesterol came back at {v}, which the nurse called borderline.
S: Blood results are in: cholesterol {v}, borderline according to the nurse.
Q: What lipid figure did my lab work show?
Q: What was the fat-level reading in my lab test?
## sitter | family
S: The babysitter charges {v} an hour, cash only.
S: Our sitter asks {v} per hour, which is fair.
Q: How much does our childminder cost?
Q: What's the going rate of the person who minds the kids?
## expenses | work
S: Finance approved my expenses claim for {v} at last.
S: My expenses went through: {v}, signed off by finance.
Q: How much reimbursement did accounts agree to pay me?
Q: What sum will the company refund me for costs?
## ferry | travel
S: The ferry crossing to the island takes {v}, according to the timetable.
S: Timetable says the ferry over to the island is {v} each way.
Q: How long is the boat journey to the isle?
Q: What's the sailing time across to the isle?
## starter | food
S: Gran's recipe card says the sourdough wants {v} of starter per loaf.
S: For the sourdough, it's {v} of starter in each loaf, as Gran wrote it.
Q: How much leaven goes into every bread?
Q: What quantity of levain does each bake need?
"""

# Indirect reference, part 1: ## role as asked | its possessive | topic; L ties {name} to it.
ROLES = """
## my manager | my manager's | work
L: My manager, {name}, finally signed off the rota for next month.
L: {name} has been my manager since the reorganisation, and honestly it has been a good change.
## my brother-in-law | my brother-in-law's | family
L: My brother-in-law {name} came round to look at the damp patch in the hallway.
L: {name}, who married my sister, is handy with this kind of thing.
## our next-door neighbour | our next-door neighbour's | home
L: Our next-door neighbour, {name}, took a parcel in for us again.
L: {name} from next door waved at me over the fence this morning.
## the kids' swimming coach | the kids' swimming coach's | family
L: The kids' swimming coach is a patient soul called {name}.
L: {name} coaches the children at the pool on Saturday mornings.
## my physio | my physio's | health
L: My physiotherapist, {name}, has me doing exercises with a resistance band.
L: I've started seeing a physio called {name} about the shoulder.
## my old university flatmate | my old university flatmate's | family
L: {name}, who I shared a flat with at university, got in touch out of the blue.
L: An old flatmate from my university days, {name}, messaged me last night.
## the retired pilot I met at pottery | the pottery-class pilot's | hobbies
L: At pottery on Tuesday I got chatting to a retired pilot called {name}.
L: There's a retired airline pilot in my pottery class, {name}, who makes beautiful jugs.
## my running partner | my running partner's | hobbies
L: {name} and I have been running together on Saturdays for a couple of years now.
L: My running buddy {name} dragged me out in the rain again.
## our accountant | our accountant's | money
L: Our accountant, {name}, wants the receipts by the end of the month.
L: {name} has done our tax returns for years and never once lost a receipt.
## the new starter on my team | the new starter's | work
L: We have a new starter on my team, {name}, who joined from a fintech.
L: {name} joined my team this month, straight from a fintech.
## our wedding planner | our wedding planner's | family
L: Our wedding planner, {name}, sent over a colour-coded spreadsheet.
L: {name} is organising the wedding for us, thank goodness.
"""

# Indirect reference, part 2: F states {v} about {name}; Q asks with {role} or {poss}.
INDIRECT = """
## moved | family
F: {name} has just moved to {v}, apparently for a quieter life.
F: {name} packed up and relocated to {v} last month.
Q: Where has {role} moved to?
Q: Which town does {role} live in these days?
## restaurant | food
F: {name} swears by a little place called {v} for Sunday lunch.
F: According to {name}, {v} does the best Sunday roast for miles.
Q: Which restaurant does {role} recommend for Sunday lunch?
## daughter | family
F: {name}'s daughter is called {v}, and she has just started school.
F: {name} showed me photos of their little girl, {v}, who has just started school.
Q: What is {poss} daughter called?
Q: What's the name of {poss} little girl?
## car | money
F: {name} drives an ancient {v} and refuses to part with it.
F: {name} pulled up in a battered {v}, which they have had for ever.
Q: What car does {role} drive?
## builder | home
F: {name} recommended a builder called {v} for the loft conversion.
F: {name} gave me the number of {v}, a builder they used for their loft.
Q: Which builder did {role} suggest for the loft?
## instrument | hobbies
F: {name} plays the {v} in a folk band at weekends.
F: Turns out {name} is a keen {v} player, gigs and all.
Q: What instrument does {role} play?
## lent_book | hobbies
F: {name} lent me a novel called {v}.
F: {name} pressed a copy of {v} into my hands and told me to read it.
Q: What book did {role} lend me?
## fortnight | travel
F: {name} is off to {v} for a fortnight in {month}.
F: {name} has booked two weeks in {v} for {month}.
Q: Where is {role} going on holiday for two weeks?
"""

# Distractors: ## name | topic | keywords. S states {v} for {inst}; Q asks about one {inst}.
DISTRACTOR = """
## trains | travel | train, platform
S: The {inst} train goes from {v}.
S: Trains to {inst} leave from {v}, according to the board.
Q: Which platform does the {inst} train leave from?
## insurance | money | insurance, renew
S: The {inst} insurance renews at {v} a year.
S: Renewal letter for the {inst} insurance came: {v} for the year.
Q: How much is the {inst} insurance renewal?
## rooms | home | measurements
S: The {inst} measures {v}.
S: I measured the {inst} at last: {v}.
Q: What are the measurements of the {inst}?
## extensions | work | extension
S: {inst}'s desk extension is {v}.
S: You can reach {inst} on extension {v}.
Q: What is {inst}'s phone extension?
## tickets | work | ticket, freezing
S: The bug where the {inst} freezes is ticket {v}.
S: Ticket {v} covers the {inst} freezing on older phones.
Q: Which ticket tracks the {inst} freezing?
## shoes | family | shoe
S: {inst} is now in {v} shoes.
S: The shoe shop measured {inst} at a {v}.
Q: What shoe size does {inst} take?
## seats | hobbies | concert
S: {inst} is in {v} for the concert.
S: For the concert, {inst} ended up in {v}.
Q: Where is {inst} sitting at the concert?
## boosters | family | booster
S: {inst}'s booster jab is due on {v}.
S: The vet's reminder says {inst} needs a booster on {v}.
Q: When is {inst}'s booster due?
## cards | money | card
S: The {inst} card ends in {v}.
S: The card for the {inst} is the one ending {v}.
Q: What are the last four digits of the {inst} card?
## tables | food | table
S: The table for {inst} night is booked for {v}.
S: We've got a table on {inst} night at {v}.
Q: What time is the table booked for on {inst} night?
## door_codes | home | door, code
S: The door code for {inst}'s building is {v}.
S: To get into {inst}'s building, the door code is {v}.
Q: What's the door code for {inst}'s building?
"""

# Spread: A and B are the two statements (T: a tool record instead of B); Q the question.
SPREAD = """
## flight | travel
A: We're booked on {flight} to {town} for the long weekend.
A: Our tickets to {town} are on flight {flight}, going out on the Friday.
T: {flight} | scheduled | departs {time} | terminal {terminal} | gate {gate}
Q: What time does our flight to {town} leave?
Q: When do we take off for {town}?
## same_day | any
A: {X} is booked for the same day as {y}, which keeps things simple.
A: I've arranged {x} to coincide with {y}.
B: {Y} is confirmed for {when}.
B: Just had confirmation that {y} is on {when}.
Q: What date is {x}?
Q: On which day is {x} happening?
## keys | home
A: The spare keys for {name}'s flat are in the {box}.
A: I put {name}'s spare flat keys in the {box} for safekeeping.
B: The {box} lives in {place}.
B: If you ever need the {box}, it's in {place}.
Q: Where exactly would I find the spare keys to {name}'s flat?
Q: In which part of the house are {name}'s spare flat keys kept?
## hotels | travel
A: For {town}, {one} looks promising: it's near the old harbour.
A: First hotel on the list for {town}: {one}, with a roof terrace.
B: Another option in {town} is {two}; the reviews rave about the breakfast.
B: I'm also adding {two} in {town} to the shortlist, mainly for the location.
Q: Which two hotels are on our shortlist for {town}?
Q: What are the two places we're considering staying at in {town}?
## raised_bed | hobbies
A: Today we put {one} into the new raised bed.
A: Half of the new raised bed is now {one}.
B: The other half of the raised bed got {two}.
B: I finished planting the raised bed with {two} along the back.
Q: What two crops did we plant in the new raised bed?
Q: Which two vegetables went into the new raised bed?
## locksmith | home
A: The locksmith who changed our locks works for a firm called {firm}.
A: We used {firm} for the emergency locksmith call-out.
T: From: accounts@{slug}.example | Subject: Invoice {number} from {firm} | Amount due: {amount} | Payment within 14 days, thank you for your custom.
Q: How much do we owe the locksmith?
Q: What is the amount due on the locksmith's invoice?
## class_teacher | family
A: {kid} is in class {form} this year, along with most of their friends.
A: The school letter says {kid} is going into class {form}.
B: Class {form} has {teacher} as its teacher this year.
B: The teacher for class {form} is {teacher}, who everyone says is lovely.
Q: Who is {kid}'s teacher this year?
Q: Which teacher will {kid} have this year?
## order | home
A: {Thing} is order {order}, paid for on the credit card.
A: I ordered {thing} online; the order number is {order}.
T: Order {order}: in transit with the courier, estimated delivery {when}
Q: When is {thing} expected to arrive?
Q: What's the delivery date for {thing}?
"""

# Temporal, offset in the question: ## name | topic | days from the anchor | calendar label.
OFFSET_IN_QUESTION = """
## knee | health | 42 | Knee operation
A: My knee operation is booked for {date}.
Q: If I can't drive for six weeks after the knee operation, from what date can I drive again?
## cast | health | 35 | Fracture clinic
A: The fracture clinic fitted the cast on {date}.
Q: The cast comes off five weeks after it was fitted: on what date is that?
## passport | family | 21 | Passport appointment
A: The passport appointment for the kids is on {date}.
Q: Allowing three weeks after the appointment, by what date should the kids' passports arrive?
## invoice | work | 30 | Lindell invoice sent
A: The big invoice to the Lindell account went out on {date}.
Q: With 30-day payment terms, on what date is the Lindell invoice due?
## lease | home | -28 | Lease signing
A: We sign the lease on the new flat on {date}.
Q: Notice must reach the old landlord 28 days before we sign the new lease: what is the last date to hand it in?
## sowing | hobbies | 45 | Sow tomatoes
A: The tomato seeds were sown on {date}.
Q: If the tomatoes get transplanted 45 days after sowing, on what date will that be?
## wedding | family | -10 | Cousin's wedding
A: My cousin's wedding is on {date}.
Q: RSVPs are due ten days before my cousin's wedding: by what date?
"""

# Temporal, offset in a second message: ## name | topic | days per unit | counts to draw.
OFFSET_IN_MESSAGE = """
## hernia | health | 7 | 4, 6, 8
A: My hernia operation is on {date}.
B: The surgeon was clear: no heavy lifting for {n} weeks after the operation.
Q: From what date am I allowed to lift heavy things again?
## puppy_jab | family | 1 | 14, 21, 28
A: We collect the puppy on {date}.
B: The breeder said the second jab is due {n} days after we collect her.
Q: On what date is the puppy's second vaccination due?
## cottage | travel | -7 | 2, 3, 4, 6
A: Our cottage stay starts on {date}.
B: The cottage owner wants the balance paid {n} weeks before we arrive.
Q: By what date must we pay the balance for the cottage?
## probation | work | 1 | 30, 60, 90
A: I start at the new company on {date}.
B: HR told me the probation review happens {n} days after the start date.
Q: What date is my probation review?
"""

# Temporal ordering and intervals: events (label | topic) and how a date is stated.
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
EVENT_LINES = """
## event
A: Just confirmed: {label} is on {date}.
A: Put it in the diary: {label} is on {date}.
A: Reminder to self: {label} falls on {date}.
Q: Which comes first, {a} or {b}?
Q: Which is earlier in the calendar: {a} or {b}?
B: How many days are there between {a} and {b}?
B: How many days separate {a} from {b}?
"""

# Updates: ## name | topic | keywords. A first statement; I restatement with no change
# cue (no "changed", "instead", "now is"...); X a change said outright ({old} = before).
UPDATED = """
## photographer | family | photographer
A: We're meeting the wedding photographer at {v} on Thursday.
A: The wedding photographer wants to meet us at {v} to go through the shot list.
I: See you at {v} for the photographer meeting; I've let her know.
I: Thursday, {v}, wedding photographer: that's the plan.
X: Change of plan for the photographer: we're meeting at {v} instead of {old}.
X: The photographer asked to switch from {old} to {v}.
Q: Where are we meeting the wedding photographer?
## lunch | food | Sunday, lunch
A: Sunday lunch is for {v} people, so I'll get a big joint of beef.
I: Sunday lunch: {v} of us, I've counted twice.
I: I'm laying {v} places for Sunday lunch.
X: Update on Sunday lunch: it's {v} people now, not {old}.
Q: How many people are coming for Sunday lunch?
## cat | home | cat
A: {v} is going to feed the cat while we're away.
A: {v} kindly offered to look after the cat while we're away.
I: {v} has the spare key and will pop in to feed the cat while we're away.
I: Dropped the cat food round at {v}'s, so the cat is sorted while we're away.
X: {old} can't do it any more, so {v} will feed the cat instead.
Q: Who's feeding the cat while we're away?
## pickup | family | holiday, club
A: Pickup from holiday club is at {v}.
I: Holiday club finishes at {v}, so I'll leave work early.
I: I'll be at the holiday club gate at {v} as usual.
X: Holiday club changed the pickup time from {old} to {v}.
Q: What time do we collect the kids from holiday club?
## offsite | work | offsite
A: The team offsite will be in {v} this year.
I: Booked the coach for the team offsite in {v}.
I: Hotel rooms for the team offsite in {v} are sorted.
X: The team offsite has moved to {v} after the vote; {old} was too expensive.
Q: Where is the team offsite being held?
## codename | work | codename
A: The new app goes by the codename {v} internally.
I: Slides for the new app are in the {v} folder, since that's its codename.
I: Everyone calls the new app {v} internally; it's on the roadmap under that codename.
X: Legal vetoed {old}, so the new app's codename changed to {v}.
Q: What is the new app's internal codename?
## mortgage | money | mortgage
A: The broker found us a fixed mortgage rate of {v}.
I: The mortgage offer letter arrived: {v} fixed for five years.
I: Signed the mortgage paperwork at {v} fixed.
X: Rates moved, so the broker's mortgage quote went from {old} to {v}.
Q: What mortgage rate are we getting?
## mileage | hobbies | run
A: My coach has me running {v} a week at the moment.
I: This training block is {v} a week of running, says the coach.
I: The coach's plan for me: {v} of running every week.
X: The coach changed my weekly running target from {old} to {v}.
Q: How far am I supposed to run each week?
## spin | health | spin
A: My spin class is on {v} evenings.
I: Spin is {v} evenings these days, so I can't do dinner that night.
I: {v} evening is spin, so count me out for the pub.
X: The gym moved spin class from {old} to {v} evenings.
Q: Which evening is my spin class?
## christmas | family | Christmas
A: {v} is hosting Christmas this year.
I: We're all going to {v}'s for Christmas; {v} is doing the turkey.
I: Christmas at {v}'s this year, which means a very long table.
X: Scratch that, {old} can't host, so Christmas is at {v}'s now.
Q: Who's hosting Christmas this year?
## hire_car | travel | hire, car
A: We collect the hire car from {v}.
I: The hire car will be waiting for us at {v}.
I: Keys for the hire car are at {v}, ready when we land.
X: The rental company changed our hire car pickup from {old} to {v}.
Q: Where do we pick up the hire car?
"""
