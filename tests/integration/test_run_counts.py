"""A consolidation run's record under lost answers (docs/api.md §6, docs/storage.md "Exactly once"): a run listed
as finished has ``groups_done + groups_failed == groups_planned``, its ``notes_consolidated`` is the number of notes
marked, and every marked note is in a version's document (folded by one version, once, or already held by the
document a fold that changed nothing was shown); whatever writes lost their answers on the way."""

from __future__ import annotations

import random
import re
from datetime import timedelta
from typing import Any

import pytest

from agent_memory import bootstrap
from agent_memory.basics.errors import StorageUnavailable
from agent_memory.domain.document import Author
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import make_dynamodb_client
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.keys import run_sk
from tests.support.consolidation import NOTE_LINE, RUN_AT, consolidate, folded_counts, merge, notes_of
from tests.support.fakes import FakeChatModel
from tests.support.faults import SeededLoss, crash_at, provide_real_clients, updating
from tests.support.models import scripted_models
from tests.support.scopes import stored_document, write_note

# Every write of a fold (its claim, save, marks, pending record, settle and counts); the planner's own lease and
# record are PutItems, whose loss fails the invocation, which Lambda then sends again.
WRITES = {"transact_write_items", "update_item", "delete_item"}
SCOPES = [Scope("team", f"w-{i}") for i in range(8)]
HELD = SCOPES[::2]  # their documents hold their notes already: the model changes nothing


def merge_or_keep(system: str, prompt: str) -> str | dict:
    """The fake model: nothing to change when the document shown holds every note's text, else ``merge``."""
    document = re.search(r"<document>\n(.*?)\n</document>", prompt, re.S).group(1)  # type: ignore[union-attr]
    if all(note["text"] in document for note in NOTE_LINE.finditer(prompt.split("<notes>")[1])):
        return {"edits": []} if "edit_document" in system else document
    return merge(system, prompt)


def hold_notes_in_documents(scopes: list[Scope]) -> None:
    """Each scope's document, version 1, already holding the texts of its three notes."""
    store = DocumentStore(make_dynamodb_client(bootstrap.get_settings()), "MemoryTable")
    for scope in scopes:
        content = "\n".join(f"- fact {n} of {scope.key}" for n in range(3))
        store.save(
            scope,
            stored_document(content),
            expected_version=0,
            updated_at="2026-11-20T00:00:00.000Z",
            reason="tool",
            by=Author(user_id="u-1"),
        )


def in_a_version(aws: Any, scope: Scope, note: dict[str, Any]) -> bool:
    """Whether a version folded the note, or a version's document holds its text."""
    if f"{note['day']['S']}.{note['position']['N']}" in folded_counts(aws, scope):
        return True
    versions = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :v)",
        ExpressionAttributeValues={":p": {"S": scope.key}, ":v": {"S": "doc#v#"}},
    )["Items"]
    return any(note["text"]["S"] in version["content"]["S"] for version in versions)


@pytest.fixture
def seeded_losses(aws, monkeypatch) -> Any:
    def _inject(seed: int, every: int) -> list[SeededLoss]:
        chance, made = random.Random(seed), []

        def _losing(*a: Any, **k: Any) -> SeededLoss:
            made.append(SeededLoss(make_dynamodb_client(*a, **k), chance, every))
            return made[-1]

        monkeypatch.setattr("time.sleep", lambda _s: None)  # the retries' pauses: the schedule decides, not time
        bootstrap.provide(make_dynamodb_client=_losing)
        bootstrap.reset()
        scripted_models().fold = FakeChatModel(reply=merge_or_keep)
        return made

    return _inject


def _marked(aws: Any) -> dict[str, int]:
    return {
        scope.key: sum(1 for item in notes_of(aws, scope) if item.get("consolidated") == {"BOOL": True})
        for scope in SCOPES
    }


