"""Named in-memory fakes of the night's stores, on the shared world (``tests/support/fake_stores.FakeWorld``): the due
markers (``storage.due_markers.DueMarkers``) and what consolidation reads and writes besides documents
(``storage.consolidation_store.ConsolidationStore``), as the planner and the worker call them (``consolidation.ports``).

Their items are the table's, under the keys ``storage.keys`` gives: a scope's due marker (``consolidation#due``, its
attributes named as DynamoDB's: ``oldest``, ``floor``, ``writes``, ``notes``, the claim's ``folding``,
``folding_until`` and ``folding_run``, ``last_run``, ``elsewhere_run``, the erase mark ``fence`` and ``erasing``), its
pending-marks record (``consolidation#pending``), its notes (``FakeNoteStore``'s items), and the runs and the
planner's lease under ``consolidation``. So the note's append moves the marker (``due_marker_move``) and a fold's save
writes the pending record and checks the erase mark (``FakeDocumentStore.save``) in their own transactions, and the
night sees them.

Faithful where the use cases' logic depends on it (the contract tests, ``tests/support/night_contracts.py``, run on
DynamoDB too): a claim refused ``held`` or ``done`` on the marker's conditions; a settle refused, nothing written,
when a note was written since, the claim was taken over, the run settled the scope already or another claim's
pending record is there (its marker, its count and its pending record move together or not at all); a failure and
a count elsewhere counted once; the run's counts and its finish; the planner's lease. A write whose answer is lost
(``faults.lose_answers``) is sent again as botocore sends it: a transaction with the request token botocore fills in
(the resend of one that applied answers as done), a single-item write without one (its condition then refuses the
resend where the real one's does).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from agent_memory.basics.clock import iso
from agent_memory.domain.fold import DueNote
from agent_memory.domain.scope import Scope
from agent_memory.storage.consolidation_store import DueGroup, PendingMarks, group_within_caps
from agent_memory.storage.due_markers import Claim, ClaimRefused, DueScope, MarkerNow
from agent_memory.storage.keys import DUE_SK, NOTE_PREFIX, PENDING_SK, PLANNER_LEASE_SK, RUNS_PK, run_sk
from agent_memory.storage.run_records import COUNTS, FOLDS, TOKENS
from tests.support.fake_stores import SENDS, AnswerLost, Cancelled, FakeWorld, Item, Write

_MAX_LISTED_FAILURES = 100
_CLAIM = ("folding", "folding_until", "folding_run")


def sent(world: FakeWorld, call: str, writes: list[Write]) -> bool:
    """A single-item write (UpdateItem, PutItem, DeleteItem: no request token), sent again while its answer is lost,
    as botocore sends it: False when a condition refused the attempt that answered."""
    for attempt in range(SENDS):
        try:
            world.transact(call, writes)
            return True
        except AnswerLost:
            if attempt == SENDS - 1:
                raise
        except Cancelled:
            return False
    raise AssertionError("unreachable")


def transacted(world: FakeWorld, call: str, writes: list[Write]) -> bool:
    """A TransactWriteItems as botocore sends it: with a request token of its own (the API's idempotency token, which
    botocore fills in), the same on each resend after a lost answer, so a resend of one that applied answers as done;
    False when a condition refused it (nothing written)."""
    try:
        world.send(call, writes, token=uuid.uuid4().hex)
    except Cancelled:
        return False
    return True


def _marker(scope: Scope) -> tuple[str, str]:
    return (scope.key, DUE_SK)


def _without(item: Item, *names: str) -> Item:
    return {name: value for name, value in item.items() if name not in names}


class FakeDueMarkers:
    """``DueMarkers`` on the world: the planner's read, a worker's claim, read and release, an erase's moves of the
    erase mark. The settle's, failure's and count-elsewhere's items are the store's transactions
    (``FakeConsolidationStore``), which check and move the marker with the run's counts in one step."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def due_scopes(self, cutoff: str) -> Iterator[DueScope]:
        """The markers whose index key ``due#<oldest>#<scope>`` sorts at or below ``due#<cutoff>`` (strictly
        older), oldest first, then by scope."""

        def due() -> list[DueScope]:
            return [
                DueScope(item["pk"], item["oldest"], item.get("notes", 0))
                for item in self.world.across(DUE_SK)
                if "oldest" in item and f"{item['oldest']}#{item['pk']}" <= cutoff
            ]

        return iter(sorted(self.world.read("markers.due_scopes", due), key=lambda d: (d.oldest, d.scope_key)))

    def claim(self, scope: Scope, token: str, run_id: str, *, now_epoch: int, lease_s: int) -> Claim:
        def free(item: Item | None) -> bool:
            if item is None:
                return False  # an erased scope has no marker: nothing to fold
            lapsed = "folding_until" not in item or item["folding_until"] <= now_epoch or item["folding"] == token
            return lapsed and item.get("last_run") != run_id

        new: list[Item] = []  # the item as the update made it (``ReturnValues=ALL_NEW``)

        def claimed(item: Item | None) -> Item:
            item = item or {}
            new.append(
                {
                    **item,
                    "folding": token,
                    "folding_until": now_epoch + lease_s,
                    "folding_run": run_id,
                    "fence": item.get("fence", f"claim:{token}"),
                }
            )
            return new[-1]

        try:
            for attempt in range(SENDS):  # sent again after a lost answer: the same token takes its claim again
                try:
                    self.world.transact("markers.claim", [Write(_marker(scope), claimed, free)])
                    break
                except AnswerLost:
                    if attempt == SENDS - 1:
                        raise
        except Cancelled as refused:
            old = refused.item or {}
            ours = run_id in (old.get("last_run"), old.get("folding_run"))
            raise ClaimRefused("done" if ours or not old else "held") from None
        item = new[-1]
        return Claim(token, item.get("floor"), item.get("writes", 0), item["fence"])

    def read(self, scope: Scope) -> MarkerNow:
        item = self.world.read("markers.read", lambda: self.world.item(_marker(scope))) or {}
        erase_mark = None if "erasing" in item else item.get("fence")
        return MarkerNow(item.get("writes", 0), item.get("folding"), erase_mark)

    def release(self, scope: Scope, claim: Claim) -> None:
        held = Write(_marker(scope), lambda item: _without(item or {}, *_CLAIM), lambda item: _holds(item, claim))
        sent(self.world, "markers.release", [held])

    def erasing(self, scope: Scope, *, running: bool) -> None:
        """An erase begins (``running``) or ends: the erase mark moves either way, ``erasing`` is set in between."""

        def moved(item: Item | None) -> Item:
            item = {**(item or {}), "fence": uuid.uuid4().hex}
            return {**item, "erasing": True} if running else _without(item, "erasing")

        sent(self.world, "markers.erasing", [Write(_marker(scope), moved, lambda item: item is not None)])


