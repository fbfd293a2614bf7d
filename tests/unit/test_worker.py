"""The consolidation worker (``consolidation.worker``) folding the queue's messages on the in-memory stores: exactly
once per scope and run whatever is delivered twice, dies or loses its answers, and a run counted exactly (docs/api.md
§6, docs/storage.md "Exactly once"). The same promises on DynamoDB: tests/integration/test_consolidation_fanout.py
and test_run_counts.py."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from agent_memory.consolidation.folding import GroupFailed
from agent_memory.domain.commands import DocumentWrite, GroupMessage
from agent_memory.domain.document import Author
from agent_memory.domain.scope import Scope
from tests.support.consolidation import PERSONAL, RUN_AT, Died, days_ago, merge
from tests.support.night import NightParts, night, team


@pytest.fixture
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retries' pauses (jitter): the test decides what happens between attempts, not time."""
    monkeypatch.setattr("time.sleep", lambda _s: None)


def planned(world: NightParts, *, run_id: str = "run-1", at: datetime = RUN_AT) -> list[GroupMessage]:
    """The planner's messages of one run (what the queue holds)."""
    before = len(world.sent())
    world.consolidate(at, run_id=run_id)
    return world.sent()[before:]


def last_run(world: NightParts) -> dict:
    return world.store.runs(1)[0]


def counts(run: dict) -> tuple[int, int, int, int, int]:
    return (
        run["groups_planned"],
        run["groups_done"],
        run["groups_failed"],
        run["notes_consolidated"],
        run["notes_remaining"],
    )


def test_the_workers_fold_each_message_and_the_last_one_finishes_the_run() -> None:
    world = night()
    scopes = [team(i) for i in range(3)]
    for scope in scopes:
        for n in range(2):
            world.write(scope, days_ago(9) + timedelta(minutes=n), f"fact {n}")
    world.write(scopes[0], days_ago(1), "too young")

    messages = planned(world)
    assert last_run(world)["status"] == "running"
    outcomes = [world.deliver(message, f"m-{i}") for i, message in enumerate(messages)]

    run = last_run(world)
    assert outcomes == ["folded"] * 3
    assert run["status"] == "finished" and run["finished_at"] is not None
    assert counts(run) == (3, 3, 0, 6, 0)
    for scope in scopes:
        assert set(world.folded_counts(scope).values()) == {1} and len(world.folded_counts(scope)) == 2
    assert world.marked(scopes[0]) == [True, True, False]
    assert len(world.fold_model.calls) == 3


def test_a_message_delivered_twice_is_a_no_op_the_second_time() -> None:
    world = night()
    for i in range(3):
        world.write(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}")
    (message,) = planned(world)

    assert [world.deliver(message, "m-1") for _ in range(2)] == ["folded", "duplicate"]
    assert world.deliver(message, "m-copy") == "duplicate"  # the planner's send, twice

    assert set(world.folded_counts(PERSONAL).values()) == {1}
    assert len(world.fold_model.calls) == 1
    assert counts(last_run(world)) == (1, 1, 0, 3, 0)


def test_a_worker_dying_after_the_save_and_before_the_marks_is_finished_by_the_redelivery() -> None:
    world = night()
    for i in range(5):
        world.write(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}")
    (message,) = planned(world)
    world.die_at("consolidation.mark_consolidated", after=2)

    with pytest.raises(Died):
        world.deliver(message, "m-1")
    assert world.marked(PERSONAL).count(True) == 2
    assert world.deliver(message, "m-1") == "folded"  # the same message, after its visibility timeout

    assert set(world.folded_counts(PERSONAL).values()) == {1} and len(world.folded_counts(PERSONAL)) == 5
    assert all(world.marked(PERSONAL))
    assert len(world.fold_model.calls) == 1
    run = last_run(world)
    assert (counts(run), run["status"]) == ((1, 1, 0, 5, 0), "finished")
    assert world.store.pending(PERSONAL) is None


