"""The erase fence (docs/storage.md "Consolidation"): a fold that read a note deleted meanwhile saves nothing, and
its save carries one check of the scope's fence whatever the group's size (it used to carry one per note)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agent_memory import bootstrap
from tests.conftest import write_note
from tests.fakes import FakeChatModel
from tests.integration.test_consolidation import PERSONAL, RUN_AT, consolidate, folded_counts, merge, notes_of


def _save_sizes(monkeypatch: Any) -> list[int]:
    """The number of items of every TransactWriteItems the consolidation sends."""
    sizes: list[int] = []
    client = bootstrap.services().consolidator.documents._client.raw  # botocore event hooks on the raw client

    def _count(params: dict[str, Any], **_: Any) -> None:
        sizes.append(len(params["TransactItems"]))

    client.meta.events.register("provide-client-params.dynamodb.TransactWriteItems", _count)
    return sizes


def test_a_fold_of_200_notes_saves_with_a_constant_number_of_items(aws, monkeypatch):
    for i in range(200):
        write_note(PERSONAL, RUN_AT - timedelta(days=9, seconds=200 - i), f"fact {i}")
    monkeypatch.setattr(bootstrap.services().consolidator, "chat_model", lambda: FakeChatModel(reply=merge))
    sizes = _save_sizes(monkeypatch)

    run = consolidate()

    assert run["notes_consolidated"] == 200
    assert max(sizes) == 5  # version, head, pending record, characters counter, the fence: not one per note


def test_a_note_deleted_while_its_group_is_folded_never_reaches_a_version(aws, monkeypatch):
    created = [RUN_AT - timedelta(days=9, minutes=n) for n in range(3)]
    ids = [write_note(PERSONAL, at, f"fact {n}") for n, at in enumerate(created)]
    management = bootstrap.services().management

    deleted: list[str] = []

    def delete_while_folding(system: str, prompt: str) -> Any:
        if not deleted:  # the dashboard's delete lands while the model answers
            management.delete_note(PERSONAL, ids[1])
            deleted.append(ids[1])
        return merge(system, prompt)

    monkeypatch.setattr(
        bootstrap.services().consolidator, "chat_model", lambda: FakeChatModel(reply=delete_while_folding)
    )
    first = consolidate()
    monkeypatch.setattr(bootstrap.services().consolidator, "chat_model", lambda: FakeChatModel(reply=merge))
    second = consolidate(RUN_AT + timedelta(days=1))

    assert (first["groups_failed"], first["notes_consolidated"]) == (1, 0)
    assert second["notes_consolidated"] == 2
    assert folded_counts(aws) == {ids[0]: 1, ids[2]: 1}
    assert len(notes_of(aws)) == 2


def test_a_fold_that_changes_nothing_whose_note_was_deleted_meanwhile_marks_nothing(aws, monkeypatch):
    """Its pending record carries the same fence check as a saved fold's: the delete refuses it, and the group is
    folded again the next night without the deleted note."""
    ids = [write_note(PERSONAL, RUN_AT - timedelta(days=9, minutes=n), f"fact {n}") for n in range(3)]
    management = bootstrap.services().management

    def delete_then_keep(system: str, prompt: str) -> Any:
        if len(notes_of(aws)) == 3:  # the dashboard's delete lands while the model answers
            management.delete_note(PERSONAL, ids[1])
        return {"edits": []}

    monkeypatch.setattr(bootstrap.services().consolidator, "chat_model", lambda: FakeChatModel(reply=delete_then_keep))
    first = consolidate()
    second = consolidate(RUN_AT + timedelta(days=1))

    assert (first["groups_failed"], first["notes_consolidated"]) == (1, 0)
    assert second["notes_consolidated"] == 2
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws)) and len(notes_of(aws)) == 2
    assert folded_counts(aws) == {}  # nothing to change: no version
