"""docs/api.md §6 "Consolidation at any scale": the planner fans the night's groups out over SQS (moto), workers
fold them (ConsolidateWorkerFunction through the local event source mapping), the run record counts them.
Crash safety across planner and worker, duplicates, redelivery, the dead-letter queue, two planners, order."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from local.sqs_mapping import LocalQueueMapping, sqs_record
from tests.support.consolidation import (
    PERSONAL,
    RUN_AT,
    Died,
    RecordingQueue,
    WorkerFunction,
    consolidate,
    days_ago,
    die_at_the_mark,
    die_at_the_save,
    folded_counts,
    merge,
    notes_of,
)
from tests.support.fakes import FakeChatModel
from tests.support.faults import provide_real_clients
from tests.support.models import scripted_models
from tests.support.scopes import write_note


@pytest.fixture
def queue(aws, monkeypatch):
    """The consolidation queue on moto, the planner pointed at it; visibility 0, so a failed message is back
    at once (as it would be after the visibility timeout)."""
    mapping = LocalQueueMapping(None, WorkerFunction(), visibility_s=0)
    monkeypatch.setenv("MEMORY_CONSOLIDATION_QUEUE_URL", mapping.url)
    bootstrap.reset()
    return mapping


@pytest.fixture
def model(queue, monkeypatch):
    fake = FakeChatModel(reply=merge)
    scripted_models().fold = fake
    return fake


def last_run() -> dict:
    return bootstrap.services().consolidation_store.runs(1)[0]


def test_the_planner_hands_the_queue_whole_batches_of_ten_oldest_scope_first(aws, monkeypatch):
    """The planner makes each batch and the queue only sends it: the queue never iterates the plan (it did, and
    each message it took resumed the planner's generator from below)."""
    monkeypatch.setenv("MEMORY_CONSOLIDATION_MAX_GROUPS", "0")
    scopes = [Scope("team", f"w-{i:02d}") for i in range(23)]
    for i, scope in enumerate(scopes):
        write_note(scope, days_ago(9) + timedelta(minutes=i), "fact")
    queue = RecordingQueue()
    bootstrap.provide(consolidation_queue=queue)

    consolidate()

    assert [len(batch) for batch in queue.batches] == [10, 10, 3]
    assert [message.scope for batch in queue.batches for message in batch] == [scope.key for scope in scopes]
    assert last_run()["groups_planned"] == 23


def test_the_planner_sends_one_message_per_due_scope_and_the_workers_finish_the_run(aws, queue, model):
    scopes = [Scope("team", f"w-{i}") for i in range(3)]
    ids = {
        scope: [write_note(scope, days_ago(9) + timedelta(minutes=n), f"fact {n}") for n in range(2)]
        for scope in scopes
    }
    write_note(scopes[0], days_ago(1), "too young")

    planned = consolidate()

    assert planned["status"] == "running" and planned["groups_planned"] == 3 and planned["groups_done"] == 0
    assert queue.depth() == 3
    assert last_run()["finished_at"] is None
    queue.drain()
    run = last_run()
    assert run["status"] == "finished" and run["finished_at"] is not None
    assert (run["groups_planned"], run["groups_done"], run["notes_consolidated"], run["notes_remaining"]) == (
        3,
        3,
        6,
        0,
    )
    for scope in scopes:
        assert folded_counts(aws, scope) == dict.fromkeys(ids[scope], 1)
    assert len(model.calls) == 3


def test_max_groups_0_gives_every_due_scope_its_group_the_same_night(aws, queue, model, monkeypatch):
    monkeypatch.setenv("MEMORY_CONSOLIDATION_MAX_GROUPS", "0")
    bootstrap.reset()
    scripted_models().fold = model
    for i in range(60):
        write_note(Scope("team", f"w-{i:02d}"), days_ago(8) + timedelta(minutes=i), f"fact {i}")

    assert consolidate()["groups_planned"] == 60
    queue.drain(timeout_s=600)

    run = last_run()
    assert (run["groups_done"], run["notes_consolidated"], run["notes_remaining"], run["status"]) == (
        60,
        60,
        0,
        "finished",
    )


def test_a_worker_dying_after_the_version_is_saved_and_before_the_marks_is_finished_by_the_redelivery(
    aws, queue, model
):
    ids = [write_note(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}") for i in range(5)]
    consolidate()
    die_at_the_mark(after_marks=2)
    with pytest.raises(Died):
        queue.drain()
    provide_real_clients()

    queue.drain()  # the same message, delivered again after its visibility timeout

    assert folded_counts(aws) == dict.fromkeys(ids, 1)
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws))
    assert len(model.calls) == 1
    run = last_run()
    assert (run["groups_done"], run["notes_consolidated"], run["notes_remaining"], run["status"]) == (
        1,
        5,
        0,
        "finished",
    )


