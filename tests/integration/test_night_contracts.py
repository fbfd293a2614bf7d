"""The night's stores on DynamoDB (moto) against their contract (``tests/support/night_contracts``), which their
in-memory fakes meet too (tests/unit/test_fake_night_contracts.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from agent_memory import bootstrap
from agent_memory.domain.fold import Fold
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import note_sk, parse_note_sk
from tests.support.night_contracts import *  # noqa: F403 - the contract's tests, run here on DynamoDB
from tests.support.scopes import stored


@dataclass
class DynamoNight:
    markers: Any
    store: Any

    def write(self, scope: Scope, created: datetime, text: str = "a fact") -> str:
        note = bootstrap.services().notes.append(
            scope, created=created, text=stored(text), source="remember", origin=Origin("u-1", "t-1")
        )
        return note_sk(note.day, note.position)

    def delete(self, scope: Scope, sk: str) -> None:
        assert bootstrap.services().notes.delete(scope, *parse_note_sk(sk))

    def hold(self, scope: Scope, fold: Fold) -> None:
        bootstrap.services().documents.hold_unchanged(scope, 0, fold)


@pytest.fixture
def night_stores(aws: Any) -> DynamoNight:
    services = bootstrap.services()
    return DynamoNight(services.due_markers, services.consolidation_store)
