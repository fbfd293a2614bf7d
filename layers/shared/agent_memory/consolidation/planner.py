"""The nightly consolidation's planner: the function the schedule invokes (docs/api.md §4 ``ConsolidateFunction``,
§6 "Consolidation at any scale"; docs/consolidation.md).

It takes the run lease, records the run, and walks the due markers (``storage.due_markers``) oldest first, one
item per scope and never a note, sending one message per due scope to the queue (``consolidation.queue``,
``MEMORY_CONSOLIDATION_QUEUE_URL``) in batches of ten, or, without a queue, having the worker
(``consolidation.worker``) fold the groups here, ``MEMORY_CONSOLIDATION_CONCURRENCY`` at a time. It stops at
``MEMORY_CONSOLIDATION_MAX_GROUPS`` groups (0: no limit); the scopes beyond wait for the next night.
"""

from __future__ import annotations

import contextvars
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import KW_ONLY, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory.basics.clock import iso
from agent_memory.basics.errors import StorageUnavailable
from agent_memory.basics.observability import logger, metrics
from agent_memory.consolidation.ports import DueScopeReader, GroupFolder, GroupSender, RunLedger
from agent_memory.consolidation.queue import BATCH
from agent_memory.consolidation.worker import STORAGE_ATTEMPTS, Caps
from agent_memory.domain.commands import GroupMessage, ScheduledRun
from agent_memory.storage.keys import run_sk
from agent_memory.storage.run_records import COUNTS

# Longer than the function's 15-minute timeout, so a live planner never loses its lease.
RUN_LEASE_S = 16 * 60


def result(record: dict[str, Any]) -> dict[str, Any]:
    """What ``ConsolidateFunction`` returns (docs/api.md §4 and §6): the counts so far and the status."""
    return {key: record[key] for key in ("run_id", "status", *COUNTS)}