@pytest.mark.parametrize("seed", range(6))
def test_a_run_whose_writes_lose_answers_counts_each_group_and_note_once(aws, seeded_losses, monkeypatch, seed):
    monkeypatch.setenv("MEMORY_CONSOLIDATION_MAX_GROUPS", "0")
    for scope in SCOPES:
        for n in range(3):
            write_note(scope, RUN_AT - timedelta(days=9, minutes=n), f"fact {n} of {scope.key}")
    hold_notes_in_documents(HELD)
    clients = seeded_losses(seed, every=4)

    run = consolidate()

    marked = _marked(aws)
    # A group whose storage kept failing after its version was saved, settling included, is counted failed; its
    # pending record lists its notes, for the next worker on the scope to finish marking (counted in no run).
    unfinished = {pending.scope.key for pending in bootstrap.services().consolidation_store.pending_marks()}
    assert sum(client.lost for client in clients) >= 5
    assert run["status"] == "finished" and run["groups_planned"] == len(SCOPES)
    assert run["groups_done"] + run["groups_failed"] == run["groups_planned"]
    assert len(unfinished) <= run["groups_failed"]
    assert run["notes_consolidated"] == sum(count for key, count in marked.items() if key not in unfinished)
    for scope in SCOPES:  # every marked note is in a version's document; no note is folded twice
        assert set(folded_counts(aws, scope).values()) <= {1}
        marked_notes = [item for item in notes_of(aws, scope) if item.get("consolidated") == {"BOOL": True}]
        assert all(in_a_version(aws, scope, note) for note in marked_notes)
    listed = bootstrap.services().consolidation_store.runs(1)[0]
    # Folds that changed nothing were made, under the same losses, and saved no version.
    assert any(marked[scope.key] for scope in HELD)
    assert {DocumentStore(aws, "MemoryTable").current(scope, consistent=True).version for scope in HELD} == {1}
    assert {key: listed[key] for key in run if key != "status"} == {k: v for k, v in run.items() if k != "status"}


def test_a_group_held_by_another_run_is_counted_once_in_this_run(aws):
    scope = SCOPES[0]
    write_note(scope, RUN_AT - timedelta(days=9), "a fact")
    store = bootstrap.services().consolidation_store
    record = {"run_id": "r-2", "started_at": "2026-12-03T03:00:00.000Z", "failures": []}
    store.save_run(record)
    run = run_sk(record["started_at"], "r-2")

    counted = [store.count_elsewhere(scope, run) for _ in range(3)]  # sent again after lost answers

    assert counted == [True, False, False]
    assert store.read_run(run)["groups_done"] == 1


def test_a_failed_group_whose_count_lost_its_answer_is_counted_once(aws, lost_answers, monkeypatch):
    """A worker's group failing for good tonight: its count's transaction is applied, its answer lost, and sent
    again without the engine's token (plain moto): the marker's ``last_run`` refuses the second count."""
    from local.sqs_mapping import LocalQueueMapping
    from tests.support.consolidation import WorkerFunction

    mapping = LocalQueueMapping(None, WorkerFunction(), visibility_s=0)
    monkeypatch.setenv("MEMORY_CONSOLIDATION_QUEUE_URL", mapping.url)
    write_note(SCOPES[0], RUN_AT - timedelta(days=9), "a fact")
    clients = lost_answers("transact_write_items", tokens=False)
    failing = FakeChatModel(reply=merge)
    failing.fail_with = "the chat model failed: ThrottlingException"
    scripted_models().fold = failing

    consolidate()
    for _ in range(5):  # delivered until its last receive, which counts the failure
        mapping.drain()

    run = bootstrap.services().consolidation_store.runs(1)[0]
    assert sum(client.lost for client in clients) >= 1
    assert (run["groups_planned"], run["groups_done"], run["groups_failed"]) == (1, 0, 1)
    assert run["status"] == "finished"


MARKING = updating("SET consolidated")  # a note's mark (``ConsolidationStore.mark_consolidated``)


def _keep_model(monkeypatch: Any) -> None:
    scripted_models().fold = FakeChatModel(reply=merge_or_keep)


