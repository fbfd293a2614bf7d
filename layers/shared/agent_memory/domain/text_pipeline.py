"""One text pipeline for every write (docs/security.md "Redaction"): whichever path stores a text, it stores what
``prepare`` made of it, in this order.

1. Normalise: a note's input is cut to 100,000 characters and loses every character note cleaning removes
   (control characters, invisible format characters), so the detectors read what is stored. The separators
   cleaning turns into a space (U+2028, U+2029, U+0085...) stay for the detectors, which read a text holding
   one both with it as a space and without it (``redaction.SEPARATORS``): none can split a secret for the
   detectors that storage, a reader or a model joins again.
2. Detect and redact (``redaction.redact``).
3. Clean and bound: a note becomes one line, loses a bullet, is refused empty or as a heading, and is cut to
   its length (``notes.clean_note_text``); a document keeps its lines and its bounds are ``update_memory``'s.

What ``prepare`` returns is a ``StoredText``, and the storage writes of text (``NoteStore.append`` and ``load``,
``DocumentStore.save``) take no other string (``checked``): a path that skips the pipeline, or changes a text
after it, fails on its first write. ``WritePath`` names every path that stores text;
tests/support/redaction_paths.py runs the secrets corpus through each of them and tests/integration/
test_write_paths.py checks that they are exactly the paths the pipeline serves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from agent_memory.domain.notes import NOTE_MAX_CHARS, clean_note_text, normalise_note
from agent_memory.domain.redaction import redact

# The tool's, the dashboard's and a restore's document writes, a consolidation's document and the edits it
# records, a compression's rewrite (each a document ``Reason``), remember's, the flush's and an extraction's
# notes, an export loaded into an empty scope, and an import's notes and document (``memory.importing``).
WritePath = Literal[
    "remember",
    "flush",
    "extraction",
    "tool",
    "dashboard",
    "restore",
    "consolidation",
    "compression",
    "load",
    "import",
]
WRITE_PATHS: frozenset[str] = frozenset(get_args(WritePath))


@dataclass(frozen=True, slots=True)
class Form:
    """What a text is stored as: a note (one line, cut to ``max_chars``) or a document (lines kept, no cut)."""

    one_line: bool
    max_chars: int | None = None


NOTE = Form(one_line=True, max_chars=NOTE_MAX_CHARS)
DOCUMENT = Form(one_line=False)


class StoredText(str):
    """A text as ``prepare`` made it, and the path it was made for (str operations give back a plain str)."""

    path: WritePath


@dataclass(frozen=True, slots=True)
class Prepared:
    text: StoredText
    truncated: bool = False
    redacted: list[str] = field(default_factory=list)  # the kinds of secret replaced


def prepare(raw: str, path: WritePath, form: Form, *, extra: frozenset[str]) -> Prepared:
    """``raw`` normalised, redacted (``extra``: the kinds ``MEMORY_REDACT_EXTRA`` turns on), cleaned and bounded as
    ``form`` says. Raises InvalidInput for a note that is empty after cleaning or is a heading, and for a
    text too long to check for secrets."""
    if form.one_line:
        text, cut = normalise_note(raw)
        redacted = redact(text, extra=extra)
        cleaned = clean_note_text(redacted.text, max_chars=form.max_chars or NOTE_MAX_CHARS)
        text, truncated = cleaned.text, cut or cleaned.truncated
    else:
        redacted = redact(raw, extra=extra)
        text, truncated = redacted.text, False
    stored = StoredText(text)
    stored.path = path
    return Prepared(stored, truncated, redacted.kinds)


def checked(text: str) -> StoredText:
    """``text`` when the pipeline made it; a TypeError for any other string a storage write is handed."""
    if not isinstance(text, StoredText):
        raise TypeError("a text is stored only as text_pipeline.prepare made it")
    return text