@dataclass
class Planner:
    """Its storage, worker and queue through the ports (``consolidation.ports``)."""

    store: RunLedger
    markers: DueScopeReader
    worker: GroupFolder  # folds the groups here when there is no queue
    caps: Caps
    _: KW_ONLY
    concurrency: int
    reserve_s: float
    queue: GroupSender | None = None  # without one, the planner folds the groups itself

    def run(self, scheduled: ScheduledRun, remaining_ms: Callable[[], int]) -> dict[str, Any]:
        started = time.monotonic()
        now, run_id = scheduled.now, scheduled.run_id
        record: dict[str, Any] = {"run_id": run_id, "started_at": iso(datetime.now(UTC)), "failures": []}
        if not self.store.acquire_lease(run_id, now_epoch=int(time.time()), lease_s=RUN_LEASE_S):
            logger.warning("another consolidation run holds the lease; this one does nothing", extra={"run_id": run_id})
            return {"run_id": run_id, "status": "finished", **dict.fromkeys(COUNTS, 0)}
        try:
            self.store.save_run(record)
            run = run_sk(record["started_at"], run_id)
            min_age = self.caps.min_age_days if scheduled.min_age_days is None else scheduled.min_age_days
            cutoff = iso(now - timedelta(days=min_age))
            outcomes: tuple[int, int] | None = None  # (done, failed) when the planner folded the groups itself
            if self.queue is None:
                planned, waiting, outcomes = self._fold_here(run_id, run, cutoff, remaining_ms)
            else:
                planned, waiting = self._send(self.queue, run_id, run, cutoff, remaining_ms)
            try:
                final = self.store.planned(run, groups=planned, remaining=waiting, outcomes=outcomes)
            except Exception:  # noqa: BLE001 - the groups are folded; only the record's last step failed
                logger.exception("could not record the end of the plan", extra={"run_id": run_id})
                final = {**self.store.read_run(run), "groups_planned": planned}
        finally:
            try:
                self.store.release_lease(run_id)
            except Exception:  # noqa: BLE001 - the lease expires by itself (RUN_LEASE_S)
                logger.exception("could not release the run lease; it expires by itself", extra={"run_id": run_id})
        metrics.add_metric(name="ConsolidationGroupsPlanned", unit="Count", value=planned)
        metrics.add_metric(name="ConsolidationPlanDuration", unit="Seconds", value=time.monotonic() - started)
        logger.info("consolidation run planned", extra=final)
        return result(final)

    def _due(
        self, run_id: str, run: str, cutoff: str, remaining_ms: Callable[[], int], left: Counter[str]
    ) -> Iterator[GroupMessage]:
        """The night's groups, oldest scope first; counts into ``left["notes"]`` the notes of scopes left for
        later (over ``max_groups``, or when the planner's time runs short)."""
        planned = 0
        for due in self.markers.due_scopes(cutoff):
            over = self.caps.max_groups and planned >= self.caps.max_groups
            if over or remaining_ms() <= self.reserve_s * 1000:
                left["notes"] += due.notes
                continue
            planned += 1
            yield GroupMessage(run_id=run_id, run=run, scope=due.scope_key, cutoff=cutoff, notes=due.notes)

    def _send(
        self, queue: GroupSender, run_id: str, run: str, cutoff: str, remaining_ms: Callable[[], int]
    ) -> tuple[int, int]:
        """One message per due scope, in batches of ``queue.BATCH``: memory holds one batch and 16 pages of markers.
        The planner batches and the queue only sends, so the queue never calls back into the plan."""
        left: Counter[str] = Counter()
        sent = 0
        batch: list[GroupMessage] = []
        for message in self._due(run_id, run, cutoff, remaining_ms, left):
            batch.append(message)
            if len(batch) == BATCH:
                sent += queue.send(batch)
                batch = []
        if batch:
            sent += queue.send(batch)
        return sent, left["notes"]

    def _fold_here(
        self, run_id: str, run: str, cutoff: str, remaining_ms: Callable[[], int]
    ) -> tuple[int, int, tuple[int, int]]:
        """Without a queue: the planner is its own worker, ``concurrency`` groups at a time. Answers the groups
        planned, the due notes left for later, and the groups ``(done, failed)`` as the planner saw them end
        (a group's own count in the store can be lost with its answer; the planner's cannot)."""
        left: Counter[str] = Counter()
        planned = 0
        running: set[Future[str]] = set()
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="consolidate") as pool:
            for message in self._due(run_id, run, cutoff, remaining_ms, left):
                planned += 1
                # each group in a copy of the run's context (its context variables), as on the planner's thread
                folding = contextvars.copy_context().run
                running.add(pool.submit(folding, self._fold_in_run, message, f"run:{run}"))
                if len(running) >= self.concurrency:
                    done, running = wait(running, return_when=FIRST_COMPLETED)
                    left.update(_settled(done))
            left.update(_settled(running))
        return planned, left["notes"], (left["folded"] + left["duplicate"] + left["elsewhere"], left["failed"])

    def _fold_in_run(self, message: GroupMessage, token: str) -> str:
        """A group folded in the planner's own process, storage faults tried again (``storage_attempts``);
        one that kept the group from even being claimed is ``failed`` (the planner counts it so: its outcome
        is known here, whether or not the store could record it)."""
        for attempt in range(1, STORAGE_ATTEMPTS + 1):
            try:
                return self.worker.fold(message, token, final=True, claim_s=0, storage_attempts=STORAGE_ATTEMPTS)
            except StorageUnavailable:
                if attempt == STORAGE_ATTEMPTS:
                    break
                time.sleep(random.uniform(0.5, 1.0) * attempt)  # noqa: S311 - jitter
        logger.warning("consolidation group could not be claimed", extra={"scope": message.scope})
        try:
            self.store.list_failure(message.run, message.scope, "storage_unavailable: the group could not be claimed")
        except Exception:  # noqa: BLE001 - the planner's count has it; the listing of reasons is best effort
            logger.exception("could not list the group's failure in its run", extra={"scope": message.scope})
        return "failed"


def _settled(futures: Iterable[Future[str]]) -> Counter[str]:
    """The groups' outcomes (one that raised beyond its recorded failure is ``failed``); a process dying
    (BaseException) stops the run."""
    outcomes: Counter[str] = Counter()
    for future in futures:
        try:
            outcomes[future.result()] += 1
        except Exception:  # noqa: BLE001 - recorded as the group's failure already; the run goes on
            logger.debug("a group failed; recorded in the run")
            outcomes["failed"] += 1
    return outcomes
