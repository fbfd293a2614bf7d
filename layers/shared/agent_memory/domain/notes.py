"""Notes: short, dated, append-only facts. Cleaning rules of docs/api.md §3 ``remember``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from agent_memory.basics.errors import InvalidInput
from agent_memory.domain.fence import INVISIBLE, LINE_BREAK_TABLE
from agent_memory.domain.redaction import redact

NOTE_MAX_CHARS = 2000
# What of a note's text is read at all: the rest is cut before cleaning or any secret detector runs (the
# note keeps 2,000 characters; the margin lets redaction shorten a text without cutting what stays).
NOTE_INPUT_MAX_CHARS = 100_000
_BULLETS = ("- ", "* ", "• ")
_HEADING = re.compile(r"^#{1,6} ")
# What cleaning removes once line breaks are spaces: control characters (category Cc, U+0000-U+001F and
# U+007F-U+009F) and the invisible format characters (``fence.INVISIBLE``).
_HIDDEN = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f]|{INVISIBLE.pattern}")


@dataclass(frozen=True, slots=True)
class Origin:
    """Which conversation wrote a note (provenance)."""

    user_id: str
    thread_id: str
    compaction_id: str | None = None


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
    redacted: list[str] = field(default_factory=list)  # the kinds of secret replaced


def clean_note_text(
    raw: str, *, max_chars: int = NOTE_MAX_CHARS, redact_extra: frozenset[str] | None = None
) -> CleanText:
    """Make model-written text safe to store and re-inject: one line, no control characters, a bullet's body.

    With ``redact_extra`` (the extra kinds a deployment turns on, ``MEMORY_REDACT_EXTRA``; empty for none),
    secrets are redacted from the cleaned text, before it is cut to ``max_chars``: what is checked for secrets
    is what is stored, so no character that cleaning removes can hide a secret from it, and no cut can leave
    half a secret behind. Without it the text is only cleaned (what a reader of stored notes compares).
    Raises InvalidInput for text that is empty after cleaning or that is a Markdown heading.
    """
    capped = raw[:NOTE_INPUT_MAX_CHARS]
    # Line and paragraph separators become spaces (a note is one line); control characters and invisible
    # format characters (zero-width, bidi controls) are removed (docs/api.md §6).
    text = _HIDDEN.sub("", capped.translate(LINE_BREAK_TABLE)).strip()
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
    kinds: list[str] = []
    if redact_extra is not None:
        redacted = redact(text, extra=redact_extra)
        text, kinds = redacted.text, redacted.kinds
    if len(text) <= max_chars:
        return CleanText(text, truncated=len(capped) < len(raw), redacted=kinds)
    return CleanText(text[:max_chars].rstrip(), truncated=True, redacted=kinds)
