"""The flush's ports as the DynamoDB stores keep them (tests/support/flush_contracts.py): the same contracts the
in-memory fakes pass in tests/unit/test_fake_flush_store_contracts.py."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.storage.flush_store import FlushStore
from agent_memory.storage.note_store import NoteStore
from tests.support.flush_contracts import CONTRACTS, FlushStores
from tests.support.seeds import table_seed


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_dynamodb_stores_keep_the_contract(contract, aws: Any) -> None:
    def make() -> FlushStores:
        return FlushStores(FlushStore(aws, "MemoryTable"), NoteStore(aws, "MemoryTable"), table_seed(aws))

    contract(make)