def test_a_worker_dying_before_its_save_is_redelivered_and_folds_once(aws, queue, model):
    ids = [write_note(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}") for i in range(3)]
    consolidate()
    die_at_the_save()
    with pytest.raises(Died):
        queue.drain()
    provide_real_clients()

    queue.drain()

    assert folded_counts(aws) == dict.fromkeys(ids, 1)
    assert last_run()["notes_consolidated"] == 3


def test_a_duplicate_message_is_a_no_op(aws, queue, model):
    ids = [write_note(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}") for i in range(3)]
    consolidate()
    message = queue._sqs.receive_message(QueueUrl=queue.url, AttributeNames=["All"])["Messages"][0]
    queue._sqs.send_message(QueueUrl=queue.url, MessageBody=message["Body"])  # the planner's send, twice
    queue._sqs.change_message_visibility(
        QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
    )
    record = sqs_record(message, queue.arn, "eu-west-1")

    assert WorkerFunction()({"Records": [record]}) == {"batchItemFailures": []}
    assert WorkerFunction()({"Records": [record]}) == {"batchItemFailures": []}  # the same message delivered twice
    queue.drain()  # the copy sent twice

    assert folded_counts(aws) == dict.fromkeys(ids, 1)
    assert len(model.calls) == 1
    run = last_run()
    assert (run["groups_planned"], run["groups_done"], run["notes_consolidated"]) == (1, 1, 3)


def test_a_poisoned_message_goes_to_the_dead_letter_queue_and_its_notes_stay_unmarked(aws, queue, model):
    write_note(PERSONAL, days_ago(9), "fine")
    team = Scope("team", "w-poison")
    write_note(team, days_ago(9), "poison")

    def explode(system, prompt):
        if "poison" in prompt:
            raise RuntimeError("a bug in the worker")
        return merge(system, prompt)

    model.reply = explode
    consolidate()
    queue._sqs.send_message(QueueUrl=queue.url, MessageBody="not a group")

    queue.drain()

    assert queue.depth(queue.dead_letter_url) == 2
    assert [item["consolidated"] for item in notes_of(aws, team)] == [{"BOOL": False}]
    assert sum("poison" in prompt for _, prompt in model.calls) == queue.max_receives
    run = last_run()
    assert (run["groups_done"], run["groups_failed"], run["notes_remaining"], run["status"]) == (1, 1, 1, "finished")
    assert run["failures"] == [{"scope": "ws#w-poison", "reason": "RuntimeError"}]

    model.reply = merge  # fixed: the scope is due again the next night
    consolidate(RUN_AT + timedelta(days=1), run_id="next-night")
    queue.drain()
    assert [item["consolidated"] for item in notes_of(aws, team)] == [{"BOOL": True}]


def test_two_planners_started_together_fold_each_note_once(aws, queue, model):
    ids = {}
    for i in range(8):
        scope = Scope("team", f"w-{i}")
        ids[scope] = [write_note(scope, days_ago(9) + timedelta(minutes=n), f"fact {n}") for n in range(3)]
    results = []
    start = threading.Barrier(2)

    def plan(run_id):
        start.wait()
        results.append(consolidate(run_id=run_id))

    threads = [threading.Thread(target=plan, args=(f"run-{n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    queue.drain()

    assert sorted(result["groups_planned"] for result in results) == [0, 8]
    for scope, note_ids in ids.items():
        assert folded_counts(aws, scope) == dict.fromkeys(note_ids, 1)


def test_two_runs_whose_workers_overlap_fold_each_note_once(aws, queue, model):
    """The lease only serialises planners; a second run's messages meet the first run's in the queue."""
    ids = {}
    for i in range(5):
        scope = Scope("team", f"w-{i}")
        ids[scope] = [write_note(scope, days_ago(9) + timedelta(minutes=n), f"fact {n}") for n in range(4)]

    first = consolidate(run_id="run-a")
    second = consolidate(RUN_AT + timedelta(minutes=5), run_id="run-b")
    queue.drain()

    assert first["groups_planned"] == second["groups_planned"] == 5
    for scope, note_ids in ids.items():
        assert folded_counts(aws, scope) == dict.fromkeys(note_ids, 1)
    runs = bootstrap.services().consolidation_store.runs(2)
    assert all(run["status"] == "finished" for run in runs)
    assert sum(run["notes_consolidated"] for run in runs) == 20


def test_notes_of_equal_instants_are_taken_by_position_as_a_number(aws, queue, model, monkeypatch):
    monkeypatch.setenv("MEMORY_CONSOLIDATION_MAX_NOTES", "10")
    bootstrap.reset()
    scripted_models().fold = model
    frozen = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)
    ids = [write_note(PERSONAL, frozen, f"note {i + 1}") for i in range(12)]  # one instant, positions 1..12

    consolidate()
    queue.drain()

    assert set(folded_counts(aws)) == set(ids[:10])  # 2026-11-24.1 .. .10, not .1, .10, .11, .12, .2 ...
    assert "(id 2026-11-24.1) note 1\n- [2026-11-24] (id 2026-11-24.2) note 2\n" in model.calls[0][1]
    assert last_run()["notes_remaining"] == 2


def test_scopes_are_planned_by_their_oldest_note(aws, queue, model, monkeypatch):
    monkeypatch.setenv("MEMORY_CONSOLIDATION_MAX_GROUPS", "2")
    bootstrap.reset()
    scripted_models().fold = model
    write_note(Scope("team", "w-young"), days_ago(8), "young")
    write_note(Scope("team", "w-old"), days_ago(20), "old")
    write_note(Scope("team", "w-middle"), days_ago(10), "middle")
    write_note(Scope("team", "w-young"), days_ago(30), "written late but oldest")

    consolidate()
    queue.drain()

    prompts = "".join(prompt for _, prompt in model.calls)
    assert "written late but oldest" in prompts and "old" in prompts and "middle" not in prompts
    assert last_run()["notes_remaining"] == 1
