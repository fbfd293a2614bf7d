"""People's control's ports as the DynamoDB stores keep them (tests/support/erase_contracts.py): the same contracts
the in-memory fakes pass in tests/unit/test_fake_erase_store_contracts.py."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.note_store import NoteStore
from agent_memory.storage.scope_items import ScopeItems
from agent_memory.storage.stale_records import StaleRecords
from tests.support.erase_contracts import CONTRACTS, EraseStores
from tests.support.seeds import table_link, table_seed


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_dynamodb_stores_keep_the_contract(contract, aws: Any) -> None:
    def make() -> EraseStores:
        table = "MemoryTable"
        items, stale = ScopeItems(aws, table), StaleRecords(aws, table)
        notes, documents = NoteStore(aws, table), DocumentStore(aws, table)
        return EraseStores(items, stale, notes, documents, table_seed(aws), table_link(aws))

    contract(make)
