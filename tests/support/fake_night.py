"""In-memory fakes of the night's stores: the due markers (``storage.due_markers.DueMarkers``) and what
consolidation reads and writes besides documents (``storage.consolidation_store.ConsolidationStore``), as the
planner and the worker call them (``consolidation.ports``).

Faithful where the use cases' logic depends on it, and checked against DynamoDB by the same contract tests
(``tests/support/night_contracts.py``): a claim refused ``held`` or ``done`` on the marker's conditions, the erase
mark a claim sets and every deletion moves, a settle refused when a note was written, the claim was taken over
or the run settled the scope already (nothing written then: its marker, count and pending record move together
or not at all), a failure and a count elsewhere counted once, the run's counts and its finish, the planner's
lease. State lives in the world's scopes (``tests/support/fake_stores``), so a fold's save, which writes the
pending record and checks the erase mark, moves them in the same step as the document.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agent_memory.basics.clock import iso
from agent_memory.domain.fold import DueNote, Fold
from agent_memory.domain.scope import Scope
from agent_memory.storage.consolidation_store import DueGroup, PendingMarks, group_within_caps
from agent_memory.storage.due_markers import Claim, ClaimRefused, DueScope, MarkerNow
from agent_memory.storage.keys import NOTE_PREFIX, note_sk, run_sk
from agent_memory.storage.run_records import COUNTS, FOLDS, TOKENS

_MAX_LISTED_FAILURES = 100


@dataclass
class Fault:
    call: str
    error: Callable[[], BaseException]
    applied: bool  # the call applies before the error (its answer lost, or the process dying just after)
    skip: int
    times: int


class Faults:
    """Scripted faults of the fakes' calls, by the call's name: ``before`` raises instead of the call (nothing
    applied: a refusal by storage, a process dying just before), ``after`` applies the call and then raises (its
    answer lost, a process dying just after). ``skip`` calls pass first; ``times`` calls then fail."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self.calls: dict[str, int] = {}

    def before(self, call: str, error: Callable[[], BaseException], *, skip: int = 0, times: int = 1) -> None:
        self._faults.append(Fault(call, error, applied=False, skip=skip, times=times))

    def after(self, call: str, error: Callable[[], BaseException], *, skip: int = 0, times: int = 1) -> None:
        self._faults.append(Fault(call, error, applied=True, skip=skip, times=times))

    def strike(self, call: str, *, applied: bool) -> None:
        if not applied:
            self.calls[call] = self.calls.get(call, 0) + 1
        for fault in self._faults:
            if fault.call != call or fault.applied != applied or fault.times == 0:
                continue
            if fault.skip:
                fault.skip -= 1
                continue
            fault.times -= 1
            raise fault.error()


def faulty(method: Callable[..., Any]) -> Callable[..., Any]:
    """A fake's call, under the world's scripted faults (``Faults``)."""

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        self._night.faults.strike(method.__name__, applied=False)
        answer = method(self, *args, **kwargs)
        self._night.faults.strike(method.__name__, applied=True)
        return answer

    call.__name__ = call.__qualname__ = method.__name__
    call.__doc__ = method.__doc__
    return call


@dataclass
class Marker:
    """A scope's due marker, its attributes as DynamoDB holds them (``storage.due_markers``); ``oldest`` None: out of
    the index."""

    writes: int = 0
    notes: int = 0
    oldest: str | None = None
    floor: str | None = None
    folding: str | None = None
    folding_until: int | None = None
    folding_run: str | None = None
    last_run: str | None = None
    elsewhere_run: str | None = None
    erase_mark: str | None = None
    erasing: bool = False


@dataclass
class StoredNote:
    """What the night reads of a note: its place, text, instant, vector, and its mark."""

    day: str
    position: int
    text: str
    created_at: str
    vector: bytes | None = None
    consolidated: bool = False

    @property
    def sk(self) -> str:
        return note_sk(self.day, self.position)

    def due(self, scope: Scope) -> DueNote:
        return DueNote(scope.key, self.sk, self.day, self.position, self.text, self.created_at, self.vector)


@dataclass
class Pending:
    note_sks: list[str]
    run_id: str
    token: str


@dataclass
class NightScope:
    marker: Marker | None = None
    pending: Pending | None = None
    notes: dict[str, StoredNote] = field(default_factory=dict)