def _pending(aws: Any, scope: Scope) -> list[str]:
    key = {"pk": {"S": scope.key}, "sk": {"S": "consolidation#pending"}}
    item = aws.get_item(TableName="MemoryTable", Key=key, ConsistentRead=True).get("Item") or {}
    return [sk["S"] for sk in item.get("note_sks", {}).get("L", [])]


def test_a_fold_that_changes_nothing_killed_between_its_marks_leaves_its_pending_record(aws, monkeypatch):
    """The worker dies after marking one of its notes: its pending record lists all three, so the next run marks
    the others before reading anything, and no version is saved by either."""
    scope = SCOPES[0]
    for n in range(3):
        write_note(scope, RUN_AT - timedelta(days=9, minutes=n), f"fact {n} of {scope.key}")
    hold_notes_in_documents([scope])
    _keep_model(monkeypatch)
    marks = crash_at("update_item", MARKING, nth=2, times=10**6)  # every mark after the first, this run

    first = consolidate()
    provide_real_clients()

    assert marks.crashed >= 1
    assert (first["groups_done"], first["groups_failed"], first["notes_consolidated"]) == (0, 1, 0)
    assert sorted(_pending(aws, scope)) == sorted(item["sk"]["S"] for item in notes_of(aws, scope))
    assert sum(item["consolidated"] == {"BOOL": True} for item in notes_of(aws, scope)) == 1
    consolidate(run_id="run-2")
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws, scope))
    assert _pending(aws, scope) == []
    assert DocumentStore(aws, "MemoryTable").current(scope, consistent=True).version == 1


@pytest.mark.parametrize("tokens", [True, False], ids=["engine-token", "write-ids-only"])
def test_a_fold_that_changes_nothing_whose_answers_were_lost_counts_its_notes_once(
    aws, lost_answers, monkeypatch, tokens
):
    """Its pending record's transaction, its marks and its settle are each applied, their answers lost and sent
    again: the record's retry meets its own record (the worker's token), and the run counts the three notes once."""
    scope = SCOPES[0]
    for n in range(3):
        write_note(scope, RUN_AT - timedelta(days=9, minutes=n), f"fact {n} of {scope.key}")
    hold_notes_in_documents([scope])
    clients = lost_answers("transact_write_items", "update_item", tokens=tokens)
    _keep_model(monkeypatch)

    run = consolidate()

    assert sum(client.lost for client in clients) >= 5  # the claim, the record, three marks, the settle
    assert (run["groups_done"], run["groups_failed"], run["notes_consolidated"]) == (1, 0, 3)
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws, scope))
    assert _pending(aws, scope) == []
    assert DocumentStore(aws, "MemoryTable").current(scope, consistent=True).version == 1
    assert bootstrap.services().consolidation_store.runs(1)[0]["folds"]["unchanged"] == 1


def test_a_group_whose_storage_failed_after_its_save_is_counted_folded_when_storage_answers(aws, monkeypatch):
    """Its version saved, each of its attempts' marks refused by storage: once storage answers again the group is
    finished and counted folded with its notes, not failed with its notes marked and counted in no run."""
    scope = SCOPES[0]
    for n in range(3):
        write_note(scope, RUN_AT - timedelta(days=9, minutes=n), f"fact {n} of {scope.key}")
    scripted_models().fold = FakeChatModel(reply=merge)
    monkeypatch.setattr("time.sleep", lambda _s: None)
    # the first mark of each of the group's three attempts
    refused = crash_at("update_item", MARKING, times=3, error=StorageUnavailable("memory storage is unavailable"))

    run = consolidate()

    assert refused.crashed == 3
    assert (run["groups_done"], run["groups_failed"], run["notes_consolidated"]) == (1, 0, 3)
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws, scope))
    assert _pending(aws, scope) == []
    assert DocumentStore(aws, "MemoryTable").current(scope, consistent=True).version == 1
