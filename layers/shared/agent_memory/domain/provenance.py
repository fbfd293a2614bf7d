"""Which notes each line of the document rests on, and which notes a fold supersedes (docs/consolidation.md
"Superseded notes").

A version saved by a fold's cited edits records, for each of its lines, the notes cited for it: a line the
fold kept keeps the notes of the line it was, a line an edit wrote gets the notes that edit cites. Any other
save (a hand edit, a tool's ``update_memory``, a restore, a compression, a whole-document rewrite) writes the
whole document, so which lines it kept is found by comparing the lines (``carried``): a line identical to a
line of the version it replaces keeps that line's notes, and a new or changed line rests on none, since nobody
can say which note a line written by hand comes from. Were every such save to drop them all, the next
``update_memory`` (an agent calls it often) would leave no line for a later fold to supersede the notes of.

A ``replace`` or ``delete`` retires the line it names. The notes cited for that line that no line of the
new document still cites become superseded by the notes the edit cites: the newer statement wins. Nothing is
deleted; a superseded note stays listed and recalled, ranked below the notes that are current.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from agent_memory.domain.edits import placement
from agent_memory.domain.notes import parse_note_id

LineNotes = list[list[str]]  # for each line of a document, the ids of the notes cited for it


@dataclass(frozen=True, slots=True)
class Followed:
    """What a fold's edits make of the provenance: ``line_notes`` of the saved document (one list per line), and
    ``superseded``: each note that leaves the document, with the notes that supersede it, in note order."""

    line_notes: LineNotes
    superseded: dict[str, list[str]] = field(default_factory=dict)


def of_lines(content: str, line_notes: LineNotes | None) -> LineNotes:
    """Each line of ``content`` with the notes recorded for it: ``line_notes`` when they are one list a line, else
    none for every line (none recorded, or recorded for other lines)."""
    lines = content.split("\n") if content else []
    return line_notes if line_notes is not None and len(line_notes) == len(lines) else [[] for _ in lines]


def follow(before: str, before_notes: LineNotes | None, applied: list[dict[str, Any]], saved: str) -> Followed:
    """Provenance after ``applied`` (the fold's edits as the version records them) turned ``before`` (whose lines
    rest on ``before_notes``; None: on none) into ``saved``, the content the version stores.

    ``saved`` is the edited document as the text pipeline stored it: the same lines, or, when it redacted a
    secret within a line, as many lines, each resting on its notes. A document of other lines (a compression
    after the fold) keeps the notes of the edited lines it holds unchanged (``carried``), and the lines the
    edits retired still supersede their notes."""
    old = _lines(before)
    notes_of = before_notes if before_notes is not None and len(before_notes) == len(old) else [[] for _ in old]
    placed = placement(before, applied)
    saved_lines = _lines(saved)
    if placed is None:  # its recorded lines no longer quote the document (a redaction rule added since it was
        return Followed(carried(before, notes_of, saved))  # saved redacted them differently): as after a rewrite
    edited = [list(notes_of[origin]) if isinstance(origin, int) else list(origin) for _, origin in placed.lines]
    still_cited = {note for notes in edited for note in notes}
    superseded: dict[str, list[str]] = {}
    for index, by in sorted(placed.retired.items()):
        for note in notes_of[index]:
            newer = {*superseded.get(note, []), *by} - {note}  # a note never supersedes itself
            if note not in still_cited and newer:
                superseded[note] = in_note_order(newer)
    if len(edited) != len(saved_lines):
        edited = carried(placed.content, edited, saved)
    return Followed(edited, superseded)


def carried(before: str, before_notes: LineNotes | None, saved: str) -> LineNotes:
    """The notes of each line of ``saved``, a whole document saved over ``before`` (whose lines rest on
    ``before_notes``; None: on none): a line identical to a line of ``before`` keeps that line's notes, a new or
    changed line rests on none. Lines are matched in order, each line of ``before`` at most once (difflib's
    matching blocks over whole lines, without its heuristic that ignores frequent lines: a document's blank
    lines and repeated headings must match like any other): a line repeated keeps notes once, and a line moved
    past others may count as new."""
    old, new = _lines(before), _lines(saved)
    kept: LineNotes = [[] for _ in new]
    if before_notes is None or len(before_notes) != len(old):
        return kept
    for block in SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        for offset in range(block.size):
            kept[block.b + offset] = list(before_notes[block.a + offset])
    return kept


def _lines(content: str) -> list[str]:
    """A document's lines as its line notes count them: none for the empty document."""
    return content.split("\n") if content else []


def in_note_order(ids: set[str] | list[str]) -> list[str]:
    """Note ids oldest first: by day, then position as a number (``2026-12-01.10`` after ``2026-12-01.9``)."""

    def order(ident: str) -> tuple[str, int, str]:
        where = parse_note_id(ident)
        return (where[0], where[1], "") if where is not None else ("", 0, ident)

    return sorted(set(ids), key=order)
