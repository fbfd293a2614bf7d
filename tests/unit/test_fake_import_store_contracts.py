"""The in-memory fakes keep the import's ports as the DynamoDB stores do (tests/support/import_contracts.py, run on
moto in tests/integration/test_import_store_contracts.py), so the import's tests on them mean what they say."""

from __future__ import annotations

import pytest

from agent_memory.memory.ports import ImportedNotes, ImportProgress
from agent_memory.storage.import_records import ImportRecords
from agent_memory.storage.note_store import NoteStore
from agent_memory.storage.usage_store import Quota
from tests.support.fake_import import FakeImportRecords
from tests.support.fake_stores import FakeNoteStore, FakeWorld
from tests.support.import_contracts import CONTRACTS, ImportStores
from tests.support.port_checks import mismatches


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_fakes_keep_the_contract(contract) -> None:
    def make(quota: Quota | None = None) -> ImportStores:
        world = FakeWorld()
        return ImportStores(FakeImportRecords(world), FakeNoteStore(world, quota))

    contract(make)


@pytest.mark.parametrize(
    ("port", "real", "fake"),
    [(ImportProgress, ImportRecords, FakeImportRecords), (ImportedNotes, NoteStore, FakeNoteStore)],
    ids=lambda part: part.__name__,
)
def test_the_real_store_and_its_fake_take_what_the_port_names(port, real, fake) -> None:
    assert mismatches(port, real) == mismatches(port, fake) == []
