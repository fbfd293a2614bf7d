"""The answers' shapes (docs/api.md §3, §5 and §6), refusals included: one pydantic class per JSON shape, built
by the use cases, serialised by the routes (``edges.http``), and described in docs/openapi.json from the same class.

They live here, not under ``edges/``, because the use cases build them and a use case never imports an
edge; the edges add only how a route declares them (``edges.responses.documented``). The domain's own
records (``notes.Note``, ``document.Document``...) stay plain dataclasses: storage builds them by the
thousand, and an answer is built from them once, by the ``of`` constructors below.

Unknown keys are refused (``extra="forbid"``), so the schema fuzzing (``tests/fuzz``) fails when an answer
and its description drift apart. ``defer_build``: a function builds the validators of the shapes it answers
with on first use, not all of them at import (cold start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from agent_memory.domain.document import Reason
from agent_memory.domain.scope import ScopeKind

if TYPE_CHECKING:
    from agent_memory.domain import document, notes

DAY_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
RecallMode = Literal["semantic", "hybrid", "keyword"]


class VersionFacts(Protocol):
    """What a versions listing knows of a version (its content is not read: storage's ``VersionMeta``)."""

    @property
    def version(self) -> int: ...
    @property
    def chars(self) -> int: ...
    @property
    def updated_at(self) -> str | None: ...


def absent(value: object) -> bool:
    """A key left out of the JSON when it has no value (a note's ``compaction_id``, an author's ids)."""
    return value is None


def published_name(answer: type) -> str:
    """An answer's name in docs/openapi.json and in the clients' types: its class's without the ``Answer`` that
    every answer's class ends in (``NoteAnswer`` is the API's ``Note``), so that the domain's records keep the
    plain names (``notes.Note``) and no module has to import an answer under another name."""
    return answer.__name__.removesuffix("Answer")


class Answer(BaseModel):
    """An answer's shape: exactly these keys. Its JSON Schema's title is its published name."""

    model_config = ConfigDict(extra="forbid", defer_build=True, model_title_generator=published_name)

    def json_body(self) -> dict[str, Any]:
        """The JSON body, as the contract writes it (``null`` where a field is declared nullable)."""
        return self.model_dump(mode="json")


# --- errors -----------------------------------------------------------------------------------------------


class ErrorDetailAnswer(Answer):
    code: str = Field(description="A stable, machine-readable code, e.g. `invalid_input`, `version_conflict`.")
    message: str


class ValidationDetailAnswer(Answer):
    loc: list[str | int] = Field(description='Where in the request: e.g. `["arguments", "text"]`.')
    msg: str
    type: str


MAX_DETAILS = 20


class ErrorBodyAnswer(Answer):
    """Every refusal or failure: never a stack trace."""

    error: ErrorDetailAnswer
    details: list[ValidationDetailAnswer] | None = Field(
        default=None,
        description="On a 422: what did not validate (at most 20 problems; the message says how many there were).",
        exclude_if=absent,
    )

    @classmethod
    def of(cls, code: str, message: str, details: list[dict[str, Any]] | None = None) -> ErrorBodyAnswer:
        """A refusal's body; ``details`` only when there are some, and at most 20 of them, the message saying how
        many there were: every refusal is built here, so no request's count of problems decides the answer's
        size (5,000 unknown keys answered 469 KB; 200,000, 16.7 MB, past what Lambda can answer)."""
        if details and len(details) > MAX_DETAILS:
            message = f"{message} ({len(details):,} problems; `details` lists the first {MAX_DETAILS})"
            details = details[:MAX_DETAILS]
        return cls(error=ErrorDetailAnswer(code=code, message=message), details=details or None)


# --- notes and documents ----------------------------------------------------------------------------------


class OriginAnswer(Answer):
    """Which conversation wrote the note (provenance)."""

    user_id: str
    thread_id: str
    compaction_id: str | None = Field(
        default=None, description="Set on a note written by the flush.", exclude_if=absent
    )
    messages: list[int] | None = Field(
        default=None,
        description="Set on a note written by extraction: the indexes of the request's messages it came from.",
        exclude_if=absent,
    )

    @classmethod
    def of(cls, origin: notes.Origin) -> OriginAnswer:
        messages = list(origin.messages) if origin.messages is not None else None
        return cls(
            user_id=origin.user_id, thread_id=origin.thread_id, compaction_id=origin.compaction_id, messages=messages
        )


class NoteAnswer(Answer):
    id: str = Field(description="`<day>.<position>`: unique and stable within the scope.")
    day: str = Field(pattern=DAY_PATTERN, description="The UTC day the note was written.")
    position: int = Field(ge=1, description="The note's place within its scope's day, unique, in write order.")
    text: str
    created_at: str
    source: str = Field(description="`remember`, `flush`, ...")
    consolidated: bool
    origin: OriginAnswer
    superseded_by: list[str] | None = Field(
        description="The ids of the notes that replaced this one in the curated document (a fold's `replace` or "
        "`delete` retired the line it was cited for): it is out of date. Null while it is current.",
    )

    @classmethod
    def fields_of(cls, note: notes.Note) -> dict[str, Any]:
        return {
            "id": note.id,
            "day": note.day,
            "position": note.position,
            "text": note.text,
            "created_at": note.created_at,
            "source": note.source,
            "consolidated": note.consolidated,
            "origin": OriginAnswer.of(note.origin),
            "superseded_by": list(note.superseded_by) if note.superseded_by is not None else None,
        }

    @classmethod
    def of(cls, note: notes.Note) -> NoteAnswer:
        return cls(**cls.fields_of(note))


class ScoredNoteAnswer(NoteAnswer):
    score: float = Field(description="Higher is better.")

    @classmethod
    def scored(cls, note: notes.Note, score: float) -> ScoredNoteAnswer:
        return cls(**NoteAnswer.fields_of(note), score=round(score, 6))


class DocumentAnswer(Answer):
    """The curated document; version 0 and empty content when none exists."""

    content: str
    version: int = Field(ge=0)
    chars: int = Field(ge=0)
    updated_at: str | None

    @classmethod
    def of(cls, doc: document.Document) -> DocumentAnswer:
        return cls(content=doc.content, version=doc.version, chars=doc.chars, updated_at=doc.updated_at)


class SavedDocumentAnswer(Answer):
    document: DocumentAnswer
    compressed: bool = Field(description="The write went through the compression rewrite.")
    warnings: list[str]


# --- tools and context (docs/api.md §3) ----------------------------------------------------------------------


class RememberedAnswer(Answer):
    note: NoteAnswer
    truncated: bool = Field(description="The text was capped at 2,000 characters.")
    redacted: list[str] = Field(description="The kinds of secret replaced by `[redacted: <kind>]`; empty if none.")
    similar: list[str] = Field(
        description="Ids of the scope's recent notes that say nearly the same (the note is written all the same).",
    )


class SkippedFactAnswer(Answer):
    text: str = Field(description="The fact as proposed (redacted and cleaned), not written.")
    similar: list[str] = Field(description="Ids of the scope's notes that already say it.")


class ExtractedAnswer(Answer):
    """What ``POST /v1/extract`` answers: always 200, with a status."""

    status: Literal["written", "duplicate", "failed"] = Field(
        description="`written`: this extraction's facts (none, when the messages held none); `duplicate`: this "
        "`(thread_id, extraction_id)` was extracted before (its notes); `failed`: nothing was written "
        "(`reason` says why), and the same id may be sent again."
    )
    notes: list[NoteAnswer] = Field(description='The notes written, `source: "extraction"`, each citing its messages.')
    skipped: list[SkippedFactAnswer] = Field(description="Facts the scope already held, not written again.")
    reason: str | None = Field(default=None, description="Set when it failed: why.", exclude_if=absent)


class ImportedNoteAnswer(Answer):
    index: int = Field(ge=0, description="The note's place in the request's `notes`.")
    id: str = Field(description="The note written for it.")


class SkippedNoteAnswer(Answer):
    index: int = Field(ge=0, description="The note's place in the request's `notes`.")
    similar: list[str] = Field(
        description="The scope's note (or the import's) that says the same: nothing was written."
    )


class RefusedNoteAnswer(Answer):
    index: int = Field(ge=0, description="The note's place in the request's `notes`.")
    code: str = Field(description="`invalid_input` (empty or a heading after cleaning) or `quota_exceeded`.")
    message: str


class ImportedAnswer(Answer):
    """An import's receipt: every note of the request is in exactly one of its three lists."""

    notes: list[ImportedNoteAnswer] = Field(description="Written, in the order they were written (`created_at`).")
    skipped: list[SkippedNoteAnswer]
    refused: list[RefusedNoteAnswer]
    document_version: int | None = Field(
        description="The version the request's `document` is (saved with reason `import`); null without one."
    )


class RecalledAnswer(Answer):
    notes: list[ScoredNoteAnswer] = Field(description="Best first.")
    mode: RecallMode = Field(description="What answered.")


class MemoryContextAnswer(Answer):
    scope: ScopeKind
    document: DocumentAnswer
    recent_notes: list[NoteAnswer] = Field(description="Today's and yesterday's notes (UTC), newest first.")
    system_prompt: str = Field(description="The text to inject into the turn.")
    degraded: list[Literal["document", "notes", "injection_record"]] = Field(
        description="What could not be loaded, and `injection_record` when the record of what this turn was "
        "shown could not be written."
    )


# --- management (docs/api.md §5) -----------------------------------------------------------------------------


class LimitsAnswer(Answer):
    soft: int
    hard: int


class CurrentDocumentAnswer(Answer):
    document: DocumentAnswer
    limits: LimitsAnswer


class ProvenanceLineAnswer(Answer):
    line: str = Field(description="One line of the current document, as it is stored.")
    notes: list[str] = Field(
        description="The ids of the notes cited for this line by the fold that wrote it, oldest first; empty for a "
        "line written by hand or by a whole-document rewrite."
    )


class ProvenanceAnswer(Answer):
    """The current document line by line, with the notes each line rests on."""

    version: int = Field(ge=0)
    lines: list[ProvenanceLineAnswer]


class OneVersionAnswer(Answer):
    document: DocumentAnswer


_CITED = "The ids of the notes the edit comes from."


class AddEditAnswer(Answer):
    op: Literal["add"]
    after: str | None = Field(description="The line of the previous version it was added after; null: at the end.")
    text: str
    notes: list[str] = Field(description=_CITED)


class ReplaceEditAnswer(Answer):
    op: Literal["replace"]
    line: str = Field(description="The line of the previous version it replaced.")
    text: str
    notes: list[str] = Field(description=_CITED)


class DeleteEditAnswer(Answer):
    op: Literal["delete"]
    line: str = Field(description="The line of the previous version it deleted.")
    notes: list[str] = Field(description=_CITED)


class VersionWithEditsAnswer(Answer):
    document: DocumentAnswer
    edits: list[AddEditAnswer | ReplaceEditAnswer | DeleteEditAnswer] | None = Field(
        description="The cited edits that made this version from the previous one, as applied (a consolidation "
        "that folded by edits, or without a model); null for any other version."
    )


class AuthorAnswer(Answer):
    """Who saved a version: a conversation, a dashboard user, or a consolidation run."""

    user_id: str | None = Field(default=None, exclude_if=absent)
    thread_id: str | None = Field(default=None, exclude_if=absent)
    run_id: str | None = Field(default=None, exclude_if=absent)

    @classmethod
    def of(cls, by: document.Author) -> AuthorAnswer:
        return cls(user_id=by.user_id or None, thread_id=by.thread_id or None, run_id=by.run_id or None)


class VersionEntryAnswer(Answer):
    version: int = Field(ge=1)
    chars: int = Field(ge=0)
    updated_at: str | None
    reason: Reason
    by: AuthorAnswer

    @classmethod
    def of(cls, doc: VersionFacts, reason: Reason, by: document.Author) -> VersionEntryAnswer:
        return cls(
            version=doc.version, chars=doc.chars, updated_at=doc.updated_at, reason=reason, by=AuthorAnswer.of(by)
        )


class VersionsAnswer(Answer):
    versions: list[VersionEntryAnswer] = Field(description="Newest first.")
    next_cursor: str | None = Field(description="The `cursor` of the next page; null on the last one.")


class NotesOfDayAnswer(Answer):
    day: str = Field(pattern=DAY_PATTERN)
    notes: list[NoteAnswer] = Field(description="Newest first.")


class NotesByDayAnswer(Answer):
    days: list[NotesOfDayAnswer] = Field(description="The most recent days that have notes, newest first.")
    next_before: str | None = Field(description='The `before` of "Load older"; null when nothing is older.')


class RunFailureAnswer(Answer):
    scope: str
    reason: str


class RunTokensAnswer(Answer):
    input: int = Field(ge=0)
    output: int = Field(ge=0)


class RunFoldsAnswer(Answer):
    edits: int = Field(ge=0, description="Groups folded by the model's cited edits.")
    rewrite: int = Field(ge=0, description="Groups folded by a whole-document rewrite (the fallback).")
    model_free: int = Field(ge=0, description="Groups folded without a model (dated bullets).")
    unchanged: int = Field(ge=0, description="Groups whose notes changed nothing: no version saved.")


class RunAnswer(Answer):
    run_id: str
    status: Literal["running", "finished"] = Field(description="Running while its groups fan out to workers.")
    groups_planned: int = Field(ge=0, description="Groups sent to the workers (docs/api.md §6).")
    groups_done: int = Field(ge=0)
    groups_failed: int = Field(ge=0)
    notes_consolidated: int = Field(ge=0)
    notes_remaining: int = Field(ge=0)
    started_at: str
    finished_at: str | None = Field(description="Null while the run is going.")
    failures: list[RunFailureAnswer]
    tokens: RunTokensAnswer = Field(
        description="The tokens the model reported for the run's calls (0 without a model)."
    )
    folds: RunFoldsAnswer = Field(description="The groups folded, each way.")

    @model_serializer(mode="wrap")  # unannotated return: the schema stays the fields' (an annotation replaces it)
    def _status_last(self, handler: SerializerFunctionWrapHandler):
        """``status`` comes last in the JSON, where the run records have always put it."""
        data: dict[str, Any] = handler(self)
        data["status"] = data.pop("status")
        return data


class RunsAnswer(Answer):
    runs: list[RunAnswer] = Field(description="Newest first.")


class RunStartedAnswer(Answer):
    run_id: str
    status: Literal["started"]


# --- people's control (docs/api.md §6) --------------------------------------------------------------------


class ExportedVersionAnswer(Answer):
    version: int = Field(ge=1)
    content: str
    chars: int = Field(ge=0)
    updated_at: str | None
    reason: Reason
    by: AuthorAnswer

    @classmethod
    def of(cls, doc: document.Document, reason: Reason, by: document.Author) -> ExportedVersionAnswer:
        return cls(
            version=doc.version,
            content=doc.content,
            chars=doc.chars,
            updated_at=doc.updated_at,
            reason=reason,
            by=AuthorAnswer.of(by),
        )


class ExportAnswer(Answer):
    format: Literal["agent-memory-export/1"]
    scope: ScopeKind
    exported_at: str = Field(description="The first page's instant, repeated on every page.")
    document: DocumentAnswer = Field(description="The current document.")
    versions: list[ExportedVersionAnswer] = Field(description="This page's versions, oldest first.")
    notes: list[NoteAnswer] = Field(description="This page's notes, oldest first (after every version).")
    next_cursor: str | None = Field(description="The `cursor` of the next page; null on the last one.")


class ErasedCountsAnswer(Answer):
    notes: int = Field(ge=0)
    versions: int = Field(ge=0)
    other: int = Field(ge=0, description="The head, counters, flush claims, injection records, usage.")


class ReceiptAnswer(Answer):
    erased: ErasedCountsAnswer
    finished_at: str


class InjectionEntryAnswer(Answer):
    at: str
    thread_id: str
    document_version: int = Field(ge=0)
    note_ids: list[str]


class InjectionsAnswer(Answer):
    injections: list[InjectionEntryAnswer] = Field(description="Newest first.")
    next_cursor: str | None


class UsageAnswer(Answer):
    notes_today: int = Field(ge=0)
    notes_per_day_quota: int = Field(ge=1)
    chars: int = Field(ge=0)
    chars_quota: int = Field(ge=1)
