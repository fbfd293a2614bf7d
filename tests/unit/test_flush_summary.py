"""The flush's note without a model (``memory.summary``), on a corpus of conversations written for it
(tests/fixtures/flush_corpus.json): each names the four facts its note must keep (a decision, a date, a name,
a number, the last open question) and the small talk it must leave out. The test prints the figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory.memory.flush import FLUSH_NOTE_MAX_CHARS
from agent_memory.memory.summary import summarise

CORPUS = json.loads((Path(__file__).parents[1] / "fixtures" / "flush_corpus.json").read_text())


def note_of(conversation: dict) -> str:
    return summarise([(role, content) for role, content in conversation["messages"]], max_chars=FLUSH_NOTE_MAX_CHARS)


def found(phrases: list[str], note: str) -> list[str]:
    return [phrase for phrase in phrases if phrase.lower() in note.lower()]


def test_every_conversation_keeps_at_least_three_of_its_four_facts_and_none_of_its_small_talk(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows, kept_total, talk_total = [], 0, 0
    for conversation in CORPUS:
        note = note_of(conversation)
        kept, talk = found(conversation["keep"], note), found(conversation["leave_out"], note)
        kept_total, talk_total = kept_total + len(kept), talk_total + len(talk)
        rows.append((conversation["name"], len(kept), len(conversation["keep"]), talk, len(note), note))
    with capsys.disabled():
        print(f"\nflush corpus ({len(CORPUS)} conversations): facts kept / small talk left out / note length")
        for name, kept_count, wanted, talk, length, _ in rows:
            print(f"  {name:<30} {kept_count}/{wanted}  small talk in the note: {len(talk)}  {length} chars")
        wanted_total = sum(len(conversation["keep"]) for conversation in CORPUS)
        left_out = sum(len(conversation["leave_out"]) for conversation in CORPUS) - talk_total
        print(f"  facts kept {kept_total} of {wanted_total}; small talk left out {left_out} of {left_out + talk_total}")

    assert len(CORPUS) >= 20 and all(len(conversation["keep"]) == 4 for conversation in CORPUS)
    assert [row[0] for row in rows if row[1] < 3] == [], [row for row in rows if row[1] < 3]
    assert [row[0] for row in rows if row[3]] == [], [row for row in rows if row[3]]
    assert all(row[4] <= FLUSH_NOTE_MAX_CHARS for row in rows)


def test_the_note_says_who_said_what_in_the_conversations_order() -> None:
    note = summarise(
        [
            ("user", "Hi there!"),
            ("user", "We decided to ship on March 3."),
            ("assistant", "I'll write the release notes by Friday."),
            ("user", "Priya signs off on the 2.0 build."),
        ],
        max_chars=500,
    )

    assert note == (
        "User: We decided to ship on March 3. Assistant: I'll write the release notes by Friday. "
        "User: Priya signs off on the 2.0 build."
    )


def test_a_question_the_other_side_answered_is_not_open_and_the_last_open_one_closes_the_note() -> None:
    answered = [
        ("assistant", "Which week suits you for the cutover?"),
        ("user", "The week of January 12."),
    ]
    asked_last = [*answered, ("user", "Who signs off on the payments part?"), ("user", "Thanks!")]

    assert "Open question" not in summarise(answered, max_chars=500)
    assert summarise(asked_last, max_chars=500).endswith("Open question: Who signs off on the payments part?")


def test_within_500_characters_the_best_sentences_go_in_and_a_repeat_is_left_out() -> None:
    filler = [("user", f"Item {n} costs {n * 100} euros and Ana will buy it on May {n}.") for n in range(1, 30)]
    repeated = [("user", "We agreed to move the launch to June 9.")] * 2

    assert len(summarise(filler, max_chars=500)) <= 500
    assert summarise(repeated, max_chars=500) == "User: We agreed to move the launch to June 9."


def test_without_a_date_a_number_or_a_decision_the_note_keeps_what_the_user_talked_about() -> None:
    note = summarise(
        [("user", "Hello!"), ("user", "Tell me how Roman aqueducts carried water."), ("assistant", "By gravity.")],
        max_chars=500,
    )

    assert note == "User: Tell me how Roman aqueducts carried water."
    assert summarise([("user", "Hi!"), ("assistant", "Hello! How can I help?")], max_chars=500) == (
        "Nothing to keep: the conversation held only small talk."
    )


def test_a_title_does_not_end_a_sentence() -> None:
    said = [("user", "Good morning."), ("user", "Dr. Okafor booked the crown for October 21.")]

    note = summarise(said, max_chars=500)
    assert note == "User: Dr. Okafor booked the crown for October 21."


def test_a_greeting_drops_a_sentence_that_says_nothing_else_but_not_a_commitment_after_it() -> None:
    note = summarise(
        [
            ("assistant", "Haha, Porto in March should be lovely."),
            ("assistant", "Great, I will draft the rollback plan with a 2-hour window."),
        ],
        max_chars=500,
    )

    assert note == "Assistant: Great, I will draft the rollback plan with a 2-hour window."


def test_tool_answers_and_system_prompts_are_not_summarised_nor_answers_to_a_question() -> None:
    note = summarise(
        [
            ("system", "You are a helpful assistant. Today is 2026-12-03."),
            ("user", "Remember that the cutover is on January 12. Who signs off on the payments part?"),
            ("tool", '{"note": {"id": "2026-12-03.1", "position": 1}}'),
        ],
        max_chars=500,
    )

    assert note == (
        "User: Remember that the cutover is on January 12. Open question: Who signs off on the payments part?"
    )
