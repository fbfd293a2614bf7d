"""The recall-quality dev set: people's memory notes and questions about them, generated from templates.

Deterministic (``generate(seed)``), written for this project (no public benchmark is copied), and small
enough to ship as code: 12 people (one scope each), 250 notes per scope (3,000 notes), about 26 questions
per scope (312), each with the notes that answer it (its evidence). Question kinds:

- ``exact``: the question repeats the note's distinctive words ("What is the name of the kitten...").
- ``paraphrase``: no distinctive word in common ("Does she have any pets?" / "Adopted a kitten...").
- ``inflection``: the same word in another form (plural/singular, verb tense: "moving" / "moved").
- ``date``: the question names the day the note holds ("What did he do on 14 March?").
- ``multi``: two or three notes answer together ("Which cities has she lived in?").

Most of a scope is filler written from templates that share words with the questions (another person's
allergy, a meeting "moved" to Tuesday, a friend's birthday), so that a word in common is not an answer.
Used by ``bench/recall_quality.py``; tune on this set only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

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


def generate(seed: int = 20) -> DevSet:
    """The dev set; the same seed gives the same set."""
    rng = random.Random(seed)
    scopes, questions = [], []
    for number, (name, he) in enumerate(PEOPLE, start=1):
        scope = Scope(f"user#dev-{number}")
        facts = _facts(rng, name, he)
        fact_notes = sum(len(notes) for notes, _ in facts)
        slots = sorted(rng.sample(range(NOTES_PER_SCOPE), fact_notes))  # where the facts fall among the fillers
        placed = iter(slots)
        evidence_of: list[list[int]] = [[next(placed) for _ in notes] for notes, _ in facts]
        by_slot = {
            slot: text
            for (notes, _), where in zip(facts, evidence_of, strict=True)
            for slot, text in zip(where, notes, strict=True)
        }
        scope.notes = [by_slot.get(n) or _filler(rng, name) for n in range(NOTES_PER_SCOPE)]
        for (_, asked), where in zip(facts, evidence_of, strict=True):
            questions += [Question(scope.key, text, kind, list(where)) for kind, text in asked]
        scopes.append(scope)
    return DevSet(scopes, questions)
