"""The flush's note without a model (``MEMORY_CHAT_MODEL=local:extractive``): the conversation's own sentences
that carry what a summary is for, within the note's 500 characters.

A flush note exists so that what was settled before a compaction survives it: the decisions, the dates, who
does what, the figures, and the question still open. A model writes that as prose; without one, the best
the flush can do is pick the sentences that hold it and leave the rest out. Each sentence of the messages
(the user's and the assistant's: a tool's answer or a system prompt is not what was settled) is scored on
what it carries:

- **dates and times**: a month, a weekday, an ordinal day, a quarter, ``tomorrow``, ``3 pm``, ``2026-01-12``;
- **numbers**: amounts, counts, versions, durations;
- **commitments and decisions**: ``decided``, ``agreed``, ``will``, ``booked``, ``signs off``, ``owns``, ``due``,
  and what the speaker says of themselves (``I live``, ``we prefer``);
- **names**: capitalised words that are not the sentence's common first word.

A sentence with none of the first three and only greetings, thanks or a few words ("Good morning!", "That's
a solid plan.", "Aww, poor Biscuit.") is small talk and never chosen. The best sentences go in, a sentence
that repeats a chosen one's terms is skipped, and they are written in the conversation's order, each run
under its speaker (``User:``, ``Assistant:``: "I" means someone). The last question that is not small talk
closes the note as its open question, when no one has answered it since. ``tests/unit/test_flush_summary.py``
holds the corpus the rules were checked on, and prints what each conversation kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.search.analysis import STOP_WORDS, terms

# The open question may take this much of the note; the facts take the rest.
QUESTION_MAX_CHARS = 160
SENTENCE_MAX_CHARS = 200
# A sentence below this carries too little to spend the note on (one name, or a relative day alone).
MIN_SCORE = 2.0
SMALL_TALK_PENALTY = 2.0


def any_of(alternatives: str, *, beside: str = "") -> re.Pattern[str]:
    """Any of the ``|``-separated words or phrases, as whole words, in any case (or what ``beside`` matches)."""
    return re.compile(rf"\b(?:{alternatives})\b{beside}", re.IGNORECASE)


_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
_DATE = any_of(
    f"{_MONTHS}|{_DAYS}|Q[1-4]|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|tomorrow"
    r"|next (?:week|month|year)|end of (?:the )?(?:week|month|year)|\d{4}-\d\d-\d\d|\d{1,2}(?:st|nd|rd|th)"
    r"|\d{1,2}(?::\d\d)?\s?(?:am|pm)|\d{1,2}:\d\d"
)
# A day said relative to the conversation's own ("today"): small talk as often as a plan ("tired today").
_RELATIVE_DAY = any_of("today|tonight|yesterday")
_NUMBER = re.compile(r"\d")
_DECISION = any_of("decided|agreed|settled|chose|chosen|picked|approved|accepted|confirmed|switched|from now on")
_COMMITMENT = any_of(
    "will|won't|shall|going to|plan(?:s|ned)? to|need(?:s)? to|must|have to|due|deadline|booked|booking|signed up"
    "|enrolled|scheduled|sign(?:s)? off|owns|owner|in charge|handl(?:es|ing)|manages|responsible|reviews|starts"
    "|arrives|moving|dropping|claiming|quoted|capped|pays|wants",
    beside=r"|\w'll\b",
)
# What the speaker says of themselves, which a later conversation needs as much as a date ("I live in Lisbon").
_ABOUT_SPEAKER = any_of("(?:i|we) (?:always |never |usually )?(?:live|work|prefer|like|love|hate|want|use|own)")
SMALL_TALK = any_of(
    r"hi|hey|heya|hiya|hello|yo|thanks|thank you|cheers|welcome|congrat\w*|great|awesome|cool|nice|lovely|perfect"
    r"|glad|sorry|haha\w*|lol|aww+|ugh|sigh|wow|omg|oh my god|sounds good|makes sense|no worries|good luck|enjoy\w*"
    "|how are you|how's it going|how have you been|doing well|all good|long time|weather|sunny|weekend"
    "|anything else|what's up|can i (?:do|help)|how can i help|you're the best|nice to meet you",
    beside=r"|^(?:good )?(?:morning|afternoon|evening)\b|[:;]-?[)(D]",
)
_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Prof|St|Mt|Jr|Sr|vs|etc|e\.g|i\.e|approx)\.$", re.IGNORECASE)
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]+")
# Words that start a sentence capitalised without being a name.
_NOT_NAMES = STOP_WORDS | {"yes", "yeah", "ok", "okay", "also", "just", "actually", "anyway", "well", "sure", "now"}
_ROLES = {"user": "User", "assistant": "Assistant"}


@dataclass(frozen=True, slots=True)
class _Sentence:
    order: int
    message: int
    role: str
    text: str
    score: float
    small_talk: bool

    @property
    def question(self) -> bool:
        return self.text.endswith("?")


def summarise(messages: list[tuple[str, str]], *, max_chars: int) -> str:
    """The note for ``messages`` (``(role, content)``, oldest first): the sentences that carry the conversation's
    decisions, dates, names and numbers, then its last open question; at most ``max_chars`` characters."""
    sentences = _scored(messages)
    last_spoken = {role: index for index, (role, _) in enumerate(messages)}  # each role's last message
    asked = [sentence for sentence in sentences if sentence.question and _open(sentence, last_spoken)]
    question = f"Open question: {_clipped(asked[-1].text, QUESTION_MAX_CHARS)}" if asked else ""
    room = max_chars - len(question) - 1
    facts = [sentence for sentence in sentences if not sentence.question and sentence.score >= MIN_SCORE]
    if not facts:  # nothing dated, counted or settled: what the user talked about is what is left to keep
        facts = [sentence for sentence in sentences if sentence.role == "user" and not sentence.small_talk][:1]
    chosen: list[_Sentence] = []
    kept_terms: list[frozenset[str]] = []
    for sentence in sorted(facts, key=lambda fact: (-fact.score, -fact.order)):
        words = frozenset(terms(sentence.text))
        if any(words <= other or other <= words for other in kept_terms):
            continue  # it says again what a chosen sentence says
        if len(_written(sorted([*chosen, sentence], key=lambda fact: fact.order))) <= room:
            chosen.append(sentence)
            kept_terms.append(words)
    body = _written(sorted(chosen, key=lambda fact: fact.order))
    note = " ".join(part for part in (body, question) if part)
    return _clipped(note or "Nothing to keep: the conversation held only small talk.", max_chars)


def _open(question: _Sentence, last_spoken: dict[str, int]) -> bool:
    """A question that is not small talk and that the other side has not spoken after (its next message is
    taken as the answer; a tool's answer is not one). ``last_spoken``: each role's last message, so a long
    conversation is read once, not once per question."""
    others = (index for role, index in last_spoken.items() if role not in (question.role, "system", "tool"))
    return not question.small_talk and all(index <= question.message for index in others)


def _written(sentences: list[_Sentence]) -> str:
    """The sentences in order, each run of one speaker's under its label."""
    parts: list[str] = []
    speaker = None
    for sentence in sentences:
        if sentence.role != speaker:
            speaker = sentence.role
            parts.append(f"{_ROLES[speaker]}:")
        parts.append(sentence.text)
    return " ".join(parts)


def _scored(messages: list[tuple[str, str]]) -> list[_Sentence]:
    scored: list[_Sentence] = []
    for message, (role, content) in enumerate(messages):
        if role not in _ROLES:  # a tool's answer or a system prompt is not what the conversation settled
            continue
        for text in split_sentences(content):
            scored.append(_score(len(scored), message, role, _clipped(text, SENTENCE_MAX_CHARS)))
    return scored


def _score(order: int, message: int, role: str, text: str) -> _Sentence:
    """What ``text`` carries (the module's docstring), and whether it is small talk."""
    dates = len(_DATE.findall(text))
    numbers = len(_NUMBER.findall(_DATE.sub(" ", text)))
    decided = len(_DECISION.findall(text))
    committed = len(_COMMITMENT.findall(text)) + len(_ABOUT_SPEAKER.findall(text))
    first, *rest = text.split(maxsplit=1) or [""]
    names = len(_CAPITALISED.findall(rest[0] if rest else ""))
    if first[:1].isupper() and first.strip(",.!?:;").lower() not in _NOT_NAMES and not _DATE.match(first):
        names += 1
    names -= len(_DATE.findall(rest[0] if rest else ""))  # a month or a weekday is counted as a date already
    chatty = bool(SMALL_TALK.search(text))
    said = numbers or decided or committed  # what a greeting around a fact still carries ("Thanks, I'll pay")
    # A question needs fewer words to be one ("Where can we cook?"); a statement of three is a reaction.
    few = len(set(terms(text))) <= (1 if text.endswith("?") else 3)
    if (chatty and not said) or (few and not (said or dates)):
        return _Sentence(order, message, role, text, 0.0, True)
    score: float = 3 * min(dates, 2) + 2 * min(numbers and 1 + (numbers > 2), 2) + 3 * min(decided, 1)
    score += 2 * min(committed, 1) + 1.5 * min(max(names, 0), 2) + bool(_RELATIVE_DAY.search(text))
    if chatty:
        score -= SMALL_TALK_PENALTY
    return _Sentence(order, message, role, text, score, False)


def split_sentences(text: str) -> list[str]:
    """``text`` cut after each ``.``, ``!`` or ``?`` that ends a word, except after a title or an abbreviation
    (``Dr. Okafor`` is one name)."""
    parts = [part for part in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if part]
    joined: list[str] = []
    for part in parts:
        if joined and _ABBREVIATION.search(joined[-1]):
            joined[-1] = f"{joined[-1]} {part}"
        else:
            joined.append(part)
    return joined


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
