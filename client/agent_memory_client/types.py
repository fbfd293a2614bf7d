"""The shapes of docs/api.md §3 to §5, as typed dictionaries: what each method returns, as the service answers it."""

from __future__ import annotations

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


class Origin(TypedDict):
    user_id: str
    thread_id: str
    compaction_id: NotRequired[str]


class Note(TypedDict):
    id: str
    day: str
    position: int
    text: str
    created_at: str
    source: str
    consolidated: bool
    origin: Origin


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


class RememberResult(TypedDict):
    note: Note
    truncated: bool
    redacted: NotRequired[list[str]]


class DocumentWrite(TypedDict):
    document: Document
    compressed: bool
    warnings: list[str]


class RecallResult(TypedDict):
    notes: list[ScoredNote]
    mode: Literal["semantic", "hybrid", "keyword"]


class MemoryContext(TypedDict):
    scope: Literal["personal", "team"]
    document: Document
    recent_notes: list[Note]
    system_prompt: str
    degraded: list[str]


class FlushResult(TypedDict):
    status: Literal["written", "duplicate", "disabled", "failed"]
    note: Note | None
    reason: NotRequired[str]


class Limits(TypedDict):
    soft: int
    hard: int


class DocumentView(TypedDict):
    document: Document
    limits: NotRequired[Limits]


class VersionEntry(TypedDict):
    version: int
    chars: int
    updated_at: str
    reason: str
    by: dict[str, str]


class VersionPage(TypedDict):
    versions: list[VersionEntry]
    next_cursor: str | None


class NotesDay(TypedDict):
    day: str
    notes: list[Note]


class NotesPage(TypedDict):
    days: list[NotesDay]
    next_before: str | None


class ConsolidationRun(TypedDict, total=False):
    run_id: str
    groups_done: int
    groups_failed: int
    notes_consolidated: int
    notes_remaining: int
    started_at: str
    finished_at: str | None
    failures: list[dict[str, str]]


class RunList(TypedDict):
    runs: list[ConsolidationRun]
