"""One import's record (``import#<import_id>`` in the scope's partition, docs/storage.md) and its notes'
outcomes (``imp#<import_id>#<n>``): what makes an import idempotent by its id and resumable after a timeout.

The record holds the request's ``fingerprint``, the ``document_version`` an imported document was saved as,
and, once every note has its outcome, ``finished`` and the receipt's ``log`` (one entry per outcome: written,
skipped or refused), written once. Each note's outcome is its own small item, number ``n`` in the order the
notes are written, put on condition that it is not there yet: a written note puts it inside the note's own
transaction (``step_item``, the transaction's ``completing`` item), so a note is never written without its
outcome being recorded, nor twice by two calls of one import. A call begins where the outcomes stop (one
``Query``); one that finds outcome ``n`` put under it is another call of the same import, running now. An
outcome is a few dozen bytes whatever the import's size, so each note costs the same few write units (the
record, rewritten by each note, grew to 15 KB a page and cost 16 more units a note).

Records and outcomes live as long as the scope's data (an erase takes them); ``KEEP_S`` after the import
began, DynamoDB's TTL removes them, and the same id then imports again. The outcomes carry their record's
``expires_at``, so those of an expired import of the same id that the TTL has not removed yet are told apart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, condition_failed, query_pages
from agent_memory.storage.keys import import_outcome_sk, import_outcomes_prefix, import_sk

KEEP_S = 30 * 24 * 3600


@dataclass(frozen=True, slots=True)
class Progress:
    """What the record says when a call begins: its request's fingerprint, the outcomes so far, the document's
    version (None: not saved yet, or no document), whether every note has its outcome, and the record's
    ``expires_at`` (its outcomes carry it)."""

    scope: Scope
    import_id: str
    fingerprint: str
    log: list[Any]
    document_version: int | None
    finished: bool
    expires_at: int

    @property
    def done(self) -> int:
        return len(self.log)


def _entries(held: dict[str, Any]) -> list[Any]:
    return [json.loads(entry["S"]) for entry in held.get("L", [])]


class ImportRecords:
    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    def _key(self, scope: Scope, sk: str) -> dict[str, Any]:
        return {"pk": {"S": scope.key}, "sk": {"S": sk}}

    def begin(self, scope: Scope, import_id: str, fingerprint: str, *, now_epoch: int) -> Progress:
        """The import's record: made now (nothing done), or as an earlier call of the same id left it, with the
        outcomes that call recorded."""
        expires_at = now_epoch + KEEP_S
        try:
            self._client.put_item(
                TableName=self._table,
                Item={
                    **self._key(scope, import_sk(import_id)),
                    "fingerprint": {"S": fingerprint},
                    "expires_at": {"N": str(expires_at)},
                },
                ConditionExpression="attribute_not_exists(sk) OR expires_at < :now",
                ExpressionAttributeValues={":now": {"N": str(now_epoch)}},
            )
            return Progress(scope, import_id, fingerprint, [], None, False, expires_at)
        except ClientError as error:
            if not condition_failed(error):
                raise
        key = self._key(scope, import_sk(import_id))
        held = self._client.get_item(TableName=self._table, Key=key, ConsistentRead=True).get("Item") or {}
        version = held.get("document_version", {}).get("N")
        finished = held.get("finished", {}).get("BOOL", False)
        expires_at = int(held.get("expires_at", {}).get("N", str(expires_at)))
        log = _entries(held.get("log", {})) if finished else self._outcomes(scope, import_id, expires_at)
        return Progress(
            scope,
            import_id,
            held.get("fingerprint", {}).get("S", ""),
            log,
            int(version) if version is not None else None,
            finished,
            expires_at,
        )

    def _outcomes(self, scope: Scope, import_id: str, expires_at: int) -> list[Any]:
        """The outcomes recorded so far, in order: this import's, not those an expired one of the same id left."""
        prefix = {":pk": {"S": scope.key}, ":prefix": {"S": import_outcomes_prefix(import_id)}}
        pages = query_pages(
            self._client,
            {
                "TableName": self._table,
                "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
                "ExpressionAttributeValues": prefix,
                "ProjectionExpression": "outcome, expires_at",
                "ConsistentRead": True,
            },
        )
        ours = {"N": str(expires_at)}
        return [
            json.loads(item["outcome"]["S"]) for page in pages for item in page["Items"] if item["expires_at"] == ours
        ]

    def step_item(self, progress: Progress, done: int, entry: Any) -> dict[str, Any]:
        """The transaction item that records outcome number ``done + 1`` (``entry``, JSON), on condition that no
        call recorded it yet (an expired import's outcome of the same number is replaced)."""
        return {
            "Put": {
                "TableName": self._table,
                "Item": {
                    **self._key(progress.scope, import_outcome_sk(progress.import_id, done)),
                    "outcome": {"S": json.dumps(entry, separators=(",", ":"))},
                    "expires_at": {"N": str(progress.expires_at)},
                },
                "ConditionExpression": "attribute_not_exists(sk) OR expires_at < :expires",
                "ExpressionAttributeValues": {":expires": {"N": str(progress.expires_at)}},
            }
        }

    def step(self, progress: Progress, done: int, entry: Any) -> bool:
        """``step_item`` on its own (a note skipped or refused writes nothing else); False when another call
        recorded that outcome first."""
        try:
            self._client.put_item(**self.step_item(progress, done, entry)["Put"])
        except ClientError as error:
            if not condition_failed(error):
                raise
            return False
        return True

    def document_saved(self, progress: Progress, version: int) -> None:
        self._client.update_item(
            TableName=self._table,
            Key=self._key(progress.scope, import_sk(progress.import_id)),
            UpdateExpression="SET document_version = :version",
            ExpressionAttributeValues={":version": {"N": str(version)}},
        )

    def forget(self, progress: Progress) -> None:
        """The record of an import refused before it did anything (its document refused: over the quota; the
        document comes before any note, so no outcome exists), so that the refused body spends no id; kept if a
        call of it saved the document or finished meanwhile."""
        try:
            self._client.delete_item(
                TableName=self._table,
                Key=self._key(progress.scope, import_sk(progress.import_id)),
                ConditionExpression="attribute_not_exists(document_version) AND attribute_not_exists(finished)",
            )
        except ClientError as error:
            if not condition_failed(error):
                raise

    def finish(self, progress: Progress, log: list[Any]) -> None:
        """Every note has its outcome (``log``, in order): the receipt is kept on the record, and the same id
        again answers it and writes nothing."""
        entries = [{"S": json.dumps(entry, separators=(",", ":"))} for entry in log]
        self._client.update_item(
            TableName=self._table,
            Key=self._key(progress.scope, import_sk(progress.import_id)),
            UpdateExpression="SET finished = :yes, #log = :log",
            ExpressionAttributeNames={"#log": "log"},
            ExpressionAttributeValues={":yes": {"BOOL": True}, ":log": {"L": entries}},
        )
