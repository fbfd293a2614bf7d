"""A night folded in the planner's own process (``consolidation.planner`` having ``consolidation.worker`` fold each
group) on the in-memory stores: week-old notes folded into the document, capped, crash-safe, never twice, never
saving a note deleted meanwhile (docs/api.md §4, docs/consolidation.md). The same promises on DynamoDB:
tests/integration/test_consolidation.py and test_erase_mark.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory.consolidation.worker import FOLD_ATTEMPTS
from agent_memory.domain.commands import DocumentWrite
from agent_memory.domain.document import Author
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import parse_note_sk
from tests.support.consolidation import PERSONAL, RUN_AT, Died, days_ago, merge
from tests.support.fakes import FakeChatModel, fake_tokens
from tests.support.night import NightParts, night, team


@pytest.fixture
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retries' pauses (jitter): the test decides what happens between attempts, not time."""
    monkeypatch.setattr("time.sleep", lambda _s: None)


def folded_night(**caps: Any) -> NightParts:
    return night(queued=False, **caps)


def edit(world: NightParts, content: str, scope: Scope = PERSONAL) -> int:
    """A hand edit through the tools' path (``update_memory`` without a version); the version it saved."""
    write = DocumentWrite(scope, content, None, "tool", Author(user_id="u-1"))
    return world.service.update_memory(write).document.version


def note_ids(world: NightParts, scope: Scope = PERSONAL) -> list[str]:
    return [note.id for note in world.notes(scope)]


def test_a_note_exactly_7_days_old_waits_and_one_8_days_old_is_folded() -> None:
    world = folded_night()
    world.write(PERSONAL, days_ago(7), "seven days old")
    world.write(PERSONAL, days_ago(8), "eight days old")

    result = world.consolidate()

    assert (result["groups_done"], result["notes_consolidated"], result["notes_remaining"]) == (1, 1, 0)
    content = world.stores.documents.current(PERSONAL).content
    assert "eight days old" in content and "seven days old" not in content
    old = next(note.id for note in world.notes(PERSONAL) if note.text == "eight days old")
    assert world.folded_counts(PERSONAL) == {old: 1}
    assert {note.text: note.consolidated for note in world.notes(PERSONAL)} == {
        "seven days old": False,
        "eight days old": True,
    }


def test_each_note_is_rendered_with_its_date_and_id_and_the_document_is_in_the_prompt() -> None:
    world = folded_night()
    edit(world, "# Memory\n- likes tea")
    sk = world.write(PERSONAL, datetime(2026, 11, 20, 9, 0, tzinfo=UTC), "moved to Lisbon")

    world.consolidate()

    system, prompt = world.fold_model.calls[0]
    day, position = parse_note_sk(sk)
    assert "calling edit_document with a list of edits" in system
    assert world.fold_model.tools[0] is not None and world.fold_model.tools[0].name == "edit_document"
    assert "# Memory\n- likes tea" in prompt
    assert f"- [2026-11-20] (id {day}.{position}) moved to Lisbon" in prompt


def test_the_result_is_saved_as_a_consolidation_version_by_the_run() -> None:
    world = folded_night()
    edit(world, "# Memory")
    world.write(PERSONAL, days_ago(10), "fact")

    result = world.consolidate(run_id="run-42")

    document, reason, by = world.stores.documents.version(PERSONAL, 2)
    assert reason == "consolidation"
    assert by.run_id == "run-42" == result["run_id"]
    assert document.content == "# Memory\n- [" + days_ago(10).date().isoformat() + "] fact"


def test_consolidated_notes_are_kept_unchanged_and_only_flagged() -> None:
    world = folded_night()
    world.write(PERSONAL, days_ago(9), "keep my words")
    (before,) = world.notes(PERSONAL)

    world.consolidate()

    (after,) = world.notes(PERSONAL)
    assert after.consolidated and not before.consolidated
    assert (after.id, after.text, after.created_at, after.origin) == (
        before.id,
        before.text,
        before.created_at,
        before.origin,
    )


def test_55_groups_run_as_50_then_5_oldest_first() -> None:
    world = folded_night()
    for i in range(55):
        world.write(team(i), days_ago(8) + timedelta(minutes=i), f"fact {i}")

    first = world.consolidate()
    second = world.consolidate(RUN_AT + timedelta(days=1), run_id="run-2")

    assert (first["groups_done"], first["notes_consolidated"], first["notes_remaining"]) == (50, 50, 5)
    assert (second["groups_done"], second["notes_consolidated"], second["notes_remaining"]) == (5, 5, 0)
    assert [world.stores.documents.current(team(i)).version for i in (0, 49, 50, 54)] == [1, 1, 1, 1]
    assert sum("fact" in world.stores.documents.version(team(i), 1)[0].content for i in range(50)) == 50


