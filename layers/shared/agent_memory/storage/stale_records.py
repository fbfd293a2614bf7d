"""What a deleted note leaves behind in its scope, voided with it (docs/people.md "Erase").

A note's text and provenance are copied into four kinds of record beside it: the ``Idempotency-Key`` record
of the ``remember`` that wrote it (its answer holds the note, text included), the flush claim of the
compaction event that wrote it (``note_id``), the claim of the extraction that wrote it (``note_ids``), and the
injection records of the turns that were shown it (``note_ids``). When notes are deleted (the dashboard's
delete, a member's ``?author=me`` erase), those records go too: an idempotency record or a flush claim naming
a deleted note is deleted (a repeat of that key or that compaction event then runs again: the caller sends the
text again, the service keeps none of it); an extraction claim loses the deleted ids (a repeat answers
``duplicate`` with the notes it still names) and goes once it names none (a repeat then extracts again, as a
flush claim's does); an injection record loses the deleted ids. A member's erase also deletes that member's
own turns (the record's ``user_id``) whole; every other member's turns stay, the deleted ids taken out. A
record written before turns named their member has no ``user_id``: whose turn it was cannot be told, so it is
only trimmed.

``trim_and_list`` reads what is stale (each kind one Query on its prefix in the scope's partition, projected to
what is needed: idempotency records live 24 hours, flush and extraction claims 30 days, injection records
``MEMORY_INJECTION_TTL_DAYS``) and trims the extraction claims and the others' injection records; the caller
deletes what goes: a member's erase through its erase record, so each deleted record is counted in the receipt
once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, condition_failed, query_pages
from agent_memory.storage.keys import EXTRACTION_PREFIX, INJECTION_PREFIX

IDEMPOTENT_REMEMBER = "idem#remember#"
FLUSH_CLAIM = "flush#"


@dataclass(frozen=True, slots=True)
class Stale:
    """What deleted notes left behind: the sort keys of the records that go whole, and how many injection
    records of other turns lost ids."""

    gone: list[str]
    trimmed: int


class StaleRecords:
    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    def trim_and_list(self, scope: Scope, note_ids: set[str], *, author: str | None = None) -> Stale:
        """The records of ``scope`` that name one of ``note_ids`` and must go (with ``author``, that member's own
        turns too); the other turns' records that show one of them are trimmed here, in place."""
        if not note_ids and author is None:
            return Stale([], 0)
        gone: list[str] = []
        for item in self._items(scope, IDEMPOTENT_REMEMBER, "sk, answer"):
            note = answered_note(item)
            if note and (note.get("id") in note_ids or (author is not None and origin_user(note) == author)):
                gone.append(item["sk"]["S"])
        for item in self._items(scope, FLUSH_CLAIM, "sk, note_id"):
            if item.get("note_id", {}).get("S") in note_ids:
                gone.append(item["sk"]["S"])
        trimmed = 0
        for item in self._items(scope, EXTRACTION_PREFIX, "sk, note_ids"):
            named = [one["S"] for one in item.get("note_ids", {}).get("L", [])]
            if note_ids.intersection(named):
                kept = [one for one in named if one not in note_ids]
                if kept:
                    self._keep_only(scope, item["sk"]["S"], named, kept)
                else:
                    gone.append(item["sk"]["S"])
        for item in self._items(scope, INJECTION_PREFIX, "sk, user_id, note_ids"):
            if author is not None and item.get("user_id", {}).get("S") == author:
                gone.append(item["sk"]["S"])
                continue
            shown = [one["S"] for one in item.get("note_ids", {}).get("L", [])]
            if note_ids.intersection(shown):
                trimmed += self._keep_only(scope, item["sk"]["S"], shown, [one for one in shown if one not in note_ids])
        return Stale(gone, trimmed)

    def void(self, scope: Scope, note_ids: set[str]) -> None:
        """Void what the deleted ``note_ids`` left (a dashboard's delete of a note: no receipt to count in)."""
        for sk in self.trim_and_list(scope, note_ids).gone:
            self._client.delete_item(TableName=self._table, Key={"pk": {"S": scope.key}, "sk": {"S": sk}})

    def _items(self, scope: Scope, prefix: str, projection: str) -> Iterator[dict[str, Any]]:
        request = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, ":prefix": {"S": prefix}},
            "ProjectionExpression": projection,
        }
        for page in query_pages(self._client, request):
            yield from page["Items"]

    def _keep_only(self, scope: Scope, sk: str, read: list[str], note_ids: list[str]) -> int:
        """1 when the record now names only ``note_ids``; 0 when it expired meanwhile (nothing to trim) or its
        list is no longer the one ``read`` (an extraction still writing added a note: the deleted id stays named
        until the claim expires, and a repeat never answers a note that is gone, ``Extractor._stored``)."""
        try:
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": sk}},
                UpdateExpression="SET note_ids = :ids",
                ConditionExpression="size(note_ids) = :read",
                ExpressionAttributeValues={
                    ":ids": {"L": [{"S": one} for one in note_ids]},
                    ":read": {"N": str(len(read))},
                },
            )
            return 1
        except ClientError as error:
            if not condition_failed(error):
                raise
            return 0


def answered_note(item: dict[str, Any]) -> dict[str, Any] | None:
    """The note a ``remember``'s stored answer holds, if it holds one (a refusal holds none)."""
    try:
        answer = json.loads(item.get("answer", {}).get("S", "null"))
    except ValueError:
        return None
    note = answer.get("note") if isinstance(answer, dict) else None
    return note if isinstance(note, dict) else None


def origin_user(note: dict[str, Any]) -> object:
    """Whose note it is: a member's erase takes every note of theirs, so its record goes even when the erase
    resumes after the notes themselves are gone (their ids no longer known)."""
    origin = note.get("origin")
    return origin.get("user_id") if isinstance(origin, dict) else None
