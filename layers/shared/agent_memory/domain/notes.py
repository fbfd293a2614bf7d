"""Notes: short, dated, append-only facts. Cleaning rules of docs/api.md §3 ``remember``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

from agent_memory.basics.errors import InvalidInput
from agent_memory.domain.fence import INVISIBLE, LINE_BREAK_TABLE

NOTE_MAX_CHARS = 2000
# What of a note's text is read at all: the rest is cut before cleaning or any secret detector runs (the
# note keeps 2,000 characters; the margin lets redaction shorten a text without cutting what stays).
NOTE_INPUT_MAX_CHARS = 100_000
_BULLETS = ("- ", "* ", "• ")
# A Markdown heading: one to six "#" then a space, or nothing (an empty heading, as "## " is once trimmed).
_HEADING = re.compile(r"^#{1,6}(?: |$)")
# What cleaning removes: the control characters (category Cc, U+0000-U+001F and U+007F-U+009F) that are not
# line breaks (``fence.LINE_BREAKS``, which become spaces) and the invisible format characters (``fence.INVISIBLE``).
_HIDDEN = re.compile(f"[\\x00-\\x08\\x0e-\\x1b\\x1f\\x7f-\\x84\\x86-\\x9f]|{INVISIBLE.pattern}")


@dataclass(frozen=True, slots=True)
class Origin:
    """Which conversation wrote a note (provenance): the flush's compaction event, or the indexes of the
    messages an extracted fact came from (``messages``)."""

    user_id: str
    thread_id: str
    compaction_id: str | None = None
    messages: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """A note as the domain sees it; ``id`` is ``<day>.<position>``, unique and stable in its scope."""

    day: str
    position: int
    text: str
    created_at: str
    source: str
    origin: Origin
    consolidated: bool = False
    superseded_by: tuple[str, ...] | None = None  # the notes that replaced it in the document (domain.provenance)
    id: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", note_id(self.day, self.position))


def note_id(day: str, position: int) -> str:
    return f"{day}.{position}"


def parse_note_id(value: str) -> tuple[str, int] | None:
    """``(day, position)`` of a well-formed note id, else None."""
    day, _, position = value.partition(".")
    try:
        date.fromisoformat(day)
    except ValueError:
        return None
    if len(day) != 10 or not position.isdigit() or position.startswith("0"):
        return None
    return day, int(position)


@dataclass(frozen=True, slots=True)
class CleanText:
    text: str
    truncated: bool


def by_day(newest_first: Iterable[Note], days: int) -> tuple[list[tuple[str, list[Note]]], bool]:
    """The first ``days`` days of ``newest_first`` (notes newest first), each with its notes in that order; and
    whether a note of an older day follows. Stops at that note: a lazy reader reads no further."""
    found: list[tuple[str, list[Note]]] = []
    for note in newest_first:
        if not found or found[-1][0] != note.day:
            if len(found) == days:
                return found, True
            found.append((note.day, []))
        found[-1][1].append(note)
    return found, False


def normalise_note(raw: str) -> tuple[str, bool]:
    """``raw`` cut to what is read of a note, without the characters cleaning removes; and whether it was cut."""
    return _HIDDEN.sub("", raw[:NOTE_INPUT_MAX_CHARS]), len(raw) > NOTE_INPUT_MAX_CHARS


def without_leading_headings(text: str) -> str:
    """``text`` from its first line that is not a Markdown heading. A model asked for one plain note may still
    title it ("# Summary" above the note): joined into one line, the title would make the whole note a heading,
    which is refused. Only the leading heading lines (and blank lines among them) go; the rest is left exactly as
    it was, since redaction reads it next. A text of one heading line is left as it is (and refused)."""
    rest, dropped = text, False
    while True:
        line, newline, after = rest.partition("\n")
        if not newline or (line.strip() and not _HEADING.match(line.strip())):
            return rest if dropped else text
        dropped = dropped or bool(line.strip())
        rest = after


def clean_note_text(raw: str, *, max_chars: int = NOTE_MAX_CHARS) -> CleanText:
    """Make text safe to store and re-inject as a note: one line, no control characters, a bullet's body.

    Cleaning only: every write path stores a note through ``text_pipeline.prepare``, which redacts secrets
    between normalising and this (so what is checked for secrets is what is stored, and no cut can leave half
    a secret behind); this alone is what a reader of stored notes compares with.
    Raises InvalidInput for text that is empty after cleaning or that is a Markdown heading.
    """
    normalised, cut = normalise_note(raw)
    # Line and paragraph separators become spaces (a note is one line); control characters and invisible
    # format characters (zero-width, bidi controls) are removed (docs/api.md §6).
    text = normalised.translate(LINE_BREAK_TABLE).strip()
    for bullet in _BULLETS:
        if text.startswith(bullet) or text == bullet.rstrip():  # a bare marker is an empty bullet
            text = text[len(bullet) :].strip()
            break
    if not text:
        raise InvalidInput(
            "a note cannot be empty",
            details=[{"loc": ["arguments", "text"], "msg": "empty after cleaning", "type": "empty_note"}],
        )
    if _HEADING.match(text):
        raise InvalidInput(
            "a note cannot be a heading; write the fact as a plain sentence",
            details=[{"loc": ["arguments", "text"], "msg": "headings are not allowed", "type": "heading"}],
        )
    if len(text) <= max_chars:
        return CleanText(text, truncated=cut)
    return CleanText(text[:max_chars].rstrip(), truncated=True)
