"""What the nightly consolidation reads and writes besides documents: due notes, marks, runs.

- Due notes come from the sparse ``Unconsolidated`` index, shard by shard, oldest first (no Scan).
- A folded group leaves a pending-marks record (``sk = consolidation#pending``) written in the same
  transaction as the document version. It lists the notes still to mark, and sits in the index too
  (``uc_sk = #pending#<scope>``, which sorts before every timestamp), so the next run finds and finishes
  it before it plans anything: a note is marked even if a run dies midway, and never folded twice.
- Runs are serialised by a lease (``pk = consolidation, sk = lease``) and recorded for operators
  (``pk = consolidation, sk = run#<started_at>#<run_id>``).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.notes import note_id
from agent_memory.scope import Scope
from agent_memory.storage.client import as_unavailable, error_code, query_pages
from agent_memory.storage.keys import UNCONSOLIDATED_INDEX, unconsolidated_shard, unconsolidated_shards

PENDING_SK = "consolidation#pending"
_PENDING_PREFIX = "#pending#"
_RUNS_PK = "consolidation"


@dataclass(frozen=True, slots=True)
class DueNote:
    scope_key: str
    sk: str
    day: str
    position: int
    text: str
    created_at: str

    @property
    def id(self) -> str:
        return note_id(self.day, self.position)


@dataclass(frozen=True, slots=True)
class PendingMarks:
    scope: Scope
    note_sks: list[str]


class ConsolidationStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def _query_index(self, shard: str, condition: str, values: dict[str, Any]) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": UNCONSOLIDATED_INDEX,
            "KeyConditionExpression": f"uc_pk = :shard AND {condition}",
            "ExpressionAttributeValues": {":shard": {"S": shard}, **values},
            "ScanIndexForward": True,
        }
        for page in query_pages(self._client, kwargs):
            yield from page["Items"]

    def pending_marks(self) -> list[PendingMarks]:
        """Every group that a run folded but did not finish marking."""
        found = []
        for shard in unconsolidated_shards():
            for item in self._query_index(shard, "begins_with(uc_sk, :p)", {":p": {"S": _PENDING_PREFIX}}):
                found.append(PendingMarks(Scope.from_key(item["pk"]["S"]), [v["S"] for v in item["note_sks"]["L"]]))
        return found

    def due_notes(self, cutoff: str) -> Iterator[DueNote]:
        """Unconsolidated notes created strictly before ``cutoff`` (ISO instant), oldest first across shards."""
        streams = [
            (
                _due_note(item)
                for item in self._query_index(
                    shard, "uc_sk BETWEEN :low AND :cutoff", {":low": {"S": "0"}, ":cutoff": {"S": cutoff}}
                )
            )
            for shard in unconsolidated_shards()
        ]
        return heapq.merge(*streams, key=lambda note: (note.created_at, note.scope_key, note.sk))

    def pending_item(self, scope: Scope, notes: list[DueNote], run_id: str) -> dict[str, Any]:
        """The transaction item recording which notes the new version folded and are still to mark."""
        return {
            "Put": {
                "TableName": self._table,
                "Item": {
                    "pk": {"S": scope.key},
                    "sk": {"S": PENDING_SK},
                    "note_sks": {"L": [{"S": note.sk} for note in notes]},
                    "run_id": {"S": run_id},
                    "uc_pk": {"S": unconsolidated_shard(scope.key)},
                    "uc_sk": {"S": f"{_PENDING_PREFIX}{scope.key}"},
                },
                "ConditionExpression": "attribute_not_exists(sk)",
            }
        }

    def mark_consolidated(self, scope: Scope, note_sk: str) -> None:
        """Flag one note and take it out of the index; a note deleted meanwhile is simply skipped.

        Only these two attributes change: the note's text, day and position are never rewritten.
        """
        try:
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": note_sk}},
                UpdateExpression="SET consolidated = :true REMOVE uc_pk, uc_sk",
                ConditionExpression="attribute_exists(sk)",
                ExpressionAttributeValues={":true": {"BOOL": True}},
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise as_unavailable(error) or error from None

    def clear_pending(self, scope: Scope) -> None:
        try:
            self._client.delete_item(TableName=self._table, Key={"pk": {"S": scope.key}, "sk": {"S": PENDING_SK}})
        except ClientError as error:
            raise as_unavailable(error) or error from None

    def acquire_lease(self, run_id: str, *, now_epoch: int, lease_s: int) -> bool:
        """True if this run may proceed: no other run holds an unexpired lease."""
        try:
            self._client.put_item(
                TableName=self._table,
                Item={
                    "pk": {"S": _RUNS_PK},
                    "sk": {"S": "lease"},
                    "run_id": {"S": run_id},
                    "lease_until": {"N": str(now_epoch + lease_s)},
                },
                ConditionExpression="attribute_not_exists(sk) OR lease_until < :now OR run_id = :run",
                ExpressionAttributeValues={":now": {"N": str(now_epoch)}, ":run": {"S": run_id}},
            )
            return True
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False
            raise as_unavailable(error) or error from None

    def release_lease(self, run_id: str) -> None:
        try:
            self._client.delete_item(
                TableName=self._table,
                Key={"pk": {"S": _RUNS_PK}, "sk": {"S": "lease"}},
                ConditionExpression="run_id = :run",
                ExpressionAttributeValues={":run": {"S": run_id}},
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise

    def save_run(self, record: dict[str, Any]) -> None:
        """Write (or overwrite) a run's record; ``record`` is the public shape, stored as one JSON string."""
        self._client.put_item(
            TableName=self._table,
            Item={
                "pk": {"S": _RUNS_PK},
                "sk": {"S": f"run#{record['started_at']}#{record['run_id']}"},
                "record": {"S": json.dumps(record)},
            },
        )

    def runs(self, limit: int) -> list[dict[str, Any]]:
        """The most recent runs, newest first."""
        answer = self._client.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :run)",
            ExpressionAttributeValues={":pk": {"S": _RUNS_PK}, ":run": {"S": "run#"}},
            ScanIndexForward=False,
            Limit=limit,
        )
        return [json.loads(item["record"]["S"]) for item in answer["Items"]]


def _due_note(item: dict[str, Any]) -> DueNote:
    return DueNote(
        scope_key=item["pk"]["S"],
        sk=item["sk"]["S"],
        day=item["day"]["S"],
        position=int(item["position"]["N"]),
        text=item["text"]["S"],
        created_at=item["created_at"]["S"],
    )