def test_a_worker_dying_after_the_marks_and_before_the_settle_is_counted_by_the_redelivery() -> None:
    world = night()
    for i in range(4):
        world.write(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}")
    (message,) = planned(world)
    world.die_at("consolidation.settle_group")

    with pytest.raises(Died):
        world.deliver(message, "m-1")
    assert all(world.marked(PERSONAL)) and world.store.pending(PERSONAL) is not None
    assert world.deliver(message, "m-1") == "folded"

    assert counts(last_run(world)) == (1, 1, 0, 4, 0)  # the pending record kept its notes for this count
    assert world.store.pending(PERSONAL) is None
    assert list(world.markers.due_scopes("9999")) == []
    assert len(world.fold_model.calls) == 1


def test_a_worker_dying_before_its_save_is_redelivered_and_folds_once() -> None:
    world = night()
    for i in range(3):
        world.write(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}")
    (message,) = planned(world)
    world.die_at("documents.save")

    with pytest.raises(Died):
        world.deliver(message, "m-1")
    world.deliver(message, "m-1")

    assert set(world.folded_counts(PERSONAL).values()) == {1} and len(world.folded_counts(PERSONAL)) == 3
    assert last_run(world)["notes_consolidated"] == 3
    assert len(world.fold_model.calls) == 2


def test_a_failure_before_the_last_receive_gives_the_claim_back_for_the_redelivery() -> None:
    world = night()
    world.write(PERSONAL, days_ago(9), "x")
    (message,) = planned(world)
    world.fold_model.fail_with = "the chat model failed: ThrottlingException"

    with pytest.raises(GroupFailed, match="ThrottlingException"):
        world.deliver(message, "m-1", final=False)
    assert world.markers.read(PERSONAL).holder is None
    world.fold_model.fail_with = None
    assert world.deliver(message, "m-2") == "folded"  # another delivery may claim it at once

    assert counts(last_run(world)) == (1, 1, 0, 1, 0)


def test_a_poisoned_message_is_counted_failed_once_on_its_last_receive_and_its_notes_stay_unmarked() -> None:
    world = night()
    poison = team("poison")
    world.write(PERSONAL, days_ago(9), "fine")
    world.write(poison, days_ago(9), "poison")

    def explode(system: str, prompt: str) -> str | dict:
        if "poison" in prompt:
            raise RuntimeError("a bug in the worker")
        return merge(system, prompt)

    world.fold_model.reply = explode
    messages = planned(world)
    outcomes = []
    for message in messages:
        for receive in range(1, 4):
            try:
                outcomes.append(world.deliver(message, f"m-{message.scope}", final=receive == 3))
                break
            except RuntimeError:
                outcomes.append(f"raised on receive {receive}")

    assert outcomes == ["folded", "raised on receive 1", "raised on receive 2", "raised on receive 3"]
    assert world.marked(poison) == [False]
    run = last_run(world)
    assert (counts(run), run["status"]) == ((2, 1, 1, 1, 1), "finished")
    assert run["failures"] == [{"scope": "ws#w-poison", "reason": "RuntimeError"}]

    world.fold_model.reply = merge  # fixed: the scope is due again the next night
    for message in planned(world, run_id="next-night", at=RUN_AT + timedelta(days=1)):
        world.deliver(message, "m-next")
    assert world.marked(poison) == [True]


def test_a_group_held_by_another_runs_worker_is_counted_once_in_this_run() -> None:
    world = night()
    world.write(PERSONAL, days_ago(9), "a fact")
    (first,) = planned(world, run_id="run-a")
    (second,) = planned(world, run_id="run-b", at=RUN_AT + timedelta(minutes=5))
    world.markers.claim(PERSONAL, "m-a", first.run, now_epoch=world.now_epoch(), lease_s=330)

    assert [world.deliver(second, "m-b") for _ in range(2)] == ["elsewhere", "elsewhere"]

    run_b = world.store.read_run(second.run)
    assert (counts(run_b), run_b["status"]) == ((1, 1, 0, 0, 0), "finished")
    assert world.fold_model.calls == []


