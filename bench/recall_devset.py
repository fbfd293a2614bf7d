"""The recall-quality dev set: people's memory notes and questions about them, generated from templates.

Deterministic (``generate(seed)``), written for this project (no public benchmark is copied), and small
enough to ship as code: 12 people (one scope each), 250 filler notes per scope and the person's facts
(3,396 notes), 47 questions per scope (564), each with the notes that answer it (its evidence). Every note
is written on a day of the 150 before the scope's question day (``Scope.today``), in day order. Kinds:

- ``exact``: the question repeats the note's distinctive words ("What is the name of the kitten...").
- ``paraphrase``: no distinctive word in common ("Does she have any pets?" / "Adopted a kitten...").
- ``inflection``: the same word in another form (plural/singular, verb tense: "moving" / "moved").
- ``date``: the question names the day the note holds ("What did he do on 14 March?").
- ``multi``: two or three notes answer together ("Which cities has she lived in?"); most share a word
  with each other but not all with the question ("How is the vegetable garden going?" / "Tomatoes at the
  allotment got blight").
- ``dated``: the question names a time relative to the question's day ("What did he have for lunch
  yesterday?", "last Thursday", "two weeks ago", "in June"), and the answer is a note written then, in
  the words of many filler notes written on other days.

Most of a scope is filler written from templates that share words with the questions (another person's
allergy, a meeting "moved" to Tuesday, a friend's birthday), so that a word in common is not an answer.
Used by ``bench/recall_quality.py``; tune on this set only.

**Conversations.** Each note is written by a conversation (its ``origin.thread_id``, ``Scope.threads``), as
the service writes them: a conversation writes on one day, its notes one after another, and a day's
notes come from one or more conversations (a new one starts at each note with ``NEW_THREAD`` chance).
They are drawn from their own random stream, so the notes, days and questions are those of the set
without them. The facts told in two or three notes are told weeks apart, each note in its own
conversation; ``generate(one_sitting=True)`` tells each of them in one conversation instead (its notes
written together on its first note's day), the case where a hit's neighbours are the rest of the answer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

NOTES_PER_SCOPE = 250
PEOPLE = [
    ("Maya", "she"), ("Tom", "he"), ("Aiko", "she"), ("Luis", "he"), ("Priya", "she"), ("Jonas", "he"),
    ("Fatima", "she"), ("Oliver", "he"), ("Chloe", "she"), ("Kwame", "he"), ("Ingrid", "she"), ("Diego", "he"),
]  # fmt: skip
CITIES = ["Lisbon", "Porto", "Berlin", "Toronto", "Osaka", "Nairobi", "Lyon", "Austin", "Krakow", "Dublin",
          "Seville", "Utrecht", "Bergen", "Hanoi", "Quito", "Perth"]  # fmt: skip
FRIENDS = ["Sam", "Noor", "Elena", "Ravi", "Greta", "Marco", "Lena", "Yusuf", "Hana", "Pablo", "Iris", "Theo"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
PETS = [("kitten", "kittens"), ("puppy", "puppies"), ("rabbit", "rabbits"), ("parrot", "parrots")]
PET_NAMES = ["Miso", "Biscuit", "Pepper", "Luna", "Tofu", "Ziggy", "Mochi", "Olive"]
ALLERGENS = ["peanuts", "shellfish", "penicillin", "pollen", "gluten", "sesame"]
JOBS = [("nurse", "St. Mary's hospital"), ("data engineer", "a logistics start-up"), ("architect", "a small studio"),
        ("teacher", "a primary school"), ("pilot", "a regional airline"), ("accountant", "a bakery chain")]  # fmt: skip
SPORTS = ["badminton", "volleyball", "squash", "table tennis", "basketball", "water polo"]
LANGUAGES = ["Japanese", "Portuguese", "Swahili", "Korean", "Italian", "Polish"]
CARS = ["Skoda Octavia", "Toyota Corolla", "Volvo V60", "Fiat Panda", "Honda Civic", "Renault Clio"]
COLORS = ["red", "silver", "dark green", "white", "navy blue", "yellow"]
RESTAURANTS = ["Casa Lupe", "the Golden Lotus", "Trattoria Nino", "Mezze House", "the Blue Fig", "Sakura Bar"]
DOCTORS = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Herrera", "Novak"]
TOPICS = ["the budget", "climate policy", "a new podcast", "the quarterly plan", "remote work", "a board game",
          "the hiring freeze", "a novel by Ishiguro", "home gardening", "the office move",
          "electric bikes"]  # fmt: skip
FOODS = ["ramen", "a burrito", "lentil soup", "sushi", "a salad", "pizza", "dumplings", "falafel"]
PROJECTS = ["billing", "onboarding", "search", "mobile app", "data warehouse", "pricing page"]
ANIMALS = ["octopus", "wolf", "elephant", "penguin", "bee", "whale"]
STREETS = ["Elm Road", "Canal Street", "Mill Lane", "Harbour Way", "Station Road", "Park Avenue"]
INSTRUMENTS = ["cello", "piano", "trumpet", "ukulele", "violin", "drums"]
MEDICINES = ["amlodipine", "lisinopril", "losartan", "ramipril"]
BANDS = ["the Night Owls", "Blue Harbour", "Paper Lanterns", "the Static Kids"]
REGIONS = ["the Dolomites", "Andalusia", "the Scottish Highlands", "Crete", "the Azores", "Patagonia"]
BOOKS = ["Klara and the Sun", "Middlemarch", "The Overstory", "Piranesi", "Beloved", "Stoner"]
NUMBER_WORDS = {3: "three", 4: "four", 5: "five", 6: "six"}
SPAN_DAYS = 150
NEW_THREAD = 0.5  # the chance that a day's next note is written by another conversation


@dataclass
class Question:
    scope: str
    text: str
    kind: str
    evidence: list[int]  # indexes into the scope's notes


@dataclass
class Scope:
    key: str
    notes: list[str] = field(default_factory=list)  # oldest first (the order they are written in)
    days: list[str] = field(default_factory=list)  # each note's day (ISO), oldest first
    threads: list[str] = field(default_factory=list)  # each note's conversation (origin.thread_id), oldest first
    today: str = ""  # the day the questions are asked (ISO)


@dataclass
class DevSet:
    scopes: list[Scope]
    questions: list[Question]


def _date(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)}"


def _facts(rng: random.Random, name: str, he: str) -> list[tuple[list[str], list[tuple[str, str]]]]:
    """The person's facts: (the notes, [(kind, question)]) each; every question's evidence is all its notes."""
    her = {"she": "her", "he": "his"}[he]
    young, youngs = rng.choice(PETS)
    pet = rng.choice(PET_NAMES)
    city, home, study, worked = rng.sample(CITIES, 4)
    job, employer = rng.choice(JOBS)
    sport, language, car, color = rng.choice(SPORTS), rng.choice(LANGUAGES), rng.choice(CARS), rng.choice(COLORS)
    allergen, doctor, restaurant = rng.choice(ALLERGENS), rng.choice(DOCTORS), rng.choice(RESTAURANTS)
    friend, sibling, other = rng.sample(FRIENDS, 3)
    race, dinner, dentist, birthday = _date(rng), _date(rng), _date(rng), _date(rng)
    month, year, weekday = rng.choice(MONTHS), rng.randint(2015, 2025), rng.choice(WEEKDAYS)
    return [
        ([f"Adopted a {young} named {pet} from the animal shelter."],
         [("paraphrase", f"Does {name} have any pets?"), ("exact", f"What is the name of {her} {young}?"),
          ("inflection", f"How many {youngs} did {name} adopt?")]),
        ([f"{name} moved to {city} in {month} {year} for a new job."],
         [("inflection", f"When is {name} moving to {city}?"), ("paraphrase", f"Where does {name} live these days?")]),
        ([f"Allergic to {allergen}; always carries {her} medication."],
         [("paraphrase", f"Is there anything {name} must avoid eating or taking?"),
          ("inflection", f"What is {name} allergic to?")]),
        ([f"Works as a {job} at {employer}."],
         [("paraphrase", f"What does {name} do for a living?"), ("inflection", f"Where is {name} working now?")]),
        ([f"Plays {sport} every {weekday} evening with colleagues."],
         [("inflection", f"Which sport is {name} playing on {weekday}s?"),
          ("paraphrase", f"How does {name} stay fit?")]),
        ([f"Signed up for the {worked} half marathon on {race}."],
         [("date", f"What is happening on {race}?"), ("inflection", f"Which races is {name} running?")]),
        ([f"On {dinner}, had dinner with {friend} at {restaurant}."],
         [("date", f"What did {name} do on {dinner}?"), ("exact", f"Where did {name} have dinner with {friend}?")]),
        ([f"Learning {language} with an app, twenty minutes a day."],
         [("inflection", f"Which language has {name} learned?"),
          ("paraphrase", f"Is {name} studying a foreign tongue?")]),
        ([f"Drives a {color} {car}, bought second-hand in {year - 2}."],
         [("paraphrase", f"What vehicle does {name} own?"), ("exact", f"What colour is {name}'s {car.split()[0]}?")]),
        ([f"Dentist appointment with Dr. {doctor} on {dentist}."],
         [("date", f"Any appointments on {dentist}?"), ("paraphrase", f"Who looks after {name}'s teeth?")]),
        ([f"{name}'s birthday is on {birthday}; prefers a quiet dinner to a party."],
         [("date", f"What is on {birthday}?"), ("exact", f"When is {name}'s birthday?")]),
        ([f"Grew up in {home}.", f"Studied architecture at university in {study}.",
          f"Spent two years working in {worked} after graduating."],
         [("multi", f"Which cities has {name} lived in?")]),
        ([f"{her.capitalize()} sister {sibling} is a paramedic.", f"Brother {other} runs a bike shop in {city}."],
         [("multi", f"Who are {name}'s siblings?"), ("paraphrase", f"Tell me about {name}'s family.")]),
    ]  # fmt: skip


def _pairs(rng: random.Random, name: str, he: str) -> list[tuple[list[str], list[tuple[str, str]]]]:
    """Facts told in two notes, the second often sharing a word with the first but not with the question."""
    her = {"she": "her", "he": "his"}[he]
    street, instrument, medicine = rng.choice(STREETS), rng.choice(INSTRUMENTS), rng.choice(MEDICINES)
    band, region, book, pet = rng.choice(BANDS), rng.choice(REGIONS), rng.choice(BOOKS), rng.choice(PET_NAMES)
    city, friend, teacher, manager = rng.choice(CITIES), *rng.sample(FRIENDS, 3)
    month, date_ = rng.choice(MONTHS), _date(rng)
    told = [  # (first note, second note, question)
        (f"Started a vegetable garden at the allotment on {street}.", "Tomatoes at the allotment got blight.",
         f"How is {name}'s vegetable garden going?"),
        (f"Adopted a greyhound called {pet} last year.", f"{pet} needs a vet check for a sore hip on {date_}.",
         f"Tell me about {name}'s greyhound."),
        (f"Training for the {city} triathlon in {month}.", f"Swims at the {city} lido three mornings a week.",
         f"How is {name} preparing for the triathlon?"),
        (f"Takes {medicine} every morning for blood pressure.", f"{medicine} makes {her} dizzy; may switch.",
         f"What medication does {name} take for blood pressure, and how is it going?"),
        (f"Planning a hiking holiday in {region} with {friend}.", f"Found cheap flights to {region} for {month}.",
         f"What holiday is {name} planning?"),
        (f"Learning the {instrument} with {teacher} on Saturdays.", f"{teacher} set the recital for {date_}.",
         f"Which instrument is {name} learning, and is there a recital?"),
        (f"Joined a book club reading {book}.", f"The book club meets at {friend}'s flat on Thursdays.",
         f"When does {name}'s book club meet and what is it reading?"),
        (f"{manager} became {name}'s manager after the reorg.", f"{manager} approved the conference budget.",
         f"Who is {name}'s manager now?"),
        (f"Favourite band is {band}.", f"Saw {band} live in {city} and lost {her} voice singing.",
         f"What music does {name} love?"),
    ]  # fmt: skip
    return [([first, second], [("multi", question)]) for first, second, question in told]


def _dated(rng: random.Random, name: str, today: date) -> list[tuple[str, date, str]]:
    """Notes written on a day the question names relative to ``today``: (note, its day, question)."""
    friend, other = rng.sample(FRIENDS, 2)
    back = rng.randint(2, 7)
    weekday = WEEKDAYS[(today - timedelta(days=back)).weekday()]
    ago = rng.randint(3, 6)
    named = today - timedelta(days=rng.randint(20, 60))
    month_back = (today.month - 1 - rng.randint(3, 4)) % 12
    in_month = date(today.year if month_back < today.month - 1 else today.year - 1, month_back + 1, rng.randint(1, 28))
    last_month = (today.replace(day=1) - timedelta(days=1)).replace(day=rng.randint(1, 28))
    return [
        (f"Had {rng.choice(FOODS)} for lunch with {friend} near the office.", today - timedelta(days=1),
         f"What did {name} have for lunch yesterday?"),
        (f"Watched a documentary about {rng.choice(ANIMALS)}s at the cinema.", today - timedelta(days=back),
         f"Which documentary did {name} watch last {weekday}?"),
        (f"Talked with {other} about {rng.choice(TOPICS)} over coffee.", today - timedelta(days=ago),
         f"What did {name} talk about {NUMBER_WORDS[ago]} days ago?"),
        (f"Reviewed the {rng.choice(PROJECTS)} pull request with {friend}.", today - timedelta(days=14),
         "Which pull request was reviewed two weeks ago?"),
        (f"Read an article about {rng.choice(TOPICS)} on the plane.", named,
         f"What did {name} read on {named.day} {MONTHS[named.month - 1]}?"),
        (f"Call with the {rng.choice(CITIES)} team about {rng.choice(TOPICS)} ran late.",
         today - timedelta(days=today.weekday() + rng.randint(1, 7)), "What was the team call about last week?"),
        (f"Took a weekend trip to {rng.choice(CITIES)} with {other}.", in_month,
         f"Where did {name} travel in {MONTHS[in_month.month - 1]}?"),
        (f"Dinner at {rng.choice(RESTAURANTS)} with {friend} to celebrate.", last_month,
         f"Where did {name} go for dinner last month?"),
        (f"The {rng.choice(PROJECTS)} estimate deadline moved to Friday.", today - timedelta(days=2),
         "Which deadline moved the day before yesterday?"),
    ]  # fmt: skip


def _filler(rng: random.Random, name: str) -> str:
    friend, city, date = rng.choice(FRIENDS), rng.choice(CITIES), _date(rng)
    templates = [
        f"Talked with {friend} about {rng.choice(TOPICS)}.",
        f"Had {rng.choice(FOODS)} for lunch at the office.",
        f"The {rng.choice(PROJECTS)} project meeting moved to {rng.choice(WEEKDAYS)}.",
        f"Read an article about {rng.choice(TOPICS)} on the train.",
        f"Watched a documentary about {rng.choice(ANIMALS)}s with {friend}.",
        f"{friend} is allergic to {rng.choice(ALLERGENS)}, remember for the team lunch.",
        f"{friend}'s birthday party is on {date} in {city}.",
        f"Thinking about a weekend trip to {city} in {rng.choice(MONTHS)}.",
        f"Reviewed the {rng.choice(PROJECTS)} pull request; asked for more tests.",
        f"Wants to read more fiction this year; started a book {friend} recommended.",
        f"Call with the {city} team about {rng.choice(TOPICS)} ran long.",
        "Bought new running shoes; the old ones hurt on long walks.",
        f"{friend} adopted a {rng.choice(PETS)[0]} and sent photos.",
        "Prefers meetings before noon; afternoons are for focused work.",
        f"Dinner at {rng.choice(RESTAURANTS)} was too loud to talk.",
        f"{name} asked for a summary of {rng.choice(TOPICS)} in three bullet points.",
        f"Deadline for the {rng.choice(PROJECTS)} estimate is {date}.",
    ]
    return rng.choice(templates)


def _threads(key: str, seed: int, written: list[tuple[date, float, str, int]], *, one_sitting: bool) -> list[str]:
    """Each note's conversation (see the module docstring), from a random stream of its own."""
    rng = random.Random(f"{seed}:{key}:threads")
    threads: list[str] = []
    for n, (day, _, _, fact) in enumerate(written):
        together = one_sitting and n and fact >= 0 and written[n - 1][3] == fact
        if n and day == written[n - 1][0] and (together or rng.random() >= NEW_THREAD):
            threads.append(threads[-1])
        else:
            threads.append(f"t-{len(set(threads)) + 1}")
    return threads


