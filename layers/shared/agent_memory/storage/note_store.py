"""Notes in DynamoDB: append with a unique per-day position, read a range of days newest first."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, NamedTuple

from botocore.exceptions import ClientError

from agent_memory.clock import iso
from agent_memory.errors import StorageUnavailable
from agent_memory.notes import Note, Origin
from agent_memory.scope import Scope
from agent_memory.storage.client import as_unavailable, cancellation_codes, error_code, query_pages
from agent_memory.storage.keys import (
    NOTE_PREFIX,
    day_sk,
    note_sk,
    notes_of_days,
    parse_note_sk,
)
from agent_memory.storage.scope_index import ScopeIndex


def _note_item(scope: Scope, note: Note) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": {"S": scope.key},
        "sk": {"S": note_sk(note.day, note.position)},
        "day": {"S": note.day},
        "position": {"N": str(note.position)},
        "text": {"S": note.text},
        "created_at": {"S": note.created_at},
        "source": {"S": note.source},
        "origin_user_id": {"S": note.origin.user_id},
        "origin_thread_id": {"S": note.origin.thread_id},
        "consolidated": {"BOOL": note.consolidated},
    }
    if note.origin.compaction_id is not None:
        item["origin_compaction_id"] = {"S": note.origin.compaction_id}
    return item


def note_from_item(item: dict[str, Any]) -> Note:
    compaction = item.get("origin_compaction_id")
    return Note(
        day=item["day"]["S"],
        position=int(item["position"]["N"]),
        text=item["text"]["S"],
        created_at=item["created_at"]["S"],
        source=item["source"]["S"],
        origin=Origin(
            user_id=item["origin_user_id"]["S"],
            thread_id=item["origin_thread_id"]["S"],
            compaction_id=compaction["S"] if compaction else None,
        ),
        consolidated=item["consolidated"]["BOOL"],
    )


class KeyedNote(NamedTuple):
    """A note with the partition key it was stored under, so that a reader can check the scope again."""

    pk: str
    note: Note


class NoteText(NamedTuple):
    """What ranking needs of a note: where it is stored (scope and place) and its text."""

    pk: str
    day: str
    position: int
    text: str


_POSITION_ATTEMPTS = 5
# Notes read per page when listing days: about ten per day asked for (a typical day's worth), so a page
# reads little more than it shows, and a busy day costs one more Query, never one per empty day.
_NOTES_PER_DAY_PAGE = 10
_DAY_PAGE_MAX = 200
_BATCH_GET_ATTEMPTS = 3


def _position_taken(error: ClientError) -> bool:
    """The note's own conditional put failed: a note already holds this position."""
    if error_code(error) == "ConditionalCheckFailedException":
        return True
    codes = cancellation_codes(error)
    return bool(codes) and codes[0] == "ConditionalCheckFailed"


def _holder_write_id(error: ClientError) -> str | None:
    """The ``write_id`` of the note that holds the position, as the failed condition returned it."""
    if error_code(error) == "ConditionalCheckFailedException":
        item = error.response.get("Item") or {}
    else:
        reasons = error.response.get("CancellationReasons") or [{}]
        item = reasons[0].get("Item") or {}
    write_id: str | None = item.get("write_id", {}).get("S")
    return write_id


