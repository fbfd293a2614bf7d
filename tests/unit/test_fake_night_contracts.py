"""The night's in-memory fakes keep the night's ports as the DynamoDB stores do (tests/support/night_contracts.py, run
on moto in tests/integration/test_night_contracts.py), so the planner's and the worker's tests on them mean what
they say."""

from __future__ import annotations

import pytest

from agent_memory.consolidation.ports import DueScopeReader, FoldDocuments, FoldMarkers, FoldStore, RunLedger
from agent_memory.storage.consolidation_store import ConsolidationStore
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.due_markers import DueMarkers
from tests.support.fake_night import FakeConsolidationStore, FakeDueMarkers
from tests.support.fake_stores import FakeDocumentStore
from tests.support.night import night_world
from tests.support.night_contracts import NIGHT_CONTRACTS
from tests.support.store_contracts import parameters


@pytest.mark.parametrize("contract", NIGHT_CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_fakes_keep_the_contract(contract) -> None:
    contract(night_world)


@pytest.mark.parametrize(
    ("port", "real", "fake"),
    [
        (DueScopeReader, DueMarkers, FakeDueMarkers),
        (FoldMarkers, DueMarkers, FakeDueMarkers),
        (RunLedger, ConsolidationStore, FakeConsolidationStore),
        (FoldStore, ConsolidationStore, FakeConsolidationStore),
        (FoldDocuments, DocumentStore, FakeDocumentStore),
    ],
    ids=lambda part: part.__name__,
)
def test_the_real_store_and_its_fake_take_what_the_port_names(port, real, fake) -> None:
    calls = [name for name, member in vars(port).items() if callable(member) and not name.startswith("_")]
    assert calls
    for name in calls:
        wanted = parameters(getattr(port, name))
        for store in (real, fake):
            assert {key: parameters(getattr(store, name)).get(key) for key in wanted} == wanted, (
                f"{store.__name__}.{name}"
            )