def test_two_runs_whose_workers_overlap_fold_each_note_once() -> None:
    world = night()
    for i in range(5):
        for n in range(4):
            world.write(team(i), days_ago(9) + timedelta(minutes=n), f"fact {n}")

    first = planned(world, run_id="run-a")
    second = planned(world, run_id="run-b", at=RUN_AT + timedelta(minutes=5))
    for message in [*first, *second]:
        world.deliver(message, f"m-{message.run_id}-{message.scope}")

    assert len(first) == len(second) == 5
    for i in range(5):
        assert set(world.folded_counts(team(i)).values()) == {1} and len(world.folded_counts(team(i))) == 4
    runs = world.store.runs(2)
    assert all(run["status"] == "finished" for run in runs)
    assert sum(run["notes_consolidated"] for run in runs) == 20


def test_a_failed_group_whose_count_lost_its_answer_is_counted_once() -> None:
    world = night()
    world.write(PERSONAL, days_ago(9), "a fact")
    (message,) = planned(world)
    world.fold_model.fail_with = "the chat model failed: ThrottlingException"
    world.world.faults.lose_answers("consolidation.fail_group")

    assert world.deliver(message, "m-1") == "failed"

    run = last_run(world)
    assert (counts(run), run["status"]) == ((1, 0, 1, 0, 1), "finished")
    assert run["failures"] == [{"scope": PERSONAL.key, "reason": "the chat model failed: ThrottlingException"}]


def test_a_settle_whose_answer_was_lost_counts_the_group_once() -> None:
    world = night()
    for n in range(3):
        world.write(PERSONAL, days_ago(9) + timedelta(minutes=n), f"fact {n}")
    (message,) = planned(world)
    world.world.faults.lose_answers("consolidation.settle_group")

    assert world.deliver(message, "m-1") == "folded"

    run = last_run(world)
    assert (counts(run), run["status"]) == ((1, 1, 0, 3, 0), "finished")


def test_a_fold_that_changes_nothing_whose_answers_were_lost_counts_its_notes_once() -> None:
    world = night()
    held = "\n".join(f"- fact {n}" for n in range(3))  # the document holds the notes already
    world.service.update_memory(DocumentWrite(PERSONAL, held, None, "tool", Author(user_id="u-1")))
    for n in range(3):
        world.write(PERSONAL, days_ago(9) + timedelta(minutes=n), f"fact {n}")
    world.fold_model.reply = lambda system, prompt: {"edits": []}
    (message,) = planned(world)
    faults = world.world.faults
    faults.lose_answers("markers.claim")
    faults.lose_answers("documents.hold_unchanged")
    faults.lose_answers("consolidation.mark_consolidated")
    faults.lose_answers("consolidation.settle_group")

    assert world.deliver(message, "m-1") == "folded"

    run = last_run(world)
    assert counts(run) == (1, 1, 0, 3, 0)
    assert run["folds"]["unchanged"] == 1
    assert all(world.marked(PERSONAL)) and world.store.pending(PERSONAL) is None
    assert world.stores.documents.current(PERSONAL).version == 1


def test_a_group_whose_storage_failed_after_its_save_is_counted_folded_when_storage_answers(no_pauses: None) -> None:
    """Its version saved, each of its attempts' marks refused by storage: once storage answers again the group is
    finished and counted folded with its notes, not failed with its notes marked and counted in no run."""
    world = night(queued=False)
    for n in range(3):
        world.write(PERSONAL, days_ago(9) + timedelta(minutes=n), f"fact {n}")
    world.world.faults.fail("consolidation.mark_consolidated", times=3)

    run = world.consolidate()

    assert (run["groups_done"], run["groups_failed"], run["notes_consolidated"]) == (1, 0, 3)
    assert all(world.marked(PERSONAL)) and world.store.pending(PERSONAL) is None
    assert world.stores.documents.current(PERSONAL).version == 1
    assert len(world.fold_model.calls) == 1


