"""The erase mark (docs/storage.md "Consolidation"): a fold that read a note deleted meanwhile saves nothing (the
rest of its group is read again and folded in the same run), and its save carries one check of the scope's erase
mark whatever the group's size (it used to carry one per note)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agent_memory import bootstrap
from agent_memory.consolidation.worker import FOLD_ATTEMPTS
from tests.support.consolidation import PERSONAL, RUN_AT, consolidate, folded_counts, merge, notes_of
from tests.support.fakes import FakeChatModel
from tests.support.faults import on_events, provide_clients
from tests.support.models import scripted_models
from tests.support.scopes import write_note


def _save_sizes() -> list[int]:
    """The number of items of every TransactWriteItems the consolidation sends."""
    sizes: list[int] = []

    def _count(params: dict[str, Any], **_: Any) -> None:
        sizes.append(len(params["TransactItems"]))

    provide_clients(on_events("provide-client-params.dynamodb.TransactWriteItems", _count))
    return sizes


def test_a_fold_of_200_notes_saves_with_a_constant_number_of_items(aws, monkeypatch):
    for i in range(200):
        write_note(PERSONAL, RUN_AT - timedelta(days=9, seconds=200 - i), f"fact {i}")
    scripted_models().fold = FakeChatModel(reply=merge)
    sizes = _save_sizes()

    run = consolidate()

    assert run["notes_consolidated"] == 200
    assert max(sizes) == 5  # version, head, pending record, characters counter, the erase mark: not one per note


def test_a_note_deleted_while_its_group_is_folded_never_reaches_a_version_and_the_rest_fold_tonight(aws, monkeypatch):
    """The delete refuses the save; the rest of the group is read again under the erase mark the delete left and
    folded in the same run (one more model call), without the deleted note."""
    created = [RUN_AT - timedelta(days=9, minutes=n) for n in range(3)]
    ids = [write_note(PERSONAL, at, f"fact {n}") for n, at in enumerate(created)]
    management = bootstrap.services().management
    prompts: list[str] = []

    def delete_while_folding(system: str, prompt: str) -> Any:
        prompts.append(prompt)
        if len(prompts) == 1:  # the dashboard's delete lands while the model answers
            management.delete_note(PERSONAL, ids[1])
        return merge(system, prompt)

    scripted_models().fold = FakeChatModel(reply=delete_while_folding)
    first = consolidate()
    second = consolidate(RUN_AT + timedelta(days=1))

    assert (first["groups_failed"], first["groups_done"], first["notes_consolidated"]) == (0, 1, 2)
    assert second["notes_consolidated"] == 0
    assert len(prompts) == 2 and "fact 1" in prompts[0] and "fact 1" not in prompts[1]
    assert folded_counts(aws) == {ids[0]: 1, ids[2]: 1}
    assert len(notes_of(aws)) == 2 and all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws))
    assert "fact 1" not in bootstrap.services().worker.documents.current(PERSONAL, consistent=True).content


def test_a_group_whose_notes_keep_being_deleted_fails_for_the_night_after_its_attempts(aws, monkeypatch):
    ids = [write_note(PERSONAL, RUN_AT - timedelta(days=9, minutes=n), f"fact {n}") for n in range(FOLD_ATTEMPTS + 2)]
    management = bootstrap.services().management
    prompts: list[str] = []

    def delete_every_time(system: str, prompt: str) -> Any:
        management.delete_note(PERSONAL, ids[len(prompts)])
        prompts.append(prompt)
        return merge(system, prompt)

    scripted_models().fold = FakeChatModel(reply=delete_every_time)
    run = consolidate()

    assert (run["groups_failed"], run["notes_consolidated"]) == (1, 0)
    assert len(prompts) == FOLD_ATTEMPTS  # the fold's attempts, each refused by the delete made during it
    assert folded_counts(aws) == {}
    assert len(notes_of(aws)) == 2 and not any(item["consolidated"] == {"BOOL": True} for item in notes_of(aws))


def test_a_fold_during_an_erase_is_refused_and_not_tried_again_while_it_runs(aws, monkeypatch):
    """An erase that is running (or stopped midway) keeps refusing every fold's save: the group fails for the
    night at the first refusal, and folds once the erase has ended."""
    models = scripted_models()
    ids = [write_note(PERSONAL, RUN_AT - timedelta(days=9, minutes=n), f"fact {n}") for n in range(2)]
    markers = bootstrap.services().due_markers
    prompts: list[str] = []

    def erase_begins(system: str, prompt: str) -> Any:
        if not prompts:
            markers.erasing(PERSONAL, running=True)
        prompts.append(prompt)
        return merge(system, prompt)

    models.fold = FakeChatModel(reply=erase_begins)
    first = consolidate()
    markers.erasing(PERSONAL, running=False)
    second = consolidate(RUN_AT + timedelta(days=1))

    assert (first["groups_failed"], first["notes_consolidated"]) == (1, 0)
    assert len(prompts) == 2  # one fold refused in the first run, one saved in the second
    assert second["notes_consolidated"] == 2
    assert folded_counts(aws) == {ids[0]: 1, ids[1]: 1}


def test_a_fold_that_changes_nothing_whose_note_was_deleted_meanwhile_marks_nothing(aws, monkeypatch):
    """Its pending record carries the same erase mark check as a saved fold's: the delete refuses it, and the rest of
    the group is read again and marked in the same run, without the deleted note."""
    ids = [write_note(PERSONAL, RUN_AT - timedelta(days=9, minutes=n), f"fact {n}") for n in range(3)]
    management = bootstrap.services().management

    def delete_then_keep(system: str, prompt: str) -> Any:
        if len(notes_of(aws)) == 3:  # the dashboard's delete lands while the model answers
            management.delete_note(PERSONAL, ids[1])
        return {"edits": []}

    scripted_models().fold = FakeChatModel(reply=delete_then_keep)
    first = consolidate()
    second = consolidate(RUN_AT + timedelta(days=1))

    assert (first["groups_failed"], first["notes_consolidated"]) == (0, 2)
    assert second["notes_consolidated"] == 0
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws)) and len(notes_of(aws)) == 2
    assert folded_counts(aws) == {}  # nothing to change: no version
