"""A consolidation run's record under lost answers (docs/api.md §6, docs/storage.md "Exactly once"): a run listed
as finished has ``groups_done + groups_failed == groups_planned``, its ``notes_consolidated`` is the number of notes
marked, and every marked note is in a version's document, once; whatever writes lost their answers on the way."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import make_dynamodb_client
from agent_memory.storage.due_scopes import DueScopes
from agent_memory.storage.keys import run_sk
from tests.conftest import write_note
from tests.fakes import FakeChatModel
from tests.integration.test_consolidation import RUN_AT, consolidate, folded_counts, merge, notes_of

# Every write of a fold (its claim, save, marks, pending record, settle and counts); the planner's own lease and
# record are PutItems, whose loss fails the invocation, which Lambda then sends again.
WRITES = {"transact_write_items", "update_item", "delete_item"}
SCOPES = [Scope("team", f"w-{i}") for i in range(8)]


class SeededLoss:
    """The real client, except that about one write in ``every`` (a seeded schedule) is applied and then its
    answer is lost for good: botocore's retries spent, the caller gets a 500 (the outcome unknown to it)."""

    def __init__(self, real: Any, chance: random.Random, every: int) -> None:
        self._real, self._chance, self._every = real, chance, every
        self.lost = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._real, name)
        if name not in WRITES:
            return method

        def _maybe_lost(**kwargs: Any) -> Any:
            answer = method(**kwargs)
            if self._chance.randrange(self._every):
                return answer
            self.lost += 1
            raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, name)

        return _maybe_lost


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
        monkeypatch.setattr(bootstrap.services().consolidator, "chat_model", lambda: FakeChatModel(reply=merge))
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
    clients = seeded_losses(seed, every=4)

    run = consolidate()

    marked = _marked(aws)
    # A group whose storage kept failing after its version was saved is counted failed; its pending record lists
    # its notes, for the next worker on the scope to finish marking (their count is that worker's).
    unfinished = {pending.scope.key for pending in bootstrap.services().consolidator.store.pending_marks()}
    assert sum(client.lost for client in clients) >= 5
    assert run["status"] == "finished" and run["groups_planned"] == len(SCOPES)
    assert run["groups_done"] + run["groups_failed"] == run["groups_planned"]
    assert len(unfinished) <= run["groups_failed"]
    assert run["notes_consolidated"] == sum(count for key, count in marked.items() if key not in unfinished)
    for scope in SCOPES:  # every marked note is in a version's document, once
        folded = folded_counts(aws, scope)
        assert set(folded.values()) <= {1} and len(folded) >= marked[scope.key]
    listed = bootstrap.services().consolidator.store.runs(1)[0]
    assert {key: listed[key] for key in run if key != "status"} == {k: v for k, v in run.items() if k != "status"}


def test_a_group_held_by_another_run_is_counted_once_in_this_run(aws):
    scope = SCOPES[0]
    write_note(scope, RUN_AT - timedelta(days=9), "a fact")
    store = bootstrap.services().consolidator.store
    index = DueScopes(aws, "MemoryTable")
    record = {"run_id": "r-2", "started_at": "2026-12-03T03:00:00.000Z", "failures": []}
    store.save_run(record)
    run = run_sk(record["started_at"], "r-2")

    counted = [store.count_elsewhere(index, scope, run) for _ in range(3)]  # sent again after lost answers

    assert counted == [True, False, False]
    assert store.read_run(run)["groups_done"] == 1


def test_a_failed_group_whose_count_lost_its_answer_is_counted_once(aws, lost_answers, monkeypatch):
    """A worker's group failing for good tonight: its count's transaction is applied, its answer lost, and sent
    again without the engine's token (plain moto): the marker's ``last_run`` refuses the second count."""
    from local.sqs_mapping import LocalQueueMapping
    from tests.integration.test_consolidation_fanout import Worker

    mapping = LocalQueueMapping(None, Worker(), visibility_s=0)
    monkeypatch.setenv("MEMORY_CONSOLIDATION_QUEUE_URL", mapping.url)
    write_note(SCOPES[0], RUN_AT - timedelta(days=9), "a fact")
    clients = lost_answers("transact_write_items", tokens=False)
    failing = FakeChatModel(reply=merge)
    failing.fail_with = "the chat model failed: ThrottlingException"
    monkeypatch.setattr(bootstrap.services().consolidator, "chat_model", lambda: failing)

    consolidate()
    for _ in range(5):  # delivered until its last receive, which counts the failure
        mapping.drain()

    run = bootstrap.services().consolidator.store.runs(1)[0]
    assert sum(client.lost for client in clients) >= 1
    assert (run["groups_planned"], run["groups_done"], run["groups_failed"]) == (1, 0, 1)
    assert run["status"] == "finished"
