"""The in-memory fakes keep the extraction's ports as the DynamoDB stores do (tests/support/extraction_contracts.py,
run on moto in tests/integration/test_extraction_store_contracts.py), so the extraction's tests on them mean what
they say."""

from __future__ import annotations

import pytest

from agent_memory.memory.ports import ExtractionClaims, ExtractionNotes
from agent_memory.storage.extraction_store import ExtractionStore
from agent_memory.storage.note_store import NoteStore
from tests.support.extraction_contracts import CONTRACTS, ExtractionStores
from tests.support.fake_extraction import FakeExtractionStore
from tests.support.fake_stores import FakeNoteStore, FakeWorld
from tests.support.port_checks import mismatches


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_fakes_keep_the_contract(contract) -> None:
    def make() -> ExtractionStores:
        world = FakeWorld()
        return ExtractionStores(FakeExtractionStore(world), FakeNoteStore(world))

    contract(make)


@pytest.mark.parametrize(
    ("port", "real", "fake"),
    [(ExtractionClaims, ExtractionStore, FakeExtractionStore), (ExtractionNotes, NoteStore, FakeNoteStore)],
    ids=lambda part: part.__name__,
)
def test_the_real_store_and_its_fake_take_what_the_port_names(port, real, fake) -> None:
    assert mismatches(port, real) == mismatches(port, fake) == []
