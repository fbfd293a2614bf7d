"""The behaviours the night's ports promise (``consolidation.ports``: the due markers, the consolidation store),
written once and checked against both the DynamoDB stores (tests/integration/test_night_contracts.py, on moto) and
the in-memory fakes (``tests/support/fake_night``, tests/unit/test_fake_night_contracts.py), as
``tests/support/store_contracts`` does for the memory service's: the planner's and the worker's tests on the fakes
mean what they say.

Each contract is a function taking ``make``: a factory of a ``NightStores`` on one fresh table (the two stores, and
the writes of other use cases the night must see: a note's write and its delete, a fold's save).
Observations go through what both stores offer, never through their items.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import pytest

from agent_memory.basics.clock import iso
from agent_memory.basics.errors import VersionConflict
from agent_memory.domain.document import Author
from agent_memory.domain.fold import Fold
from agent_memory.domain.scope import Scope
from agent_memory.storage.document_store import FoldedNoteGone
from agent_memory.storage.due_markers import Claim, ClaimRefused
from agent_memory.storage.keys import run_sk
from tests.support.scopes import stored_document

NOW = 1_800_000_000  # the claims' clock, in epoch seconds
AT = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
SCOPE = Scope("team", "w-contract")
OTHER = Scope("team", "w-other")
CUTOFF = "2026-11-26T00:00:00.000Z"


class NightStores(Protocol):
    """The stores under test, on one table, and the other use cases' writes they see."""

    markers: Any  # DueMarkers, or its fake
    store: Any  # ConsolidationStore, or its fake
    documents: Any  # DocumentStore, or its fake: a fold's save and the record of a fold that changes nothing

    def write(self, scope: Scope, created: datetime, text: str = "a fact") -> str:
        """A note written as ``remember`` writes it (its due marker in its transaction); its sort key."""
        ...

    def delete(self, scope: Scope, sk: str) -> None:
        """A note's delete as the dashboard makes it (the erase mark moves in its transaction)."""
        ...


MakeNight = Callable[[], NightStores]


@dataclass(frozen=True)
class Run:
    sk: str
    run_id: str


def new_run(stores: NightStores, run_id: str = "r-1") -> Run:
    record = {"run_id": run_id, "started_at": "2026-12-03T03:00:00.000Z", "failures": []}
    stores.store.save_run(record)
    return Run(run_sk(record["started_at"], run_id), run_id)


def claim(stores: NightStores, holder: str = "m-1", run: str = "r-1", *, now: int = NOW, scope: Scope = SCOPE) -> Claim:
    return stores.markers.claim(scope, holder, run, now_epoch=now, lease_s=300)


def settle(stores: NightStores, held: Claim, run: Run, *, folded: int = 1, **kwargs: Any) -> bool:
    writes, _, _ = stores.markers.read(SCOPE)
    left = stores.store.oldest_unconsolidated(SCOPE, held.floor)
    return bool(
        stores.store.settle_group(
            SCOPE,
            held,
            run.sk,
            writes=kwargs.pop("writes", writes),
            oldest=kwargs.pop("oldest", left),
            folded=folded,
            remaining=kwargs.pop("remaining", 0),
            **kwargs,
        )
    )


def due_keys(stores: NightStores, cutoff: str = CUTOFF) -> list[str]:
    return [due.scope_key for due in stores.markers.due_scopes(cutoff)]


def group_texts(stores: NightStores, *, floor: str | None = None, **caps: Any) -> tuple[list[str], int]:
    limits = {"max_notes": 200, "max_chars": 20_000} | caps
    group = stores.store.due_group(SCOPE, floor=floor, cutoff=CUTOFF, **limits)
    return [note.text for note in group.notes], group.remaining


# The due markers.


def a_claim_holds_what_the_marker_said_and_sets_its_erase_mark(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT + timedelta(days=1))
    stores.write(SCOPE, AT)

    held = claim(stores)

    assert (held.token, held.floor, held.writes, held.erase_mark) == ("m-1", "2026-11-20", 2, "claim:m-1")
    assert stores.markers.read(SCOPE) == (2, "m-1", "claim:m-1")


