"""The contract of the night's stores, as the planner and the worker rely on it (``consolidation.ports``): one set of
tests run on DynamoDB (moto, tests/integration/test_night_contracts.py) and on the in-memory fakes
(``tests/support/fake_night``, tests/unit/test_fake_night_contracts.py), so the fakes cannot drift.

A test module runs them with ``from tests.support.night_contracts import *`` and a ``night_stores`` fixture that
gives a ``NightStores``: the stores, and the writes of other use cases the night must see (a note's write and its
delete, a fold's pending record).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import pytest

from agent_memory.basics.clock import iso
from agent_memory.domain.fold import Fold
from agent_memory.domain.scope import Scope
from agent_memory.storage.due_markers import Claim, ClaimRefused
from agent_memory.storage.keys import run_sk

NOW = 1_800_000_000  # the claims' clock, in epoch seconds
AT = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
SCOPE = Scope("team", "w-contract")
OTHER = Scope("team", "w-other")
CUTOFF = "2026-11-26T00:00:00.000Z"


class NightStores(Protocol):
    markers: Any  # DueMarkers, or its fake
    store: Any  # ConsolidationStore, or its fake

    def write(self, scope: Scope, created: datetime, text: str = "a fact") -> str:
        """A note written as ``remember`` writes it (its due marker in its transaction); its sort key."""
        ...

    def delete(self, scope: Scope, sk: str) -> None:
        """A note's delete as the dashboard makes it (the erase mark moves in its transaction)."""
        ...

    def hold(self, scope: Scope, fold: Fold) -> None:
        """A fold's pending record, as a fold that changes nothing writes it (the scope's document at version 0)."""
        ...


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
            stores.markers,
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


def test_a_claim_holds_what_the_marker_said_and_sets_its_erase_mark(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT + timedelta(days=1))
    night_stores.write(SCOPE, AT)

    held = claim(night_stores)

    assert (held.token, held.floor, held.writes, held.erase_mark) == ("m-1", "2026-11-20", 2, "claim:m-1")
    assert night_stores.markers.read(SCOPE) == (2, "m-1", "claim:m-1")