def test_230_notes_run_as_200_then_30() -> None:
    world = folded_night()
    for i in range(230):
        world.write(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}")

    first = world.consolidate()
    second = world.consolidate(RUN_AT + timedelta(days=1), run_id="run-2")

    assert (first["notes_consolidated"], first["notes_remaining"]) == (200, 30)
    assert (second["notes_consolidated"], second["notes_remaining"]) == (30, 0)
    counts = world.folded_counts(PERSONAL)
    assert len(counts) == 230 and set(counts.values()) == {1}
    first_version = world.world.item((PERSONAL.key, "doc#v#0000000001"))
    assert first_version is not None and first_version["folded_note_ids"] == note_ids(world)[:200]


def test_the_20000_character_cap_and_the_forced_compression_after_it() -> None:
    world = folded_night()
    for i in range(20):
        world.write(PERSONAL, days_ago(9) + timedelta(seconds=i), f"{i:02d} " + "x" * 1497)  # 1,500 characters
    compressor = FakeChatModel(reply=lambda system, prompt: "# compressed\n" + "y" * 17_000)
    world.models.compression = compressor

    first = world.consolidate()
    second = world.consolidate(RUN_AT + timedelta(days=1), run_id="run-2")  # 19,500 + 7 x 1,500 is over the limit

    assert (first["notes_consolidated"], first["notes_remaining"]) == (13, 7)  # 13 x 1,500 = 19,500
    assert (second["notes_consolidated"], second["notes_remaining"]) == (7, 0)
    assert len(compressor.calls) == 1
    document, reason, _ = world.stores.documents.version(PERSONAL, 2)
    assert (document.content[:12], reason) == ("# compressed", "consolidation")


def test_notes_of_equal_instants_are_taken_by_position_as_a_number() -> None:
    world = folded_night(max_notes=10)
    frozen = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)
    for i in range(12):
        world.write(PERSONAL, frozen, f"note {i + 1}")

    result = world.consolidate()

    assert set(world.folded_counts(PERSONAL)) == {f"2026-11-24.{i}" for i in range(1, 11)}
    assert "(id 2026-11-24.1) note 1\n- [2026-11-24] (id 2026-11-24.2) note 2\n" in world.fold_model.calls[0][1]
    assert result["notes_remaining"] == 2


def test_a_failed_group_leaves_its_notes_unmarked_is_listed_and_is_folded_next_run() -> None:
    world = folded_night()
    bad = team("bad")
    world.write(PERSONAL, days_ago(9), "fine")
    world.write(bad, days_ago(9), "bad one")
    world.write(bad, days_ago(8.5), "bad two")
    world.fold_model.reply = lambda system, prompt: "" if "bad" in prompt else merge(system, prompt)

    first = world.consolidate()

    assert (first["groups_done"], first["groups_failed"], first["notes_remaining"]) == (1, 1, 2)
    assert world.marked(bad) == [False, False]
    assert world.stores.documents.current(bad).version == 0
    (run,) = world.store.runs(5)
    assert run["failures"] == [{"scope": "ws#w-bad", "reason": "the chat model answered with an empty document"}]
    assert run["finished_at"] is not None and run["started_at"] <= run["finished_at"]

    world.fold_model.reply = merge
    second = world.consolidate(RUN_AT + timedelta(days=1), run_id="run-2")

    assert (second["groups_done"], second["notes_consolidated"], second["notes_remaining"]) == (1, 2, 0)
    assert set(world.folded_counts(bad).values()) == {1}


def test_a_model_error_fails_the_group_only() -> None:
    world = folded_night()
    world.fold_model.fail_with = "the chat model failed: ThrottlingException"
    world.write(PERSONAL, days_ago(9), "x")

    result = world.consolidate()

    assert (result["groups_failed"], result["notes_remaining"], result["status"]) == (1, 1, "finished")
    assert world.store.runs(1)[0]["failures"] == [
        {"scope": PERSONAL.key, "reason": "the chat model failed: ThrottlingException"}
    ]


