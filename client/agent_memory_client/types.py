"""What each method returns, as typed dictionaries named and shaped as docs/openapi.json's response schemas.

Typed dictionaries, not classes: an answer is the service's JSON as it came (``answer["note"]["id"]``),
so the client needs no validation library and a field the service adds reaches the caller untouched. The
tests hold every class here to the schema of the same name (keys, required keys, value types); the
annotations are evaluated when the module loads (no ``from __future__ import annotations``), so that
``__required_keys__`` tells the truth at run time too.
"""

from dataclasses import asdict, dataclass
from typing import Any, Literal, NotRequired, TypedDict


@dataclass(frozen=True)
class ConversationContext:
    """Who is talking, where: the backend alone knows it; the model never sees or supplies it (§3)."""

    user_id: str
    thread_id: str
    visibility: Literal["private", "shared"] = "private"
    workspace_id: str | None = None
    thread_owner_id: str | None = None
    document_version: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}


Scope = Literal["personal", "team"]
Reason = Literal["tool", "dashboard", "compression", "consolidation", "restore", "import"]


class Health(TypedDict):
    status: Literal["ok"]


class Origin(TypedDict):
    user_id: str
    thread_id: str
    compaction_id: NotRequired[str | None]
    messages: NotRequired[list[int] | None]  # an extracted fact's messages (their indexes in the request)


class Note(TypedDict):
    id: str
    day: str
    position: int
    text: str
    created_at: str
    source: str
    consolidated: bool
    origin: Origin
    superseded_by: list[str] | None  # the notes that replaced it in the document; None while it is current


class ProvenanceLine(TypedDict):
    line: str
    notes: list[str]


class Provenance(TypedDict):
    version: int
    lines: list[ProvenanceLine]


class ScoredNote(Note):
    score: float


class Document(TypedDict):
    content: str
    version: int
    chars: int
    updated_at: str | None


class ToolDefinition(TypedDict):
    name: str
    description: str
    parameters: dict[str, Any]


class Remembered(TypedDict):
    note: Note
    truncated: bool
    redacted: list[str]
    similar: list[str]


class SkippedFact(TypedDict):
    text: str
    similar: list[str]


class Extracted(TypedDict):
    """``POST /v1/extract``'s answer."""

    status: Literal["written", "duplicate", "failed"]
    notes: list[Note]
    skipped: list[SkippedFact]
    reason: NotRequired[str | None]


class SavedDocument(TypedDict):
    document: Document
    compressed: bool
    warnings: list[str]


class Recalled(TypedDict):
    notes: list[ScoredNote]
    mode: Literal["semantic", "hybrid", "keyword"]


ToolAnswer = Remembered | SavedDocument | Recalled


class MemoryContext(TypedDict):
    scope: Scope
    document: Document
    recent_notes: list[Note]
    system_prompt: str
    degraded: list[Literal["document", "notes", "injection_record"]]


class FlushResult(TypedDict):
    """FlushFunction's answer (docs/api.md §4): a Lambda invocation, so not in the HTTP API's schemas."""

    status: Literal["written", "duplicate", "disabled", "failed"]
    note: Note | None
    reason: NotRequired[str]
    model_free: NotRequired[bool]  # true when no model wrote the note (the local extractive stand-in)


class Limits(TypedDict):
    soft: int
    hard: int


class CurrentDocument(TypedDict):
    document: Document
    limits: Limits


class OneVersion(TypedDict):
    document: Document


class AddEdit(TypedDict):
    """Lines added after ``after`` (a line of the previous version; None: at the end)."""

    op: Literal["add"]
    after: str | None
    text: str
    notes: list[str]


class ReplaceEdit(TypedDict):
    op: Literal["replace"]
    line: str
    text: str
    notes: list[str]


class DeleteEdit(TypedDict):
    op: Literal["delete"]
    line: str
    notes: list[str]


class VersionWithEdits(TypedDict):
    """A version with the cited edits that made it (``notes``: the ids of the notes each comes from), or None."""

    document: Document
    edits: list[AddEdit | ReplaceEdit | DeleteEdit] | None


class Author(TypedDict, total=False):
    user_id: str | None
    thread_id: str | None
    run_id: str | None


class VersionEntry(TypedDict):
    version: int
    chars: int
    updated_at: str | None
    reason: Reason
    by: Author


class Versions(TypedDict):
    versions: list[VersionEntry]
    next_cursor: str | None


class NotesOfDay(TypedDict):
    day: str
    notes: list[Note]


class NotesByDay(TypedDict):
    days: list[NotesOfDay]
    next_before: str | None


class RunFailure(TypedDict):
    scope: str
    reason: str


class RunTokens(TypedDict):
    input: int
    output: int


class RunFolds(TypedDict):
    edits: int
    rewrite: int
    model_free: int
    unchanged: int


class Run(TypedDict):
    run_id: str
    status: Literal["running", "finished"]
    groups_planned: int
    groups_done: int
    groups_failed: int
    notes_consolidated: int
    notes_remaining: int
    started_at: str
    finished_at: str | None
    failures: list[RunFailure]
    tokens: RunTokens
    folds: RunFolds


class Runs(TypedDict):
    runs: list[Run]


class RunStarted(TypedDict):
    run_id: str
    status: Literal["started"]


class ExportedVersion(TypedDict):
    version: int
    content: str
    chars: int
    updated_at: str | None
    reason: Reason
    by: Author


class Export(TypedDict):
    """One page of ``agent-memory-export/1``; follow ``next_cursor`` until it is None."""

    format: Literal["agent-memory-export/1"]
    scope: Scope
    exported_at: str
    document: Document
    versions: list[ExportedVersion]
    notes: list[Note]
    next_cursor: str | None


class ImportedNote(TypedDict):
    index: int
    id: str


class SkippedNote(TypedDict):
    index: int
    similar: list[str]


class RefusedNote(TypedDict):
    index: int
    code: str
    message: str


class Imported(TypedDict):
    """An import's receipt: each note of the request is written, skipped (a near-duplicate) or refused."""

    notes: list[ImportedNote]
    skipped: list[SkippedNote]
    refused: list[RefusedNote]
    document_version: int | None


class ImportedNoteIn(TypedDict):
    """One note of ``notes/1``: its text, and its instant (ISO 8601 with its offset, ``Z`` or ``+hh:mm``)."""

    text: str
    created_at: str
    author: NotRequired[str | None]  # in a team memory, the member the note is of (required there)
    source: NotRequired[str | None]  # a label of where it came from (``[a-z0-9_.-]{1,32}``); default ``import``


class ErasedCounts(TypedDict):
    notes: int
    versions: int
    other: int


class Receipt(TypedDict):
    erased: ErasedCounts
    finished_at: str


class InjectionEntry(TypedDict):
    at: str
    thread_id: str
    document_version: int
    note_ids: list[str]


class Injections(TypedDict):
    injections: list[InjectionEntry]
    next_cursor: str | None


class Usage(TypedDict):
    notes_today: int
    notes_per_day_quota: int
    chars: int
    chars_quota: int
