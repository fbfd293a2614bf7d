"""The storage calls people's control makes (``people.control.People``), one small port per part it is given.

In production each is a DynamoDB store (``bootstrap`` wires ``storage.scope_items.ScopeItems``,
``DocumentStore``, ``NoteStore``, ``UsageStore``, ``StaleRecords``) and the OpenSearch notes index; the use
case's own tests hand in the in-memory fakes of ``tests/support`` instead, which the same contract tests check
against the real stores. What crosses the partition port is typed: an export's versions and notes as the stores
parse them, and an erase's items as ``PartitionItem``s (sort key, length, superseded notes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from agent_memory.domain.document import Author, Document, Reason
from agent_memory.domain.notes import Note
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import InjectionsAnswer
from agent_memory.domain.text_pipeline import StoredText
from agent_memory.storage.scope_items import PartitionItem
from agent_memory.storage.stale_records import Stale

if TYPE_CHECKING:
    from agent_memory.providers.notes_index import BulkOutcome, IndexAction


class ScopePartition(Protocol):
    """A scope's items in key order, and its erase (``storage.scope_items.ScopeItems``): counted on the erase
    record page by page before the page's deletes, so a call after a crash finishes and counts each item once."""

    def versions_page(
        self, scope: Scope, *, after: str | None, limit: int
    ) -> tuple[list[tuple[Document, Reason, Author]], str | None]:
        """An export's page of kept versions, oldest first, each as it was saved; the sort key to go on after."""
        ...

    def notes_page(self, scope: Scope, *, after: str | None, limit: int) -> tuple[list[Note], str | None]:
        """An export's page of notes, in key order; the sort key to go on after."""
        ...

    def keys(self, scope: Scope, *, prefix: str = "", author: str | None = None) -> Iterator[list[PartitionItem]]:
        """Pages of the items still there (sort key, a note's length and the notes it superseded), erase records
        left out."""
        ...

    def unlink(self, scope: Scope, page: list[PartitionItem]) -> None: ...

    def delete(self, scope: Scope, sort_keys: list[str]) -> None: ...

    def begin_erase(self, scope: Scope, record: str, started_at: str) -> dict[str, int]:
        """The erase record's counts so far (an interrupted call's); its counted page deleted first."""
        ...

    def erase_page(self, scope: Scope, record: str, sort_keys: list[str], counts: dict[str, int]) -> str:
        """Count, then delete; the page's id, what its give-backs are moved under once."""
        ...

    def end_erase(self, scope: Scope, record: str) -> None: ...

    def injections(
        self, scope: Scope, *, thread_id: str | None, limit: int, cursor: str | None, now_epoch: int
    ) -> InjectionsAnswer: ...


class VersionedDocument(Protocol):
    """The document's head and the save of a version (``storage.document_store.DocumentStore``)."""

    def current(self, scope: Scope, *, consistent: bool = False) -> Document: ...

    def save(
        self, scope: Scope, content: StoredText, *, by: Author, reason: Reason, updated_at: str, expected_version: int
    ) -> Document:
        """A loaded version as it was saved (who, why, when), on condition the head is at ``expected_version``."""
        ...


class LoadedNotes(Protocol):
    """A note written as it was exported (``storage.note_store.NoteStore.load``)."""

    def load(self, scope: Scope, note: Note) -> None: ...


class Counters(Protocol):
    """The scope's characters and its days' notes (``storage.usage_store.UsageStore``); an erase gives back what
    it removed, once under its page's id."""

    def add(self, scope: Scope, chars: int, *, once: str | None = None) -> None: ...

    def give_back(self, scope: Scope, chars: int, *, once: str | None = None) -> None: ...

    def give_back_notes(
        self, scope: Scope, day: str, count: int, authors: dict[str, int] | None = None, *, once: str | None = None
    ) -> None: ...

    def notes_on(self, scope: Scope, day: str) -> int: ...

    def chars(self, scope: Scope) -> int: ...


class LeftBehind(Protocol):
    """What deleted notes left in their scope (``storage.stale_records.StaleRecords``)."""

    def trim_and_list(self, scope: Scope, note_ids: set[str], *, author: str | None = None) -> Stale: ...


class IndexToClear(Protocol):
    """The notes index as an erase clears it (``providers.notes_index.NotesIndex``)."""

    def note_ids(self, scope_key: str) -> set[str]: ...

    def bulk(self, actions: Sequence[IndexAction]) -> list[BulkOutcome]: ...

    def refresh(self) -> None: ...

    def count(self, scope_key: str) -> int: ...
