"""The extraction's ports as the DynamoDB stores keep them (tests/support/extraction_contracts.py): the same
contracts the in-memory fakes pass in tests/unit/test_fake_extraction_store_contracts.py."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.storage.extraction_store import ExtractionStore
from agent_memory.storage.note_store import NoteStore
from tests.support.extraction_contracts import CONTRACTS, ExtractionStores


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_dynamodb_stores_keep_the_contract(contract, aws: Any) -> None:
    def make() -> ExtractionStores:
        return ExtractionStores(ExtractionStore(aws, "MemoryTable"), NoteStore(aws, "MemoryTable"))

    contract(make)
