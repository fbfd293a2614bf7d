"""docs/api.md §6: ``update_memory`` without ``document_version`` never answers 409; under contention it
retries within its time budget, and past it answers 503 ``storage_unavailable`` (nothing written)."""

from __future__ import annotations

from collections import Counter

from botocore.exceptions import ClientError

from agent_memory.memory import service
from tests.support.faults import crash_at, saving_a_version
from tests.support.scopes import shared


def _update(thread: str, content: str) -> tuple[str, dict]:
    return ("update_memory", {"context": shared("w-busy", thread=thread), "arguments": {"content": content}})


def _beaten() -> ClientError:
    """What DynamoDB answers a save whose head another writer moved first: its condition on the head failed."""
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "the head moved"},
            "CancellationReasons": [{"Code": "None"}, {"Code": "ConditionalCheckFailed"}],
        },
        "TransactWriteItems",
    )


def test_an_unversioned_write_that_loses_ten_races_in_a_row_still_lands(call, monkeypatch):
    lost = crash_at("transact_write_items", saving_a_version, times=10, error=_beaten())  # another writer first
    monkeypatch.setattr(service, "UNVERSIONED_RETRY_PAUSE_S", (0.0, 0.001))

    answer = call(*_update("t-1", "finally"))

    assert lost.crashed == 10
    assert answer.status == 200, answer.body
    assert answer.body["document"]["content"] == "finally"


def test_past_its_budget_an_unversioned_write_is_503_never_409(call, monkeypatch):
    crash_at("transact_write_items", saving_a_version, times=10**6, error=_beaten())
    monkeypatch.setattr(service, "UNVERSIONED_WRITE_BUDGET_S", 0.2)

    answer = call(*_update("t-1", "never"))

    assert (answer.status, answer.body["error"]["code"]) == (503, "storage_unavailable")


def test_sixteen_writers_on_one_workspace_get_no_409(sandboxes):
    answers = sandboxes([_update(f"t-{i % 16}", f"edit {i}") for i in range(32)])

    statuses = Counter(a.status for a in answers)
    assert 409 not in statuses and statuses[200] > 0, statuses
    # On an overloaded machine a write may run out of its budget: 503, nothing written (never a 500).
    assert all(a.body["error"]["code"] == "storage_unavailable" for a in answers if a.status != 200)
    versions = sorted(a.body["document"]["version"] for a in answers if a.status == 200)
    assert versions == list(range(1, statuses[200] + 1))  # every write its own version: none lost or doubled
