"""The nightly consolidation: fold week-old notes into each scope's document (CONTRACT §4 ``ConsolidateFunction``).

A run, step by step (each step safe to die after):
1. take the run lease (runs never overlap, so two runs can never fold the same note);
2. finish the marks that an earlier run left pending (its document version is saved already);
3. read the due notes from the sparse index, oldest first, and plan groups within the caps;
4. per group, concurrently: ask the chat model for the full updated document, save it through the
   same validated path as ``update_memory`` (limits, compression, history) together with a
   pending-marks record, then mark the notes and clear the record. A conflict with a concurrent
   ``update_memory`` re-reads the document and tries once more; otherwise the group fails and all of
   its notes stay unmarked for the next night;
5. record the run for operators and release the lease.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory.clock import iso
from agent_memory.document import Author, Document
from agent_memory.errors import MemoryServiceError, ModelUnavailable, VersionConflict
from agent_memory.models.chat import ChatModel
from agent_memory.models.prompts import CONSOLIDATION_SYSTEM, consolidation_prompt
from agent_memory.observability import logger, metrics
from agent_memory.scope import Scope
from agent_memory.service import MemoryService
from agent_memory.storage.consolidation_store import ConsolidationStore, DueNote
from agent_memory.storage.document_store import DocumentStore

CONSOLIDATION_MAX_TOKENS = 8192
# A result shorter than half the current document has dropped facts, not folded notes in.
MIN_KEPT_RATIO = 0.5
# Longer than the function's 15-minute timeout, so a live run never loses its lease.
RUN_LEASE_S = 16 * 60


@dataclass(frozen=True, slots=True)
class Caps:
    min_age_days: int
    max_groups: int
    max_notes: int
    max_chars: int


@dataclass(frozen=True, slots=True)
class Group:
    scope: Scope
    notes: list[DueNote]


@dataclass(frozen=True, slots=True)
class Plan:
    groups: list[Group]
    notes_due: int


def plan_groups(due_oldest_first: Iterable[DueNote], caps: Caps) -> Plan:
    """Groups by scope in the order of their oldest due note: at most ``max_groups`` groups, each with its
    oldest notes up to ``max_notes`` and ``max_chars`` characters. Everything else waits for the next run."""
    by_scope: dict[str, list[DueNote]] = {}
    notes_due = 0
    for note in due_oldest_first:
        notes_due += 1
        by_scope.setdefault(note.scope_key, []).append(note)
    groups = []
    for scope_key, notes in list(by_scope.items())[: caps.max_groups]:
        taken: list[DueNote] = []
        chars = 0
        for note in notes:
            if len(taken) == caps.max_notes or (taken and chars + len(note.text) > caps.max_chars):
                break
            taken.append(note)
            chars += len(note.text)
        groups.append(Group(Scope.from_key(scope_key), taken))
    return Plan(groups, notes_due)


class GroupFailed(Exception):
    """A group could not be folded; its notes stay unmarked."""


@dataclass
class RunRecord:
    run_id: str
    started_at: str
    finished_at: str | None = None
    groups_done: int = 0
    groups_failed: int = 0
    notes_consolidated: int = 0
    notes_remaining: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)

    def result(self) -> dict[str, Any]:
        """What ``ConsolidateFunction`` returns (CONTRACT §4)."""
        return {
            "run_id": self.run_id,
            "groups_done": self.groups_done,
            "groups_failed": self.groups_failed,
            "notes_consolidated": self.notes_consolidated,
            "notes_remaining": self.notes_remaining,
        }

    def listing(self) -> dict[str, Any]:
        """The operator's view (CONTRACT §5): the result plus times and failures with reasons."""
        return {
            **self.result(),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "failures": self.failures,
        }


def run_time(event: object) -> datetime:
    """The run's "now" is the scheduled event's ``time``."""
    if not isinstance(event, dict) or not isinstance(event.get("time"), str):
        raise ValueError("the event has no `time`; a consolidation run needs the scheduled event")
    instant = datetime.fromisoformat(event["time"].replace("Z", "+00:00"))
    if instant.tzinfo is None:
        raise ValueError("the event's `time` must carry a UTC offset")
    return instant.astimezone(UTC)


