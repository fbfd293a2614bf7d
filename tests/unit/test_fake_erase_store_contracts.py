"""The in-memory fakes keep people's control's ports as the DynamoDB stores do (tests/support/erase_contracts.py, run
on moto in tests/integration/test_erase_store_contracts.py), so the erase's tests on them mean what they say."""

from __future__ import annotations

import pytest

from agent_memory.people.ports import Counters, IndexToClear, LeftBehind, LoadedNotes, ScopePartition, VersionedDocument
from agent_memory.providers.notes_index import NotesIndex
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.note_store import NoteStore
from agent_memory.storage.scope_items import ScopeItems
from agent_memory.storage.stale_records import StaleRecords
from agent_memory.storage.usage_store import UsageStore
from tests.support.erase_contracts import CONTRACTS, EraseStores
from tests.support.fake_erase import FakeScopeItems, FakeStaleRecords
from tests.support.fake_index import FakeNotesIndex
from tests.support.fake_stores import FakeDocumentStore, FakeNoteStore, FakeUsageStore, FakeWorld
from tests.support.port_checks import mismatches
from tests.support.seeds import world_link, world_seed


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_fakes_keep_the_contract(contract) -> None:
    def make() -> EraseStores:
        world = FakeWorld()
        items, stale = FakeScopeItems(world), FakeStaleRecords(world)
        notes, documents = FakeNoteStore(world), FakeDocumentStore(world)
        return EraseStores(items, stale, notes, documents, world_seed(world), world_link(world))

    contract(make)


@pytest.mark.parametrize(
    ("port", "real", "fake"),
    [
        (ScopePartition, ScopeItems, FakeScopeItems),
        (VersionedDocument, DocumentStore, FakeDocumentStore),
        (LoadedNotes, NoteStore, FakeNoteStore),
        (Counters, UsageStore, FakeUsageStore),
        (LeftBehind, StaleRecords, FakeStaleRecords),
        (IndexToClear, NotesIndex, FakeNotesIndex),
    ],
    ids=lambda part: part.__name__,
)
def test_the_real_store_and_its_fake_take_what_the_port_names(port, real, fake) -> None:
    assert mismatches(port, real) == mismatches(port, fake) == []
