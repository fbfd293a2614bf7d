"""Whole-scope reads and deletes for export and erase: a scope's items in key order, deleted in batches.

An erase in progress is recorded in the scope's own partition (``erase#all`` or ``erase#author#<user>``):
its counts so far and when it started. The item is written before the first delete and removed after the
last, so a call that finds it finishes what an interrupted one started, and answers for both. Beginning and
ending an erase also moves the scope's erase mark (``storage.due_markers``): no consolidation that read the
scope before or during the erase saves a version after it.

Each page is counted once, whatever is sent again or wherever a call stops: the record takes the page's sort
keys (``page``, with a ``page_id`` of its own) and its counts in one conditional update *before* any of them
is deleted, and lets go of the page after the last delete. An update sent again after its answer was lost
meets its own ``page_id`` (counted already); a call that stopped between the two finds the page still held
and deletes it without counting it again. Counting after the deletes (plain ``ADD``s) counted a page twice
when its ``ADD`` was sent again, and never when the call stopped before the ``ADD``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.basics.errors import StorageUnavailable
from agent_memory.domain.document import Author, Document, Reason
from agent_memory.domain.notes import Note, note_id
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import InjectionsAnswer
from agent_memory.storage.client import DynamoDB, condition_failed, query_pages, update_if
from agent_memory.storage.document_store import version_from_item
from agent_memory.storage.due_markers import DueMarkers
from agent_memory.storage.injection_records import list_injections
from agent_memory.storage.keys import ERASE_PREFIX, NOTE_PREFIX, parse_note_sk, version_sk
from agent_memory.storage.note_items import SUPERSEDES, note_from_item, unlinked_items

_BATCH = 25
_BATCH_ATTEMPTS = 5
_NOTES_HIGH = NOTE_PREFIX + "~"
_VERSIONS_HIGH = version_sk(10**10 - 1)


@dataclass(frozen=True, slots=True)
class PartitionItem:
    """One item of a scope's partition as an erase reads it: its sort key, the length of its text (a note's; 0 for
    any other item: what an erase of notes gives back) and, for a note, the notes it superseded (what ``unlink``
    takes it out of)."""

    sk: str
    chars: int = 0
    supersedes: tuple[str, ...] = ()

    @staticmethod
    def of(item: dict[str, Any]) -> PartitionItem:
        """The item as ``keys`` projects it (``sk``, ``text``, ``supersedes``)."""
        text, supersedes = item.get("text", {}).get("S", ""), item.get(SUPERSEDES, {}).get("SS", [])
        return PartitionItem(item["sk"]["S"], len(text), tuple(sorted(supersedes)))


@dataclass(frozen=True)
class ScopeItems:
    client: Any
    table: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "client", DynamoDB(self.client))  # every call's errors mapped once

    def page(
        self, scope: Scope, *, low: str, high: str, after: str | None, limit: int, attributes: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` items with ``low <= sk <= high``, after sort key ``after``, in key order, as DynamoDB
        answers them; and the last sort key read when more may follow (else None). What the typed pages read."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, ":low": {"S": low}, ":high": {"S": high}},
            "Limit": limit,
        }
        if attributes:
            request["ProjectionExpression"] = attributes
        if after:
            request["ExclusiveStartKey"] = {"pk": {"S": scope.key}, "sk": {"S": after}}
        items: list[dict[str, Any]] = []
        for page in query_pages(self.client, request):
            items.extend(page["Items"])
            if len(items) >= limit or "LastEvaluatedKey" not in page:
                more = "LastEvaluatedKey" in page
                return items[:limit], (items[:limit][-1]["sk"]["S"] if more and items else None)
            request["Limit"] = limit - len(items)
        return items, None

    def versions_page(
        self, scope: Scope, *, after: str | None, limit: int
    ) -> tuple[list[tuple[Document, Reason, Author]], str | None]:
        """Up to ``limit`` kept versions after sort key ``after``, oldest first, each as it was saved (an export's
        page); and the last sort key read when more may follow."""
        rows, last = self.page(scope, low=version_sk(1), high=_VERSIONS_HIGH, after=after, limit=limit)
        return [version_from_item(row) for row in rows], last

    def notes_page(self, scope: Scope, *, after: str | None, limit: int) -> tuple[list[Note], str | None]:
        """Up to ``limit`` notes after sort key ``after``, in key order (an export's page); and the last sort key
        read when more may follow."""
        rows, last = self.page(scope, low=NOTE_PREFIX, high=_NOTES_HIGH, after=after, limit=limit)
        return [note_from_item(row) for row in rows], last

    def keys(self, scope: Scope, *, prefix: str = "", author: str | None = None) -> Iterator[list[PartitionItem]]:
        """Pages of the scope's items (sort key and text), erase records left out. Each page is read from the
        start again, so deleting what a page held never skips an item, and one written meanwhile is found too.
        With ``author``: only the notes whose ``origin.user_id`` it is, in one pass."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk" + (" AND begins_with(sk, :prefix)" if prefix else ""),
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, **({":prefix": {"S": prefix}} if prefix else {})},
            "ProjectionExpression": f"sk, #text, {SUPERSEDES}",
            "ExpressionAttributeNames": {"#text": "text"},
            "Limit": 1000,
        }
        if author is not None:  # one pass over the notes: reading from the start again would re-read the others
            request["FilterExpression"] = "origin_user_id = :author"
            request["ExpressionAttributeValues"][":author"] = {"S": author}
            for page in query_pages(self.client, request):
                if page["Items"]:
                    yield [PartitionItem.of(item) for item in page["Items"]]
            return
        while True:
            found: list[dict[str, Any]] = []
            for page in query_pages(self.client, dict(request)):
                found.extend(item for item in page["Items"] if not item["sk"]["S"].startswith(ERASE_PREFIX))
                if found:
                    break
            if not found:
                return
            yield [PartitionItem.of(item) for item in found]

    def unlink(self, scope: Scope, page: list[PartitionItem]) -> None:
        """Before a page of notes (as ``keys`` reads them) is erased: take each one's id out of the
        ``superseded_by`` of the notes it superseded (``note_items.unlinked_items``), one update each, a note gone
        already skipped. Done again by a resumed erase, it changes nothing more."""
        for item in page:
            gone = note_id(*parse_note_sk(item.sk))
            for link in unlinked_items(self.table, scope, gone, list(item.supersedes)):
                update_if(self.client, **link["Update"])

    def delete(self, scope: Scope, sort_keys: list[str]) -> None:
        """Delete these items, 25 per BatchWriteItem; what DynamoDB leaves unprocessed is asked again."""
        for start in range(0, len(sort_keys), _BATCH):
            batch = sort_keys[start : start + _BATCH]
            request: dict[str, Any] = {
                self.table: [{"DeleteRequest": {"Key": {"pk": {"S": scope.key}, "sk": {"S": sk}}}} for sk in batch]
            }
            for attempt in range(_BATCH_ATTEMPTS):
                if attempt:
                    time.sleep(0.02 * 2**attempt)
                answer = self.client.batch_write_item(RequestItems=request)
                request = answer.get("UnprocessedItems") or {}
                if not request:
                    break
            if request:
                raise StorageUnavailable("memory storage is busy; the erase stopped midway, call it again to finish")

    def begin_erase(self, scope: Scope, record: str, started_at: str) -> dict[str, int]:
        """The erase record (created, or found from an interrupted call) and the counts it holds so far; a page
        that an interrupted call counted but may not have deleted is deleted first (counted already)."""
        DueMarkers(self.client, self.table).erasing(scope, running=True)  # before the first delete
        item = self.client.update_item(
            TableName=self.table,
            Key=self._record_key(scope, record),
            UpdateExpression="SET started_at = if_not_exists(started_at, :now)",
            ExpressionAttributeValues={":now": {"S": started_at}},
            ReturnValues="ALL_NEW",
        )["Attributes"]
        if "page_id" in item:
            self._finish_page(scope, record, item)
        return {kind: int(item[kind]["N"]) for kind in ("notes", "versions", "other") if kind in item}

    def erase_page(self, scope: Scope, record: str, sort_keys: list[str], counts: dict[str, int]) -> str:
        """Count these items on the erase record, then delete them (see the module's docstring). The page's id:
        what the counters the page gives back are moved under, once (``UsageStore.give_back``'s ``once``)."""
        page_id = uuid.uuid4().hex
        changed = {kind: count for kind, count in counts.items() if count}
        try:
            self.client.update_item(
                TableName=self.table,
                Key=self._record_key(scope, record),
                UpdateExpression="SET page = :page, page_id = :id"
                + "".join(f", #{kind} = if_not_exists(#{kind}, :zero) + :{kind}" for kind in changed),
                ConditionExpression="attribute_exists(started_at) AND attribute_not_exists(page_id)",
                **({"ExpressionAttributeNames": {f"#{kind}": kind for kind in changed}} if changed else {}),
                ExpressionAttributeValues={
                    ":page": {"L": [{"S": sk} for sk in sort_keys]},
                    ":id": {"S": page_id},
                    ":zero": {"N": "0"},
                    **{f":{kind}": {"N": str(count)} for kind, count in changed.items()},
                },
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if not condition_failed(error):
                raise
            holder = error.response.get("Item") or {}
            if holder.get("page_id", {}).get("S") != page_id:  # another call's page, or its record ended
                raise StorageUnavailable("another erase of this memory is running; call the erase again") from None
        self._finish_page(scope, record, {"page_id": {"S": page_id}, "page": {"L": [{"S": sk} for sk in sort_keys]}})
        return page_id

    def _finish_page(self, scope: Scope, record: str, item: dict[str, Any]) -> None:
        """Delete a counted page's items, then let go of the page (only if it is still that page)."""
        self.delete(scope, [key["S"] for key in item["page"]["L"]])
        update_if(  # refused: sent again after its answer was lost, the page is let go already
            self.client,
            TableName=self.table,
            Key=self._record_key(scope, record),
            UpdateExpression="REMOVE page, page_id",
            ConditionExpression="page_id = :id",
            ExpressionAttributeValues={":id": item["page_id"]},
        )

    def _record_key(self, scope: Scope, record: str) -> dict[str, Any]:
        return {"pk": {"S": scope.key}, "sk": {"S": ERASE_PREFIX + record}}

    def end_erase(self, scope: Scope, record: str) -> None:
        DueMarkers(self.client, self.table).erasing(scope, running=False)  # after the last delete
        self.client.delete_item(TableName=self.table, Key=self._record_key(scope, record))

    def injections(
        self, scope: Scope, *, thread_id: str | None, limit: int, cursor: str | None, now_epoch: int
    ) -> InjectionsAnswer:
        """What the scope's turns were shown, newest first (``storage.injection_records.list_injections``)."""
        return list_injections(
            self.client, self.table, scope, thread_id=thread_id, limit=limit, cursor=cursor, now_epoch=now_epoch
        )
