"""One import's record (``import#<import_id>`` in the scope's partition, docs/storage.md): what makes an import
idempotent by its id and resumable after a timeout.

The record holds the request's ``fingerprint``, ``done`` (how many of the import's notes, in the order they
are written, have an outcome), ``log`` (one entry per outcome: written, skipped or refused), the
``document_version`` an imported document was saved as, and ``finished`` once every note has its outcome (the
receipt is the log's: the same log answers the same receipt, whichever call reads it). Each outcome moves
``done`` from ``n`` to ``n + 1`` on condition it is still ``n``: a written note moves it inside the note's own
transaction (``step_item``, the transaction's ``completing`` item), so a note is never written without its
outcome being recorded, nor twice by two calls of one import. A call that finds ``done`` moved under it is
another call of the same import, running now.

The record lives as long as the scope's data (an erase takes it); ``KEEP_S`` after it began, DynamoDB's TTL
removes it, and the same id then imports again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, condition_failed, update_if
from agent_memory.storage.keys import import_sk

KEEP_S = 30 * 24 * 3600


@dataclass(frozen=True, slots=True)
class Progress:
    """What the record says when a call begins: its request's fingerprint, the outcomes so far, the document's
    version (None: not saved yet, or no document), and whether every note has its outcome."""

    fingerprint: str
    log: list[Any]
    document_version: int | None
    finished: bool

    @property
    def done(self) -> int:
        return len(self.log)


class ImportRecords:
    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    def _key(self, scope: Scope, import_id: str) -> dict[str, Any]:
        return {"pk": {"S": scope.key}, "sk": {"S": import_sk(import_id)}}

    def begin(self, scope: Scope, import_id: str, fingerprint: str, *, now_epoch: int) -> Progress:
        """The import's record: made now (nothing done), or as an earlier call of the same id left it."""
        try:
            self._client.put_item(
                TableName=self._table,
                Item={
                    **self._key(scope, import_id),
                    "fingerprint": {"S": fingerprint},
                    "done": {"N": "0"},
                    "log": {"L": []},
                    "expires_at": {"N": str(now_epoch + KEEP_S)},
                },
                ConditionExpression="attribute_not_exists(sk) OR expires_at < :now",
                ExpressionAttributeValues={":now": {"N": str(now_epoch)}},
            )
            return Progress(fingerprint, [], None, False)
        except ClientError as error:
            if not condition_failed(error):
                raise
        item = self._client.get_item(TableName=self._table, Key=self._key(scope, import_id), ConsistentRead=True)
        held = item.get("Item") or {}
        version = held.get("document_version", {}).get("N")
        return Progress(
            held.get("fingerprint", {}).get("S", ""),
            [json.loads(entry["S"]) for entry in held.get("log", {}).get("L", [])],
            int(version) if version is not None else None,
            held.get("finished", {}).get("BOOL", False),
        )

    def step_item(self, scope: Scope, import_id: str, done: int, entry: Any) -> dict[str, Any]:
        """The transaction item that records outcome number ``done + 1`` (``entry``, JSON), on condition that
        ``done`` outcomes are recorded: no more (another call got there first), no fewer."""
        return {
            "Update": {
                "TableName": self._table,
                "Key": self._key(scope, import_id),
                "UpdateExpression": "SET done = :next, #log = list_append(#log, :entry)",
                "ConditionExpression": "done = :done",
                "ExpressionAttributeNames": {"#log": "log"},
                "ExpressionAttributeValues": {
                    ":done": {"N": str(done)},
                    ":next": {"N": str(done + 1)},
                    ":entry": {"L": [{"S": json.dumps(entry, separators=(",", ":"))}]},
                },
            }
        }

    def step(self, scope: Scope, import_id: str, done: int, entry: Any) -> bool:
        """``step_item`` on its own (a note skipped or refused writes nothing else); False when another call
        recorded that outcome first."""
        return update_if(self._client, **self.step_item(scope, import_id, done, entry)["Update"])

    def document_saved(self, scope: Scope, import_id: str, version: int) -> None:
        self._client.update_item(
            TableName=self._table,
            Key=self._key(scope, import_id),
            UpdateExpression="SET document_version = :version",
            ExpressionAttributeValues={":version": {"N": str(version)}},
        )

    def finish(self, scope: Scope, import_id: str) -> None:
        """Every note has its outcome: the same id again answers the receipt and writes nothing."""
        self._client.update_item(
            TableName=self._table,
            Key=self._key(scope, import_id),
            UpdateExpression="SET finished = :yes",
            ExpressionAttributeValues={":yes": {"BOOL": True}},
        )
