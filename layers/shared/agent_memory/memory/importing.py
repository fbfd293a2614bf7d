"""Import (docs/api.md §9 "Import"): a platform's history, or an export of another deployment, written into one
scope with its notes' own dates.

Each note goes through the same write as ``remember`` (``text_pipeline.prepare`` on the ``import`` path, then
``NoteStore.append``) with its ``created_at`` as the note's instant: its day, its ``created_at``, the scope's due
marker by its age, and the quotas. The notes are written in ``created_at`` order (the request's order among
equal instants), so positions within a day follow time.

- **Near-duplicates** are skipped, not written: a note with the same terms (``search.near_duplicates.text_key``)
  as one of the scope's ``HELD_WINDOW`` newest notes, or as a note this import wrote before it (in this call or
  an earlier one), is listed under ``skipped`` with the note it repeats. The import's own notes are known from
  its log, not from the table: they carry old dates, so a scope with ``HELD_WINDOW`` newer notes would hide them.
- **Quotas**: each note counts against the day of its ``created_at``, as if it had been written that day (so
  months of history fit when no day of it held more than ``MEMORY_QUOTA_NOTES_PER_DAY`` notes, and an import
  never uses up today's quota with old notes); the characters quota counts every note. A note over either is
  refused (``quota_exceeded``), the others are written.
- **Idempotent and resumable** (``storage.import_records``): each note's outcome is recorded with it, so the
  same ``import_id`` again continues where the last call stopped, and after the last note answers the receipt
  without writing. A call stops after ``BUDGET_S`` (the function has 29 s) with ``import_unfinished`` (503).
- **A document** is saved first, as a new version with reason ``import`` (``MemoryService.update_memory``,
  unversioned: its compression and bounds apply); the same content as the current document saves nothing,
  so the pages of one export, each carrying the document, save it once.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any, Generic

from agent_memory.basics.errors import (
    ImportIdReused,
    ImportUnfinished,
    InvalidInput,
    MemoryServiceError,
    NotesQuotaExceeded,
    StorageQuotaExceeded,
)
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain import shapes
from agent_memory.domain.commands import DocumentWrite, ImportCommand, NoteToImport
from agent_memory.domain.document import HARD_LIMIT
from agent_memory.domain.notes import Note, note_id
from agent_memory.domain.text_pipeline import DOCUMENT, NOTE, prepare
from agent_memory.memory.ports import ImportedNotes, ImportProgress, Recorded
from agent_memory.memory.service import MemoryService
from agent_memory.search.near_duplicates import text_key
from agent_memory.storage.import_records import Progress

# The most notes one request carries: a larger import is sent in pages, each its own request and import_id.
PAGE_NOTES = 500
# What one call spends writing notes before it answers ``import_unfinished`` (PlatformFunction has 29 s).
BUDGET_S = 20.0
# How many of the scope's newest notes an imported note is compared with (the keyword recall's bound).
HELD_WINDOW = 2000


def receipt_of(log: list[Any], document_version: int | None) -> shapes.ImportedAnswer:
    """The receipt an import's log of outcomes gives (the same log, the same receipt)."""
    notes, skipped, refused = [], [], []
    for kind, index, *rest in log:
        if kind == "n":
            notes.append(shapes.ImportedNoteAnswer(index=index, id=rest[0]))
        elif kind == "s":
            skipped.append(shapes.SkippedNoteAnswer(index=index, similar=rest[0]))
        else:
            refused.append(shapes.RefusedNoteAnswer(index=index, code=rest[0], message=rest[1]))
    return shapes.ImportedAnswer(notes=notes, skipped=skipped, refused=refused, document_version=document_version)


