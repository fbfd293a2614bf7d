"""The storage calls the night's use cases make, and nothing more: the planner's (``consolidation.planner``) and
the worker's (``consolidation.worker``).

Production hands in ``storage.consolidation_store.ConsolidationStore``, ``storage.due_markers.DueMarkers``,
``storage.document_store.DocumentStore``, ``memory.service.MemoryService`` and ``consolidation.queue.GroupQueue``
(``bootstrap``); the use cases' own tests hand in the in-memory fakes of ``tests/support/``, which the same
contract tests check against DynamoDB. A port lists a call only if a use case makes it, so a fake models only
what a use case's logic depends on.

A group's settle, its failure and a count elsewhere are one transaction across the scope's due marker and its
run's record: the store builds it with the markers it is paired with, so ``FoldStore`` is generic in them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agent_memory.domain.commands import DocumentWrite, GroupMessage
    from agent_memory.domain.document import Document
    from agent_memory.domain.fold import Fold
    from agent_memory.domain.scope import Scope
    from agent_memory.domain.shapes import SavedDocumentAnswer
    from agent_memory.storage.consolidation_store import DueGroup, PendingMarks
    from agent_memory.storage.due_markers import Claim, DueScope, MarkerNow


class RunLedger(Protocol):
    """The planner's side of the runs: the lease that serialises planners, and the run's record."""

    def acquire_lease(self, run_id: str, *, now_epoch: int, lease_s: int) -> bool: ...

    def release_lease(self, run_id: str) -> None: ...

    def save_run(self, record: dict[str, Any]) -> None: ...

    def planned(
        self, run: str, *, groups: int, remaining: int, outcomes: tuple[int, int] | None = None
    ) -> dict[str, Any]: ...

    def read_run(self, run: str) -> dict[str, Any]: ...

    def list_failure(self, run: str, scope_key: str, reason: str) -> None: ...


class DueScopeReader(Protocol):
    """The planner's read of the due markers: the due scopes, oldest first."""

    def due_scopes(self, cutoff: str) -> Iterator[DueScope]: ...


class GroupSender(Protocol):
    """The queue the planner fans a night's groups out to."""

    def send(self, batch: list[GroupMessage]) -> int: ...


class GroupFolder(Protocol):
    """Whoever folds a group where there is no queue: the worker, in the planner's own process."""

    def fold(
        self, message: GroupMessage, token: str, *, final: bool, claim_s: int, storage_attempts: int = 1
    ) -> str: ...


class FoldMarkers(Protocol):
    """The worker's side of a scope's due marker: the claim, what it holds now, and giving the claim back."""

    def claim(self, scope: Scope, token: str, run_id: str, *, now_epoch: int, lease_s: int) -> Claim: ...

    def read(self, scope: Scope) -> MarkerNow: ...

    def release(self, scope: Scope, claim: Claim) -> None: ...


class FoldStore(Protocol):
    """The worker's side of a scope's due notes, their marks, the pending-marks record and the run's counts."""

    def due_group(
        self, scope: Scope, *, floor: str | None, cutoff: str, max_notes: int, max_chars: int
    ) -> DueGroup: ...

    def oldest_unconsolidated(self, scope: Scope, floor: str | None) -> tuple[str, str] | None: ...

    def mark_consolidated(self, scope: Scope, note_sk: str) -> None: ...

    def unmarked(self, scope: Scope, note_sks: list[str]) -> list[str]: ...

    def pending(self, scope: Scope) -> PendingMarks | None: ...

    def clear_pending(self, scope: Scope, token: str | None = None) -> None: ...

    def settle_group(
        self,
        scope: Scope,
        claim: Claim,
        run: str,
        *,
        folded: int,
        fold: str | None = None,
        remaining: int,
        tokens: tuple[int, int] = (0, 0),
        writes: int,
        oldest: tuple[str, str] | None,
    ) -> bool:
        """The group's settle, its run's count and the pending record's clearing, all or nothing; False when the
        due marker moved meanwhile."""
        ...

    def fail_group(
        self, scope: Scope, claim: Claim, run: str, *, remaining: int, tokens: tuple[int, int] = (0, 0)
    ) -> bool:
        """The group failed for tonight and counted so in its run, all or nothing; False when the marker moved."""
        ...

    def count_elsewhere(self, scope: Scope, run: str) -> bool: ...

    def list_failure(self, run: str, scope_key: str, reason: str) -> None: ...

    def finish_if_complete(self, run: str, item: dict[str, Any] | None = None) -> dict[str, Any]: ...


class FoldDocuments(Protocol):
    """The worker's reads of a scope's document, and the pending record of a fold that changes nothing."""

    def current(self, scope: Scope, *, consistent: bool = False) -> Document: ...

    def hold_unchanged(self, scope: Scope, version: int, fold: Fold) -> None: ...


class DocumentWriter(Protocol):
    """The tools' own validated write path, which a fold's version goes through, and its redaction's extra kinds."""

    redact_extra: frozenset[str]

    def update_memory(self, write: DocumentWrite, *, allow_empty: bool = False) -> SavedDocumentAnswer: ...
