"""docs/api.md §6: ``update_memory`` without ``document_version`` never answers 409; under contention it
retries within its time budget, and past it answers 503 ``storage_unavailable`` (nothing written)."""

from __future__ import annotations

from collections import Counter

from agent_memory.basics.errors import VersionConflict
from agent_memory.memory import service
from agent_memory.storage.document_store import DocumentStore
from tests.support.scopes import shared


def _update(thread: str, content: str) -> tuple[str, dict]:
    return ("update_memory", {"context": shared("w-busy", thread=thread), "arguments": {"content": content}})


def test_an_unversioned_write_that_loses_ten_races_in_a_row_still_lands(call, monkeypatch):
    real = DocumentStore.save
    lost = {"count": 0}

    def _racing(self, *args, **kwargs):
        if lost["count"] < 10:  # another writer got in first, ten times
            lost["count"] += 1
            raise VersionConflict("the head moved")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(DocumentStore, "save", _racing)
    monkeypatch.setattr(service, "UNVERSIONED_RETRY_PAUSE_S", (0.0, 0.001))

    answer = call(*_update("t-1", "finally"))

    assert answer.status == 200, answer.body
    assert answer.body["document"]["content"] == "finally"


def test_past_its_budget_an_unversioned_write_is_503_never_409(call, monkeypatch):
    def _always_beaten(self, *args, **kwargs):
        raise VersionConflict("the head moved")

    monkeypatch.setattr(DocumentStore, "save", _always_beaten)
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