def test_without_a_model_the_notes_are_folded_as_dated_bullets() -> None:
    world = folded_night()
    world.models.fold = None
    world.write(PERSONAL, days_ago(9), "x")

    result = world.consolidate()

    assert (result["groups_done"], result["notes_consolidated"], result["notes_remaining"]) == (1, 1, 0)
    day = days_ago(9).date().isoformat()
    assert world.stores.documents.current(PERSONAL).content == f"## Notes\n- [{day}] x"
    assert world.folded_counts(PERSONAL) == {note_ids(world)[0]: 1}
    assert world.store.runs(1)[0]["folds"]["model_free"] == 1


@pytest.mark.parametrize(
    ("where", "call", "after"),
    [
        ("after the model call, before the save", "documents.save", 0),
        ("after the save, before the marks", "consolidation.mark_consolidated", 0),
        ("midway through marking", "consolidation.mark_consolidated", 3),
        ("after the marks, before the settle", "consolidation.settle_group", 0),
    ],
)
def test_dying_at_any_step_then_rerunning_folds_every_note_exactly_once(where: str, call: str, after: int) -> None:
    world = folded_night()
    for i in range(6):
        world.write(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}")
    world.die_at(call, after=after)

    with pytest.raises(Died):
        world.consolidate()
    rerun = world.consolidate(RUN_AT + timedelta(hours=1), run_id="run-2")

    assert rerun["notes_remaining"] == 0
    assert world.folded_counts(PERSONAL) == dict.fromkeys(note_ids(world), 1)
    assert all(world.marked(PERSONAL))
    assert world.store.pending_marks() == []
    saved = "before the save" not in where
    assert len(world.fold_model.calls) == (1 if saved else 2)  # a saved fold is finished, never asked again
    assert world.stores.documents.current(PERSONAL).version == 1


def test_the_lease_is_released_when_the_planner_dies_with_a_group() -> None:
    world = folded_night()
    world.write(PERSONAL, days_ago(9), "x")
    world.die_at("documents.save")

    with pytest.raises(Died):
        world.consolidate()

    assert world.store.acquire_lease("next", now_epoch=world.now_epoch(), lease_s=600)


def test_an_update_memory_during_a_fold_is_not_lost_and_the_fold_runs_again_on_it(no_pauses: None) -> None:
    world = folded_night()
    edit(world, "# Doc\n- base")
    world.write(PERSONAL, days_ago(9), "folded fact")
    edits: list[int] = []

    def edit_then_merge(system: str, prompt: str) -> str | dict[str, Any]:
        if not edits:  # a tool call lands while the model is thinking
            edits.append(edit(world, "# Doc\n- base\n- edited meanwhile"))
        return merge(system, prompt)

    world.fold_model.reply = edit_then_merge

    result = world.consolidate()

    assert edits == [2] and result["groups_done"] == 1
    final = world.stores.documents.current(PERSONAL)
    assert final.version == 3
    assert "- edited meanwhile" in final.content and "folded fact" in final.content
    assert world.stores.documents.version(PERSONAL, 2)[1] == "tool"
    assert len(world.fold_model.calls) == 2  # folded again on the re-read document


def test_a_document_changing_on_every_attempt_fails_the_group_after_its_attempts(no_pauses: None) -> None:
    world = folded_night()
    world.write(PERSONAL, days_ago(9), "fact")

    def always_edit(system: str, prompt: str) -> str | dict[str, Any]:
        edit(world, f"edit {len(world.fold_model.calls)}")
        return merge(system, prompt)

    world.fold_model.reply = always_edit

    result = world.consolidate()

    assert (result["groups_failed"], result["notes_remaining"]) == (1, 1)
    assert len(world.fold_model.calls) == FOLD_ATTEMPTS
    assert world.marked(PERSONAL) == [False]
    assert (
        world.store.runs(1)[0]["failures"][0]["reason"] == f"the document changed during all {FOLD_ATTEMPTS} attempts"
    )


def test_a_conflict_on_the_last_attempt_but_one_still_folds(no_pauses: None) -> None:
    world = folded_night()
    world.write(PERSONAL, days_ago(9), "fact")

    def edit_until_the_last(system: str, prompt: str) -> str | dict[str, Any]:
        if len(world.fold_model.calls) < FOLD_ATTEMPTS:
            edit(world, f"edit {len(world.fold_model.calls)}")
        return merge(system, prompt)

    world.fold_model.reply = edit_until_the_last

    result = world.consolidate()

    assert (result["groups_done"], result["notes_consolidated"]) == (1, 1)
    assert len(world.fold_model.calls) == FOLD_ATTEMPTS
    assert world.stores.documents.current(PERSONAL).version == FOLD_ATTEMPTS  # five edits, then the fold