def test_a_group_whose_storage_kept_failing_after_its_save_is_finished_by_the_next_worker(no_pauses: None) -> None:
    world = night(queued=False)
    for n in range(3):
        world.write(PERSONAL, days_ago(9) + timedelta(minutes=n), f"fact {n}")
    world.world.faults.fail("consolidation.mark_consolidated", times=4)  # and the settle's own attempt after them

    first = world.consolidate()
    pending = world.store.pending(PERSONAL)
    second = world.consolidate(RUN_AT + timedelta(hours=1), run_id="run-2")

    assert (first["groups_done"], first["groups_failed"], first["notes_consolidated"]) == (0, 1, 0)
    assert pending is not None and len(pending.note_sks) == 3
    assert all(world.marked(PERSONAL)) and world.store.pending(PERSONAL) is None
    assert second["notes_remaining"] == 0
    assert set(world.folded_counts(PERSONAL).values()) == {1} and len(world.fold_model.calls) == 1


def test_a_group_that_cannot_be_claimed_is_counted_failed_by_the_planner_with_its_reason(no_pauses: None) -> None:
    world = night(queued=False)
    world.write(PERSONAL, days_ago(9), "x")
    world.world.faults.fail("markers.claim", times=3)

    run = world.consolidate()

    assert (run["groups_planned"], run["groups_done"], run["groups_failed"], run["status"]) == (1, 0, 1, "finished")
    assert world.store.runs(1)[0]["failures"] == [
        {"scope": PERSONAL.key, "reason": "storage_unavailable: the group could not be claimed"}
    ]
    assert world.fold_model.calls == []


def test_a_storage_fault_while_folding_is_tried_again_under_the_same_claim(no_pauses: None) -> None:
    world = night(queued=False)
    world.write(PERSONAL, days_ago(9), "x")
    world.world.faults.fail("consolidation.due_group", times=2)

    run = world.consolidate()

    assert (run["groups_done"], run["notes_consolidated"]) == (1, 1)
    assert world.world.faults.seen.count("markers.claim") == 1


def test_a_claim_left_by_a_dead_worker_is_taken_over_when_its_lease_expires() -> None:
    world = night()
    world.write(PERSONAL, days_ago(9), "x")
    (message,) = planned(world)
    world.markers.claim(PERSONAL, "dead", "another-run", now_epoch=world.now_epoch() - 331, lease_s=330)

    assert world.deliver(message, "m-1") == "folded"
    assert counts(last_run(world)) == (1, 1, 0, 1, 0)


def test_a_message_of_an_erased_scope_does_nothing() -> None:
    world = night()
    message = GroupMessage(run_id="r", run="run#x#r", scope=Scope("team", "gone").key, cutoff="2026-11-26", notes=1)

    assert world.deliver(message, "m-1") == "duplicate"
    assert world.fold_model.calls == []


# A night whose writes lose their answers (tests/integration/test_run_counts.py on DynamoDB).

WRITES = (
    "markers.claim",
    "documents.save",
    "documents.hold_unchanged",
    "consolidation.mark_consolidated",
    "consolidation.clear_pending",
    "consolidation.settle_group",
    "consolidation.fail_group",
    "consolidation.finish",
)
SCOPES = [team(i) for i in range(8)]
HELD = SCOPES[::2]  # their documents hold their notes already: the model changes nothing


def merge_or_keep(system: str, prompt: str) -> str | dict:
    """Nothing to change when the document shown holds every note's text, else ``merge``."""
    document = prompt.split("<document>\n")[1].split("\n</document>")[0]
    texts = [line.split(") ", 1)[1] for line in prompt.split("<notes>\n")[1].split("\n</notes>")[0].split("\n")]
    if all(text in document for text in texts):
        return {"edits": []} if "edit_document" in system else document
    return merge(system, prompt)


