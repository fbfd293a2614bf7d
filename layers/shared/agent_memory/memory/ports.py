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
from typing import Any, Protocol

from agent_memory.basics.errors import StorageQuotaExceeded
from agent_memory.domain.document import Author, Document, Reason
from agent_memory.domain.fold import Fold
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import StoredText
from agent_memory.storage.note_items import NoteText

# A move of a scope's characters counter, as the store that applies it builds it (the real one: a DynamoDB
# transaction item; an in-memory store: its own write). Opaque to the use case: it asks the usage port for one
# and hands it to the document port's ``save``, which applies it in the version's own transaction.
CounterMove = Any


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
        usage_change: CounterMove | None = None,
        prune: int | None = None,
        pending_marks: Fold | None = None,
        reason: Reason,
        by: Author,
        updated_at: str,
    ) -> Document:
        """Version ``expected_version + 1`` and the head, with ``usage_change`` and ``prune``, all or nothing.
        Raises ``VersionConflict`` (the head moved), ``QuotaRefused`` (``usage_change``'s condition) or
        ``FoldedNoteGone``; answers the version this ``write_id`` already saved, when it finds one."""
        ...


class CharactersCounter(Protocol):
    """The scope's characters counter, as a document write moves it (the notes' writes move it themselves)."""

    def change_item(self, scope: Scope, delta: int, *, enforce: bool = True) -> CounterMove:
        """A move of the counter by ``delta``, on condition of the quota when it grows and ``enforce``; raises
        ``StorageQuotaExceeded`` at once when ``delta`` alone is over the quota."""
        ...

    def refusal(self, adding: int) -> StorageQuotaExceeded:
        """The refusal of a write of ``adding`` characters that the quota's condition refused."""
        ...
