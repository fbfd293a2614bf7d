"""docs/api.md §4 ``ConsolidateFunction``: fold week-old notes into the document, capped, crash-safe."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.keys import RUN_PREFIX
from local.template import load_handler
from tests.support.consolidation import (
    PERSONAL,
    RUN_AT,
    Died,
    consolidate,
    days_ago,
    die_at_the_mark,
    die_at_the_save,
    folded_counts,
    merge,
    night_context,
    notes_of,
)
from tests.support.fakes import FakeChatModel
from tests.support.faults import crash_at, on_events, provide_clients, provide_real_clients
from tests.support.models import scripted_models
from tests.support.scopes import private, write_note


def test_a_note_exactly_7_days_old_waits_and_one_8_days_old_is_folded(aws, model):
    write_note(PERSONAL, days_ago(7), "seven days old")
    old = write_note(PERSONAL, days_ago(8), "eight days old")

    result = consolidate()

    assert result["groups_done"] == 1
    assert result["notes_consolidated"] == 1
    assert result["notes_remaining"] == 0
    document = DocumentStore(aws, "MemoryTable").current(PERSONAL)
    assert "eight days old" in document.content and "seven days old" not in document.content
    assert folded_counts(aws) == {old: 1}
    flags = {item["text"]["S"]: item["consolidated"]["BOOL"] for item in notes_of(aws)}
    assert flags == {"seven days old": False, "eight days old": True}


def test_each_note_is_rendered_with_its_date_and_id_and_the_document_is_in_the_prompt(call, aws, model):
    call("update_memory", {"context": private(), "arguments": {"content": "# Memory\n- likes tea"}})
    note = write_note(PERSONAL, datetime(2026, 11, 20, 9, 0, tzinfo=UTC), "moved to Lisbon")

    consolidate()

    system, prompt = model.calls[0]
    assert "calling edit_document with a list of edits" in system
    assert model.tools[0] is not None and model.tools[0].name == "edit_document"
    assert "# Memory\n- likes tea" in prompt
    assert f"- [2026-11-20] (id {note}) moved to Lisbon" in prompt


def test_the_result_is_saved_as_a_consolidation_version_by_the_run(call, aws, model):
    call("update_memory", {"context": private(), "arguments": {"content": "# Memory"}})
    write_note(PERSONAL, days_ago(10), "fact")

    result = consolidate(run_id="run-42")

    document, reason, by = DocumentStore(aws, "MemoryTable").version(PERSONAL, 2)
    assert reason == "consolidation"
    assert by.run_id == "run-42" == result["run_id"]
    assert document.content == "# Memory\n- [" + days_ago(10).date().isoformat() + "] fact"


def test_consolidated_notes_are_kept_unchanged_and_only_flagged(aws, model):
    write_note(PERSONAL, days_ago(9), "keep my words")
    before = notes_of(aws)[0]

    consolidate()

    after = notes_of(aws)[0]
    assert after["consolidated"] == {"BOOL": True}
    assert "uc_pk" not in after and "uc_sk" not in after
    unchanged = {k: v for k, v in before.items() if k not in ("consolidated", "uc_pk", "uc_sk")}
    assert {k: after[k] for k in unchanged} == unchanged


def test_55_groups_run_as_50_then_5(aws, model):
    for i in range(55):
        write_note(Scope("team", f"w-{i:02d}"), days_ago(8) + timedelta(minutes=i), f"fact {i}")

    first = consolidate()
    second = consolidate(RUN_AT + timedelta(days=1))

    assert (first["groups_done"], first["notes_consolidated"], first["notes_remaining"]) == (50, 50, 5)
    assert (second["groups_done"], second["notes_consolidated"], second["notes_remaining"]) == (5, 5, 0)
    # oldest first: the first run took w-00..w-49
    assert DocumentStore(aws, "MemoryTable").current(Scope("team", "w-54")).version == 1
    folded_first = [
        i
        for i in range(50)
        if "fact" in DocumentStore(aws, "MemoryTable").version(Scope("team", f"w-{i:02d}"), 1)[0].content
    ]
    assert len(folded_first) == 50


def test_230_notes_run_as_200_then_30(aws, model):
    for i in range(230):
        write_note(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}")

    first = consolidate()
    second = consolidate(RUN_AT + timedelta(days=1))

    assert (first["notes_consolidated"], first["notes_remaining"]) == (200, 30)
    assert (second["notes_consolidated"], second["notes_remaining"]) == (30, 0)
    counts = folded_counts(aws)
    assert len(counts) == 230 and set(counts.values()) == {1}
    oldest_200 = {f"{days_ago(9).date().isoformat()}.{i + 1}" for i in range(200)}
    assert oldest_200 <= {note_id for note_id, _ in counts.items()}


def test_the_20000_character_cap_and_the_forced_compression_after_it(aws, model, monkeypatch):
    for i in range(20):
        write_note(PERSONAL, days_ago(9) + timedelta(seconds=i), f"{i:02d} " + "x" * 1497)  # 1,500 characters
    compressor = FakeChatModel(reply=lambda system, prompt: "# compressed\n" + "y" * 17_000)
    scripted_models().compression = compressor

    first = consolidate()
    second = consolidate(RUN_AT + timedelta(days=1))  # 19,500 + 7 x 1,500 crosses the hard limit

    assert (first["notes_consolidated"], first["notes_remaining"]) == (13, 7)  # 13 x 1,500 = 19,500
    assert (second["notes_consolidated"], second["notes_remaining"]) == (7, 0)
    assert len(compressor.calls) == 1
    document, reason, _ = DocumentStore(aws, "MemoryTable").version(PERSONAL, 2)
    assert (document.content[:12], reason) == ("# compressed", "consolidation")


def test_a_failed_group_leaves_its_notes_unmarked_and_is_retried_next_run(aws, model):
    team = Scope("team", "w-bad")
    write_note(PERSONAL, days_ago(9), "fine")
    write_note(team, days_ago(9), "bad one")
    write_note(team, days_ago(8.5), "bad two")
    model.reply = lambda system, prompt: "" if "bad" in prompt else merge(system, prompt)

    first = consolidate()

    assert (first["groups_done"], first["groups_failed"], first["notes_remaining"]) == (1, 1, 2)
    assert all(item["consolidated"] == {"BOOL": False} for item in notes_of(aws, team))
    assert DocumentStore(aws, "MemoryTable").current(team).version == 0
    runs = bootstrap.services().consolidation_store.runs(5)
    assert runs[0]["failures"] == [{"scope": "ws#w-bad", "reason": "the chat model answered with an empty document"}]
    assert runs[0]["finished_at"] is not None and runs[0]["started_at"] <= runs[0]["finished_at"]

    model.reply = merge
    second = consolidate(RUN_AT + timedelta(days=1))

    assert (second["groups_done"], second["notes_consolidated"], second["notes_remaining"]) == (1, 2, 0)
    assert set(folded_counts(aws, team).values()) == {1}


def test_a_model_error_fails_the_group_only(aws, model):
    model.fail_with = "the chat model failed: ThrottlingException"
    write_note(PERSONAL, days_ago(9), "x")

    result = consolidate()

    assert (result["groups_failed"], result["notes_remaining"]) == (1, 1)


def test_without_a_model_the_notes_are_folded_as_dated_bullets(aws, monkeypatch):
    scripted_models().fold = None
    note = write_note(PERSONAL, days_ago(9), "x")

    result = consolidate()

    assert (result["groups_done"], result["notes_consolidated"], result["notes_remaining"]) == (1, 1, 0)
    day = days_ago(9).date().isoformat()
    assert DocumentStore(aws, "MemoryTable").current(PERSONAL).content == f"## Notes\n- [{day}] x"
    assert folded_counts(aws) == {note: 1}


@pytest.mark.parametrize(
    ("where", "after_calls"),
    [
        ("after the model call", 0),
        ("after the document write", 0),
        ("midway through marking", 3),
    ],
)
def test_dying_at_any_step_then_rerunning_folds_every_note_exactly_once(aws, model, where, after_calls):
    ids = [write_note(PERSONAL, days_ago(9) + timedelta(seconds=i), f"n{i}") for i in range(6)]
    if where == "after the model call":
        die_at_the_save()
    else:
        die_at_the_mark(after_marks=after_calls)
    with pytest.raises(Died):
        consolidate()
    provide_real_clients()

    rerun = consolidate(RUN_AT + timedelta(hours=1))

    assert rerun["notes_remaining"] == 0
    assert folded_counts(aws) == dict.fromkeys(ids, 1)
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws))
    assert bootstrap.services().consolidation_store.pending_marks() == []


def test_an_update_memory_during_a_run_is_not_lost(call, aws, model):
    call("update_memory", {"context": private(), "arguments": {"content": "# Doc\n- base"}})
    write_note(PERSONAL, days_ago(9), "folded fact")
    edits = []

    def edit_then_merge(system, prompt):
        if not edits:  # a tool call lands while the model is thinking
            edits.append(
                call(
                    "update_memory",
                    {"context": private(), "arguments": {"content": "# Doc\n- base\n- edited meanwhile"}},
                )
            )
        return merge(system, prompt)

    model.reply = edit_then_merge

    result = consolidate()

    assert edits[0].status == 200 and edits[0].body["document"]["version"] == 2
    assert result["groups_done"] == 1
    store = DocumentStore(aws, "MemoryTable")
    final = store.current(PERSONAL)
    assert final.version == 3
    assert "- edited meanwhile" in final.content and "folded fact" in final.content
    assert store.version(PERSONAL, 2)[1] == "tool"
    assert len(model.calls) == 2  # folded again on the re-read document


def test_a_document_changing_on_every_attempt_fails_the_group(call, aws, model):
    write_note(PERSONAL, days_ago(9), "fact")

    def always_edit(system, prompt):
        call("update_memory", {"context": private(), "arguments": {"content": f"edit {len(model.calls)}"}})
        return merge(system, prompt)

    model.reply = always_edit

    result = consolidate()

    assert (result["groups_failed"], result["notes_remaining"]) == (1, 1)
    assert notes_of(aws)[0]["consolidated"] == {"BOOL": False}


def test_no_new_group_starts_when_time_runs_short(aws, model):
    write_note(PERSONAL, days_ago(9), "x")

    result = consolidate(context=night_context(remaining_ms=60_000))  # less than the 120 s reserve

    assert (result["groups_done"], result["notes_remaining"]) == (0, 1)
    assert model.calls == []


def test_a_second_run_while_one_holds_the_lease_does_nothing(aws, model):
    write_note(PERSONAL, days_ago(9), "x")
    bootstrap.services().consolidation_store.acquire_lease(
        "other-run", now_epoch=int(datetime.now(UTC).timestamp()), lease_s=600
    )

    result = consolidate()

    assert (result["groups_done"], result["notes_consolidated"]) == (0, 0)
    assert model.calls == []


def test_a_run_never_scans(aws, model):
    for i in range(3):
        write_note(Scope("team", f"w-{i}"), days_ago(9), "x")
    operations = []
    provide_clients(on_events("before-call.dynamodb.*", lambda model, **_: operations.append(model.name)))

    consolidate()

    assert operations and "Scan" not in operations
    assert "Query" in operations


def test_an_event_without_time_is_refused(aws, model):
    with pytest.raises(ValueError, match="time"):
        load_handler("ConsolidateFunction")({"id": "x"}, night_context())


def test_a_run_whose_record_cannot_be_saved_still_releases_its_lease(aws, model):
    write_note(PERSONAL, days_ago(9), "x")
    # the run's final record (its second PutItem: the first records it started) fails
    failed = crash_at(
        "put_item",
        lambda request: request["Item"]["sk"]["S"].startswith(RUN_PREFIX),
        nth=2,
        error=RuntimeError("storage fault while recording"),
    )

    first = consolidate()
    provide_real_clients()
    assert failed.crashed == 1
    scripted_models().fold = model
    write_note(PERSONAL, days_ago(9), "y")
    second = consolidate(RUN_AT + timedelta(hours=1), run_id="next-run")

    assert first["notes_consolidated"] == 1
    assert second["notes_consolidated"] == 1  # the lease was released: the next run was not locked out