@pytest.mark.parametrize("seed", range(6))
def test_a_night_whose_storage_loses_answers_and_refuses_writes_counts_each_group_and_note_once(
    seed: int, no_pauses: None
) -> None:
    world = night(queued=False, max_groups=0)
    for scope in SCOPES:
        for n in range(3):
            world.write(scope, days_ago(9) + timedelta(minutes=n), f"fact {n} of {scope.key}")
    for scope in HELD:
        held = "\n".join(f"- fact {n} of {scope.key}" for n in range(3))
        world.service.update_memory(DocumentWrite(scope, held, None, "tool", Author(user_id="u-1")))
    world.fold_model.reply = merge_or_keep
    chance = random.Random(seed)
    lost = {call: chance.randint(0, 4) for call in WRITES}
    for call, times in lost.items():
        world.world.faults.lose_answers(call, times=times)
        world.world.faults.fail(call, times=chance.randint(0, 3))  # and storage refusing, before anything applies

    run = world.consolidate()

    unfinished = {pending.scope.key for pending in world.store.pending_marks()}
    marked = {scope.key: world.marked(scope).count(True) for scope in SCOPES}
    assert sum(lost.values()) >= 5
    assert run["status"] == "finished" and run["groups_planned"] == len(SCOPES)
    assert run["groups_done"] + run["groups_failed"] == run["groups_planned"]
    assert len(unfinished) <= run["groups_failed"]
    assert run["notes_consolidated"] == sum(count for key, count in marked.items() if key not in unfinished)
    for scope in SCOPES:  # every marked note is in a version's document; no note is folded twice
        assert set(world.folded_counts(scope).values()) <= {1}
        content = world.stores.documents.current(scope).content
        assert all(note.text in content for note in world.notes(scope) if note.consolidated)
    assert any(marked[scope.key] for scope in HELD)
    assert {world.stores.documents.current(scope).version for scope in HELD} == {1}
    listed = world.store.runs(1)[0]
    assert {key: listed[key] for key in run if key != "status"} == {k: v for k, v in run.items() if k != "status"}


def test_a_worker_whose_claim_was_taken_over_mid_fold_counts_nothing_and_no_note_is_folded_twice() -> None:
    """Its lease ran out while the model answered and another delivery took the scope: the late worker's save still
    holds (no note was deleted), but its settle finds the claim gone and counts nothing; the one that took over
    finishes its pending marks and counts the group, never asking the model for those notes again."""
    world = night()
    for n in range(3):
        world.write(PERSONAL, days_ago(9) + timedelta(minutes=n), f"fact {n}")
    (message,) = planned(world)

    def taken_over(system: str, prompt: str) -> str | dict:
        later = world.now_epoch() + 1_000  # past the late worker's lease
        world.markers.claim(PERSONAL, "m-2", message.run, now_epoch=later, lease_s=330)
        return merge(system, prompt)

    world.fold_model.reply = taken_over
    late = world.deliver(message, "m-1")
    halfway = last_run(world)
    world.fold_model.reply = merge
    taking_over = world.deliver(message, "m-2")

    assert (late, taking_over) == ("folded", "folded")
    assert halfway["groups_done"] == 0  # the late worker's settle was refused: the scope is no longer its own
    run = last_run(world)
    assert (run["groups_done"], run["status"]) == (1, "finished")
    assert set(world.folded_counts(PERSONAL).values()) == {1} and len(world.folded_counts(PERSONAL)) == 3
    assert all(world.marked(PERSONAL)) and world.store.pending(PERSONAL) is None
    assert len(world.fold_model.calls) == 1


def test_max_groups_0_gives_every_due_scope_its_group_the_same_night() -> None:
    world = night(max_groups=0)
    for i in range(60):
        world.write(team(i), days_ago(8) + timedelta(minutes=i), f"fact {i}")

    messages = planned(world)
    for message in messages:
        world.deliver(message, f"m-{message.scope}")

    run = last_run(world)
    assert len(messages) == 60
    assert (counts(run), run["status"]) == ((60, 60, 0, 60, 0), "finished")