@dataclass
class Night:
    """The world's state the night reads: the scopes and the runs, under one lock (a transaction is one step)."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    scopes: dict[str, NightScope] = field(default_factory=dict)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    lease: dict[str, Any] | None = None
    faults: Faults = field(default_factory=Faults)

    def scope(self, scope: Scope) -> NightScope:
        return self.scopes.setdefault(scope.key, NightScope())


class FakeDueMarkers:
    """``DueMarkers`` in memory: the planner's read, a worker's claim, read and release, an erase's moves of the erase
    mark; the settle's, failure's and count-elsewhere's conditions are the store's transactions
    (``FakeConsolidationStore``), which check and move the marker in the same step as the run's counts."""

    def __init__(self, night: Night) -> None:
        self._night = night

    def note_written(self, scope: Scope, *, created_at: str, day: str) -> None:
        """A note's write, in its own transaction (``MarkerWrite``): the scope is due, from the older of its
        oldest note and this one."""
        with self._night.lock:
            state = self._night.scope(scope)
            marker = state.marker = state.marker or Marker()
            marker.oldest = created_at if marker.oldest is None else min(marker.oldest, created_at)
            marker.floor = day if marker.floor is None else min(marker.floor, day)
            marker.writes += 1
            marker.notes += 1

    def note_deleted(self, scope: Scope) -> None:
        """A note's delete, in its own transaction (``erase_mark_move``): the erase mark moves, if there is a marker."""
        with self._night.lock:
            marker = self._night.scope(scope).marker
            if marker is not None:
                marker.erase_mark = uuid.uuid4().hex

    @faulty
    def due_scopes(self, cutoff: str) -> Iterator[DueScope]:
        """The scopes whose index key ``due#<oldest>#<scope>`` sorts at or below ``due#<cutoff>``: strictly older."""
        with self._night.lock:
            due = [
                DueScope(key, state.marker.oldest, state.marker.notes)
                for key, state in self._night.scopes.items()
                if state.marker is not None
                and state.marker.oldest is not None
                and f"{state.marker.oldest}#{key}" <= cutoff
            ]
        return iter(sorted(due, key=lambda scope: (scope.oldest, scope.scope_key)))

    @faulty
    def claim(self, scope: Scope, token: str, run_id: str, *, now_epoch: int, lease_s: int) -> Claim:
        with self._night.lock:
            marker = self._night.scope(scope).marker
            if marker is None:
                raise ClaimRefused("done")  # an erased scope: nothing to fold
            held = marker.folding_until is not None and marker.folding_until > now_epoch and marker.folding != token
            if held or marker.last_run == run_id:
                raise ClaimRefused("done" if run_id in (marker.last_run, marker.folding_run) else "held")
            marker.folding, marker.folding_until, marker.folding_run = token, now_epoch + lease_s, run_id
            marker.erase_mark = marker.erase_mark or f"claim:{token}"
            return Claim(token, marker.floor, marker.writes, marker.erase_mark)

    @faulty
    def read(self, scope: Scope) -> MarkerNow:
        with self._night.lock:
            marker = self._night.scope(scope).marker
            if marker is None:
                return MarkerNow(0, None, None)
            return MarkerNow(marker.writes, marker.folding, None if marker.erasing else marker.erase_mark)

    @faulty
    def release(self, scope: Scope, claim: Claim) -> None:
        with self._night.lock:
            marker = self._night.scope(scope).marker
            if marker is not None and marker.folding == claim.token:
                marker.folding = marker.folding_until = marker.folding_run = None

    @faulty
    def erasing(self, scope: Scope, *, running: bool) -> None:
        with self._night.lock:
            marker = self._night.scope(scope).marker
            if marker is not None:
                marker.erase_mark, marker.erasing = uuid.uuid4().hex, running

    def erase_mark_holds(self, scope: Scope, erase_mark: str) -> bool:
        """The condition a fold's save checks in its transaction (``erase_mark_check``)."""
        marker = self._night.scope(scope).marker
        return marker is not None and marker.erase_mark == erase_mark and not marker.erasing


def _new_run(run: str) -> dict[str, Any]:
    """A run's item as ``ADD`` creates it: its counts at zero."""
    return {
        "sk": run,
        **dict.fromkeys(COUNTS, 0),
        **dict.fromkeys(TOKENS.values(), 0),
        **dict.fromkeys(FOLDS.values(), 0),
    }


def _listed(item: dict[str, Any]) -> dict[str, Any]:
    """A run as ``RunRecords`` lists it (``_record``), with its status."""
    return {
        "run_id": item["run_id"],
        **{name: item[name] for name in COUNTS},
        "tokens": {key: item[name] for key, name in TOKENS.items()},
        "folds": {key: item[name] for key, name in FOLDS.items()},
        "started_at": item["started_at"],
        "finished_at": item.get("finished_at"),
        "failures": [dict(failure) for failure in item.get("failures", [])],
    }


