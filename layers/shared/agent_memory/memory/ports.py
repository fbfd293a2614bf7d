"""The storage calls ``memory.service.MemoryService`` makes, as small ports: exactly those, nothing more.

The use case depends on these ``Protocol``s, not on the DynamoDB stores, so its own tests run on faithful
in-memory stores (``tests/support/fake_stores.py``) in milliseconds; the composition root (``bootstrap``)
hands it the real ones (``storage.note_store.NoteStore``, ``storage.document_store.DocumentStore`` and the
notes' ``UsageStore``), which satisfy them structurally. One set of contract tests
(``tests/support/store_contracts.py``) runs on both, so the two cannot drift.

Every call may raise ``StorageUnavailable`` (nothing was read, or the write's outcome is settled by the store
before it answers). A store's own refusals are the ones named on each method.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from agent_memory.domain.document import Author, Document, Reason
from agent_memory.domain.fold import Fold
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import StoredText
from agent_memory.storage.note_items import NoteText
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
