"""The night's ports as the DynamoDB stores keep them (tests/support/night_contracts.py): the same contracts the
in-memory fakes pass in tests/unit/test_fake_night_contracts.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.storage.consolidation_store import ConsolidationStore
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.due_markers import DueMarkers
from agent_memory.storage.keys import note_sk, parse_note_sk
from agent_memory.storage.note_store import NoteStore
from tests.support.night_contracts import NIGHT_CONTRACTS
from tests.support.scopes import stored


@dataclass
class DynamoNight:
    """The night's stores on moto's table, and the notes and documents as the service writes them."""

    client: Any

    def __post_init__(self) -> None:
        self.markers = DueMarkers(self.client, "MemoryTable")
        self.store = ConsolidationStore(self.client, "MemoryTable")
        self.documents = DocumentStore(self.client, "MemoryTable")
        self._notes = NoteStore(self.client, "MemoryTable", None)

    def write(self, scope: Scope, created: datetime, text: str = "a fact") -> str:
        note = self._notes.append(
            scope, created=created, text=stored(text), source="remember", origin=Origin("u-1", "t-1")
        )
        return note_sk(note.day, note.position)

    def delete(self, scope: Scope, sk: str) -> None:
        assert self._notes.delete(scope, *parse_note_sk(sk))


@pytest.mark.parametrize("contract", NIGHT_CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_dynamodb_stores_keep_the_contract(contract, aws: Any) -> None:
    contract(lambda: DynamoNight(aws))
