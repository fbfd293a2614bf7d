"""The in-memory fakes keep the memory service's ports as the DynamoDB stores do (tests/support/store_contracts.py,
run on moto in tests/integration/test_store_contracts.py), so the use case's tests on them mean what they say."""

from __future__ import annotations

import pytest

from agent_memory.memory.ports import (
    CharactersCounter,
    DocumentHistory,
    DocumentVersions,
    NoteAppends,
    NoteLeftovers,
    NotesByDay,
    RunListing,
)
from agent_memory.recall.ports import RecalledNotes
from agent_memory.storage.consolidation_store import ConsolidationStore
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.note_store import NoteStore
from agent_memory.storage.stale_records import StaleRecords
from agent_memory.storage.usage_store import Quota, UsageStore
from tests.support.fake_erase import FakeStaleRecords
from tests.support.fake_night import FakeConsolidationStore
from tests.support.fake_stores import FakeDocumentStore, FakeNoteStore, FakeUsageStore, FakeWorld
from tests.support.store_contracts import CONTRACTS, fake_stores_under_test, parameters


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_fakes_keep_the_contract(contract) -> None:
    contract(fake_stores_under_test)


@pytest.mark.parametrize(
    ("port", "real", "fake"),
    [
        (NoteAppends, NoteStore, FakeNoteStore),
        (DocumentVersions, DocumentStore, FakeDocumentStore),
        (DocumentHistory, DocumentStore, FakeDocumentStore),
        (NotesByDay, NoteStore, FakeNoteStore),
        (RunListing, ConsolidationStore, FakeConsolidationStore),
        (NoteLeftovers, StaleRecords, FakeStaleRecords),
        (RecalledNotes, NoteStore, FakeNoteStore),
    ],
    ids=lambda part: part.__name__,
)
def test_the_real_store_and_its_fake_take_what_the_port_names(port, real, fake) -> None:
    """Each call of the port, with each of its parameters as the port passes it (name, kind, whether it has a
    default), on both the DynamoDB store and the fake: mypy checks the real one where bootstrap hands it over,
    this checks the fake, which mypy does not see."""
    calls = [name for name, member in vars(port).items() if callable(member) and not name.startswith("_")]
    assert calls
    for name in calls:
        wanted = parameters(getattr(port, name))
        for store in (real, fake):
            given = parameters(getattr(store, name))
            assert {key: given.get(key) for key in wanted} == wanted, f"{store.__name__}.{name}"


def test_the_real_usage_store_and_its_fake_hold_the_quota_the_port_names() -> None:
    """The characters counter's port is its quota alone (a save moves the counter itself): both stores hold it."""
    quota = Quota(notes_per_day=5, chars=100)

    assert set(CharactersCounter.__annotations__) == {"quota"}
    for store in (UsageStore(None, "MemoryTable", quota), FakeUsageStore(FakeWorld(), quota)):
        assert store.quota == quota
