"""The extraction's facts without a model (``memory.first_person``) on 20 conversations written for it
(tests/fixtures/extraction_corpus.json): each must yield its ``facts`` (the sentence, cited by the message it was
said in), may yield its ``also`` (true facts past the ten that fit), and no fact may hold a ``not`` (what the
assistant said, a question, a request, a doubt, small talk, a reaction). The figures are printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_memory.domain.extraction import FACT_MAX_CHARS, MAX_FACTS
from agent_memory.memory.first_person import SPEAKER, first_person_facts

CORPUS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "extraction_corpus.json").read_text(encoding="utf-8")
)


def _facts(conversation: dict[str, Any]) -> list[tuple[str, tuple[int, ...]]]:
    messages = [(message["role"], message["content"]) for message in conversation["messages"]]
    return [(fact.text, fact.messages) for fact in first_person_facts(messages)]


def test_the_corpus_is_twenty_conversations():
    assert len(CORPUS) == 20
    assert sum(not conversation["facts"] for conversation in CORPUS) == 3  # three that hold no fact at all


@pytest.mark.parametrize("conversation", CORPUS, ids=[conversation["name"] for conversation in CORPUS])
def test_each_conversation_yields_its_facts_and_nothing_it_must_not(conversation: dict[str, Any]) -> None:
    found = _facts(conversation)

    for expected in conversation["facts"]:
        assert (SPEAKER + expected["text"], (expected["message"],)) in [
            (text[: len(SPEAKER + expected["text"])], cited) for text, cited in found
        ], (expected, found)
    for text, _ in found:
        assert not any(banned.lower() in text.lower() for banned in conversation["not"]), text
        assert any(fact["text"] in text for fact in conversation["facts"]) or any(
            extra in text for extra in conversation["also"]
        ), f"a fact the conversation does not hold: {text}"
        assert len(text) <= FACT_MAX_CHARS
    assert len(found) <= MAX_FACTS


def test_the_figures_on_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    expected = sum(len(conversation["facts"]) for conversation in CORPUS)
    found = [_facts(conversation) for conversation in CORPUS]
    yielded = sum(
        any(fact["text"] in text for text, _ in facts)
        for conversation, facts in zip(CORPUS, found, strict=True)
        for fact in conversation["facts"]
    )
    with capsys.disabled():
        print(
            f"\nfirst-person facts on {len(CORPUS)} conversations: {yielded} of {expected} required facts yielded, "
            f"{sum(map(len, found))} facts in all, {sum(not facts for facts in found)} conversations with none"
        )
    assert yielded == expected


def test_ten_facts_at_most_the_ones_that_say_the_most():
    said = " ".join(f"I love hiking trail number {n}." for n in range(9)) + " I'm moving to Leeds in May. I'm vegan."
    facts = first_person_facts([("user", said), ("assistant", "Noted.")])

    assert len(facts) == MAX_FACTS
    assert "User: I'm moving to Leeds in May." in [fact.text for fact in facts]
