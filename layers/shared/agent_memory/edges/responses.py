"""Response models of the HTTP API (docs/api.md §3 and §5), for its OpenAPI document.

The routes build their answers from the domain objects (``as_dict``); these models describe those answers,
and the routes declare them (``responses=``) so that Powertools writes them into ``docs/openapi.json``.
They forbid unknown keys, so the schema fuzzing (``tests/fuzz``), which checks every answer against the
document, fails when an answer and its description drift apart.
"""

from __future__ import annotations

from typing import Any, Literal

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel, ConfigDict, Field

from agent_memory.document import Reason
from agent_memory.recall import RecallMode

DAY_PATTERN = r"^\d{4}-\d{2}-\d{2}$"


class Answer(BaseModel):
    """An answer's shape: exactly these keys.

    ``defer_build``: the functions never validate with these models (they only describe answers for the
    OpenAPI document), so their validators are built on first use instead of at import: cold start."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


# --- errors -----------------------------------------------------------------------------------------------


class ErrorDetail(Answer):
    code: str = Field(description="A stable, machine-readable code, e.g. `invalid_input`, `version_conflict`.")
    message: str


class ValidationDetail(Answer):
    loc: list[str | int] = Field(description='Where in the request: e.g. `["arguments", "text"]`.')
    msg: str
    type: str


class ErrorBody(Answer):
    """Every refusal or failure: never a stack trace."""

    error: ErrorDetail
    details: list[ValidationDetail] | None = Field(default=None, description="On a 422: what did not validate.")


# --- notes and documents ----------------------------------------------------------------------------------


class Origin(Answer):
    """Which conversation wrote the note (provenance)."""

    user_id: str
    thread_id: str
    compaction_id: str | None = Field(default=None, description="Set on a note written by the flush.")


class Note(Answer):
    id: str = Field(description="`<day>.<position>`: unique and stable within the scope.")
    day: str = Field(pattern=DAY_PATTERN, description="The UTC day the note was written.")
    position: int = Field(ge=1, description="The note's place within its scope's day, unique, in write order.")
    text: str
    created_at: str
    source: str = Field(description="`remember`, `flush`, ...")
    consolidated: bool
    origin: Origin


class ScoredNote(Note):
    score: float = Field(description="Higher is better.")


class Document(Answer):
    """The curated document; version 0 and empty content when none exists."""

    content: str
    version: int = Field(ge=0)
    chars: int = Field(ge=0)
    updated_at: str | None


class SavedDocument(Answer):
    document: Document
    compressed: bool = Field(description="The write went through the compression rewrite.")
    warnings: list[str]


# --- tools and context (docs/api.md §3) ----------------------------------------------------------------------


class Remembered(Answer):
    note: Note
    truncated: bool = Field(description="The text was capped at 2,000 characters.")
    redacted: list[str] = Field(description="The kinds of secret replaced by `[redacted: <kind>]`; empty if none.")


class Recalled(Answer):
    notes: list[ScoredNote] = Field(description="Best first.")
    mode: RecallMode = Field(description="What answered.")


class MemoryContext(Answer):
    scope: Literal["personal", "team"]
    document: Document
    recent_notes: list[Note] = Field(description="Today's and yesterday's notes (UTC), newest first.")
    system_prompt: str = Field(description="The text to inject into the turn.")
    degraded: list[Literal["document", "notes"]] = Field(description="What could not be loaded.")


class ToolDefinition(Answer):
    name: str
    description: str
    parameters: dict[str, Any] = Field(description="A JSON Schema of the tool's `arguments`.")


class Tools(Answer):
    tools: list[ToolDefinition]


class Health(Answer):
    status: Literal["ok"]


# --- management (docs/api.md §5) -----------------------------------------------------------------------------


class Limits(Answer):
    soft: int
    hard: int


class CurrentDocument(Answer):
    document: Document
    limits: Limits


class OneVersion(Answer):
    document: Document


class Author(Answer):
    """Who saved a version: a conversation, a dashboard user, or a consolidation run."""

    user_id: str | None = None
    thread_id: str | None = None
    run_id: str | None = None


class VersionEntry(Answer):
    version: int = Field(ge=1)
    chars: int = Field(ge=0)
    updated_at: str | None
    reason: Reason
    by: Author


class Versions(Answer):
    versions: list[VersionEntry] = Field(description="Newest first.")
    next_cursor: str | None = Field(description="The `cursor` of the next page; null on the last one.")


class NotesOfDay(Answer):
    day: str = Field(pattern=DAY_PATTERN)
    notes: list[Note] = Field(description="Newest first.")


class NotesByDay(Answer):
    days: list[NotesOfDay] = Field(description="The most recent days that have notes, newest first.")
    next_before: str | None = Field(description='The `before` of "Load older"; null when nothing is older.')


class RunFailure(Answer):
    scope: str
    reason: str


class Run(Answer):
    run_id: str
    status: Literal["running", "finished"] = Field(description="Running while its groups fan out to workers.")
    groups_planned: int = Field(ge=0, description="Groups sent to the workers (docs/api.md §6).")
    groups_done: int = Field(ge=0)
    groups_failed: int = Field(ge=0)
    notes_consolidated: int = Field(ge=0)
    notes_remaining: int = Field(ge=0)
    started_at: str
    finished_at: str | None = Field(description="Null while the run is going.")
    failures: list[RunFailure]


class Runs(Answer):
    runs: list[Run] = Field(description="Newest first.")


class RunStarted(Answer):
    run_id: str
    status: Literal["started"]


# --- what a route declares --------------------------------------------------------------------------------

_REFUSALS = {
    400: "The body is not JSON (`malformed_request`).",
    401: "No token, or one that does not verify (`unauthorized`). In AWS the JWT authorizer refuses first, "
    'with API Gateway\'s own `{"message": "Unauthorized"}`.',
    403: "Not allowed: a private thread of another user, a workspace the caller is not a member of, or an "
    "operators' route (`forbidden`).",
    404: "The scope holds no such version or note (`not_found`).",
    429: "`quota_exceeded`: the scope has written its notes for today; `Retry-After` says when to try again.",
    415: "The body is not declared as JSON (`unsupported_media_type`).",
    409: "`version_conflict`: the document changed since the version the write was based on; nothing changed.",
    422: "The request breaks the contract (`invalid_input`, with `details`), or the document is too large even "
    "after compression (`document_too_large`), or the write would pass the scope's characters quota "
    "(`quota_exceeded`).",
    500: "An unexpected error (`internal_error`); nothing was half-written.",
    503: "DynamoDB or the chat model failed after retries (`storage_unavailable`, `model_unavailable`); nothing "
    "was written.",
}


def documented(status: int, model: type[BaseModel] | None, description: str, *refusals: int) -> dict[int, Any]:
    """A route's ``responses=``: its success (``model`` None: no body) and the refusals it can answer with."""
    # No body: an empty ``content``, else Powertools describes the handler's return annotation instead.
    content: dict[str, Any] = {"application/json": {"model": model}} if model is not None else {}
    answers: dict[int, OpenAPIResponse] = {status: {"description": description, "content": content}}
    for refusal in refusals:
        answers[refusal] = {"description": _REFUSALS[refusal], "content": {"application/json": {"model": ErrorBody}}}
    return dict(answers)