def _holds(item: Item | None, claim: Claim) -> bool:
    return item is not None and item.get("folding") == claim.token


def _new_run(sk: str) -> Item:
    """A run's item as an ``ADD`` makes it: its counts at zero."""
    return {
        "sk": sk,
        **dict.fromkeys(COUNTS, 0),
        **dict.fromkeys(TOKENS.values(), 0),
        **dict.fromkeys(FOLDS.values(), 0),
    }


def _listed(item: Item) -> dict[str, Any]:
    """A run as ``RunRecords`` lists it, with its status."""
    record = {
        "run_id": item["run_id"],
        **{name: item.get(name, 0) for name in COUNTS},
        "tokens": {key: item.get(name, 0) for key, name in TOKENS.items()},
        "folds": {key: item.get(name, 0) for key, name in FOLDS.items()},
        "started_at": item["started_at"],
        "finished_at": item.get("finished_at"),
        "failures": [dict(failure) for failure in item.get("failures", [])],
    }
    return {**record, "status": "finished" if record["finished_at"] else "running"}


def counted(
    run: str,
    *,
    done: int = 0,
    failed: int = 0,
    notes: int = 0,
    remaining: int = 0,
    tokens: tuple[int, int] = (0, 0),
    fold: str | None = None,
) -> Write:
    """One group's outcome added to its run's counts (``group_settle.run_counted``)."""

    def added(item: Item | None) -> Item:
        item = dict(item or _new_run(run))
        for name, value in (
            ("groups_done", done),
            ("groups_failed", failed),
            ("notes_consolidated", notes),
            ("notes_remaining", remaining),
            (TOKENS["input"], tokens[0]),
            (TOKENS["output"], tokens[1]),
            *([(FOLDS[fold], 1)] if fold in FOLDS else []),
        ):
            item[name] = item.get(name, 0) + value
        return item

    return Write((RUNS_PK, run), added)


