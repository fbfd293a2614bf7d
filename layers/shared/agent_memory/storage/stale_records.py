"""What a deleted note leaves behind in its scope, voided with it (docs/people.md "Erase").

A note's text and provenance are copied into three kinds of record beside it: the ``Idempotency-Key`` record
of the ``remember`` that wrote it (its answer holds the note, text included), the flush claim of the
compaction event that wrote it (``note_id``), and the injection records of the turns that were shown it
(``note_ids``, and the thread of each turn). When notes are deleted (the dashboard's delete, a member's
``?author=me`` erase), those records go too: an idempotency record or a flush claim naming a deleted note
is deleted (a repeat of that key or that compaction event then runs again: the caller sends the text
again, the service keeps none of it); an injection record loses the deleted ids, and one of the author's
own turns (its ``user_id``, or a thread of theirs that wrote a deleted note) is deleted whole.

Each kind is one Query on its prefix in the scope's partition, projected to what is needed: idempotency
records live 24 hours, flush claims a day, injection records ``MEMORY_INJECTION_TTL_DAYS``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, condition_failed, query_pages

IDEMPOTENT_REMEMBER = "idem#remember#"
FLUSH_CLAIM = "flush#"
INJECTION = "inj#"


@dataclass(frozen=True, slots=True)
class Voided:
    idempotency: int = 0
    flush_claims: int = 0
    injections_deleted: int = 0
    injections_trimmed: int = 0


class StaleRecords:
    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    def void(
        self, scope: Scope, note_ids: set[str], *, author: str | None = None, threads: frozenset[str] = frozenset()
    ) -> Voided:
        """Void every record of ``scope`` that names one of ``note_ids`` (and, with ``author``, that author's
        turns: their ``user_id``, or one of ``threads``)."""
        if not note_ids and author is None:
            return Voided()
        idempotency = flush_claims = deleted = trimmed = 0
        for item in self._items(scope, IDEMPOTENT_REMEMBER, "sk, answer"):
            if _answered_note(item) in note_ids:
                self._delete(scope, item["sk"]["S"])
                idempotency += 1
        for item in self._items(scope, FLUSH_CLAIM, "sk, note_id"):
            if item.get("note_id", {}).get("S") in note_ids:
                self._delete(scope, item["sk"]["S"])
                flush_claims += 1
        for item in self._items(scope, INJECTION, "sk, thread_id, user_id, note_ids"):
            shown = [one["S"] for one in item.get("note_ids", {}).get("L", [])]
            theirs = author is not None and (
                item.get("user_id", {}).get("S") == author or item.get("thread_id", {}).get("S") in threads
            )
            if theirs:
                self._delete(scope, item["sk"]["S"])
                deleted += 1
            elif note_ids.intersection(shown):
                self._keep_only(scope, item["sk"]["S"], [one for one in shown if one not in note_ids])
                trimmed += 1
        return Voided(idempotency, flush_claims, deleted, trimmed)

    def _items(self, scope: Scope, prefix: str, projection: str) -> Iterator[dict[str, Any]]:
        request = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, ":prefix": {"S": prefix}},
            "ProjectionExpression": projection,
        }
        for page in query_pages(self._client, request):
            yield from page["Items"]

    def _delete(self, scope: Scope, sk: str) -> None:
        self._client.delete_item(TableName=self._table, Key={"pk": {"S": scope.key}, "sk": {"S": sk}})

    def _keep_only(self, scope: Scope, sk: str, note_ids: list[str]) -> None:
        try:
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": sk}},
                UpdateExpression="SET note_ids = :ids",
                ConditionExpression="attribute_exists(sk)",  # expired meanwhile: nothing to trim
                ExpressionAttributeValues={":ids": {"L": [{"S": one} for one in note_ids]}},
            )
        except ClientError as error:
            if not condition_failed(error):
                raise


def _answered_note(item: dict[str, Any]) -> str | None:
    try:
        answer = json.loads(item.get("answer", {}).get("S", "null"))
    except ValueError:
        return None
    note = answer.get("note") if isinstance(answer, dict) else None
    return note.get("id") if isinstance(note, dict) else None
