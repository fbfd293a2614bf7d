"""The nightly planner (``consolidation.planner``) on the in-memory night (``tests/support/fake_night``): which scopes
are due, in what order and batches, the caps, the lease, the run's record and its counts (docs/api.md §4 and §6,
docs/consolidation.md). Its storage on DynamoDB is tested in tests/integration."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from agent_memory.basics.clock import iso
from agent_memory.consolidation.planner import RUN_LEASE_S
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import run_sk
from tests.support.consolidation import RUN_AT, days_ago, merge
from tests.support.night import night, scheduled, team

ALL_TIME = lambda: 900_000  # noqa: E731 - the Lambda's remaining time: plenty


def test_one_message_per_due_scope_in_whole_batches_of_ten_oldest_scope_first() -> None:
    world = night(max_groups=0)
    scopes = [team(i) for i in range(23)]
    for i in reversed(range(23)):  # written youngest first: the order is by age, not by write
        world.write(scopes[i], days_ago(9) + timedelta(minutes=i))

    result = world.planner.run(scheduled(), ALL_TIME)

    assert [len(batch) for batch in world.queue.batches] == [10, 10, 3]
    assert [message.scope for message in world.sent()] == [scope.key for scope in scopes]
    assert result["groups_planned"] == 23


def test_a_scope_is_due_by_its_oldest_note_whenever_it_was_written() -> None:
    world = night(max_groups=2)
    world.write(team("young"), days_ago(8))
    world.write(team("old"), days_ago(20))
    world.write(team("middle"), days_ago(10))
    world.write(team("young"), days_ago(30))  # written late, but the oldest note of all

    result = world.planner.run(scheduled(), ALL_TIME)

    assert [message.scope for message in world.sent()] == [team("young").key, team("old").key]
    assert result["notes_remaining"] == 1  # the middle scope's note waits for the next night


def test_a_note_exactly_the_minimum_age_waits_and_an_older_one_is_due() -> None:
    world = night()
    world.write(team("seven"), days_ago(7))
    world.write(team("eight"), days_ago(8))

    world.planner.run(scheduled(), ALL_TIME)

    assert [message.scope for message in world.sent()] == [team("eight").key]


def test_a_run_started_by_hand_may_take_notes_of_any_age() -> None:
    world = night()
    world.write(team("today"), RUN_AT - timedelta(minutes=5))

    world.planner.run(scheduled(min_age_days=0), ALL_TIME)

    assert [message.scope for message in world.sent()] == [team("today").key]
    assert world.sent()[0].cutoff == iso(RUN_AT)


def test_each_message_names_its_run_its_scope_its_cutoff_and_its_due_notes() -> None:
    world = night()
    for minutes in range(3):
        world.write(team("a"), days_ago(9) + timedelta(minutes=minutes))

    result = world.planner.run(scheduled(run_id="night-1"), ALL_TIME)

    (message,) = world.sent()
    record = world.store.runs(1)[0]
    assert (message.run_id, message.run) == ("night-1", run_sk(record["started_at"], "night-1"))
    assert (message.scope, message.cutoff, message.notes) == (team("a").key, iso(days_ago(7)), 3)
    assert result["run_id"] == "night-1"


def test_max_groups_caps_the_night_and_counts_the_notes_left_for_later() -> None:
    world = night(max_groups=50)
    for i in range(55):
        world.write(team(i), days_ago(8) + timedelta(minutes=i))
    world.write(team(54), days_ago(8) + timedelta(minutes=60))

    result = world.planner.run(scheduled(), ALL_TIME)

    assert [message.scope for message in world.sent()] == [team(i).key for i in range(50)]
    assert (result["groups_planned"], result["notes_remaining"]) == (50, 6)


def test_max_groups_0_plans_every_due_scope() -> None:
    world = night(max_groups=0)
    for i in range(60):
        world.write(team(i), days_ago(8) + timedelta(minutes=i))

    assert world.planner.run(scheduled(), ALL_TIME)["groups_planned"] == 60
    assert len(world.sent()) == 60


def test_no_group_is_planned_when_the_time_left_is_within_the_reserve() -> None:
    world = night()
    world.write(team("a"), days_ago(9))

    result = world.planner.run(scheduled(), lambda: 120_000)  # the reserve is 120 s

    assert (result["groups_planned"], result["notes_remaining"]) == (0, 1)
    assert world.sent() == []


def test_the_groups_stop_when_the_time_runs_short_midway_and_the_rest_wait() -> None:
    world = night(max_groups=0)
    for i in range(5):
        world.write(team(i), days_ago(9) + timedelta(minutes=i))
    left = iter([900_000, 900_000, 60_000, 60_000, 60_000])

    result = world.planner.run(scheduled(), lambda: next(left))

    assert [message.scope for message in world.sent()] == [team(0).key, team(1).key]
    assert (result["groups_planned"], result["notes_remaining"]) == (2, 3)


def test_a_queued_run_is_running_until_its_workers_have_counted_every_group() -> None:
    world = night()
    for i in range(2):
        world.write(team(i), days_ago(9))

    result = world.planner.run(scheduled(), ALL_TIME)

    assert (result["status"], result["groups_planned"], result["groups_done"]) == ("running", 2, 0)
    assert world.store.runs(1)[0]["finished_at"] is None


def test_a_night_with_nothing_due_is_finished_at_once() -> None:
    world = night()
    world.write(team("young"), days_ago(1))

    result = world.planner.run(scheduled(), ALL_TIME)

    assert (result["status"], result["groups_planned"], result["notes_remaining"]) == ("finished", 0, 0)
    assert world.store.runs(1)[0]["finished_at"] is not None
    assert world.queue.batches == []


def test_the_result_is_the_runs_counts_and_status_only() -> None:
    world = night()
    world.write(team("a"), days_ago(9))

    result = world.planner.run(scheduled(run_id="r"), ALL_TIME)

    assert set(result) == {
        "run_id",
        "status",
        "groups_planned",
        "groups_done",
        "groups_failed",
        "notes_consolidated",
        "notes_remaining",
    }


def test_a_second_planner_while_one_holds_the_lease_does_nothing() -> None:
    world = night()
    world.write(team("a"), days_ago(9))
    assert world.store.acquire_lease("other", now_epoch=world.now_epoch(), lease_s=600)

    result = world.planner.run(scheduled(run_id="mine"), ALL_TIME)

    assert result == {"run_id": "mine", "status": "finished", **dict.fromkeys(COUNTED, 0)}
    assert world.sent() == [] and world.store.runs(5) == []


def test_an_expired_lease_does_not_keep_the_next_planner_out() -> None:
    world = night()
    world.write(team("a"), days_ago(9))
    world.store.acquire_lease("crashed", now_epoch=world.now_epoch() - RUN_LEASE_S - 1, lease_s=RUN_LEASE_S)

    assert world.planner.run(scheduled(), ALL_TIME)["groups_planned"] == 1


def test_the_lease_is_released_after_the_run_for_the_next_one() -> None:
    world = night()
    world.write(team("a"), days_ago(9))

    world.planner.run(scheduled(run_id="first"), ALL_TIME)

    assert world.store.acquire_lease("second", now_epoch=world.now_epoch(), lease_s=600)


def test_the_lease_is_released_when_the_queue_fails() -> None:
    world = night()
    world.write(team("a"), days_ago(9))
    world.queue.fail_with = RuntimeError("the queue refused 1 consolidation messages")

    with pytest.raises(RuntimeError, match="refused"):
        world.planner.run(scheduled(run_id="first"), ALL_TIME)

    assert world.store.acquire_lease("second", now_epoch=world.now_epoch(), lease_s=600)


def test_a_plan_whose_last_record_fails_answers_the_record_as_read_with_its_groups() -> None:
    world = night()
    world.write(team("a"), days_ago(9))
    world.world.faults.fail("consolidation.planned")

    result = world.planner.run(scheduled(run_id="r"), ALL_TIME)

    assert (result["status"], result["groups_planned"]) == ("running", 1)
    assert world.store.acquire_lease("next", now_epoch=world.now_epoch(), lease_s=600)


def test_a_lease_that_cannot_be_released_expires_by_itself_and_the_run_still_answers() -> None:
    world = night()
    world.write(team("a"), days_ago(9))
    world.world.faults.fail("consolidation.release_lease")

    result = world.planner.run(scheduled(run_id="r"), ALL_TIME)

    assert result["groups_planned"] == 1
    assert not world.store.acquire_lease("next", now_epoch=world.now_epoch(), lease_s=600)
    assert world.store.acquire_lease("next", now_epoch=world.now_epoch() + RUN_LEASE_S + 1, lease_s=600)


COUNTED = ("groups_planned", "groups_done", "groups_failed", "notes_consolidated", "notes_remaining")


def test_two_scopes_of_the_same_instant_go_by_their_keys() -> None:
    world = night()
    world.write(Scope("team", "b"), days_ago(9))
    world.write(Scope("team", "a"), days_ago(9))

    world.planner.run(scheduled(), ALL_TIME)

    assert [message.scope for message in world.sent()] == ["ws#a", "ws#b"]


def test_a_scope_keeps_its_deleted_notes_in_its_count_until_it_is_settled() -> None:
    world = night()
    sks = [world.write(team("a"), days_ago(9) + timedelta(minutes=n)) for n in range(3)]
    world.delete(team("a"), sks[0])

    world.planner.run(scheduled(), ALL_TIME)

    assert [message.notes for message in world.sent()] == [3]  # a delete leaves the marker's count high


def test_the_planner_folding_here_runs_at_most_its_concurrency_of_groups_at_once() -> None:
    world = night(queued=False, max_groups=0)
    world.planner.concurrency = 2
    for i in range(6):
        world.write(team(i), days_ago(9))
    lock, running, most = threading.Lock(), [0], [0]
    both = threading.Barrier(2, timeout=10)  # the first two groups meet: two run at once, whatever the load

    def slow_merge(system: str, prompt: str) -> str | dict:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            first_two = len(world.fold_model.calls) <= 2
        if first_two:
            both.wait()
        time.sleep(0.005)  # a third, if one could start, would be seen running here
        with lock:
            running[0] -= 1
        return merge(system, prompt)

    world.fold_model.reply = slow_merge

    result = world.consolidate()

    assert (result["groups_planned"], result["groups_done"], result["status"]) == (6, 6, "finished")
    assert most[0] == 2


def test_a_group_held_by_another_runs_worker_is_counted_done_by_the_planner_folding_here() -> None:
    world = night(queued=False)
    world.write(team("a"), days_ago(9))
    world.markers.claim(team("a"), "their-message", "their-run", now_epoch=world.now_epoch(), lease_s=330)

    result = world.consolidate()

    assert (result["groups_planned"], result["groups_done"], result["groups_failed"]) == (1, 1, 0)
    assert world.fold_model.calls == []


def test_a_group_whose_worker_raised_is_counted_failed_with_the_errors_name() -> None:
    world = night(queued=False)
    world.write(team("a"), days_ago(9))
    world.write(team("b"), days_ago(9))

    def explode(system: str, prompt: str) -> str | dict:
        if len(world.fold_model.calls) == 1:  # the first group, w-a's (one at a time, oldest then by key)
            raise RuntimeError("a bug in the worker")
        return merge(system, prompt)

    world.fold_model.reply = explode
    world.planner.concurrency = 1

    result = world.consolidate()

    assert (result["groups_done"], result["groups_failed"], result["status"]) == (1, 1, "finished")
    assert world.store.runs(1)[0]["failures"] == [{"scope": team("a").key, "reason": "RuntimeError"}]
