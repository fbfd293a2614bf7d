"""The consolidation against a plain moto server: ``moto_server`` as a subprocess, none of local/moto_fast.py's
patches, at ``AWS_ENDPOINT_URL_DYNAMODB`` with the default timeouts (docs/testing.md "Plain moto"). This is the
DynamoDB a chat backend's developers test with; on it every TransactWriteItems copies the whole table once per
item, so a fold's request pattern (how many transaction items, how many requests) is what decides whether it
finishes within the timeouts.

``PLAIN_MOTO_SCOPES`` sets the number of one-note scopes (120 by default, the service's stated target).

Groups are folded one at a time, the default when ``AWS_ENDPOINT_URL_DYNAMODB`` is set (as the local stack's
queue poller delivers them): plain moto is not thread-safe. Concurrent transactions there copy a table while
another request changes it (answered 500), and a cancelled one restores its whole-table copy, undoing what other
requests wrote meanwhile (seen as a pending-marks put refused by a record that no request left, an erase mark undone
and the group refused as ``note_erased``, or a note's mark undone). DynamoDB has neither fault. A request that
the client gives up on is such a concurrency too: botocore sends it again while the first attempt still runs in
the server. So the consolidation waits up to 10 s for an answer (``bootstrap.CONSOLIDATION_READ_TIMEOUT_S``)
where a chat turn waits 2 s. With 2 s, of four runs at 120 scopes, one undid a note's mark (the note counted as
folded, left unmarked, so folded again the next night) and another refused a group as ``note_erased``.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from tests.support.consolidation import PERSONAL, RUN_AT, consolidate, merge
from tests.support.fakes import FakeChatModel
from tests.support.models import scripted_models
from tests.support.moto_server import start_streams
from tests.support.scopes import write_note

pytestmark = pytest.mark.long

SCOPES = int(os.environ.get("PLAIN_MOTO_SCOPES", "120"))
GROUP = 200  # the default MEMORY_CONSOLIDATION_MAX_NOTES: one whole group


def _fold_with_default_timeouts(client, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The night's run, with the service's default DynamoDB timeouts (what is under test), and the table's stream
    on, holding the night's writes only (the notes are 9 days old; ``start_streams`` says why)."""
    start_streams(client)
    monkeypatch.delenv("MEMORY_DYNAMODB_READ_TIMEOUT_S")
    bootstrap.reset()
    scripted_models().fold = FakeChatModel(reply=merge)
    return consolidate()


def _marked(client, scope: Scope) -> int:
    rows = client.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :n)",
        FilterExpression="consolidated = :true",
        ExpressionAttributeValues={":p": {"S": scope.key}, ":n": {"S": "note#"}, ":true": {"BOOL": True}},
    )
    return int(rows["Count"])


def test_a_group_of_200_notes_folds_on_the_first_night(plain_moto, monkeypatch):
    for i in range(GROUP):
        write_note(PERSONAL, RUN_AT - timedelta(days=9, seconds=GROUP - i), f"fact number {i}")

    run = _fold_with_default_timeouts(plain_moto, monkeypatch)

    assert (run["status"], run["groups_planned"], run["groups_done"], run["groups_failed"]) == ("finished", 1, 1, 0)
    assert run["notes_consolidated"] == GROUP and run["notes_remaining"] == 0
    assert _marked(plain_moto, PERSONAL) == GROUP


def test_every_due_scope_folds_the_same_night_without_a_group_limit(plain_moto, monkeypatch):
    scopes = [Scope("team", f"w-{i}") for i in range(SCOPES)]
    for i, scope in enumerate(scopes):
        write_note(scope, RUN_AT - timedelta(days=9, seconds=SCOPES - i), f"fact {i}")

    run = _fold_with_default_timeouts(plain_moto, monkeypatch)

    assert (run["status"], run["groups_planned"], run["groups_done"], run["groups_failed"]) == (
        "finished",
        SCOPES,
        SCOPES,
        0,
    ), bootstrap.services().consolidation_store.runs(1)[0]["failures"]
    marked = {scope.key: _marked(plain_moto, scope) for scope in scopes}
    assert (run["notes_consolidated"], sum(marked.values())) == (SCOPES, SCOPES), marked
