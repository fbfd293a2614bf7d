"""A consolidation's fold: the due notes of one group, what a new version records of them, and what of the
document the chat model is shown (docs/consolidation.md "What the model is shown").

Most of a fold's input is the document, not the notes: a 10,000-character document is about 2,500 tokens
a night, sent again every night whether or not the notes touch it, so the fold would cost what is kept
rather than what is new. A document longer than ``WHOLE_MAX_CHARS`` is therefore shown in part: every
heading (where things belong), and for each note the ``LINES_PER_NOTE`` lines that share the most of its
words, rarer words weighing more (where it may duplicate or contradict); every run of lines left out is
one marker line that says how many.

The edits still apply to the whole document (``domain.edits``): an anchor must be one line of the whole
document, and every line no edit names, shown or not, is kept byte for byte. What a partial view gives up:
the model cannot merge a note into, or replace, a line with which it shares no word; such a near-duplicate
stays in the document until a later fold or a person removes it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from agent_memory.domain.notes import note_id

WHOLE_MAX_CHARS = 4_000  # a document this short is shown whole (about 1,000 tokens)
LINES_PER_NOTE = 6
_WORD = re.compile(r"[^\W_]{3,}")
# Words too common to say where a note belongs.
_COMMON_WORDS = (
    "the and for with that this from have has had was were are not but you your our his her their they them "
    "its into about over when what which who will would should can could also than then there here been "
    "being more most some such only very just does did done each other"
)
_COMMON = frozenset(_COMMON_WORDS.split())


@dataclass(frozen=True, slots=True)
class DueNote:
    scope_key: str
    sk: str
    day: str
    position: int
    text: str
    created_at: str
    vector: bytes | None = None  # as stored on the note (``search.vectors``), when the table holds vectors

    @property
    def id(self) -> str:
        return note_id(self.day, self.position)


@dataclass(frozen=True, slots=True)
class Fold:
    """The notes a consolidation folds into a new version: listed on the version, and recorded as pending
    marks (``run_id``, the worker's ``token``) in the version's own transaction, on condition the scope's
    ``erase_mark`` is still the one the worker's claim read (no note of the group deleted or erased meanwhile).
    ``edits``: the cited edits that made the version (``domain.edits``), None for a whole-document rewrite."""

    notes: list[DueNote]
    run_id: str
    token: str
    erase_mark: str
    edits: list[dict[str, Any]] | None = None

    @property
    def note_ids(self) -> list[str]:
        return [note.id for note in self.notes]


@dataclass(frozen=True, slots=True)
class View:
    """The text shown, and whether lines were left out of it."""

    text: str
    partial: bool


def marker(hidden: int) -> str:
    return f"[… {hidden} line{'s' if hidden != 1 else ''} not shown …]"


def _words(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.lower()) if word not in _COMMON}


def fold_view(document: str, notes: list[str]) -> View:
    """``document`` as a fold of ``notes`` shows it to the model."""
    if len(document) <= WHOLE_MAX_CHARS:
        return View(document, partial=False)
    lines = document.split("\n")
    words = [_words(line) for line in lines]
    frequency = Counter(word for line_words in words for word in line_words)
    shown = {index for index, line in enumerate(lines) if line.startswith("#")}
    for note in notes:
        wanted = _words(note)
        scores = [
            (sum(1 / frequency[word] for word in line_words & wanted), index)
            for index, line_words in enumerate(words)
            if line_words & wanted
        ]
        for _, index in sorted(scores, key=lambda scored: (-scored[0], scored[1]))[:LINES_PER_NOTE]:
            shown.add(index)
    pieces: list[str] = []
    hidden = 0
    for index, line in enumerate(lines):
        if index in shown:
            if hidden:
                pieces.append(marker(hidden))
                hidden = 0
            pieces.append(line)
        else:
            hidden += 1
    if hidden:
        pieces.append(marker(hidden))
    return View("\n".join(pieces), partial=len(shown) < len(lines))
