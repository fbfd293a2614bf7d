"""The typed commands the use cases take: a document write from any writer, and those the Lambda triggers
hand over (``edges.events`` builds them from the raw events; ``flush``, ``indexer`` and ``consolidation`` take
them and never read an event).

They are plain records of the domain's own types, so a use case imports this module and no edge. The queue's
group message is the one pydantic model among them: the planner writes it as JSON and the worker's batch reads
it back through the same model, so the two sides cannot drift.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, field_validator

from agent_memory.domain.document import Author, Reason
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope

if TYPE_CHECKING:
    from agent_memory.domain.fold import Fold


@dataclass(frozen=True, slots=True)
class DocumentWrite:
    """One write of a scope's document, whoever writes it: the tool, the dashboard (a save or a restore), or a
    consolidation with its ``fold``. ``expected_version`` None: apply to whatever is current. ``write_id``
    names this one write however often it is sent (by botocore, by the service's own contention retry): the
    version it saves carries it, so a retry that finds it answers as the first attempt did."""

    scope: Scope
    content: str
    expected_version: int | None
    reason: Reason
    by: Author
    fold: Fold | None = None
    write_id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True, slots=True)
class NoteToImport:
    """One note of an import, as the request gave it (its text not yet through the text pipeline)."""

    index: int  # its place in the request's ``notes``: what the receipt names
    text: str
    created: datetime  # UTC: the note's day and ``created_at``
    origin: Origin
    source: str


@dataclass(frozen=True, slots=True)
class ImportCommand:
    """One import request, validated and its scope bound (``POST /v1/platform/.../import``). ``fingerprint``:
    the request's digest, so that the same ``import_id`` with another body is told apart."""

    scope: Scope
    import_id: str
    fingerprint: str
    notes: tuple[NoteToImport, ...]
    document: str | None
    by: Author  # who an imported document's version names


@dataclass(frozen=True, slots=True)
class FlushCommand:
    """One compaction event of FlushFunction, validated and its scope bound (docs/api.md §4)."""

    scope: Scope
    origin: Origin  # the conversation, with the event's ``compaction_id``
    messages: tuple[tuple[str, str], ...]  # (role, content), in the conversation's order

    @property
    def compaction_id(self) -> str:
        assert self.origin.compaction_id is not None  # the adapter always sets it
        return self.origin.compaction_id


@dataclass(frozen=True, slots=True)
class ExtractCommand:
    """One ``POST /v1/extract`` (docs/api.md §3 ``extract``), validated and its scope bound."""

    scope: Scope
    origin: Origin  # the conversation the facts come from
    extraction_id: str  # once per (thread_id, extraction_id)
    messages: tuple[tuple[str, str], ...]  # (role, content), in the conversation's order: a fact cites their indexes


@dataclass(frozen=True, slots=True)
class NoteChange:
    """One stream record of a note: written (INSERT, or MODIFY with a new text), its text unchanged (a MODIFY
    of its flags), or removed."""

    sequence: str  # the record's sequence number: what a partial-batch failure names
    scope_key: str
    note_id: str
    note: Note | None  # the new image's note; None when removed
    same_text: bool = False
    unchanged: bool = False  # a MODIFY of nothing the index holds (the table's vector, a write id)

    @property
    def removed(self) -> bool:
        return self.note is None


@dataclass(frozen=True, slots=True)
class ScheduledRun:
    """The nightly schedule's event: the run's id and its "now" (the event's ``time``, in UTC); a run started
    by hand may name the notes' minimum age in days (``make consolidate MIN_AGE_DAYS=0``), else the setting's."""

    run_id: str
    now: datetime
    min_age_days: int | None = None


class GroupMessage(BaseModel):
    """One due scope of one run: the body of a queue message, as the planner writes it (``body``) and as the
    worker's batch reads it (``edges.events.QueuedGroupRecord``); a body this model refuses is poisoned."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    run_id: str
    run: str  # the run record's sort key
    scope: str
    cutoff: str
    notes: int  # unconsolidated notes the marker counted, the remaining count if the group fails unread

    @field_validator("scope")
    @classmethod
    def _written_by_this_service(cls, key: str) -> str:
        try:
            Scope.from_key(key)
        except StopIteration:
            raise ValueError(f"not a scope key: {key!r}") from None
        return key

    def body(self) -> str:
        return self.model_dump_json()


@dataclass(frozen=True, slots=True)
class QueuedGroup:
    """One message of the consolidation queue and its group (a body that is not one never gets this far)."""

    message_id: str
    receives: int  # ApproximateReceiveCount
    message: GroupMessage