def test_no_new_group_starts_when_time_runs_short() -> None:
    world = folded_night()
    world.write(PERSONAL, days_ago(9), "x")

    result = world.consolidate(remaining_ms=60_000)  # less than the 120 s reserve

    assert (result["groups_done"], result["notes_remaining"]) == (0, 1)
    assert world.fold_model.calls == []


def test_a_second_run_while_one_holds_the_lease_asks_no_model() -> None:
    world = folded_night()
    world.write(PERSONAL, days_ago(9), "x")
    world.store.acquire_lease("other-run", now_epoch=world.now_epoch(), lease_s=600)

    result = world.consolidate()

    assert (result["groups_done"], result["notes_consolidated"]) == (0, 0)
    assert world.fold_model.calls == []


def test_a_run_folded_here_is_finished_with_the_planners_counts() -> None:
    world = folded_night()
    for i in range(3):
        world.write(team(i), days_ago(9), "fact")

    result = world.consolidate(run_id="r")

    listed = world.store.runs(1)[0]
    assert (result["status"], result["groups_planned"], result["groups_done"]) == ("finished", 3, 3)
    assert {key: listed[key] for key in result if key != "status"} == {k: v for k, v in result.items() if k != "status"}


def test_the_runs_tokens_are_what_its_model_calls_reported() -> None:
    world = folded_night()
    for i in range(2):
        world.write(team(i), days_ago(9), f"fact {i}")

    world.consolidate()

    calls = world.fold_model.calls
    record = world.store.runs(1)[0]
    assert len(calls) == 2
    assert record["tokens"]["input"] == sum(fake_tokens(system + prompt) for system, prompt in calls)
    assert record["tokens"]["output"] > 0
    assert record["folds"] == {"edits": 2, "rewrite": 0, "model_free": 0, "unchanged": 0}


def test_a_failed_groups_tokens_are_counted_too() -> None:
    world = folded_night()
    world.write(PERSONAL, days_ago(9), "x")
    world.fold_model.reply = lambda system, prompt: ""  # an empty document: the group fails after its calls

    result = world.consolidate()

    record = world.store.runs(1)[0]
    assert result["groups_failed"] == 1
    assert record["tokens"]["input"] == sum(fake_tokens(system + prompt) for system, prompt in world.fold_model.calls)


def test_a_fold_that_changes_nothing_saves_no_version_and_marks_its_notes() -> None:
    world = folded_night()
    edit(world, "# Doc\n- already known")
    world.write(PERSONAL, days_ago(9), "already known")
    world.fold_model.reply = lambda system, prompt: {"edits": []}

    result = world.consolidate()

    assert (result["groups_done"], result["notes_consolidated"]) == (1, 1)
    assert world.stores.documents.current(PERSONAL).version == 1
    assert world.marked(PERSONAL) == [True] and world.folded_counts(PERSONAL) == {}
    assert world.store.runs(1)[0]["folds"]["unchanged"] == 1
    assert world.store.pending(PERSONAL) is None


def test_a_fold_that_changes_nothing_killed_between_its_marks_leaves_its_pending_record() -> None:
    world = folded_night()
    for n in range(3):
        world.write(PERSONAL, days_ago(9) + timedelta(minutes=n), f"fact {n}")
    world.fold_model.reply = lambda system, prompt: {"edits": []}
    world.die_at("consolidation.mark_consolidated", after=1)

    with pytest.raises(Died):
        world.consolidate()

    pending = world.store.pending(PERSONAL)
    assert pending is not None and len(pending.note_sks) == 3
    assert world.marked(PERSONAL) == [True, False, False]
    rerun = world.consolidate(run_id="run-2")
    assert all(world.marked(PERSONAL)) and world.store.pending(PERSONAL) is None
    assert rerun["notes_consolidated"] == 0  # the dead worker's notes count in no run: its claim is not the rerun's
    assert world.stores.documents.current(PERSONAL).version == 0 and len(world.fold_model.calls) == 1


# The erase mark (tests/integration/test_erase_mark.py on DynamoDB).