def a_claim_held_by_another_worker_is_refused_held_until_it_expires(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    claim(stores, "m-1", "r-1")

    with pytest.raises(ClaimRefused) as refused:
        claim(stores, "m-2", "r-2", now=NOW + 299)
    taken = claim(stores, "m-2", "r-2", now=NOW + 300)

    assert refused.value.why == "held"
    assert (taken.token, taken.erase_mark) == ("m-2", "claim:m-1")  # the mark stays the first claim's
    assert stores.markers.read(SCOPE).holder == "m-2"


def the_same_token_takes_its_claim_again(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    first = claim(stores)

    assert claim(stores, now=NOW + 10) == first


def a_claim_of_the_run_that_holds_or_settled_the_scope_is_refused_done(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    run = new_run(stores)
    held = claim(stores, "m-1", run.sk)

    with pytest.raises(ClaimRefused) as while_held:
        claim(stores, "m-2", run.sk)
    assert settle(stores, held, run)
    stores.write(SCOPE, AT + timedelta(days=2))
    with pytest.raises(ClaimRefused) as settled:
        claim(stores, "m-3", run.sk, now=NOW + 1_000)

    assert (while_held.value.why, settled.value.why) == ("done", "done")


def a_scope_without_a_marker_is_refused_done(make: MakeNight) -> None:
    stores = make()
    with pytest.raises(ClaimRefused) as refused:
        claim(stores, scope=OTHER)

    assert refused.value.why == "done"
    assert stores.markers.read(OTHER) == (0, None, None)


def a_release_gives_the_claim_back_and_only_the_holder_can(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    held = claim(stores)

    stores.markers.release(SCOPE, Claim("m-2", held.floor, held.writes, held.erase_mark))
    assert stores.markers.read(SCOPE).holder == "m-1"
    stores.markers.release(SCOPE, held)

    assert stores.markers.read(SCOPE).holder is None
    assert claim(stores, "m-2", "r-2").token == "m-2"


def a_notes_delete_and_an_erase_move_the_erase_mark(make: MakeNight) -> None:
    stores = make()
    sk = stores.write(SCOPE, AT)
    stores.write(SCOPE, AT + timedelta(hours=1))
    held = claim(stores)

    stores.delete(SCOPE, sk)
    after_delete = stores.markers.read(SCOPE).erase_mark
    stores.markers.erasing(SCOPE, running=True)
    while_erasing = stores.markers.read(SCOPE).erase_mark
    stores.markers.erasing(SCOPE, running=False)
    after_erase = stores.markers.read(SCOPE).erase_mark

    assert after_delete not in (None, held.erase_mark)
    assert while_erasing is None  # no fold may save while an erase runs
    assert after_erase not in (None, held.erase_mark, after_delete)


def due_scopes_are_strictly_older_than_the_cutoff_oldest_first(make: MakeNight) -> None:
    stores = make()
    stores.write(Scope("team", "b"), AT)
    stores.write(Scope("team", "a"), AT)
    stores.write(Scope("team", "young"), datetime(2026, 11, 26, tzinfo=UTC))
    stores.write(Scope("team", "late"), AT + timedelta(days=3))
    stores.write(Scope("team", "late"), AT - timedelta(days=3))  # older than its marker's oldest
    stores.write(Scope("team", "late"), AT + timedelta(days=4))

    due = list(stores.markers.due_scopes(CUTOFF))

    assert [(d.scope_key, d.oldest, d.notes) for d in due] == [
        ("ws#late", iso(AT - timedelta(days=3)), 3),
        ("ws#a", iso(AT), 1),
        ("ws#b", iso(AT), 1),
    ]


# A group's transactions.


def a_settle_moves_the_marker_to_the_oldest_note_left_and_counts_the_group(make: MakeNight) -> None:
    stores = make()
    first = stores.write(SCOPE, AT)
    stores.write(SCOPE, AT + timedelta(days=2))
    run = new_run(stores)
    held = claim(stores, "m-1", run.sk)
    stores.store.mark_consolidated(SCOPE, first)

    assert settle(stores, held, run, folded=1, remaining=1, tokens=(120, 30), fold="edits")

    assert [(d.oldest, d.notes) for d in stores.markers.due_scopes(CUTOFF)] == [(iso(AT + timedelta(days=2)), 1)]
    assert stores.markers.read(SCOPE).holder is None
    record = stores.store.read_run(run.sk)
    assert (record["groups_done"], record["notes_consolidated"], record["notes_remaining"]) == (1, 1, 1)
    assert record["tokens"] == {"input": 120, "output": 30}
    assert record["folds"] == {"edits": 1, "rewrite": 0, "model_free": 0, "unchanged": 0}


def a_settle_with_no_note_left_takes_the_scope_out_of_the_due_scopes(make: MakeNight) -> None:
    stores = make()
    sk = stores.write(SCOPE, AT)
    run = new_run(stores)
    held = claim(stores, "m-1", run.sk)
    stores.store.mark_consolidated(SCOPE, sk)

    assert settle(stores, held, run)

    assert due_keys(stores) == []
    assert stores.store.oldest_unconsolidated(SCOPE, None) is None


def a_settle_is_refused_after_a_note_was_written_and_writes_nothing(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    run = new_run(stores)
    held = claim(stores, "m-1", run.sk)
    writes = stores.markers.read(SCOPE).writes
    stores.write(SCOPE, AT + timedelta(hours=1))

    assert not settle(stores, held, run, writes=writes)

    assert stores.markers.read(SCOPE).holder == "m-1"
    assert stores.store.read_run(run.sk)["groups_done"] == 0
    assert settle(stores, held, run)  # read again, it settles


def a_settle_is_refused_once_another_worker_took_the_claim_over(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    run = new_run(stores)
    held = claim(stores, "m-1", run.sk)
    claim(stores, "m-2", run.sk + "-other", now=NOW + 301)

    assert not settle(stores, held, run)
    assert stores.store.read_run(run.sk)["groups_done"] == 0


def a_run_settles_a_scope_once(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    run = new_run(stores)
    held = claim(stores, "m-1", run.sk)

    assert settle(stores, held, run)
    assert not settle(stores, held, run)  # sent again after a lost answer
    assert stores.store.read_run(run.sk)["groups_done"] == 1


def a_settle_clears_the_claims_own_pending_record_and_is_refused_by_anothers(make: MakeNight) -> None:
    stores = make()
    sk = stores.write(SCOPE, AT)
    run = new_run(stores)
    held = claim(stores, "m-1", run.sk)
    notes = stores.store.due_group(SCOPE, floor=None, cutoff=CUTOFF, max_notes=200, max_chars=20_000).notes
    stores.documents.hold_unchanged(SCOPE, 0, Fold(notes, run.run_id, "m-0", held.erase_mark))

    assert not settle(stores, held, run)
    stores.store.clear_pending(SCOPE, "m-0")
    stores.documents.hold_unchanged(SCOPE, 0, Fold(notes, run.run_id, "m-1", held.erase_mark))
    stores.store.mark_consolidated(SCOPE, sk)
    assert settle(stores, held, run)

    assert stores.store.pending(SCOPE) is None


def a_failed_group_is_counted_once_and_its_scope_stays_due(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    run = new_run(stores)
    held = claim(stores, "m-1", run.sk)

    counted = [stores.store.fail_group(SCOPE, held, run.sk, remaining=1, tokens=(5, 1)) for _ in range(2)]

    assert counted == [True, False]
    record = stores.store.read_run(run.sk)
    assert (record["groups_failed"], record["notes_remaining"], record["tokens"]["input"]) == (1, 1, 5)
    assert due_keys(stores) == [SCOPE.key]
    assert stores.markers.read(SCOPE).holder is None


def a_group_held_elsewhere_is_counted_once_per_run(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    run = new_run(stores)

    counted = [stores.store.count_elsewhere(SCOPE, run.sk) for _ in range(3)]

    assert counted == [True, False, False]
    assert stores.store.read_run(run.sk)["groups_done"] == 1


# The runs and the lease.


def the_runs_are_listed_newest_first_with_their_status(make: MakeNight) -> None:
    stores = make()
    first = new_run(stores, "r-1")
    stores.store.save_run({"run_id": "r-2", "started_at": "2026-12-04T03:00:00.000Z", "failures": []})
    stores.store.planned(first.sk, groups=0, remaining=0)
    stores.store.finish_if_complete(first.sk)

    listed = stores.store.runs(5)

    assert [(run["run_id"], run["status"]) for run in listed] == [("r-2", "running"), ("r-1", "finished")]
    assert [run["run_id"] for run in stores.store.runs(1)] == ["r-2"]


def a_queued_run_finishes_when_its_last_planned_group_is_counted(make: MakeNight) -> None:
    stores = make()
    stores.write(SCOPE, AT)
    run = new_run(stores)

    planned = stores.store.planned(run.sk, groups=2, remaining=3)
    stores.store.count_elsewhere(SCOPE, run.sk)
    halfway = stores.store.finish_if_complete(run.sk)
    held = claim(stores, "m-1", run.sk + "-b")
    stores.store.fail_group(SCOPE, held, run.sk, remaining=1)
    finished = stores.store.finish_if_complete(run.sk)

    assert (planned["status"], planned["groups_planned"], planned["notes_remaining"]) == ("running", 2, 3)
    assert (halfway["status"], halfway["finished_at"]) == ("running", None)
    assert (finished["status"], finished["groups_done"], finished["groups_failed"]) == ("finished", 1, 1)
    assert stores.store.finish_if_complete(run.sk)["finished_at"] == finished["finished_at"]


def a_run_folded_in_the_planner_is_written_with_the_planners_outcomes(make: MakeNight) -> None:
    stores = make()
    run = new_run(stores)
    stores.store.count_elsewhere(SCOPE, run.sk)

    final = stores.store.planned(run.sk, groups=3, remaining=2, outcomes=(2, 1))

    read = stores.store.read_run(run.sk)
    assert (final["status"], final["groups_done"], final["groups_failed"], final["notes_remaining"]) == (
        "finished",
        2,
        1,
        2,
    )
    assert {key: read[key] for key in final} == final


def a_runs_failures_are_listed_with_their_reasons(make: MakeNight) -> None:
    stores = make()
    run = new_run(stores)

    stores.store.list_failure(run.sk, "ws#a", "the chat model answered with an empty document")
    stores.store.list_failure(run.sk, "ws#b", "RuntimeError")

    assert stores.store.read_run(run.sk)["failures"] == [
        {"scope": "ws#a", "reason": "the chat model answered with an empty document"},
        {"scope": "ws#b", "reason": "RuntimeError"},
    ]


def the_planners_lease_keeps_other_runs_out_until_released_or_expired(make: MakeNight) -> None:
    stores = make()
    store = stores.store

    assert store.acquire_lease("r-1", now_epoch=NOW, lease_s=600)
    assert store.acquire_lease("r-1", now_epoch=NOW + 1, lease_s=600)  # its own, again
    assert not store.acquire_lease("r-2", now_epoch=NOW + 600, lease_s=600)
    store.release_lease("r-2")  # not its lease: nothing happens
    assert not store.acquire_lease("r-2", now_epoch=NOW + 2, lease_s=600)
    assert store.acquire_lease("r-2", now_epoch=NOW + 602, lease_s=600)  # expired
    store.release_lease("r-2")
    assert store.acquire_lease("r-3", now_epoch=NOW + 603, lease_s=600)


# A scope's due notes and their marks.


def a_group_is_the_oldest_due_notes_by_instant_then_position_within_max_notes(make: MakeNight) -> None:
    stores = make()
    for i in range(12):
        stores.write(SCOPE, AT, f"same instant {i + 1}")
    stores.write(SCOPE, AT - timedelta(hours=1), "earlier")
    stores.write(SCOPE, datetime(2026, 11, 26, tzinfo=UTC), "too young")

    texts, remaining = group_texts(stores, max_notes=10)

    assert texts == ["earlier"] + [f"same instant {i + 1}" for i in range(9)]
    assert remaining == 3


def a_group_stops_before_the_note_that_would_pass_max_chars(make: MakeNight) -> None:
    stores = make()
    for i, length in enumerate([45, 45, 20]):
        stores.write(SCOPE, AT + timedelta(minutes=i), str(i) * length)

    texts, remaining = group_texts(stores, max_chars=100)

    assert [len(text) for text in texts] == [45, 45] and remaining == 1


def a_group_reads_from_the_floor_and_leaves_out_marked_notes(make: MakeNight) -> None:
    stores = make()
    marked = stores.write(SCOPE, AT, "marked")
    stores.write(SCOPE, AT + timedelta(days=1), "next day")
    stores.write(SCOPE, AT + timedelta(days=2), "day after")
    stores.store.mark_consolidated(SCOPE, marked)

    assert group_texts(stores) == (["next day", "day after"], 0)
    assert group_texts(stores, floor="2026-11-22") == (["day after"], 0)


def unmarked_lists_the_notes_still_to_mark_and_skips_deleted_ones(make: MakeNight) -> None:
    stores = make()
    sks = [stores.write(SCOPE, AT + timedelta(minutes=i)) for i in range(4)]
    stores.store.mark_consolidated(SCOPE, sks[0])
    stores.delete(SCOPE, sks[1])
    stores.store.mark_consolidated(SCOPE, sks[1])  # a note deleted meanwhile is skipped

    assert sorted(stores.store.unmarked(SCOPE, sks)) == sks[2:]
    assert stores.store.unmarked(SCOPE, []) == []
    assert sorted(
        note.text
        for note in stores.store.due_group(SCOPE, floor=None, cutoff=CUTOFF, max_notes=200, max_chars=20_000).notes
    ) == ["a fact", "a fact"]


def the_oldest_unconsolidated_note_is_its_days_earliest_instant(make: MakeNight) -> None:
    stores = make()
    first = stores.write(SCOPE, AT)
    stores.write(SCOPE, AT + timedelta(hours=3))
    stores.write(SCOPE, AT + timedelta(days=1))
    stores.store.mark_consolidated(SCOPE, first)

    assert stores.store.oldest_unconsolidated(SCOPE, "2026-11-20") == (iso(AT + timedelta(hours=3)), "2026-11-20")


def a_pending_record_lists_its_notes_and_token_and_is_cleared_only_by_its_token(make: MakeNight) -> None:
    stores = make()
    for i in range(2):
        stores.write(SCOPE, AT + timedelta(minutes=i))
    held = claim(stores)
    notes = stores.store.due_group(SCOPE, floor=None, cutoff=CUTOFF, max_notes=200, max_chars=20_000).notes
    stores.documents.hold_unchanged(SCOPE, 0, Fold(notes, "r-1", "m-1", held.erase_mark))

    pending = stores.store.pending(SCOPE)
    listed = stores.store.pending_marks()
    stores.store.clear_pending(SCOPE, "m-2")
    kept = stores.store.pending(SCOPE)
    stores.store.clear_pending(SCOPE, "m-1")

    assert (pending.note_sks, pending.token) == ([note.sk for note in notes], "m-1")
    assert kept == pending
    assert [(p.scope, p.note_sks) for p in listed] == [(SCOPE, pending.note_sks)]
    assert stores.store.pending_marks() == []
    assert stores.store.pending(SCOPE) is None


# A fold's save and the record of a fold that changes nothing: one step with the pending record and the erase mark.


def _fold(stores: NightStores) -> tuple[Fold, Claim]:
    """The claim ``m-1`` and its fold of the scope's due notes (two of them)."""
    stores.write(SCOPE, AT, "first")
    stores.write(SCOPE, AT + timedelta(minutes=1), "second")
    held = claim(stores, "m-1")
    notes = stores.store.due_group(SCOPE, floor=None, cutoff=CUTOFF, max_notes=200, max_chars=20_000).notes
    return Fold(notes, "r-1", "m-1", held.erase_mark), held


def _save_fold(stores: NightStores, fold: Fold, *, expected: int = 0) -> Any:
    return stores.documents.save(
        SCOPE,
        stored_document("- first\n- second"),
        expected_version=expected,
        updated_at="2026-12-03T03:00:00.000Z",
        reason="consolidation",
        by=Author(run_id=fold.run_id),
        pending_marks=fold,
    )


def a_folds_save_writes_its_version_and_its_pending_record_together(make: MakeNight) -> None:
    stores = make()
    fold, _ = _fold(stores)

    saved = _save_fold(stores, fold)

    assert saved.version == 1 == stores.documents.current(SCOPE, consistent=True).version
    pending = stores.store.pending(SCOPE)
    assert pending is not None and (pending.note_sks, pending.token) == ([n.sk for n in fold.notes], "m-1")


def a_folds_save_after_a_notes_delete_is_refused_and_writes_nothing(make: MakeNight) -> None:
    stores = make()
    fold, _ = _fold(stores)
    stores.delete(SCOPE, fold.notes[0].sk)

    with pytest.raises(FoldedNoteGone):
        _save_fold(stores, fold)

    assert stores.documents.current(SCOPE, consistent=True).version == 0
    assert stores.store.pending(SCOPE) is None


def a_fold_that_changes_nothing_is_refused_while_an_erase_runs_and_after_it(make: MakeNight) -> None:
    stores = make()
    fold, _ = _fold(stores)
    stores.markers.erasing(SCOPE, running=True)

    with pytest.raises(FoldedNoteGone):
        stores.documents.hold_unchanged(SCOPE, 0, fold)
    stores.markers.erasing(SCOPE, running=False)
    with pytest.raises(FoldedNoteGone):  # the erase moved the mark: the fold read notes that may be gone
        stores.documents.hold_unchanged(SCOPE, 0, fold)

    assert stores.store.pending(SCOPE) is None


def a_fold_that_changes_nothing_is_refused_once_the_document_moved(make: MakeNight) -> None:
    stores = make()
    fold, _ = _fold(stores)
    _save_fold(stores, Fold([], "r-0", "m-0", fold.erase_mark))
    stores.store.clear_pending(SCOPE)

    with pytest.raises(VersionConflict):
        stores.documents.hold_unchanged(SCOPE, 0, fold)
    stores.documents.hold_unchanged(SCOPE, 1, fold)

    pending = stores.store.pending(SCOPE)
    assert pending is not None and pending.token == "m-1"


def a_fold_that_changes_nothing_sent_again_meets_its_own_record(make: MakeNight) -> None:
    stores = make()
    fold, _ = _fold(stores)

    stores.documents.hold_unchanged(SCOPE, 0, fold)
    stores.documents.hold_unchanged(SCOPE, 0, fold)  # its answer lost, sent again: done
    # Sent again under another request token (an engine that keeps none): its own record, by the claim's token.
    stores.documents.hold_unchanged(SCOPE, 0, Fold(fold.notes, "r-1-again", "m-1", fold.erase_mark))

    with pytest.raises(VersionConflict):  # another fold's record is there: this one read a stale scope
        stores.documents.hold_unchanged(SCOPE, 0, Fold(fold.notes, "r-2", "m-2", fold.erase_mark))


NIGHT_CONTRACTS = [
    the_runs_are_listed_newest_first_with_their_status,
    a_claim_holds_what_the_marker_said_and_sets_its_erase_mark,
    a_claim_held_by_another_worker_is_refused_held_until_it_expires,
    the_same_token_takes_its_claim_again,
    a_claim_of_the_run_that_holds_or_settled_the_scope_is_refused_done,
    a_scope_without_a_marker_is_refused_done,
    a_release_gives_the_claim_back_and_only_the_holder_can,
    a_notes_delete_and_an_erase_move_the_erase_mark,
    due_scopes_are_strictly_older_than_the_cutoff_oldest_first,
    a_settle_moves_the_marker_to_the_oldest_note_left_and_counts_the_group,
    a_settle_with_no_note_left_takes_the_scope_out_of_the_due_scopes,
    a_settle_is_refused_after_a_note_was_written_and_writes_nothing,
    a_settle_is_refused_once_another_worker_took_the_claim_over,
    a_run_settles_a_scope_once,
    a_settle_clears_the_claims_own_pending_record_and_is_refused_by_anothers,
    a_failed_group_is_counted_once_and_its_scope_stays_due,
    a_group_held_elsewhere_is_counted_once_per_run,
    a_queued_run_finishes_when_its_last_planned_group_is_counted,
    a_run_folded_in_the_planner_is_written_with_the_planners_outcomes,
    a_runs_failures_are_listed_with_their_reasons,
    the_planners_lease_keeps_other_runs_out_until_released_or_expired,
    a_group_is_the_oldest_due_notes_by_instant_then_position_within_max_notes,
    a_group_stops_before_the_note_that_would_pass_max_chars,
    a_group_reads_from_the_floor_and_leaves_out_marked_notes,
    unmarked_lists_the_notes_still_to_mark_and_skips_deleted_ones,
    the_oldest_unconsolidated_note_is_its_days_earliest_instant,
    a_pending_record_lists_its_notes_and_token_and_is_cleared_only_by_its_token,
    a_folds_save_writes_its_version_and_its_pending_record_together,
    a_folds_save_after_a_notes_delete_is_refused_and_writes_nothing,
    a_fold_that_changes_nothing_is_refused_while_an_erase_runs_and_after_it,
    a_fold_that_changes_nothing_is_refused_once_the_document_moved,
    a_fold_that_changes_nothing_sent_again_meets_its_own_record,
]
