"""The in-memory fakes keep people's control's ports as the DynamoDB stores do (tests/support/erase_contracts.py, run
on moto in tests/integration/test_erase_store_contracts.py), so the erase's tests on them mean what they say."""

from __future__ import annotations

import pytest

from tests.support.erase_contracts import CONTRACTS, EraseStores
from tests.support.fake_erase import FakeScopeItems, FakeStaleRecords
from tests.support.fake_stores import FakeDocumentStore, FakeNoteStore, FakeWorld
from tests.support.seeds import world_seed


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_fakes_keep_the_contract(contract) -> None:
    def make() -> EraseStores:
        world = FakeWorld()
        items, stale = FakeScopeItems(world), FakeStaleRecords(world)
        return EraseStores(items, stale, FakeNoteStore(world), FakeDocumentStore(world), world_seed(world))

    contract(make)