def test_a_note_deleted_while_its_group_is_folded_never_reaches_a_version_and_the_rest_fold_tonight() -> None:
    world = folded_night()
    sks = [world.write(PERSONAL, RUN_AT - timedelta(days=9, minutes=n), f"fact {n}") for n in range(3)]
    prompts: list[str] = []

    def delete_while_folding(system: str, prompt: str) -> str | dict[str, Any]:
        prompts.append(prompt)
        if len(prompts) == 1:  # the dashboard's delete lands while the model answers
            world.delete(PERSONAL, sks[1])
        return merge(system, prompt)

    world.fold_model.reply = delete_while_folding
    first = world.consolidate()
    second = world.consolidate(RUN_AT + timedelta(days=1), run_id="run-2")

    assert (first["groups_failed"], first["groups_done"], first["notes_consolidated"]) == (0, 1, 2)
    assert second["notes_consolidated"] == 0
    assert len(prompts) == 2 and "fact 1" in prompts[0] and "fact 1" not in prompts[1]
    assert world.folded_counts(PERSONAL) == dict.fromkeys(note_ids(world), 1) and len(note_ids(world)) == 2
    assert all(world.marked(PERSONAL))
    assert "fact 1" not in world.stores.documents.current(PERSONAL).content


def test_a_group_whose_notes_keep_being_deleted_fails_for_the_night_after_its_attempts() -> None:
    world = folded_night()
    sks = [world.write(PERSONAL, RUN_AT - timedelta(days=9, minutes=n), f"fact {n}") for n in range(FOLD_ATTEMPTS + 2)]
    prompts: list[str] = []

    def delete_every_time(system: str, prompt: str) -> str | dict[str, Any]:
        world.delete(PERSONAL, sks[len(prompts)])
        prompts.append(prompt)
        return merge(system, prompt)

    world.fold_model.reply = delete_every_time
    run = world.consolidate()

    assert (run["groups_failed"], run["notes_consolidated"]) == (1, 0)
    assert len(prompts) == FOLD_ATTEMPTS  # the fold's attempts, each refused by the delete made during it
    assert world.folded_counts(PERSONAL) == {}
    assert world.marked(PERSONAL) == [False, False]


def test_a_fold_during_an_erase_is_refused_and_not_tried_again_while_it_runs() -> None:
    world = folded_night()
    for n in range(2):
        world.write(PERSONAL, RUN_AT - timedelta(days=9, minutes=n), f"fact {n}")
    prompts: list[str] = []

    def erase_begins(system: str, prompt: str) -> str | dict[str, Any]:
        if not prompts:
            world.markers.erasing(PERSONAL, running=True)
        prompts.append(prompt)
        return merge(system, prompt)

    world.fold_model.reply = erase_begins
    first = world.consolidate()
    world.markers.erasing(PERSONAL, running=False)
    second = world.consolidate(RUN_AT + timedelta(days=1), run_id="run-2")

    assert (first["groups_failed"], first["notes_consolidated"]) == (1, 0)
    assert len(prompts) == 2  # one fold refused in the first run, one saved in the second
    assert second["notes_consolidated"] == 2
    assert world.folded_counts(PERSONAL) == dict.fromkeys(note_ids(world), 1)


def test_a_fold_that_changes_nothing_whose_note_was_deleted_meanwhile_marks_the_rest_only() -> None:
    world = folded_night()
    sks = [world.write(PERSONAL, RUN_AT - timedelta(days=9, minutes=n), f"fact {n}") for n in range(3)]

    def delete_then_keep(system: str, prompt: str) -> str | dict[str, Any]:
        if len(world.notes(PERSONAL)) == 3:  # the dashboard's delete lands while the model answers
            world.delete(PERSONAL, sks[1])
        return {"edits": []}

    world.fold_model.reply = delete_then_keep
    first = world.consolidate()
    second = world.consolidate(RUN_AT + timedelta(days=1), run_id="run-2")

    assert (first["groups_failed"], first["notes_consolidated"]) == (0, 2)
    assert second["notes_consolidated"] == 0
    assert world.marked(PERSONAL) == [True, True]
    assert world.folded_counts(PERSONAL) == {}  # nothing to change: no version


def test_a_scope_whose_notes_were_all_deleted_before_its_fold_folds_nothing() -> None:
    world = folded_night()
    sk = world.write(PERSONAL, days_ago(9), "gone")
    world.delete(PERSONAL, sk)

    result = world.consolidate()

    assert (result["groups_done"], result["notes_consolidated"], result["notes_remaining"]) == (1, 0, 0)
    assert world.fold_model.calls == []
    assert list(world.markers.due_scopes("9999")) == []