# --- people's control (docs/api.md §6) --------------------------------------------------------------------


class ExportedVersion(Answer):
    version: int = Field(ge=1)
    content: str
    chars: int = Field(ge=0)
    updated_at: str | None
    reason: Reason
    by: Author


class Export(Answer):
    format: Literal["agent-memory-export/1"]
    scope: Literal["personal", "team"]
    exported_at: str = Field(description="The first page's instant, repeated on every page.")
    document: Document = Field(description="The current document.")
    versions: list[ExportedVersion] = Field(description="This page's versions, oldest first.")
    notes: list[Note] = Field(description="This page's notes, oldest first (after every version).")
    next_cursor: str | None = Field(description="The `cursor` of the next page; null on the last one.")


class ErasedCounts(Answer):
    notes: int = Field(ge=0)
    versions: int = Field(ge=0)
    other: int = Field(ge=0, description="The head, counters, flush claims, injection records, usage.")


class Receipt(Answer):
    erased: ErasedCounts
    finished_at: str


class InjectionEntry(Answer):
    at: str
    thread_id: str
    document_version: int = Field(ge=0)
    note_ids: list[str]


class Injections(Answer):
    injections: list[InjectionEntry] = Field(description="Newest first.")
    next_cursor: str | None


class Usage(Answer):
    notes_today: int = Field(ge=0)
    notes_per_day_quota: int = Field(ge=1)
    chars: int = Field(ge=0)
    chars_quota: int = Field(ge=1)
