"""The storage calls the memory's use cases make, as small ports: exactly those, nothing more.

``memory.service.MemoryService``'s (``NoteAppends``, ``DocumentVersions``, ``CharactersCounter``), the
extraction's (``memory.extraction.ExtractionService``: ``ExtractionNotes``, ``ExtractionClaims``), the import's
(``memory.importing.Importer``: ``ImportedNotes``, ``ImportProgress``) and the dashboard's
(``memory.management.Management``: ``DocumentHistory``, ``NotesByDay``, ``RunListing``, ``NoteLeftovers``). The
use cases depend on these ``Protocol``s, not on the DynamoDB stores, so their own tests run on faithful in-memory
stores (``tests/support/fake_*.py``) in milliseconds; the composition root (``bootstrap``) hands them the real ones
(``storage.note_store.NoteStore``, ``storage.document_store.DocumentStore``, the notes' ``UsageStore``,
``ExtractionStore``, ``ImportRecords``, ``ConsolidationStore``, ``StaleRecords``), which satisfy them structurally.
The contract tests (``tests/support/*_contracts.py``) run on both, so the two cannot drift.

Every call may raise ``StorageUnavailable`` (nothing was read, or the write's outcome is settled by the store
before it answers). A store's own refusals are the ones named on each method.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol, TypeVar

from agent_memory.domain.commands import ExtractCommand
from agent_memory.domain.document import Author, Document, Reason
from agent_memory.domain.fold import Fold
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.provenance import LineNotes
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import StoredText
from agent_memory.storage.document_store import VersionMeta
from agent_memory.storage.extraction_store import ExtractionMarker
from agent_memory.storage.import_records import Progress
from agent_memory.storage.note_items import KeyedNote, NoteText
from agent_memory.storage.usage_store import CharsChange, Quota


class NoteAppends(Protocol):
    """The notes a ``remember`` writes, and the ones the per-turn context and the repeat check read."""

    def vector_of(self, text: str) -> bytes | None:
        """The stored vector a note of ``text`` gets, or None (no vectors kept, or the model failed)."""
        ...

    def append(
        self,
        scope: Scope,
        *,
        text: StoredText,
        vector: bytes | None = ...,
        created: datetime,
        origin: Origin,
        source: str,
    ) -> Note:
        """Write ``text`` (with ``vector`` as ``vector_of`` gave it; by default the store computes it) at the
        day's next free position, with the characters counter and the day's counts, all or nothing. Raises
        ``StorageQuotaExceeded`` (characters) or ``NotesQuotaExceeded`` (the day's notes)."""
        ...

    def newest_texts(self, scope: Scope, *, limit: int, vectors: bool = False) -> list[NoteText]:
        """The scope's ``limit`` newest notes, newest first, as ranking reads them (``vectors``: with their
        stored vectors)."""
        ...

    def newest_first(self, scope: Scope, *, first_day: str, last_day: str, limit: int) -> list[Note]:
        """The notes of ``first_day``..``last_day`` (inclusive), newest first, at most ``limit``."""
        ...


class DocumentVersions(Protocol):
    """The scope's document: its head, the length of a kept version, and a save of the next one."""

    def current(self, scope: Scope, *, consistent: bool = False) -> Document:
        """The head; version 0 with no content when the scope has no document yet."""
        ...

    def version_chars(self, scope: Scope, version: int) -> int:
        """The length of one kept version (0 when the scope no longer holds it)."""
        ...

    def save(
        self,
        scope: Scope,
        content: StoredText,
        *,
        expected_version: int,
        write_id: str | None = None,
        reason: Reason,
        usage: CharsChange | None = None,
        by: Author,
        prune: int | None = None,
        updated_at: str,
        pending_marks: Fold | None = None,
    ) -> Document:
        """Version ``expected_version + 1`` and the head, with ``usage`` (the characters counter's move, held to its
        quota when it carries one) and ``prune``, all or nothing. Raises ``VersionConflict`` (the head moved),
        ``StorageQuotaExceeded`` (over the quota) or ``FoldedNoteGone``; answers the version this ``write_id``
        already saved, when it finds one."""
        ...


class CharactersCounter(Protocol):
    """The scope's characters counter, as a document write is held to it: its quota (a save moves the counter in
    the version's own transaction, ``DocumentVersions.save``'s ``usage``)."""

    quota: Quota | None


# The item a note's transaction carries to record the note where its use case keeps account (an extraction's claim,
# an import's outcomes): a DynamoDB transaction item for the real stores, a fake write for the fakes. The records
# make it and the notes take it, so the two are a pair.
Recorded = TypeVar("Recorded")
Recorded_co = TypeVar("Recorded_co", covariant=True)
Recorded_contra = TypeVar("Recorded_contra", contravariant=True)


class RecordedAppends(Protocol[Recorded_contra]):
    """The notes a use case that keeps account of its writes compares with and writes: each note with its record's
    item in its own transaction (the extraction's and the import's)."""

    def newest_texts(self, scope: Scope, *, limit: int, vectors: bool = False) -> list[NoteText]:
        """The scope's ``limit`` newest notes, newest first (``vectors``: with their stored vectors)."""
        ...

    def append(
        self,
        scope: Scope,
        *,
        text: StoredText,
        vector: bytes | None = ...,
        completing: Callable[[Note], Recorded_contra] | None = None,
        created: datetime,
        origin: Origin,
        source: str,
    ) -> Note:
        """As ``NoteAppends.append`` (the day and quotas are those of ``created``), with ``completing``'s item (built
        from the note) in the note's own transaction: its refusal writes nothing and raises."""
        ...


class ExtractionNotes(RecordedAppends[Recorded_contra], Protocol[Recorded_contra]):
    """The extraction's notes: also a fact's vector, and the notes a duplicate answers read back."""

    def vector_of(self, text: str) -> bytes | None:
        """The stored vector a note of ``text`` gets, or None (no vectors kept, or the model failed)."""
        ...

    def get_many(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[KeyedNote]:
        """The notes at these places that exist, in the order asked."""
        ...


class ExtractionClaims(Protocol[Recorded_co]):
    """The claim on an extraction id (``storage.extraction_store``): one extraction owns it at a time, and it lists
    the notes written under it."""

    def claim(self, command: ExtractCommand, *, token: str, now_epoch: int) -> ExtractionMarker | None:
        """None when this call now owns the id, else the marker that holds it."""
        ...

    def note_recorded(self, command: ExtractCommand, *, token: str, note_id: str) -> Recorded_co:
        """The item that lists ``note_id`` in the claim, on condition the claim is still ``token``'s."""
        ...

    def finish(self, command: ExtractCommand, *, token: str) -> None:
        """The claim marked ``written``, if still ``token``'s: a repeat of the id answers ``duplicate`` from now on."""
        ...

    def release(self, command: ExtractCommand, *, token: str) -> None:
        """The claim's lease ended, if still ``token``'s and in progress; else nothing."""
        ...


class ImportedNotes(RecordedAppends[Recorded_contra], Protocol[Recorded_contra]):
    """The import's notes: also which refusal of a note's transaction was its outcome's."""

    def completion_refused(self, error: Exception) -> bool:
        """Whether ``append`` raised ``error`` because ``completing``'s condition failed: nothing was written."""
        ...


class ImportProgress(Protocol[Recorded_co]):
    """An import's record and its notes' outcomes (``storage.import_records``): what makes it idempotent by its id
    and resumable."""

    def begin(self, scope: Scope, import_id: str, fingerprint: str, *, now_epoch: int) -> Progress:
        """The record, made now, or as an earlier call of the same id left it (with its outcomes so far)."""
        ...

    def step_item(self, progress: Progress, done: int, entry: Any) -> Recorded_co:
        """The item that records outcome number ``done + 1``, on condition no call recorded it yet."""
        ...

    def step(self, progress: Progress, done: int, entry: Any) -> bool:
        """That outcome recorded on its own; False when another call recorded it first."""
        ...

    def document_saved(self, progress: Progress, version: int) -> None: ...

    def forget(self, progress: Progress) -> None:
        """The record removed, unless a call saved its document or finished it meanwhile."""
        ...

    def finish(self, progress: Progress, log: list[Any]) -> None:
        """The receipt kept on the record: the same id answers it from now on."""
        ...


class DocumentHistory(Protocol):
    """The dashboard's reads of a scope's document: the head, each line's notes, the kept versions."""

    def current(self, scope: Scope, *, consistent: bool = False) -> Document: ...

    def provenance(self, scope: Scope) -> tuple[Document, LineNotes]:
        """The head and, for each of its lines, the ids of the notes cited for it (empty for a line by hand)."""
        ...

    def versions(self, scope: Scope, *, limit: int, below: int | None) -> list[tuple[VersionMeta, Reason, Author]]:
        """The kept versions newest first, ``limit`` of them, all below ``below`` when given: no content."""
        ...

    def version(self, scope: Scope, version: int) -> tuple[Document, Reason, Author] | None:
        """One kept version as it was saved; None when the scope does not hold it."""
        ...

    def version_and_edits(
        self, scope: Scope, version: int
    ) -> tuple[tuple[Document, Reason, Author], list[dict[str, Any]] | None] | None:
        """As ``version``, with the cited edits that made it (a fold's), else None for them."""
        ...


class NotesByDay(Protocol):
    """The dashboard's notes: listed by day, read by their places, and deleted one by one."""

    def days_before(self, scope: Scope, *, before: str, days: int) -> tuple[list[tuple[str, list[Note]]], bool]:
        """The ``days`` newest days with notes before ``before``, newest first, each with its notes newest first;
        and whether an older note exists."""
        ...

    def get_many(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[KeyedNote]: ...

    def delete(self, scope: Scope, day: str, position: int) -> bool:
        """The note gone, its characters and day count given back and the erase mark moved, all or nothing; False
        when the scope holds no such note."""
        ...


class RunListing(Protocol):
    """The consolidation runs, newest first, each with its status and counts."""

    def runs(self, limit: int) -> list[dict[str, Any]]: ...


class NoteLeftovers(Protocol):
    """What a deleted note leaves behind in its scope (its idempotency record, flush claim, a claim's or a turn's
    list), voided."""

    def void(self, scope: Scope, note_ids: set[str]) -> None: ...
