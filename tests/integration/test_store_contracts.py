"""The memory service's ports as the DynamoDB stores keep them (tests/support/store_contracts.py): the same
contracts the in-memory fakes pass in tests/unit/test_fake_store_contracts.py."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.note_store import NoteStore
from tests.support.store_contracts import CONTRACTS, Stores


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_dynamodb_stores_keep_the_contract(contract, aws: Any) -> None:
    def make(quota=None, vectors=None) -> Stores:
        notes = NoteStore(aws, "MemoryTable", quota, vectors=vectors)
        return Stores(notes, DocumentStore(aws, "MemoryTable"), notes.usage)

    contract(make)
