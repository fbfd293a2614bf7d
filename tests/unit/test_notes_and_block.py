"""Pure rules: note ids, the notes block's fitting, and the compression result's validation."""

from __future__ import annotations

import pytest

from agent_memory.domain.context_block import NOTES_BLOCK_MAX_CHARS, fit_notes
from agent_memory.domain.notes import Note, Origin, clean_note_text, note_id, parse_note_id
from agent_memory.memory.compression import compress
from tests.support.fakes import FakeChatModel


def _note(position, text, day="2026-12-03"):
    return Note(
        day=day,
        position=position,
        text=text,
        created_at=f"{day}T10:00:00.000Z",
        source="remember",
        origin=Origin("u", "t"),
    )


@pytest.mark.parametrize(("day", "position"), [("2026-12-03", 1), ("2026-01-31", 123456)])
def test_note_ids_round_trip(day, position):
    assert parse_note_id(note_id(day, position)) == (day, position)


@pytest.mark.parametrize(
    "value",
    [
        "2026-12-03",
        "2026-12-03.",
        "2026-12-03.0",
        "2026-12-03.01",
        "2026-13-03.1",
        "2026-12-3.1",
        "x.1",
        "2026-12-03.-1",
    ],
)
def test_malformed_note_ids_are_rejected(value):
    assert parse_note_id(value) is None


def test_an_empty_block_is_just_the_tags():
    kept, block = fit_notes([])
    assert (kept, block) == ([], "<recent_memory_notes>\n</recent_memory_notes>")


def test_a_block_exactly_at_the_limit_keeps_every_note():
    frame = len("<recent_memory_notes>\n</recent_memory_notes>")
    prefix = len("- [2026-12-03 #1] ") + 1
    text = "x" * (NOTES_BLOCK_MAX_CHARS - frame - prefix)

    kept, block = fit_notes([_note(1, text)])

    assert len(block) == NOTES_BLOCK_MAX_CHARS
    assert len(kept) == 1
    assert fit_notes([_note(1, text + "y")])[0] == []


def test_a_note_too_big_to_fit_never_crowds_out_older_ones_that_fit():
    # docs/api.md §6 (it refines §3): the note that does not fit is dropped, the older ones that fit stay.
    notes = [_note(3, "new"), _note(2, "x" * 3990), _note(1, "old")]

    kept, _ = fit_notes(notes)

    assert [n.position for n in kept] == [3, 1]


def test_cleaning_is_idempotent():
    once = clean_note_text("  - a\tb\x00c  ").text
    assert clean_note_text(once).text == once == "a bc"


def test_compression_keeps_a_fenced_answer_without_its_fence():
    model = FakeChatModel(reply=lambda s, p: "```\n" + "kept " * 4000 + "\n```")

    assert compress(model, "k" * 26_000) == ("kept " * 4000).strip()
