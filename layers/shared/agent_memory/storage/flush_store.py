"""At most one flush note per compaction event per scope: a claim marker beside the scope's notes.

A compaction event is a thread's: ``sk = flush#<thread_id>#<compaction_id>``, so the same ``compaction_id``
from another thread (another member's, or the same member's other conversation) is another event. An
invocation first claims the event with a conditional put (a duplicate is seen here, before any model call),
then writes the note and marks the claim ``written`` in one transaction. A failed invocation releases its
claim so that a retry can write; one that died without releasing leaves a lease that expires after ``LEASE_S``.

A claim written before claims named their thread (``flush#<compaction_id>``) is still read for
``CLAIM_TTL_S`` after an upgrade (``earlier_claim``): the flush answers it as a duplicate when its note came
from the same thread, so a retry of an event flushed before the upgrade writes no second note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, claim_record, condition_failed, live_record
from agent_memory.storage.keys import flush_sk, legacy_flush_sk

# Longer than the flush's Lambda timeout, so a live invocation never loses its claim to a retry.
LEASE_S = 10
# DynamoDB's TTL removes a claim after this long: by then no retry of that compaction event can come.
CLAIM_TTL_S = 30 * 24 * 3600


@dataclass(frozen=True, slots=True)
class FlushMarker:
    """What an earlier invocation left for this compaction event."""

    status: str  # "in_progress" or "written"
    note_id: str | None
    token: str | None = None  # the claiming invocation's


def _key(scope: Scope, thread_id: str, compaction_id: str) -> dict[str, Any]:
    return {"pk": {"S": scope.key}, "sk": {"S": flush_sk(thread_id, compaction_id)}}


class FlushStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    def claim(
        self, scope: Scope, thread_id: str, compaction_id: str, *, token: str, now_epoch: int
    ) -> FlushMarker | None:
        """One request: None if this invocation now owns the event, else the marker that is already there."""
        holder = claim_record(
            self._client,
            self._table,
            {**_key(scope, thread_id, compaction_id), "token": {"S": token}},
            now_epoch=now_epoch,
            lease_s=LEASE_S,
            keep_s=CLAIM_TTL_S,
        )
        return None if holder is None else _marker(holder)

    def earlier_claim(self, scope: Scope, compaction_id: str, *, now_epoch: int) -> FlushMarker | None:
        """The live claim of ``compaction_id`` under the key format used before keys named their thread, if any: its
        thread is known only from its note (``FlushService`` reads it)."""
        key = {"pk": {"S": scope.key}, "sk": {"S": legacy_flush_sk(compaction_id)}}
        holder = live_record(self._client, self._table, key, now_epoch=now_epoch)
        return None if holder is None else _marker(holder)

    def release(self, scope: Scope, thread_id: str, compaction_id: str, *, token: str) -> FlushMarker | None:
        """Give the event back after a failure (only if the claim is still ours and not written).

        None when it was given back; else the marker that kept it, in the same request: ``written`` with
        this invocation's token means that its note was written after all (its answer was lost).
        """
        try:
            self._client.delete_item(
                TableName=self._table,
                Key=_key(scope, thread_id, compaction_id),
                ConditionExpression="#status = :in_progress AND #token = :token",
                ExpressionAttributeNames={"#status": "status", "#token": "token"},
                ExpressionAttributeValues={":in_progress": {"S": "in_progress"}, ":token": {"S": token}},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
            return None
        except ClientError as error:
            if not condition_failed(error):
                raise
            return _marker(error.response.get("Item") or {})


def completion_update(
    table: str, scope: Scope, thread_id: str, compaction_id: str, *, token: str, note_id: str
) -> dict[str, Any]:
    """The transaction item that marks the claim ``written`` with its note (``NoteStore.append_completing_flush``
    writes it with the note); it fails if the claim is no longer ``token``'s."""
    return {
        "Update": {
            "TableName": table,
            "Key": _key(scope, thread_id, compaction_id),
            "UpdateExpression": "SET #status = :written, note_id = :note_id REMOVE lease_until",
            "ConditionExpression": "#status = :in_progress AND #token = :token",
            "ExpressionAttributeNames": {"#status": "status", "#token": "token"},
            "ExpressionAttributeValues": {
                ":written": {"S": "written"},
                ":in_progress": {"S": "in_progress"},
                ":note_id": {"S": note_id},
                ":token": {"S": token},
            },
        }
    }


def _marker(item: dict[str, Any]) -> FlushMarker:
    return FlushMarker(
        status=item.get("status", {}).get("S", "in_progress"),
        note_id=item.get("note_id", {}).get("S"),
        token=item.get("token", {}).get("S"),
    )
