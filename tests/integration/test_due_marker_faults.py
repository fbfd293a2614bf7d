"""The consolidation's due marker: a worker's claim never brings an erased scope's marker back, and the
upgrade's backfill makes legacy notes' scopes due once (the marker's write in the note's own transaction
is tests/integration/test_due_marker_transaction.py)."""

from __future__ import annotations

import pytest

from agent_memory.domain.scope import Scope
from agent_memory.storage.due_markers import ClaimRefused, DueMarkers
from agent_memory.storage.keys import DUE_SK
from local.backfill_due import backfill_legacy


def test_a_claim_on_a_scope_without_a_marker_is_done_and_creates_nothing(aws):
    client, table = aws, "MemoryTable"
    scope = Scope("personal", "u-erased")

    with pytest.raises(ClaimRefused) as refused:
        DueMarkers(client, table).claim(scope, "token-1", "run-1", now_epoch=1_000, lease_s=330)

    assert refused.value.why == "done"
    assert "Item" not in client.get_item(TableName=table, Key={"pk": {"S": scope.key}, "sk": {"S": DUE_SK}})


def _legacy_note(client, scope: Scope, day: str, position: int, created_at: str) -> None:
    """A note as written before the due markers: indexed on its own in the sparse index."""
    from agent_memory.domain.notes import Note, Origin
    from agent_memory.storage.keys import unconsolidated_shard
    from agent_memory.storage.note_items import note_item

    note = Note(day, position, "an old fact", created_at, "remember", Origin("u-1", "t-1"))
    item = note_item(scope, note) | {
        "uc_pk": {"S": unconsolidated_shard(scope.key)},
        "uc_sk": {"S": f"{created_at}#{scope.key}#{note.id}"},
    }
    client.put_item(TableName="MemoryTable", Item=item)


def test_the_upgrade_backfill_makes_legacy_notes_scopes_due_once(aws):
    index = DueMarkers(aws, "MemoryTable")
    alice, team = Scope("personal", "u-old"), Scope("team", "w-old")
    _legacy_note(aws, alice, "2026-11-01", 2, "2026-11-01T10:00:02.000Z")
    _legacy_note(aws, alice, "2026-11-01", 1, "2026-11-01T10:00:01.000Z")
    _legacy_note(aws, team, "2026-11-03", 1, "2026-11-03T09:00:00.000Z")
    before = list(index.due_scopes("2026-11-26T00:00:00.000Z"))

    moved = backfill_legacy(aws, "MemoryTable")
    again = backfill_legacy(aws, "MemoryTable")
    due = list(index.due_scopes("2026-11-26T00:00:00.000Z"))

    assert before == []  # the planner reads markers only: legacy notes are invisible until the backfill
    assert (moved, again) == (3, 0)
    assert [(d.scope_key, d.oldest, d.notes) for d in due] == [
        ("user#u-old", "2026-11-01T10:00:01.000Z", 2),
        ("ws#w-old", "2026-11-03T09:00:00.000Z", 1),
    ]