class FakeConsolidationStore:
    """``ConsolidationStore`` in memory: a scope's due notes and their marks, the pending-marks record, the runs and
    the planner's lease. A settle, a failure and a count elsewhere check every condition of their transaction
    before they write anything."""

    def __init__(self, night: Night) -> None:
        self._night = night

    # The runs (``storage.run_records``).

    @faulty
    def acquire_lease(self, run_id: str, *, now_epoch: int, lease_s: int) -> bool:
        with self._night.lock:
            lease = self._night.lease
            if lease is not None and lease["until"] >= now_epoch and lease["run_id"] != run_id:
                return False
            self._night.lease = {"run_id": run_id, "until": now_epoch + lease_s}
            return True

    @faulty
    def release_lease(self, run_id: str) -> None:
        with self._night.lock:
            if self._night.lease is not None and self._night.lease["run_id"] == run_id:
                self._night.lease = None

    @faulty
    def save_run(self, record: dict[str, Any]) -> None:
        run = run_sk(record["started_at"], record["run_id"])
        item = {
            **_new_run(run),
            "run_id": record["run_id"],
            "started_at": record["started_at"],
            "failures": [dict(failure) for failure in record.get("failures", [])],
            **{name: record.get(name, 0) for name in COUNTS},
            **{name: record.get("tokens", {}).get(key, 0) for key, name in TOKENS.items()},
            **{name: record.get("folds", {}).get(key, 0) for key, name in FOLDS.items()},
        }
        if record.get("finished_at"):
            item["finished_at"] = record["finished_at"]
        with self._night.lock:
            self._night.runs[run] = item

    def _count(
        self,
        run: str,
        *,
        done: int = 0,
        failed: int = 0,
        notes: int = 0,
        remaining: int = 0,
        tokens: tuple[int, int] = (0, 0),
        fold: str | None = None,
    ) -> None:
        """``count_item``'s ADDs (on an item that ADD creates if it is missing)."""
        item = self._night.runs.setdefault(run, _new_run(run))
        item["groups_done"] += done
        item["groups_failed"] += failed
        item["notes_consolidated"] += notes
        item["notes_remaining"] += remaining
        item[TOKENS["input"]] += tokens[0]
        item[TOKENS["output"]] += tokens[1]
        if fold in FOLDS:
            item[FOLDS[fold]] += 1

    @faulty
    def list_failure(self, run: str, scope_key: str, reason: str) -> None:
        with self._night.lock:
            failures = self._night.runs.setdefault(run, _new_run(run)).setdefault("failures", [])
            if len(failures) < _MAX_LISTED_FAILURES:
                failures.append({"scope": scope_key, "reason": reason})

    @faulty
    def planned(
        self, run: str, *, groups: int, remaining: int, outcomes: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        with self._night.lock:
            item = self._night.runs[run]
            if outcomes is not None:
                record = _listed(item)
                record.update(groups_planned=groups, notes_remaining=record["notes_remaining"] + remaining)
                record.update(groups_done=outcomes[0], groups_failed=outcomes[1])
                record["finished_at"] = iso(datetime.now(UTC))
                self.save_run(record)
                return {**record, "status": "finished"}
            item["groups_planned"] = groups
            item["planned"] = True
            item["notes_remaining"] += remaining
        return self.finish_if_complete(run)

    @faulty
    def finish_if_complete(self, run: str, item: dict[str, Any] | None = None) -> dict[str, Any]:
        with self._night.lock:
            stored = self._night.runs[run]
            complete = (
                stored.get("planned") and stored["groups_done"] + stored["groups_failed"] >= stored["groups_planned"]
            )
            if complete and stored.get("finished_at") is None:
                stored["finished_at"] = iso(datetime.now(UTC))
            record = _listed(stored)
        return {**record, "status": "finished" if record["finished_at"] else "running"}

    @faulty
    def read_run(self, run: str) -> dict[str, Any]:
        with self._night.lock:
            record = _listed(self._night.runs[run])
        return {**record, "status": "finished" if record["finished_at"] else "running"}

    def runs(self, limit: int) -> list[dict[str, Any]]:
        with self._night.lock:
            newest = sorted(self._night.runs, reverse=True)[:limit]
            listed = [_listed(self._night.runs[run]) for run in newest]
        return [{**record, "status": "finished" if record["finished_at"] else "running"} for record in listed]

    # A group's transactions: the marker and the run's count together.

    @faulty
    def settle_group(
        self,
        markers: FakeDueMarkers,
        scope: Scope,
        claim: Claim,
        run: str,
        *,
        writes: int,
        oldest: tuple[str, str] | None,
        folded: int,
        remaining: int,
        tokens: tuple[int, int] = (0, 0),
        fold: str | None = None,
    ) -> bool:
        with self._night.lock:
            state = self._night.scope(scope)
            marker = state.marker
            if marker is None or marker.folding != claim.token or marker.writes != writes or marker.last_run == run:
                return False
            if state.pending is not None and state.pending.token != claim.token:
                return False
            marker.last_run = run
            marker.folding = marker.folding_until = marker.folding_run = None
            if oldest is None:
                marker.oldest = marker.floor = None
                marker.notes = 0
            else:
                marker.oldest, marker.floor = oldest
                marker.notes -= folded
            self._count(run, done=1, notes=folded, remaining=remaining, tokens=tokens, fold=fold)
            state.pending = None
            return True

    @faulty
    def fail_group(
        self,
        markers: FakeDueMarkers,
        scope: Scope,
        claim: Claim,
        run: str,
        *,
        remaining: int,
        tokens: tuple[int, int] = (0, 0),
    ) -> bool:
        with self._night.lock:
            marker = self._night.scope(scope).marker
            if marker is None or marker.folding != claim.token or marker.last_run == run:
                return False
            marker.last_run = run
            marker.folding = marker.folding_until = marker.folding_run = None
            self._count(run, failed=1, remaining=remaining, tokens=tokens)
            return True

    @faulty
    def count_elsewhere(self, markers: FakeDueMarkers, scope: Scope, run: str) -> bool:
        with self._night.lock:
            marker = self._night.scope(scope).marker
            if marker is None or marker.elsewhere_run == run:
                return False
            marker.elsewhere_run = run
            self._count(run, done=1)
            return True

    # A scope's due notes, their marks and the pending record.

    @faulty
    def due_group(self, scope: Scope, *, floor: str | None, cutoff: str, max_notes: int, max_chars: int) -> DueGroup:
        low, high = f"{NOTE_PREFIX}{floor or ''}", f"{NOTE_PREFIX}{cutoff[:10]}#~"
        with self._night.lock:
            due = [
                note.due(scope)
                for note in self._night.scope(scope).notes.values()
                if low <= note.sk <= high and not note.consolidated and note.created_at < cutoff
            ]
        return group_within_caps(due, max_notes, max_chars, remaining_after=0)

    @faulty
    def oldest_unconsolidated(self, scope: Scope, floor: str | None) -> tuple[str, str] | None:
        low = f"{NOTE_PREFIX}{floor or ''}"
        with self._night.lock:
            left = [n for n in self._night.scope(scope).notes.values() if n.sk >= low and not n.consolidated]
        if not left:
            return None
        first_day = min(note.day for note in left)
        return min(note.created_at for note in left if note.day == first_day), first_day

    @faulty
    def mark_consolidated(self, scope: Scope, note_sk: str) -> None:
        with self._night.lock:
            note = self._night.scope(scope).notes.get(note_sk)
            if note is not None:  # a note deleted meanwhile is skipped
                note.consolidated = True

    @faulty
    def unmarked(self, scope: Scope, note_sks: list[str]) -> list[str]:
        with self._night.lock:
            notes = self._night.scope(scope).notes
            return sorted(sk for sk in set(note_sks) if sk in notes and not notes[sk].consolidated)

    @faulty
    def pending(self, scope: Scope) -> PendingMarks | None:
        with self._night.lock:
            pending = self._night.scope(scope).pending
            return None if pending is None else PendingMarks(scope, list(pending.note_sks), pending.token)

    def pending_marks(self) -> list[PendingMarks]:
        with self._night.lock:
            return [
                PendingMarks(Scope.from_key(key), list(state.pending.note_sks))
                for key, state in self._night.scopes.items()
                if state.pending is not None
            ]

    @faulty
    def clear_pending(self, scope: Scope, token: str | None = None) -> None:
        with self._night.lock:
            state = self._night.scope(scope)
            if state.pending is not None and (token is None or state.pending.token == token):
                state.pending = None

    def hold_pending(self, scope: Scope, fold: Fold) -> str | None:
        """``pending_marks_put`` in a save's transaction: None when the record is written; else the token of the
        record already there (the condition refused it)."""
        state = self._night.scope(scope)
        if state.pending is not None:
            return state.pending.token
        state.pending = Pending([note.sk for note in fold.notes], fold.run_id, fold.token or fold.run_id)
        return None
