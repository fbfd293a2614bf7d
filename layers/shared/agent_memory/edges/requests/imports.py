"""How an import's body is read (docs/api.md §9 "Import"): ``notes/1`` or a page of ``agent-memory-export/1``
with an ``import_id``, into the ``ImportCommand`` the use case takes. Everything a request can get wrong is
refused here, before anything is read or written: 422 with every problem listed (at most 20 reach the caller).

- ``notes/1`` is strict: ``{"import_id", "format", "document"?, "notes": [{"text", "created_at", "author"?,
  "source"?}]}`` and nothing else. ``document`` is the Markdown itself.
- ``agent-memory-export/1`` is a page as ``GET .../export`` answers it, plus ``import_id``: what an export holds
  beyond the notes' text, instant, source and origin, and the document's content, is not read (an export of a
  newer deployment still imports). Its version history stays behind: the current document is the version saved.
- ``created_at`` is an ISO 8601 instant with its offset (``Z`` or ``+hh:mm``), from 1970 to now.
- A document over the hard limit (25,000 characters) is refused: the import asks no model to compress it.
- Whose a note is: in a personal memory, the user's (``author``, when given, must be the user; an export's
  ``origin.user_id`` is the exporting deployment's id and is not read); in a team memory, its ``author``
  (``origin.user_id`` of an export), required: the member it counts against and whose erase takes it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agent_memory.basics.clock import utc_now
from agent_memory.domain.commands import ImportCommand, NoteToImport
from agent_memory.domain.document import HARD_LIMIT, Author
from agent_memory.domain.notes import NOTE_INPUT_MAX_CHARS, Origin
from agent_memory.domain.scope import Scope
from agent_memory.edges.requests.reading import Identifier, StrictModel, not_matching, validated
from agent_memory.memory.importing import PAGE_NOTES, fingerprint

FORMATS = ("notes/1", "agent-memory-export/1")
IMPORT_BODY = 'the request body is required: {"import_id", "format", "notes": [...]}'
REFUSED = "the import does not match the contract"
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
Text = Annotated[str, StringConstraints(min_length=1, max_length=NOTE_INPUT_MAX_CHARS)]
# A note's text may be empty here: empty after cleaning, as "" is, it is refused on its own (`refused`), not the body.
NoteText = Annotated[str, StringConstraints(max_length=NOTE_INPUT_MAX_CHARS)]
Instant = Annotated[str, StringConstraints(min_length=10, max_length=40)]
Source = Annotated[str, StringConstraints(pattern=r"^[a-z0-9_.-]{1,32}$")]
Notes = Field(max_length=PAGE_NOTES, description=f"At most {PAGE_NOTES}: a larger import is sent in pages.")


class ImportedNoteIn(StrictModel):
    text: NoteText
    created_at: Instant
    author: Identifier | None = None
    source: Source | None = None


class NotesImport(StrictModel):
    """``notes/1``: just the notes, and the document's Markdown. A page of ``agent-memory-export/1`` (as the export
    answers it) with an ``import_id`` is taken too: its notes keep their `source` and `origin.thread_id`."""

    import_id: Identifier
    format: Literal["notes/1"]
    document: Text | None = None
    notes: list[ImportedNoteIn] = Notes


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class ExportedOrigin(_Lenient):
    user_id: Identifier
    thread_id: Identifier


class ExportedNote(_Lenient):
    text: NoteText
    created_at: Instant
    source: Source
    origin: ExportedOrigin


class ExportedDocument(_Lenient):
    content: str


class ExportImport(_Lenient):
    """A page of ``agent-memory-export/1`` with its ``import_id``."""

    import_id: Identifier
    format: Literal["agent-memory-export/1"]
    document: ExportedDocument | None = None
    notes: list[ExportedNote] = Notes


def _instant(value: str, loc: list[str | int], problems: list[dict[str, Any]]) -> datetime:
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        instant = None
    if instant is None or instant.tzinfo is None:
        problems.append({"loc": loc, "msg": "an ISO 8601 instant with its offset (Z or +hh:mm)", "type": "datetime"})
        return _EARLIEST
    instant = instant.astimezone(UTC)
    if not _EARLIEST <= instant <= utc_now():
        problems.append({"loc": loc, "msg": "an instant from 1970 to now", "type": "datetime_range"})
    return instant


def parse_import(payload: dict[str, Any], scope: Scope) -> ImportCommand:
    """The import the body ``payload`` asks of ``scope``, or the 422 that lists what is wrong with it."""
    model: type[NotesImport] | type[ExportImport] = ExportImport if payload.get("format") == FORMATS[1] else NotesImport
    request = validated(model, payload, message=REFUSED, prefix=("body",))
    problems: list[dict[str, Any]] = []
    notes: list[NoteToImport] = []
    given: list[ImportedNoteIn | ExportedNote] = list(request.notes)
    for index, note in enumerate(given):
        created = _instant(note.created_at, ["body", "notes", index, "created_at"], problems)
        if isinstance(note, ImportedNoteIn):
            author, thread, source = note.author, request.import_id, note.source or "import"
        else:
            author, thread, source = note.origin.user_id, note.origin.thread_id, note.source
        if scope.kind == "personal":
            if isinstance(note, ImportedNoteIn) and author not in (None, scope.owner_id):
                problems.append({"loc": ["body", "notes", index, "author"], "msg": "not this user", "type": "author"})
            author = scope.owner_id
        elif author is None:
            problems.append(
                {"loc": ["body", "notes", index, "author"], "msg": "a team note's author", "type": "missing"}
            )
        notes.append(NoteToImport(index, note.text, created, Origin(author or "", thread), source))
    document = request.document.content if isinstance(request.document, ExportedDocument) else request.document
    if document is not None and len(document) > HARD_LIMIT:  # the import calls no model to compress it
        problems.append(
            {"loc": ["body", "document"], "msg": f"over {HARD_LIMIT:,} characters", "type": "document_too_large"}
        )
    if problems:
        raise not_matching(REFUSED, problems)
    return ImportCommand(
        scope=scope,
        import_id=request.import_id,
        fingerprint=fingerprint(payload),
        notes=tuple(notes),
        document=document if document and document.strip() else None,
        by=Author(user_id=scope.owner_id if scope.kind == "personal" else None, thread_id=request.import_id),
    )
