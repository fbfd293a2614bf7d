"""The per-turn memory block: the curated document plus ``<recent_memory_notes>`` (CONTRACT §3 ``context``)."""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.document import Document
from agent_memory.notes import Note
from agent_memory.scope import ScopeKind

NOTES_BLOCK_MAX_CHARS = 4000
_OPEN, _CLOSE = "<recent_memory_notes>", "</recent_memory_notes>"

_PREAMBLE = {
    "personal": "You have durable memory for this user, private to them, kept across conversations.",
    "team": "You have durable memory shared by this workspace's team, kept across conversations.",
}
_GUIDE = (
    "Keep it current: call `remember` with one short fact at a time as you learn something durable, "
    "`update_memory` to rewrite the whole curated document (pass the complete new text), and `recall` to "
    "search older notes. Never store secrets."
)


def _note_line(note: Note) -> str:
    # Angle brackets are escaped so that a note can never close or open a tag of the prompt.
    text = note.text.replace("<", "&lt;").replace(">", "&gt;")
    return f"- [{note.day} #{note.position}] {text}"


def fit_notes(notes_newest_first: Sequence[Note]) -> tuple[list[Note], str]:
    """The notes that fit the 4,000-character block (tags included) and the block itself.

    Whole notes are dropped from the oldest end: the first note that does not fit ends the block.
    """
    kept: list[Note] = []
    lines: list[str] = []
    size = len(_OPEN) + 1 + len(_CLOSE)
    for note in notes_newest_first:
        line = _note_line(note)
        if size + len(line) + 1 > NOTES_BLOCK_MAX_CHARS:
            break
        kept.append(note)
        lines.append(line)
        size += len(line) + 1
    return kept, "\n".join([_OPEN, *lines, _CLOSE])


def system_prompt(kind: ScopeKind, document: Document, notes_block: str | None) -> str:
    """The text the backend injects before each turn; the notes block is absent only when notes failed to load."""
    parts = [_PREAMBLE[kind], _GUIDE]
    body = document.content if document.content else "(empty: nothing curated yet)"
    parts.append(f'<memory_document version="{document.version}">\n{body}\n</memory_document>')
    if notes_block is not None:
        parts.append("Notes of today and yesterday (UTC), newest first:\n" + notes_block)
    return "\n\n".join(parts)