def fingerprint(payload: object) -> str:
    """The digest that tells one import's body from another's under the same id."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass
class Importer(Generic[Recorded]):
    """Generic in the item that records a written note's outcome: the records make it, the note's transaction
    carries it."""

    notes: ImportedNotes[Recorded]
    records: ImportProgress[Recorded]
    memory: MemoryService  # the document's validated write
    _: KW_ONLY
    redact_extra: frozenset[str] = frozenset()
    budget_s: float = BUDGET_S
    held_window: int = HELD_WINDOW
    clock: Callable[[], float] = time.monotonic

    def run(self, command: ImportCommand) -> shapes.ImportedAnswer:
        scope = command.scope
        self._bounded(command)  # before the record: a refused body spends no import_id
        progress = self.records.begin(scope, command.import_id, command.fingerprint, now_epoch=int(time.time()))
        if progress.fingerprint != command.fingerprint:
            raise ImportIdReused(
                f"import_id {command.import_id!r} was used for another import: send a new id for new content",
                details=[{"loc": ["body", "import_id"], "msg": "used for another body", "type": "import_id_reused"}],
            )
        if progress.finished:
            return receipt_of(progress.log, progress.document_version)
        give_up_at = self.clock() + self.budget_s
        version = progress.document_version
        if command.document is not None and version is None:  # the document comes first: no note is done yet
            try:
                version = self._document(command)
            except MemoryServiceError as refusal:
                if refusal.status < 500:  # refused (the characters quota): the id is not spent on this body
                    self.records.forget(progress)
                raise
            self.records.document_saved(progress, version)
        log = list(progress.log)
        held = self._held(command, log) if len(log) < len(command.notes) else {}
        ordered = sorted(command.notes, key=lambda note: (note.created, note.index))
        for note in ordered[len(log) :]:
            if self.clock() > give_up_at:
                metrics.add_metric(name="ImportsUnfinished", unit="Count", value=1)
                raise ImportUnfinished(
                    f"the import wrote {len(log)} of its {len(command.notes)} notes within this call's time; "
                    "send the same request again (the same import_id and body) to continue"
                )
            log.append(self._one(command, note, progress, len(log), held))
        self.records.finish(progress, log)
        receipt = receipt_of(log, version)
        metrics.add_metric(name="NotesImported", unit="Count", value=len(receipt.notes))
        logger.info(
            "import finished",
            extra={
                "scope": scope.kind,
                "notes": len(receipt.notes),
                "skipped": len(receipt.skipped),
                "refused": len(receipt.refused),
            },
        )
        return receipt

    def _bounded(self, command: ImportCommand) -> None:
        """The document's hard limit, on the text as it would be stored: a secret's marker can be longer than the
        secret, and a document over the limit only once redacted would be compressed by a model, which the import
        never asks (``edges.requests.imports`` checks the text as sent)."""
        if command.document is None:
            return
        stored = len(prepare(command.document, "import", DOCUMENT, extra=self.redact_extra).text)
        if stored > HARD_LIMIT:
            raise InvalidInput(
                f"the document is {stored:,} characters once redacted, over the hard limit of {HARD_LIMIT:,} "
                "(the import compresses nothing); shorten it",
                details=[{"loc": ["body", "document"], "msg": "over the hard limit", "type": "document_too_large"}],
            )

    def _document(self, command: ImportCommand) -> int:
        """The document saved as a new version (reason ``import``), or the current version when it already
        says exactly that (a page of the same export, or a call resumed after its save)."""
        assert command.document is not None
        current = self.memory.documents.current(command.scope, consistent=True)
        if current.version and prepare(command.document, "import", DOCUMENT, extra=self.redact_extra).text == (
            current.content
        ):
            return current.version
        write = DocumentWrite(
            command.scope, command.document, None, "import", command.by, write_id=f"import.{command.import_id}"
        )
        return self.memory.update_memory(write).document.version

    def _held(self, command: ImportCommand, log: list[Any]) -> dict[frozenset[str], str]:
        """The terms of the scope's newest notes, each with one note that holds them (the newest), then those of
        the notes this import has written so far (its log), as a call that had not stopped would hold them."""
        scope = command.scope
        held: dict[frozenset[str], str] = {}
        for row in self.notes.newest_texts(scope, limit=self.held_window):
            if row.pk == scope.key and (key := text_key(row.text)):
                held.setdefault(key, note_id(row.day, row.position))
        sent = {note.index: note.text for note in command.notes}
        for kind, index, *rest in log:
            if kind == "n" and (key := text_key(prepare(sent[index], "import", NOTE, extra=self.redact_extra).text)):
                held[key] = rest[0]
        return held

    def _one(
        self, command: ImportCommand, note: NoteToImport, progress: Progress, done: int, held: dict[frozenset[str], str]
    ) -> Any:
        """Note number ``done`` (in time order): written, skipped or refused, its outcome recorded with it."""
        outcome: list[Any]
        try:
            prepared = prepare(note.text, "import", NOTE, extra=self.redact_extra)
        except InvalidInput as refusal:
            outcome = ["r", note.index, refusal.code, refusal.message]
        else:
            key = text_key(prepared.text)
            if key and key in held:
                outcome = ["s", note.index, [held[key]]]
            else:
                try:
                    written = self._append(command, note, prepared.text, progress, done)
                except NotesQuotaExceeded:
                    message = (
                        f"{note.created.date().isoformat()} already holds the notes a day may hold "
                        "(MEMORY_QUOTA_NOTES_PER_DAY, or a member's share of a team's day); not written"
                    )
                    outcome = ["r", note.index, "quota_exceeded", message]
                except StorageQuotaExceeded as refusal:
                    outcome = ["r", note.index, refusal.code, refusal.message]
                else:
                    if key:
                        held[key] = written.id
                    return ["n", note.index, written.id]
        if not self.records.step(progress, done, outcome):
            raise _busy()
        return outcome

    def _append(self, command: ImportCommand, note: NoteToImport, text: Any, progress: Progress, done: int) -> Note:
        """The note's append at its instant, its outcome recorded in the note's own transaction."""

        def completing(written: Note) -> Recorded:
            return self.records.step_item(progress, done, ["n", note.index, written.id])

        try:
            return self.notes.append(
                command.scope,
                created=note.created,
                text=text,
                source=note.source,
                origin=note.origin,
                completing=completing,
            )
        except Exception as error:
            if self.notes.completion_refused(error):  # another call of this import recorded this outcome first
                raise _busy() from None
            raise


def _busy() -> ImportUnfinished:
    return ImportUnfinished(
        "another call of this import is writing it now; send the same request again in a moment for its receipt"
    )