def generate(seed: int = 20, *, one_sitting: bool = False) -> DevSet:
    """The dev set; the same seed gives the same set (``one_sitting``: see the module docstring)."""
    rng = random.Random(seed)
    scopes, questions = [], []
    for number, (name, he) in enumerate(PEOPLE, start=1):
        today = date(2026, 11, 20) + timedelta(days=number)  # a different weekday for each person
        scope = Scope(f"user#dev-{number}", today=today.isoformat())
        facts = _facts(rng, name, he) + _pairs(rng, name, he)
        dated = _dated(rng, name, today)

        written: list[tuple[date, float, str, int]] = []  # (day, tie-break, text, fact number or -1)
        for fact, (notes, _) in enumerate(facts):
            told = [(today - timedelta(days=rng.randint(1, SPAN_DAYS)), rng.random(), text, fact) for text in notes]
            if one_sitting:  # on the first note's day, right after it (the same draws: the other notes do not move)
                told = [(told[0][0], told[0][1] + n * 1e-9, text, fact) for n, (_, _, text, _) in enumerate(told)]
            written += told
        written += [(day, rng.random(), text, len(facts) + n) for n, (text, day, _) in enumerate(dated)]
        written += [
            (today - timedelta(days=rng.randint(1, SPAN_DAYS)), rng.random(), _filler(rng, name), -1)
            for _ in range(NOTES_PER_SCOPE)
        ]
        written.sort(key=lambda entry: (entry[0], entry[1]))
        scope.notes = [text for _, _, text, _ in written]
        scope.days = [day.isoformat() for day, _, _, _ in written]
        scope.threads = _threads(scope.key, seed, written, one_sitting=one_sitting)
        evidence: dict[int, list[int]] = {}
        for place, (_, _, _, fact) in enumerate(written):
            evidence.setdefault(fact, []).append(place)
        for fact, (_, asked) in enumerate(facts):
            questions += [Question(scope.key, text, kind, evidence[fact]) for kind, text in asked]
        for n, (_, _, text) in enumerate(dated):
            questions.append(Question(scope.key, text, "dated", evidence[len(facts) + n]))
        scopes.append(scope)
    return DevSet(scopes, questions)
