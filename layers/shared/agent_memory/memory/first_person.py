"""An extraction's facts without a model (``MEMORY_CHAT_MODEL=local:extractive``): the user's first-person
statements of preferences, plans and facts about themselves, each cited by the message it was said in.

A later conversation needs what the user said of themselves ("I'm vegetarian", "My sister Noor is a
paramedic", "I'm flying to Osaka on March 3rd"), not what the assistant said or asked. So only the user's
messages are read, sentence by sentence (``memory.summary.split_sentences``), and a sentence is a fact when

- it speaks of the speaker: ``I``, ``I'm``, ``my``, ``we``, ``our``...;
- it says one of three things: a **preference** (``prefer``, ``love``, ``hate``, ``allergic``, ``vegetarian``,
  ``always``...), a **plan** (``will``, ``going to``, ``planning``, ``booked``, ``next week``, ``moving``...) or a
  **fact about the speaker** (``I work``, ``I live``, ``I'm a``, ``my sister is``, ``we have``...);
- and it is none of what only this conversation needed: a question, a request to the assistant ("I need you
  to", "I'd like you to"), a doubt ("I wonder", "not sure", "I don't know"), a condition ("if I"), small talk
  with nothing else in it, or a reaction to the conversation itself ("I love that idea", "I'll try it").

Each fact is the sentence under its speaker (``User: I'm vegetarian.``: "I" means someone when the note is read
later), cut to the fact's 300 characters. At most ``MAX_FACTS``: the sentences that say the most (each kind
said, a date, a number) win, written in the conversation's order. ``tests/fixtures/extraction_corpus.json``
holds 20 conversations and the facts each must yield (``tests/unit/test_first_person.py``).
"""

from __future__ import annotations

import re

from agent_memory.domain.extraction import FACT_MAX_CHARS, MAX_FACTS, Fact
from agent_memory.memory.summary import SMALL_TALK, any_of, split_sentences
from agent_memory.search.analysis import terms

SPEAKER = "User: "
_FIRST_PERSON = any_of(r"i|i'm|im|i've|i'd|i'll|my|mine|myself|we|we're|we've|we'll|we'd|our|ours|us")
_PREFERENCE = any_of(
    "prefer(?:s|red)?|like|likes|love|loves|enjoy|enjoys|hate|hates|dislike|can't stand|cannot stand|favou?rite"
    "|rather|allergic|intolerant|vegetarian|vegan|pescatarian|don't (?:eat|drink)|never (?:eat|drink)|always"
    "|usually|tend to|fan of|into|avoid|go-to"
)
_PLAN = any_of(
    "will|going to|gonna|plan|plans|planning|intend|intending|want to|hope to|hoping to|thinking (?:of|about)"
    "|about to|booked|scheduled|signed up|registered|enrolled|next (?:week|month|year|spring|summer|autumn|fall"
    "|winter)|this (?:weekend|summer|winter|spring|autumn|fall)|tomorrow|moving|starting|leaving|flying|visiting"
    "|trying to|aim to|aiming to|goal|deadline|due|applying|interviewing|retiring|relocating|getting married|expecting",
    beside=r"|\w'll\b",
)
_ABOUT = any_of(
    r"(?:i am|i'm|im) (?:a|an|the|from|based|originally|married|single|retired|learning|training|working|studying)"
    "|i (?:work|worked|live|lived|have|own|study|studied|teach|speak|use|run|manage|lead|grew up|was born|moved"
    "|drive|play|volunteer|coach|commute|cycle|swim|practi[cs]e|keep|brew|cook|bake|wear|host|attend|belong|sing|write"
    "|paint|collect|follow)"
    r"|(?:my|our) (?:\w+ ){0,2}(?:is|are|was|were|has|have|had|lives|works|turns|runs|uses|starts|faces|gets"
    "|needs|takes|'s)"
    "|(?:we|i've|we've) (?:have|got|been|live|use|run|own)|years old|(?:my|our) (?:wife|husband|partner|son"
    "|daughter|kids?|children|sister|brother|mum|mom|mother|dad|father|dog|cat|team|company|boss|manager)"
)
_EXCLUDED = any_of(
    "i (?:wonder|wondered|was wondering|mean|don't know|dunno|guess|suppose)|not sure|if (?:i|we)|in case"
    "|(?:need|want|like|love) (?:you|u) to|(?:can|could|would|will) you|please|let me know|remind me|help me|tell me"
    "|show me|give me|thank you|thanks"
)
# A reaction to what was just said ("I love that idea", "I'll do that", "I'll think about it"): few words that
# end on a word pointing back into the conversation.
_REACTION = re.compile(r"\b(?:it|that|this|them|those|these|one|so|too)\b(?:\s+\w+)?\W*$", re.IGNORECASE)
_REACTION_MAX_WORDS = 6
_DATE_OR_NUMBER = re.compile(
    r"\d|\b(?:january|february|march|april|may|june|july|august|september|october"
    r"|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE,
)


def first_person_facts(messages: list[tuple[str, str]]) -> list[Fact]:
    """The facts of ``messages`` (``(role, content)``, oldest first), each citing its message, at most
    ``MAX_FACTS``, in the conversation's order."""
    found: list[tuple[float, int, Fact]] = []
    seen: set[frozenset[str]] = set()  # a set: a list's ``in`` made 40,000 sentences quadratic (86 s)
    for index, (role, content) in enumerate(messages):
        if role != "user":
            continue
        for sentence in split_sentences(content):
            score = _score(sentence)
            words = frozenset(terms(sentence))
            if score <= 0 or words in seen:
                continue
            seen.add(words)
            text = SPEAKER + sentence
            if len(text) > FACT_MAX_CHARS:
                text = text[: FACT_MAX_CHARS - 1].rstrip() + "…"
            found.append((score, len(found), Fact(text, (index,))))
    best = sorted(found, key=lambda entry: (-entry[0], entry[1]))[:MAX_FACTS]
    return [fact for _, _, fact in sorted(best, key=lambda entry: entry[1])]


def _score(sentence: str) -> float:
    """0 for a sentence that is no fact (the module's docstring); else the kinds it says, and 0.5 for a date or
    a number in it."""
    if sentence.endswith("?") or not _FIRST_PERSON.search(sentence) or _EXCLUDED.search(sentence):
        return 0
    kinds = sum(bool(pattern.search(sentence)) for pattern in (_PREFERENCE, _PLAN, _ABOUT))
    if not kinds:
        return 0
    words = sentence.split()
    if len(words) <= _REACTION_MAX_WORDS and _REACTION.search(sentence):
        return 0
    if SMALL_TALK.search(sentence) and len(set(terms(sentence))) <= 3:
        return 0
    return kinds + 0.5 * bool(_DATE_OR_NUMBER.search(sentence))