def test_a_claim_held_by_another_worker_is_refused_held_until_it_expires(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    claim(night_stores, "m-1", "r-1")

    with pytest.raises(ClaimRefused) as refused:
        claim(night_stores, "m-2", "r-2", now=NOW + 299)
    taken = claim(night_stores, "m-2", "r-2", now=NOW + 300)

    assert refused.value.why == "held"
    assert (taken.token, taken.erase_mark) == ("m-2", "claim:m-1")  # the mark stays the first claim's
    assert night_stores.markers.read(SCOPE).holder == "m-2"


def test_the_same_token_takes_its_claim_again(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    first = claim(night_stores)

    assert claim(night_stores, now=NOW + 10) == first


def test_a_claim_of_the_run_that_holds_or_settled_the_scope_is_refused_done(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    run = new_run(night_stores)
    held = claim(night_stores, "m-1", run.sk)

    with pytest.raises(ClaimRefused) as while_held:
        claim(night_stores, "m-2", run.sk)
    assert settle(night_stores, held, run)
    night_stores.write(SCOPE, AT + timedelta(days=2))
    with pytest.raises(ClaimRefused) as settled:
        claim(night_stores, "m-3", run.sk, now=NOW + 1_000)

    assert (while_held.value.why, settled.value.why) == ("done", "done")


def test_a_scope_without_a_marker_is_refused_done(night_stores: NightStores) -> None:
    with pytest.raises(ClaimRefused) as refused:
        claim(night_stores, scope=OTHER)

    assert refused.value.why == "done"
    assert night_stores.markers.read(OTHER) == (0, None, None)


def test_a_release_gives_the_claim_back_and_only_the_holder_can(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    held = claim(night_stores)

    night_stores.markers.release(SCOPE, Claim("m-2", held.floor, held.writes, held.erase_mark))
    assert night_stores.markers.read(SCOPE).holder == "m-1"
    night_stores.markers.release(SCOPE, held)

    assert night_stores.markers.read(SCOPE).holder is None
    assert claim(night_stores, "m-2", "r-2").token == "m-2"


def test_a_notes_delete_and_an_erase_move_the_erase_mark(night_stores: NightStores) -> None:
    sk = night_stores.write(SCOPE, AT)
    night_stores.write(SCOPE, AT + timedelta(hours=1))
    held = claim(night_stores)

    night_stores.delete(SCOPE, sk)
    after_delete = night_stores.markers.read(SCOPE).erase_mark
    night_stores.markers.erasing(SCOPE, running=True)
    while_erasing = night_stores.markers.read(SCOPE).erase_mark
    night_stores.markers.erasing(SCOPE, running=False)
    after_erase = night_stores.markers.read(SCOPE).erase_mark

    assert after_delete not in (None, held.erase_mark)
    assert while_erasing is None  # no fold may save while an erase runs
    assert after_erase not in (None, held.erase_mark, after_delete)


def test_due_scopes_are_strictly_older_than_the_cutoff_oldest_first(night_stores: NightStores) -> None:
    night_stores.write(Scope("team", "b"), AT)
    night_stores.write(Scope("team", "a"), AT)
    night_stores.write(Scope("team", "young"), datetime(2026, 11, 26, tzinfo=UTC))
    night_stores.write(Scope("team", "late"), AT + timedelta(days=3))
    night_stores.write(Scope("team", "late"), AT - timedelta(days=3))  # older than its marker's oldest
    night_stores.write(Scope("team", "late"), AT + timedelta(days=4))

    due = list(night_stores.markers.due_scopes(CUTOFF))

    assert [(d.scope_key, d.oldest, d.notes) for d in due] == [
        ("ws#late", iso(AT - timedelta(days=3)), 3),
        ("ws#a", iso(AT), 1),
        ("ws#b", iso(AT), 1),
    ]


# A group's transactions.


def test_a_settle_moves_the_marker_to_the_oldest_note_left_and_counts_the_group(night_stores: NightStores) -> None:
    first = night_stores.write(SCOPE, AT)
    night_stores.write(SCOPE, AT + timedelta(days=2))
    run = new_run(night_stores)
    held = claim(night_stores, "m-1", run.sk)
    night_stores.store.mark_consolidated(SCOPE, first)

    assert settle(night_stores, held, run, folded=1, remaining=1, tokens=(120, 30), fold="edits")

    assert [(d.oldest, d.notes) for d in night_stores.markers.due_scopes(CUTOFF)] == [(iso(AT + timedelta(days=2)), 1)]
    assert night_stores.markers.read(SCOPE).holder is None
    record = night_stores.store.read_run(run.sk)
    assert (record["groups_done"], record["notes_consolidated"], record["notes_remaining"]) == (1, 1, 1)
    assert record["tokens"] == {"input": 120, "output": 30}
    assert record["folds"] == {"edits": 1, "rewrite": 0, "model_free": 0, "unchanged": 0}


def test_a_settle_with_no_note_left_takes_the_scope_out_of_the_due_scopes(night_stores: NightStores) -> None:
    sk = night_stores.write(SCOPE, AT)
    run = new_run(night_stores)
    held = claim(night_stores, "m-1", run.sk)
    night_stores.store.mark_consolidated(SCOPE, sk)

    assert settle(night_stores, held, run)

    assert due_keys(night_stores) == []
    assert night_stores.store.oldest_unconsolidated(SCOPE, None) is None


def test_a_settle_is_refused_after_a_note_was_written_and_writes_nothing(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    run = new_run(night_stores)
    held = claim(night_stores, "m-1", run.sk)
    writes = night_stores.markers.read(SCOPE).writes
    night_stores.write(SCOPE, AT + timedelta(hours=1))

    assert not settle(night_stores, held, run, writes=writes)

    assert night_stores.markers.read(SCOPE).holder == "m-1"
    assert night_stores.store.read_run(run.sk)["groups_done"] == 0
    assert settle(night_stores, held, run)  # read again, it settles


def test_a_settle_is_refused_once_another_worker_took_the_claim_over(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    run = new_run(night_stores)
    held = claim(night_stores, "m-1", run.sk)
    claim(night_stores, "m-2", run.sk + "-other", now=NOW + 301)

    assert not settle(night_stores, held, run)
    assert night_stores.store.read_run(run.sk)["groups_done"] == 0


def test_a_run_settles_a_scope_once(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    run = new_run(night_stores)
    held = claim(night_stores, "m-1", run.sk)

    assert settle(night_stores, held, run)
    assert not settle(night_stores, held, run)  # sent again after a lost answer
    assert night_stores.store.read_run(run.sk)["groups_done"] == 1


def test_a_settle_clears_the_claims_own_pending_record_and_is_refused_by_anothers(night_stores: NightStores) -> None:
    sk = night_stores.write(SCOPE, AT)
    run = new_run(night_stores)
    held = claim(night_stores, "m-1", run.sk)
    notes = night_stores.store.due_group(SCOPE, floor=None, cutoff=CUTOFF, max_notes=200, max_chars=20_000).notes
    night_stores.hold(SCOPE, Fold(notes, run.run_id, "m-0", held.erase_mark))

    assert not settle(night_stores, held, run)
    night_stores.store.clear_pending(SCOPE, "m-0")
    night_stores.hold(SCOPE, Fold(notes, run.run_id, "m-1", held.erase_mark))
    night_stores.store.mark_consolidated(SCOPE, sk)
    assert settle(night_stores, held, run)

    assert night_stores.store.pending(SCOPE) is None


def test_a_failed_group_is_counted_once_and_its_scope_stays_due(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    run = new_run(night_stores)
    held = claim(night_stores, "m-1", run.sk)

    counted = [
        night_stores.store.fail_group(night_stores.markers, SCOPE, held, run.sk, remaining=1, tokens=(5, 1))
        for _ in range(2)
    ]

    assert counted == [True, False]
    record = night_stores.store.read_run(run.sk)
    assert (record["groups_failed"], record["notes_remaining"], record["tokens"]["input"]) == (1, 1, 5)
    assert due_keys(night_stores) == [SCOPE.key]
    assert night_stores.markers.read(SCOPE).holder is None


def test_a_group_held_elsewhere_is_counted_once_per_run(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    run = new_run(night_stores)

    counted = [night_stores.store.count_elsewhere(night_stores.markers, SCOPE, run.sk) for _ in range(3)]

    assert counted == [True, False, False]
    assert night_stores.store.read_run(run.sk)["groups_done"] == 1


# The runs and the lease.


def test_a_queued_run_finishes_when_its_last_planned_group_is_counted(night_stores: NightStores) -> None:
    night_stores.write(SCOPE, AT)
    run = new_run(night_stores)

    planned = night_stores.store.planned(run.sk, groups=2, remaining=3)
    night_stores.store.count_elsewhere(night_stores.markers, SCOPE, run.sk)
    halfway = night_stores.store.finish_if_complete(run.sk)
    held = claim(night_stores, "m-1", run.sk + "-b")
    night_stores.store.fail_group(night_stores.markers, SCOPE, held, run.sk, remaining=1)
    finished = night_stores.store.finish_if_complete(run.sk)

    assert (planned["status"], planned["groups_planned"], planned["notes_remaining"]) == ("running", 2, 3)
    assert (halfway["status"], halfway["finished_at"]) == ("running", None)
    assert (finished["status"], finished["groups_done"], finished["groups_failed"]) == ("finished", 1, 1)
    assert night_stores.store.finish_if_complete(run.sk)["finished_at"] == finished["finished_at"]


def test_a_run_folded_in_the_planner_is_written_with_the_planners_outcomes(night_stores: NightStores) -> None:
    run = new_run(night_stores)
    night_stores.store.count_elsewhere(night_stores.markers, SCOPE, run.sk)

    final = night_stores.store.planned(run.sk, groups=3, remaining=2, outcomes=(2, 1))

    read = night_stores.store.read_run(run.sk)
    assert (final["status"], final["groups_done"], final["groups_failed"], final["notes_remaining"]) == (
        "finished",
        2,
        1,
        2,
    )
    assert {key: read[key] for key in final} == final


def test_a_runs_failures_are_listed_with_their_reasons(night_stores: NightStores) -> None:
    run = new_run(night_stores)

    night_stores.store.list_failure(run.sk, "ws#a", "the chat model answered with an empty document")
    night_stores.store.list_failure(run.sk, "ws#b", "RuntimeError")

    assert night_stores.store.read_run(run.sk)["failures"] == [
        {"scope": "ws#a", "reason": "the chat model answered with an empty document"},
        {"scope": "ws#b", "reason": "RuntimeError"},
    ]


def test_the_planners_lease_keeps_other_runs_out_until_released_or_expired(night_stores: NightStores) -> None:
    store = night_stores.store

    assert store.acquire_lease("r-1", now_epoch=NOW, lease_s=600)
    assert store.acquire_lease("r-1", now_epoch=NOW + 1, lease_s=600)  # its own, again
    assert not store.acquire_lease("r-2", now_epoch=NOW + 600, lease_s=600)
    store.release_lease("r-2")  # not its lease: nothing happens
    assert not store.acquire_lease("r-2", now_epoch=NOW + 2, lease_s=600)
    assert store.acquire_lease("r-2", now_epoch=NOW + 602, lease_s=600)  # expired
    store.release_lease("r-2")
    assert store.acquire_lease("r-3", now_epoch=NOW + 603, lease_s=600)


# A scope's due notes and their marks.


def test_a_group_is_the_oldest_due_notes_by_instant_then_position_within_max_notes(night_stores: NightStores) -> None:
    for i in range(12):
        night_stores.write(SCOPE, AT, f"same instant {i + 1}")
    night_stores.write(SCOPE, AT - timedelta(hours=1), "earlier")
    night_stores.write(SCOPE, datetime(2026, 11, 26, tzinfo=UTC), "too young")

    texts, remaining = group_texts(night_stores, max_notes=10)

    assert texts == ["earlier"] + [f"same instant {i + 1}" for i in range(9)]
    assert remaining == 3


def test_a_group_stops_before_the_note_that_would_pass_max_chars(night_stores: NightStores) -> None:
    for i, length in enumerate([45, 45, 20]):
        night_stores.write(SCOPE, AT + timedelta(minutes=i), str(i) * length)

    texts, remaining = group_texts(night_stores, max_chars=100)

    assert [len(text) for text in texts] == [45, 45] and remaining == 1


def test_a_group_reads_from_the_floor_and_leaves_out_marked_notes(night_stores: NightStores) -> None:
    marked = night_stores.write(SCOPE, AT, "marked")
    night_stores.write(SCOPE, AT + timedelta(days=1), "next day")
    night_stores.write(SCOPE, AT + timedelta(days=2), "day after")
    night_stores.store.mark_consolidated(SCOPE, marked)

    assert group_texts(night_stores) == (["next day", "day after"], 0)
    assert group_texts(night_stores, floor="2026-11-22") == (["day after"], 0)


def test_unmarked_lists_the_notes_still_to_mark_and_skips_deleted_ones(night_stores: NightStores) -> None:
    sks = [night_stores.write(SCOPE, AT + timedelta(minutes=i)) for i in range(4)]
    night_stores.store.mark_consolidated(SCOPE, sks[0])
    night_stores.delete(SCOPE, sks[1])
    night_stores.store.mark_consolidated(SCOPE, sks[1])  # a note deleted meanwhile is skipped

    assert sorted(night_stores.store.unmarked(SCOPE, sks)) == sks[2:]
    assert night_stores.store.unmarked(SCOPE, []) == []
    assert sorted(
        note.text
        for note in night_stores.store.due_group(
            SCOPE, floor=None, cutoff=CUTOFF, max_notes=200, max_chars=20_000
        ).notes
    ) == ["a fact", "a fact"]


def test_the_oldest_unconsolidated_note_is_its_days_earliest_instant(night_stores: NightStores) -> None:
    first = night_stores.write(SCOPE, AT)
    night_stores.write(SCOPE, AT + timedelta(hours=3))
    night_stores.write(SCOPE, AT + timedelta(days=1))
    night_stores.store.mark_consolidated(SCOPE, first)

    assert night_stores.store.oldest_unconsolidated(SCOPE, "2026-11-20") == (iso(AT + timedelta(hours=3)), "2026-11-20")


def test_a_pending_record_lists_its_notes_and_token_and_is_cleared_only_by_its_token(night_stores: NightStores) -> None:
    for i in range(2):
        night_stores.write(SCOPE, AT + timedelta(minutes=i))
    held = claim(night_stores)
    notes = night_stores.store.due_group(SCOPE, floor=None, cutoff=CUTOFF, max_notes=200, max_chars=20_000).notes
    night_stores.hold(SCOPE, Fold(notes, "r-1", "m-1", held.erase_mark))

    pending = night_stores.store.pending(SCOPE)
    listed = night_stores.store.pending_marks()
    night_stores.store.clear_pending(SCOPE, "m-2")
    kept = night_stores.store.pending(SCOPE)
    night_stores.store.clear_pending(SCOPE, "m-1")

    assert (pending.note_sks, pending.token) == ([note.sk for note in notes], "m-1")
    assert kept == pending
    assert [(p.scope, p.note_sks) for p in listed] == [(SCOPE, pending.note_sks)]
    assert night_stores.store.pending_marks() == []
    assert night_stores.store.pending(SCOPE) is None


__all__ = [name for name in dir() if name.startswith("test_")]
