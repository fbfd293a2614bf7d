"""The dashboard's operations (docs/api.md §5): documents with history and restore, notes by day, runs.

Every document write goes through ``MemoryService.update_memory``, the same validated path as the tool
(limits, compression, history, optimistic concurrency), recorded as ``dashboard`` or ``restore``.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from agent_memory.basics.clock import iso, utc_now
from agent_memory.basics.errors import InvalidInput, NotFound
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain import shapes
from agent_memory.domain.commands import DocumentWrite
from agent_memory.domain.document import HARD_LIMIT, SOFT_LIMIT, Author, Document
from agent_memory.domain.notes import parse_note_id
from agent_memory.domain.provenance import in_note_order
from agent_memory.domain.scope import Scope
from agent_memory.memory.ports import DocumentHistory, NoteLeftovers, NotesByDay, RunListing
from agent_memory.memory.service import MemoryService

LIMITS = shapes.LimitsAnswer(soft=SOFT_LIMIT, hard=HARD_LIMIT)
_BATCH_GET_MAX = 100  # keys in one BatchGetItem
_DECIMAL_CURSOR = re.compile(r"[1-9][0-9]{0,17}")  # a version number; `str.isdigit` would take "²"


@dataclass
class Management:
    service: MemoryService  # the one write path: saves and restores are document writes like the tool's
    documents: DocumentHistory
    notes: NotesByDay
    run_records: RunListing
    lambda_client: Any
    consolidate_function: str
    stale: NoteLeftovers | None = None

    def document(self, scope: Scope) -> shapes.CurrentDocumentAnswer:
        current = self.documents.current(scope, consistent=True)
        return shapes.CurrentDocumentAnswer(document=shapes.DocumentAnswer.of(current), limits=LIMITS)

    def provenance(self, scope: Scope) -> shapes.ProvenanceAnswer:
        """Each line of the current document with the notes cited for it (``domain.provenance``), the notes
        deleted or erased since left out (one BatchGetItem per 100 cited notes)."""
        current, line_notes = self.documents.provenance(scope)
        cited = in_note_order({note for notes in line_notes for note in notes})
        wanted = [where for ident in cited if (where := parse_note_id(ident)) is not None]
        present = {
            keyed.note.id
            for start in range(0, len(wanted), _BATCH_GET_MAX)
            for keyed in self.notes.get_many(scope, wanted[start : start + _BATCH_GET_MAX])
        }
        lines = current.content.split("\n") if current.content else []
        return shapes.ProvenanceAnswer(
            version=current.version,
            lines=[
                shapes.ProvenanceLineAnswer(line=line, notes=in_note_order([note for note in notes if note in present]))
                for line, notes in zip(lines, line_notes, strict=True)
            ],
        )

    def save(self, scope: Scope, content: str, expected_version: int, user_id: str) -> shapes.SavedDocumentAnswer:
        """Empty content clears the document: a new, empty version (nothing is lost, history keeps the rest)."""
        write = DocumentWrite(scope, content, expected_version, "dashboard", Author(user_id=user_id))
        return self.service.update_memory(write, allow_empty=True)

    def versions(self, scope: Scope, limit: int, cursor: str | None) -> shapes.VersionsAnswer:
        """One page, newest first. One row more than the page is read to tell whether an older one follows: the
        oldest kept version is not version 1 once the history is bounded, so a full page may be the last."""
        below = _version_cursor(cursor)
        rows = self.documents.versions(scope, limit=limit + 1, below=below)
        page = rows[:limit]
        listed = [shapes.VersionEntryAnswer.of(doc, reason, by) for doc, reason, by in page]
        more = len(rows) > limit
        return shapes.VersionsAnswer(versions=listed, next_cursor=str(page[-1][0].version) if more else None)

    def version(self, scope: Scope, version: int) -> shapes.VersionWithEditsAnswer:
        found = self.documents.version_and_edits(scope, version)
        if found is None:
            raise NotFound(f"this memory has no version {version}")
        (document, _, _), edits = found
        return shapes.VersionWithEditsAnswer.model_validate(
            {"document": shapes.DocumentAnswer.of(document), "edits": edits}
        )

    def _version(self, scope: Scope, version: int) -> Document:
        found = self.documents.version(scope, version)
        if found is None:
            raise NotFound(f"this memory has no version {version}")
        return found[0]

    def restore(self, scope: Scope, version: int, expected_version: int, user_id: str) -> shapes.OneVersionAnswer:
        old = self._version(scope, version)
        write = DocumentWrite(scope, old.content, expected_version, "restore", Author(user_id=user_id))
        saved = self.service.update_memory(write, allow_empty=True)
        return shapes.OneVersionAnswer(document=saved.document)

    def notes_by_day(self, scope: Scope, before: date | None, days: int) -> shapes.NotesByDayAnswer:
        before_day = (before or (utc_now().date() + timedelta(days=1))).isoformat()
        found, older = self.notes.days_before(scope, before=before_day, days=days)
        return shapes.NotesByDayAnswer(
            days=[
                shapes.NotesOfDayAnswer(day=day, notes=[shapes.NoteAnswer.of(note) for note in notes])
                for day, notes in found
            ],
            next_before=found[-1][0] if older and found else None,
        )

    def delete_note(self, scope: Scope, note_id: str) -> None:
        where = parse_note_id(note_id)
        if where is None or not self.notes.delete(scope, *where):
            raise NotFound("this memory has no such note")
        if self.stale is not None:  # its idempotency record, flush claim and place in the injection records
            self.stale.void(scope, {note_id})
        metrics.add_metric(name="NotesDeleted", unit="Count", value=1)
        logger.info("note deleted", extra={"scope": scope.kind, "note_id": note_id})

    def runs(self, limit: int) -> shapes.RunsAnswer:
        return shapes.RunsAnswer(runs=[shapes.RunAnswer.model_validate(run) for run in self.run_records.runs(limit)])

    def start_run(self, requested_by: str) -> shapes.RunStartedAnswer:
        """Start a consolidation run now, asynchronously, with the event the schedule would send; its ``time`` is
        to the millisecond, so a note acknowledged before the run started is older than the run's "now"."""
        run_id = f"manual-{uuid.uuid4()}"
        event = {
            "version": "0",
            "id": run_id,
            "detail-type": "Scheduled Event",
            "source": "agent-memory.dashboard",
            "time": iso(datetime.now(UTC)),
            "detail": {"requested_by": requested_by},
        }
        self.lambda_client.invoke(
            FunctionName=self.consolidate_function, InvocationType="Event", Payload=json.dumps(event).encode()
        )
        logger.info("consolidation run requested", extra={"run_id": run_id, "by": requested_by})
        return shapes.RunStartedAnswer(run_id=run_id, status="started")


def _version_cursor(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    if not _DECIMAL_CURSOR.fullmatch(cursor) or int(cursor) < 2:
        raise InvalidInput(
            "`cursor` must be the `next_cursor` of a previous answer",
            details=[{"loc": ["query", "cursor"], "msg": "invalid cursor", "type": "cursor"}],
        )
    return int(cursor)