class NoteStore:
    """Every note of a scope lives in the scope's partition, sorted by day then position."""

    def __init__(self, client: Any, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def append(
        self,
        scope: Scope,
        *,
        created: datetime,
        text: str,
        source: str,
        origin: Origin,
        together_with: Callable[[Note], dict[str, Any]] | None = None,
    ) -> Note:
        """Two requests: take the next position of the day atomically, then write the note there.

        The counter's atomic ADD makes positions unique. The note's put is still conditional, and on a
        collision (a counter restored from an older backup, or an emulator without atomic updates) the
        note takes the next position instead: a gap is possible, a duplicate or an overwrite never.
        The note carries this call's ``write_id``: when the client retries a put whose answer was lost
        (a timeout after DynamoDB wrote it), the condition fails on the note this very call wrote, and
        that is a success, not a collision (taking the next position would write the note twice).

        ``created`` (UTC) gives the note its day and its ``created_at``. The scope's due marker
        (``storage.scope_index``) is updated once the note is written (one more request).
        ``together_with`` gives a second transaction item (e.g. the flush's completion mark) that must
        succeed with the note or neither is written; its failure surfaces as a ClientError.
        """
        day, created_at = created.date().isoformat(), iso(created)
        write_id = uuid.uuid4().hex
        for _ in range(_POSITION_ATTEMPTS):
            note = Note(
                day=day,
                position=self._next_position(scope, day),
                text=text,
                created_at=created_at,
                source=source,
                origin=origin,
            )
            put = {
                "TableName": self._table,
                "Item": {**_note_item(scope, note), "write_id": {"S": write_id}},
                "ConditionExpression": "attribute_not_exists(sk)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
            try:
                if together_with is None:
                    self._client.put_item(**put)
                else:
                    self._client.transact_write_items(TransactItems=[{"Put": put}, together_with(note)])
            except ClientError as error:
                if not _position_taken(error):
                    raise as_unavailable(error) or error from None
                if _holder_write_id(error) != write_id:
                    continue  # another note holds the position: take the next one
                # else: our own earlier attempt, retried by the client after its answer was lost
            # The scope's due marker (storage.scope_index), after the note so that no worker misses it.
            ScopeIndex(self._client, self._table).note_written(scope, created_at=created_at, day=day)
            return note
        raise StorageUnavailable("could not find a free position for the note; nothing was written, try again")

    def _next_position(self, scope: Scope, day: str) -> int:
        try:
            counter = self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": day_sk(day)}},
                UpdateExpression="ADD next_position :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
                ReturnValues="UPDATED_NEW",
            )
        except ClientError as error:
            raise as_unavailable(error) or error from None
        return int(counter["Attributes"]["next_position"]["N"])

    def get(self, scope: Scope, day: str, position: int) -> Note | None:
        try:
            answer = self._client.get_item(
                TableName=self._table, Key={"pk": {"S": scope.key}, "sk": {"S": note_sk(day, position)}}
            )
        except ClientError as error:
            raise as_unavailable(error) or error from None
        item = answer.get("Item")
        return note_from_item(item) if item else None

    def delete(self, scope: Scope, day: str, position: int) -> bool:
        """Remove one note; False if the scope holds no such note. The stream carries the removal to the index."""
        try:
            self._client.delete_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": note_sk(day, position)}},
                ConditionExpression="attribute_exists(sk)",
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False
            raise as_unavailable(error) or error from None
        return True

    def days_before(self, scope: Scope, *, before: str, days: int) -> tuple[list[tuple[str, list[Note]]], bool]:
        """The ``days`` most recent days that have notes, strictly before ``before``, newest first, with
        their notes newest first; and whether any older note exists (the "Load older" cursor).

        One descending Query over the notes, paged: empty days cost nothing, only notes are read.
        """
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {
                ":pk": {"S": scope.key},
                ":low": {"S": "note#"},
                ":high": {"S": f"note#{before}#"},
            },
            "ScanIndexForward": False,
            "Limit": min(_DAY_PAGE_MAX, _NOTES_PER_DAY_PAGE * (days + 1)),
        }
        found: list[tuple[str, list[Note]]] = []
        for page in query_pages(self._client, kwargs):
            for item in page["Items"]:
                note = note_from_item(item)
                if not found or found[-1][0] != note.day:
                    if len(found) == days:
                        return found, True
                    found.append((note.day, []))
                found[-1][1].append(note)
        return found, False

    def newest_texts(self, scope: Scope, *, limit: int) -> list[NoteText]:
        """The scope's ``limit`` newest notes, newest first, text only: a Query on its ``note#`` range.

        Only ``pk``, ``sk`` and ``text`` are fetched: parsing DynamoDB JSON dominates the client's time, and
        the three attributes parse about four times faster than the whole item (12 against 47 ms for 1,000
        notes). Each page asks for no more than is still wanted, so at most ``limit`` notes are read, in as
        many 1 MB pages as their size needs.
        """
        texts: list[NoteText] = []
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :notes)",
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, ":notes": {"S": NOTE_PREFIX}},
            "ProjectionExpression": "pk, sk, #text",
            "ExpressionAttributeNames": {"#text": "text"},
            "ScanIndexForward": False,
            "Limit": limit,
        }
        for page in query_pages(self._client, request):
            for item in page["Items"]:
                day, position = parse_note_sk(item["sk"]["S"])
                texts.append(NoteText(item["pk"]["S"], day, position, item["text"]["S"]))
            if len(texts) >= limit:
                break
            request["Limit"] = limit - len(texts)  # the next page asks only for what is still wanted
        return texts

    def get_many(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[KeyedNote]:
        """Whole notes by ``(day, position)``, in the order asked, in one BatchGetItem (at most 100 keys).

        A note deleted meanwhile is simply missing from the answer. Keys DynamoDB leaves unprocessed
        (throttling) are asked again, a few times, before the read counts as unavailable.
        """
        keys = [{"pk": {"S": scope.key}, "sk": {"S": note_sk(day, position)}} for day, position in wanted]
        found: dict[str, dict[str, Any]] = {}
        request: dict[str, Any] = {self._table: {"Keys": keys}} if keys else {}
        for attempt in range(_BATCH_GET_ATTEMPTS):
            if not request:
                break
            if attempt:
                time.sleep(0.02 * 2**attempt)  # unprocessed keys mean throttling: back off before asking again
            try:
                answer = self._client.batch_get_item(RequestItems=request)
            except ClientError as error:
                raise as_unavailable(error) or error from None
            found.update((item["sk"]["S"], item) for item in answer["Responses"].get(self._table, []))
            request = answer.get("UnprocessedKeys") or {}
        if request:
            raise StorageUnavailable("memory storage is busy or unavailable; nothing was read, try again")
        return [
            KeyedNote(item["pk"]["S"], note_from_item(item))
            for key in keys
            if (item := found.get(key["sk"]["S"])) is not None
        ]

    def newest_first(self, scope: Scope, *, first_day: str, last_day: str, limit: int) -> list[Note]:
        """The notes of ``first_day``..``last_day`` (inclusive), newest first, in one Query."""
        low, high = notes_of_days(first_day, last_day)
        try:
            answer = self._client.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
                ExpressionAttributeValues={":pk": {"S": scope.key}, ":low": {"S": low}, ":high": {"S": high}},
                ScanIndexForward=False,
                Limit=limit,
            )
        except ClientError as error:
            raise as_unavailable(error) or error from None
        return [note_from_item(item) for item in answer["Items"]]

    def every_note(self, scope: Scope, *, page_size: int = 500) -> Iterator[Note]:
        """Every note of the scope, oldest first: one paged Query on its ``note#`` range (for the reindex)."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :notes)",
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, ":notes": {"S": NOTE_PREFIX}},
            "Limit": page_size,
        }
        for page in query_pages(self._client, request):
            yield from (note_from_item(item) for item in page["Items"])

    def count(self, scope: Scope) -> int:
        """How many notes the scope holds: a paged ``Select=COUNT`` Query (for the drift check)."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :notes)",
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, ":notes": {"S": NOTE_PREFIX}},
            "Select": "COUNT",
        }
        return sum(int(page["Count"]) for page in query_pages(self._client, request))
