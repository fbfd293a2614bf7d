"""The consolidation's due marker is written after the note's transaction (docs/consolidation.md): when that
write fails, the note is stored and answered as written, never a 503 that a retry would turn into a second
note; and a worker's claim never brings an erased scope's marker back."""

from __future__ import annotations

import pytest

from agent_memory.errors import StorageUnavailable
from agent_memory.scope import Scope
from agent_memory.storage.scope_index import DUE_SK, ClaimRefused, ScopeIndex
from tests.conftest import private


def test_a_failed_marker_write_leaves_the_note_written_and_answered_201(call, monkeypatch):
    def broken(self, scope, *, created_at, day):
        raise StorageUnavailable("the marker's table timed out")

    monkeypatch.setattr(ScopeIndex, "note_written", broken)

    answer = call("remember", {"context": private(user="u-marker"), "arguments": {"text": "kept once"}})
    context = call("context", {"context": private(user="u-marker")})

    assert answer.status == 201
    assert [note["text"] for note in context.body["recent_notes"]] == ["kept once"]


def test_a_claim_on_a_scope_without_a_marker_is_done_and_creates_nothing(aws):
    client, table = aws, "MemoryTable"
    scope = Scope("personal", "u-erased")

    with pytest.raises(ClaimRefused) as refused:
        ScopeIndex(client, table).claim(scope, "token-1", "run-1", now_epoch=1_000, lease_s=330)

    assert refused.value.why == "done"
    assert "Item" not in client.get_item(TableName=table, Key={"pk": {"S": scope.key}, "sk": {"S": DUE_SK}})
