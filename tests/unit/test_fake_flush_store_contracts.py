"""The in-memory fakes keep the flush's ports as the DynamoDB stores do (tests/support/flush_contracts.py, run on
moto in tests/integration/test_flush_store_contracts.py), so the flush's tests on them mean what they say."""

from __future__ import annotations

import pytest

from agent_memory.memory.flush import FlushClaims, FlushNotes
from agent_memory.storage.flush_store import FlushStore
from agent_memory.storage.note_store import NoteStore
from tests.support.fake_flush import FakeFlushNoteStore, FakeFlushStore
from tests.support.fake_stores import FakeWorld
from tests.support.flush_contracts import CONTRACTS, FlushStores
from tests.support.port_checks import mismatches
from tests.support.seeds import world_seed


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_fakes_keep_the_contract(contract) -> None:
    def make() -> FlushStores:
        world = FakeWorld()
        return FlushStores(FakeFlushStore(world), FakeFlushNoteStore(world), world_seed(world))

    contract(make)


@pytest.mark.parametrize(
    ("port", "real", "fake"),
    [(FlushClaims, FlushStore, FakeFlushStore), (FlushNotes, NoteStore, FakeFlushNoteStore)],
    ids=lambda part: part.__name__,
)
def test_the_real_store_and_its_fake_take_what_the_port_names(port, real, fake) -> None:
    assert mismatches(port, real) == mismatches(port, fake) == []