class Consolidator:
    def __init__(
        self,
        service: MemoryService,
        documents: DocumentStore,
        store: ConsolidationStore,
        chat_model: Callable[[], ChatModel | None],
        caps: Caps,
        *,
        concurrency: int,
        reserve_s: float,
    ) -> None:
        self._service = service
        self._documents = documents
        self._store = store
        self._chat_model = chat_model
        self._caps = caps
        self._concurrency = concurrency
        self._reserve_ms = reserve_s * 1000

    def run(self, event: object, remaining_ms: Callable[[], int]) -> dict[str, Any]:
        started = time.monotonic()
        now = run_time(event)
        run_id = str(event.get("id") or uuid.uuid4()) if isinstance(event, dict) else str(uuid.uuid4())
        record = RunRecord(run_id=run_id, started_at=iso(datetime.now(UTC)))
        if not self._store.acquire_lease(run_id, now_epoch=int(time.time()), lease_s=RUN_LEASE_S):
            logger.warning("another consolidation run holds the lease; this one does nothing", extra={"run_id": run_id})
            record.failures.append({"scope": "*", "reason": "another run is in progress"})
            return record.result()
        try:
            self._store.save_run(record.listing())
            self._finish_pending_marks()
            cutoff = iso(now - timedelta(days=self._caps.min_age_days))
            plan = plan_groups(self._store.due_notes(cutoff), self._caps)
            self._fold_groups(plan.groups, record, remaining_ms)
            record.notes_remaining = plan.notes_due - record.notes_consolidated
        finally:
            record.finished_at = iso(datetime.now(UTC))
            self._close(record)
        metrics.add_metric(name="ConsolidationBacklog", unit="Count", value=record.notes_remaining)
        metrics.add_metric(name="ConsolidationGroupsFailed", unit="Count", value=record.groups_failed)
        metrics.add_metric(name="ConsolidationNotes", unit="Count", value=record.notes_consolidated)
        metrics.add_metric(name="ConsolidationDuration", unit="Seconds", value=time.monotonic() - started)
        logger.info("consolidation run finished", extra=record.listing())
        return record.result()

    def _close(self, record: RunRecord) -> None:
        """Record the run and give the lease back; a storage fault in one never skips the other, and never
        hides the error that ended the run."""
        try:
            self._store.save_run(record.listing())
        except Exception:  # noqa: BLE001 - the run's own outcome matters more than its record
            logger.exception("could not record the consolidation run", extra={"run_id": record.run_id})
        try:
            self._store.release_lease(record.run_id)
        except Exception:  # noqa: BLE001 - the lease expires by itself (RUN_LEASE_S)
            logger.exception("could not release the run lease; it expires by itself", extra={"run_id": record.run_id})

    def _finish_pending_marks(self) -> None:
        for pending in self._store.pending_marks():
            for note_sk in pending.note_sks:
                self._store.mark_consolidated(pending.scope, note_sk)
            self._store.clear_pending(pending.scope)
            logger.info(
                "finished pending marks of an earlier run",
                extra={"scope": pending.scope.key, "notes": len(pending.note_sks)},
            )

    def _fold_groups(self, groups: list[Group], record: RunRecord, remaining_ms: Callable[[], int]) -> None:
        """Up to ``concurrency`` groups at once; no new group starts once the time left is short."""
        queue = list(groups)
        running: dict[Future[int], Group] = {}
        with ThreadPoolExecutor(max_workers=self._concurrency, thread_name_prefix="consolidate") as pool:
            while queue or running:
                while queue and len(running) < self._concurrency and remaining_ms() > self._reserve_ms:
                    group = queue.pop(0)
                    running[pool.submit(self._fold, group, record.run_id)] = group
                if not running:
                    break  # out of time: the rest waits for the next run
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    group = running.pop(future)
                    try:
                        record.notes_consolidated += future.result()
                        record.groups_done += 1
                    except Exception as error:  # noqa: BLE001 - one group's failure never stops the run
                        expected = isinstance(error, GroupFailed | MemoryServiceError)
                        reason = str(error) if expected else type(error).__name__
                        logger.warning(
                            "consolidation group failed",
                            extra={"scope": group.scope.key, "reason": reason},
                            exc_info=None if expected else error,
                        )
                        record.groups_failed += 1
                        record.failures.append({"scope": group.scope.key, "reason": reason})

    def _fold(self, group: Group, run_id: str) -> int:
        """Fold one group; returns how many notes it marked. Raises for a failed group, leaving notes unmarked."""
        model = self._chat_model()
        if model is None:
            raise GroupFailed("no chat model is configured (MEMORY_CHAT_MODEL)")
        for attempt in (1, 2):
            current = self._documents.current(group.scope, consistent=True)
            content = self._ask(model, current, group.notes)
            try:
                self._service.update_memory(
                    group.scope,
                    content,
                    expected_version=current.version,
                    reason="consolidation",
                    by=Author(run_id=run_id),
                    folded_note_ids=[note.id for note in group.notes],
                    together_with=[self._store.pending_item(group.scope, group.notes, run_id)],
                )
                break
            except VersionConflict:
                if attempt == 2:
                    raise GroupFailed("the document changed during both attempts") from None
                logger.info("document changed during consolidation; folding again", extra={"scope": group.scope.key})
        for note in group.notes:
            self._store.mark_consolidated(group.scope, note.sk)
        self._store.clear_pending(group.scope)
        return len(group.notes)

    @staticmethod
    def _ask(model: ChatModel, current: Document, notes: list[DueNote]) -> str:
        try:
            answer = model.complete(
                system=CONSOLIDATION_SYSTEM,
                prompt=consolidation_prompt(current.content, [(note.day, note.text) for note in notes]),
                max_tokens=CONSOLIDATION_MAX_TOKENS,
            )
        except ModelUnavailable as error:
            raise GroupFailed(error.message) from None
        content = answer.strip()
        if not content:
            raise GroupFailed("the chat model answered with an empty document")
        if len(content) < MIN_KEPT_RATIO * current.chars:
            raise GroupFailed("the chat model's document dropped more than half of the current one")
        return content