class FakeConsolidationStore:
    """``ConsolidationStore`` on the world: a scope's due notes and their marks, the pending-marks record, the runs
    and the planner's lease."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    # The planner's lease and the runs (``storage.run_records``).

    def acquire_lease(self, run_id: str, *, now_epoch: int, lease_s: int) -> bool:
        def free(item: Item | None) -> bool:
            return item is None or item["lease_until"] < now_epoch or item["run_id"] == run_id

        lease = {"run_id": run_id, "lease_until": now_epoch + lease_s}
        return sent(
            self.world, "consolidation.acquire_lease", [Write((RUNS_PK, PLANNER_LEASE_SK), lambda _: lease, free)]
        )

    def release_lease(self, run_id: str) -> None:
        ours = Write((RUNS_PK, PLANNER_LEASE_SK), lambda _: None, lambda item: (item or {}).get("run_id") == run_id)
        sent(self.world, "consolidation.release_lease", [ours])

    def save_run(self, record: dict[str, Any]) -> None:
        sk = run_sk(record["started_at"], record["run_id"])
        item: Item = {
            **_new_run(sk),
            "run_id": record["run_id"],
            "started_at": record["started_at"],
            "failures": [dict(failure) for failure in record.get("failures", [])],
            **{name: record.get(name, 0) for name in COUNTS},
            **{name: record.get("tokens", {}).get(key, 0) for key, name in TOKENS.items()},
            **{name: record.get("folds", {}).get(key, 0) for key, name in FOLDS.items()},
        }
        if record.get("finished_at"):
            item["finished_at"] = record["finished_at"]
        sent(self.world, "consolidation.save_run", [Write((RUNS_PK, sk), lambda _: item)])

    def list_failure(self, run: str, scope_key: str, reason: str) -> None:
        def listed(item: Item | None) -> Item:
            item = item or {}
            return {**item, "failures": [*item.get("failures", []), {"scope": scope_key, "reason": reason}]}

        def room(item: Item | None) -> bool:
            return len((item or {}).get("failures", [])) < _MAX_LISTED_FAILURES

        sent(self.world, "consolidation.list_failure", [Write((RUNS_PK, run), listed, room)])

    def planned(
        self, run: str, *, groups: int, remaining: int, outcomes: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        if outcomes is not None:  # written whole, with the planner's own outcomes
            record = self.read_run(run)
            record.update(groups_planned=groups, notes_remaining=record["notes_remaining"] + remaining)
            record.update(groups_done=outcomes[0], groups_failed=outcomes[1], finished_at=iso(datetime.now(UTC)))
            self.save_run(record)
            return {**record, "status": "finished"}

        def plan(item: Item | None) -> Item:
            item = dict(item or _new_run(run))
            return {
                **item,
                "groups_planned": groups,
                "planned": True,
                "notes_remaining": item["notes_remaining"] + remaining,
            }

        sent(self.world, "consolidation.planned", [Write((RUNS_PK, run), plan)])
        return self.finish_if_complete(run)

    def finish_if_complete(self, run: str, item: dict[str, Any] | None = None) -> dict[str, Any]:
        stored = self.world.read("consolidation.finish_if_complete", lambda: self.world.item((RUNS_PK, run)))
        assert stored is not None
        complete = stored.get("planned") and stored["groups_done"] + stored["groups_failed"] >= stored["groups_planned"]
        if complete and stored.get("finished_at") is None:
            at = iso(datetime.now(UTC))
            first = Write((RUNS_PK, run), lambda item: {**(item or {}), "finished_at": at}, _no("finished_at"))
            sent(self.world, "consolidation.finish", [first])
            return self.read_run(run)  # another worker's finish, if its was first: listed as it wrote it
        return _listed(stored)

    def read_run(self, run: str) -> dict[str, Any]:
        item = self.world.read("consolidation.read_run", lambda: self.world.item((RUNS_PK, run)))
        assert item is not None
        return _listed(item)

    def runs(self, limit: int) -> list[dict[str, Any]]:
        items = self.world.read(
            "consolidation.runs", lambda: self.world.between(RUNS_PK, "run#", "run#~", newest_first=True)
        )
        return [_listed(item) for item in items[:limit]]

    # A group's transactions: the marker and the run's count together.

    def settle_group(
        self,
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
        def settles(item: Item | None) -> bool:
            return (
                _holds(item, claim)
                and item is not None
                and item.get("writes", 0) == writes
                and item.get("last_run") != run
            )

        def settled(item: Item | None) -> Item:
            item = {**_without(item or {}, *_CLAIM), "last_run": run}
            if oldest is None:
                return _without(item, "oldest", "floor", "notes")
            return {**item, "oldest": oldest[0], "floor": oldest[1], "notes": item.get("notes", 0) - folded}

        ours = Write((scope.key, PENDING_SK), lambda _: None, lambda item: item is None or item["token"] == claim.token)
        count = counted(run, done=1, notes=folded, remaining=remaining, tokens=tokens, fold=fold)
        return transacted(
            self.world, "consolidation.settle_group", [Write(_marker(scope), settled, settles), count, ours]
        )

    def fail_group(
        self,
        scope: Scope,
        claim: Claim,
        run: str,
        *,
        remaining: int,
        tokens: tuple[int, int] = (0, 0),
    ) -> bool:
        def fails(item: Item | None) -> bool:
            return _holds(item, claim) and (item or {}).get("last_run") != run

        failed = Write(_marker(scope), lambda item: {**_without(item or {}, *_CLAIM), "last_run": run}, fails)
        count = counted(run, failed=1, remaining=remaining, tokens=tokens)
        return transacted(self.world, "consolidation.fail_group", [failed, count])

    def count_elsewhere(self, scope: Scope, run: str) -> bool:
        def once(item: Item | None) -> bool:
            return item is not None and item.get("elsewhere_run") != run

        elsewhere = Write(_marker(scope), lambda item: {**(item or {}), "elsewhere_run": run}, once)
        return transacted(self.world, "consolidation.count_elsewhere", [elsewhere, counted(run, done=1)])

    # A scope's due notes, their marks and the pending record.

    def _unconsolidated(self, scope: Scope, low: str, high: str) -> list[Item]:
        return [item for item in self.world.between(scope.key, low, high) if not item["note"].consolidated]

    def due_group(self, scope: Scope, *, floor: str | None, cutoff: str, max_notes: int, max_chars: int) -> DueGroup:
        def due() -> list[DueNote]:
            items = self._unconsolidated(scope, f"{NOTE_PREFIX}{floor or ''}", f"{NOTE_PREFIX}{cutoff[:10]}#~")
            return [_due_note(scope, item) for item in items if item["note"].created_at < cutoff]

        return group_within_caps(
            self.world.read("consolidation.due_group", due), max_notes, max_chars, remaining_after=0
        )

    def oldest_unconsolidated(self, scope: Scope, floor: str | None) -> tuple[str, str] | None:
        items = self.world.read(
            "consolidation.oldest_unconsolidated",
            lambda: self._unconsolidated(scope, f"{NOTE_PREFIX}{floor or ''}", f"{NOTE_PREFIX}~"),
        )
        if not items:
            return None
        first_day = items[0]["note"].day
        return min(item["note"].created_at for item in items if item["note"].day == first_day), first_day

    def mark_consolidated(self, scope: Scope, note_sk: str) -> None:
        """Flag one note (only that changes); a note deleted meanwhile is skipped."""

        def marked(item: Item | None) -> Item:
            assert item is not None
            return {**item, "note": replace(item["note"], consolidated=True)}

        sent(
            self.world,
            "consolidation.mark_consolidated",
            [Write((scope.key, note_sk), marked, lambda item: item is not None)],
        )

    def unmarked(self, scope: Scope, note_sks: list[str]) -> list[str]:
        if not note_sks:
            return []
        wanted = set(note_sks)
        return [
            item["sk"]
            for item in self.world.read(
                "consolidation.unmarked", lambda: self._unconsolidated(scope, min(note_sks), max(note_sks))
            )
            if item["sk"] in wanted
        ]

    def pending(self, scope: Scope) -> PendingMarks | None:
        item = self.world.read("consolidation.pending", lambda: self.world.item((scope.key, PENDING_SK)))
        return None if item is None else PendingMarks(scope, list(item["note_sks"]), item["token"])

    def pending_marks(self) -> list[PendingMarks]:
        items = self.world.read("consolidation.pending_marks", lambda: self.world.across(PENDING_SK))
        return [PendingMarks(Scope.from_key(item["pk"]), list(item["note_sks"])) for item in items]

    def clear_pending(self, scope: Scope, token: str | None = None) -> None:
        def written_by(item: Item | None) -> bool:
            return token is None or (item is not None and item["token"] == token)

        sent(self.world, "consolidation.clear_pending", [Write((scope.key, PENDING_SK), lambda _: None, written_by)])


def _no(name: str) -> Callable[[Item | None], bool]:
    return lambda item: name not in (item or {})


def _due_note(scope: Scope, item: Item) -> DueNote:
    note = item["note"]
    return DueNote(scope.key, item["sk"], note.day, note.position, note.text, note.created_at, item.get("vec"))
