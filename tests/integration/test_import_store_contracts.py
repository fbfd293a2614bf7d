"""The import's ports as the DynamoDB stores keep them (tests/support/import_contracts.py): the same contracts the
in-memory fakes pass in tests/unit/test_fake_import_store_contracts.py."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.storage.import_records import ImportRecords
from agent_memory.storage.note_store import NoteStore
from agent_memory.storage.usage_store import Quota
from tests.support.import_contracts import CONTRACTS, ImportStores


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_dynamodb_stores_keep_the_contract(contract, aws: Any) -> None:
    def make(quota: Quota | None = None) -> ImportStores:
        return ImportStores(ImportRecords(aws, "MemoryTable"), NoteStore(aws, "MemoryTable", quota))

    contract(make)
