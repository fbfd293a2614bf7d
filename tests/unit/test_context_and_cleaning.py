"""The per-turn block and note cleaning, as docs/api.md §3 states them (``context`` and ``remember``)."""

from __future__ import annotations

import pytest

from agent_memory.basics.errors import InvalidInput
from agent_memory.domain.context_block import NOTES_BLOCK_MAX_CHARS, fit_notes, system_prompt
from agent_memory.domain.document import Document
from agent_memory.domain.notes import NOTE_MAX_CHARS, Note, Origin, clean_note_text, without_leading_headings


def note(position: int, text: str, day: str = "2026-12-03") -> Note:
    return Note(day, position, text, f"{day}T10:00:00.000Z", "remember", Origin("u-1", "t-1"))


def document(content: str = "# About\n- Works in Lisbon", version: int = 3) -> Document:
    return Document(content=content, version=version, updated_at="2026-12-03T09:00:00.000Z")


def test_the_block_keeps_the_order_given_newest_first_and_shows_day_and_position() -> None:
    notes = [note(2, "Second fact"), note(1, "First fact"), note(7, "Yesterday's", day="2026-12-02")]

    kept, block = fit_notes(notes)

    assert kept == notes
    assert block.splitlines() == [
        "<recent_memory_notes>",
        "- [2026-12-03 #2] Second fact",
        "- [2026-12-03 #1] First fact",
        "- [2026-12-02 #7] Yesterday's",
        "</recent_memory_notes>",
    ]


def test_the_block_with_its_tags_never_passes_4000_characters_and_keeps_whole_notes_only() -> None:
    notes = [note(position, f"fact {position} " + "x" * 180) for position in range(60, 0, -1)]

    kept, block = fit_notes(notes)

    assert len(block) <= NOTES_BLOCK_MAX_CHARS
    assert 0 < len(kept) < len(notes)
    assert kept == notes[: len(kept)]  # dropped from the oldest end
    assert all(f"] {kept_note.text}" in block for kept_note in kept)  # never cut


def test_the_prompt_holds_the_document_its_version_and_the_block() -> None:
    _, block = fit_notes([note(1, "Prefers metric units")])

    prompt = system_prompt("personal", document(), block)

    assert "# About\n- Works in Lisbon" in prompt
    assert 'version="3"' in prompt
    assert prompt.count("<recent_memory_notes>") == 1
    assert "- [2026-12-03 #1] Prefers metric units" in prompt


def test_without_notes_the_prompt_has_no_notes_block_and_says_when_nothing_is_curated() -> None:
    prompt = system_prompt("team", document(content="", version=0), None)

    assert "<recent_memory_notes>" not in prompt
    assert "nothing curated yet" in prompt


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("  Prefers metric units  ", "Prefers metric units"),
        ("- Prefers tea", "Prefers tea"),
        ("* Prefers tea", "Prefers tea"),
        ("• Prefers tea", "Prefers tea"),
        ("Line one\nline two\tand a tab", "Line one line two and a tab"),
        ("Bell\x07 and escape\x1b removed", "Bell and escape removed"),
        ("#hashtag is not a heading", "#hashtag is not a heading"),
    ],
)
def test_cleaning_makes_one_plain_line(raw: str, clean: str) -> None:
    assert clean_note_text(raw).text == clean


@pytest.mark.parametrize("raw", ["", "   ", "\n\t", "- ", "-", "\x00\x01"])
def test_a_note_empty_after_cleaning_is_refused(raw: str) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        clean_note_text(raw)


# A heading marker with nothing after it ("## ", trimmed to "##") is an empty heading, as "- " is an empty bullet.
@pytest.mark.parametrize("raw", ["# Title", "###### Deep", "- ## Bulleted heading", "## ", "#", "- ###### "])
def test_a_heading_is_refused(raw: str) -> None:
    with pytest.raises(InvalidInput, match="heading"):
        clean_note_text(raw)


def test_a_long_note_is_capped_and_says_so() -> None:
    cleaned = clean_note_text("x" * (NOTE_MAX_CHARS + 1))

    assert (len(cleaned.text), cleaned.truncated) == (NOTE_MAX_CHARS, True)
    assert clean_note_text("x" * NOTE_MAX_CHARS).truncated is False


def test_the_flush_caps_its_note_at_its_own_limit() -> None:
    cleaned = clean_note_text("y" * 600, max_chars=500)

    assert (len(cleaned.text), cleaned.truncated) == (500, True)


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("# Summary\nthe key 4111\u20281111 1111 1111\r\nx", "the key 4111\u20281111 1111 1111\r\nx"),
        ("## Notes\n\n### Plan\n- owns it", "- owns it"),
        ("no title\u2028# not a title\nmore", "no title\u2028# not a title\nmore"),
        ("\n\nplain", "\n\nplain"),
        ("# Only a title", "# Only a title"),
        ("# One\n# Two", "# Two"),
    ],
)
def test_only_the_leading_title_lines_go_and_the_rest_is_left_byte_for_byte(text: str, left: str) -> None:
    """Redaction reads what is left, so nothing in it may change (a line separator joined or split)."""
    assert without_leading_headings(text) == left
