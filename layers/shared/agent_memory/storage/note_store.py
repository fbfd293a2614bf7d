"""Notes in DynamoDB: append with a unique per-day position, read a range of days newest first."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from enum import Enum
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.basics.clock import iso
from agent_memory.basics.errors import NothingWritten, StorageUnavailable
from agent_memory.domain.notes import Note, Origin, by_day
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import StoredText, checked
from agent_memory.storage.client import (
    DynamoDB,
    cancellation_codes,
    cancelled_item,
    condition_failed,
    query_pages,
    request_token,
)
from agent_memory.storage.due_markers import erase_mark_move
from agent_memory.storage.flush_store import completion_update
from agent_memory.storage.keys import NOTE_PREFIX, day_sk, note_sk, notes_of_days
from agent_memory.storage.lost_note_writes import settle_lost_note
from agent_memory.storage.note_append import (
    append_items,
    completion_refused,
    indexed_vector_put,
    place_abandoned,
    position_take,
    write_with_marker,
)
from agent_memory.storage.note_delete import delete_items
from agent_memory.storage.note_items import (
    SUPERSEDES,
    KeyedNote,
    NoteText,
    holder_write_id,
    note_from_item,
    note_item,
    position_taken,
)
from agent_memory.storage.usage_store import CharsChange, Quota, UsageStore, chars_change_item, notes_quota_error
from agent_memory.storage.vector_fill import vector_fill_items

_POSITION_ATTEMPTS = 5
# Notes read per page when listing days: about ten per day asked for (a typical day's worth), so a page
# reads little more than it shows, and a busy day costs one more Query, never one per empty day.
_NOTES_PER_DAY_PAGE = 10
_DAY_PAGE_MAX = 200
_BATCH_GET_ATTEMPTS = 3
_DELETE_ATTEMPTS = 4


_TEXT = {"#text": "text"}  # ``text`` is a reserved word in expressions


class _Unset(Enum):
    COMPUTE = "compute"


# ``append``'s default: the store computes the note's vector itself (when it writes vectors at all).
COMPUTE = _Unset.COMPUTE


class NoteStore:
    """Every note of a scope lives in the scope's partition, sorted by day then position."""

    def __init__(
        self,
        client: Any,
        table_name: str,
        quota: Quota | None = None,
        *,
        vectors: Callable[[str], bytes | None] | None = None,
        indexed: Callable[[bytes], list[int] | None] | None = None,
    ) -> None:
        """``vectors``: a note text's stored vector (``search.vectors``), or None when it cannot be had; given
        when recall compares vectors from the table (an embedding model and no notes index). ``indexed``: the
        numbers the table's vector index reads of a stored vector (``search.vectors.index_components``), written
        with the note as an item of its own (``note_items.vector_item``)."""
        self._client = DynamoDB(client)
        self._table = table_name
        self.usage = UsageStore(client, table_name, quota)  # its counters move in the notes' own transactions
        self._vectors = vectors
        self._indexed = indexed

    def vector_of(self, text: str) -> bytes | None:
        """The stored vector a note of ``text`` gets (``search.vectors``), or None: this store writes no vectors,
        or the model failed. A caller that needs the vector itself passes it to ``append`` (one embedding)."""
        return self._vectors(text) if self._vectors is not None else None

    def append(
        self,
        scope: Scope,
        *,
        created: datetime,
        text: StoredText,
        source: str,
        origin: Origin,
        vector: bytes | _Unset | None = COMPUTE,
        completing: Callable[[Note], dict[str, Any]] | None = None,
    ) -> Note:
        """Two requests: take the next position of the day atomically, then write the note there, in one
        transaction with the scope's characters counter (``storage.note_append`` builds each item).

        The counter's atomic ADD makes positions unique. The note's put is still conditional, and on a
        collision (a counter restored from an older backup, or an emulator without atomic updates) the
        note takes the next position instead: a gap is possible, a duplicate or an overwrite never.
        The note carries this call's ``write_id``: when the client retries a put whose answer was lost, the
        condition fails on the note this very call wrote, a success, not a collision; when every answer was
        lost, ``storage.lost_note_writes`` settles it. ``vector``: the note's stored vector as ``vector_of`` gave
        it; by default the store computes it. ``completing``: one more item of the transaction, built from the
        note (the flush's claim). ``created`` (UTC) gives the note its day and its ``created_at``. The scope's
        due marker (``note_append.marker_item``) is the transaction's last item."""
        text = checked(text)  # what the text pipeline made, nothing else (``domain.text_pipeline``)
        chars = chars_change_item(self._table, scope, CharsChange(len(text), self.usage.quota))  # refused if over it
        day, created_at = created.date().isoformat(), iso(created)
        write_id = uuid.uuid4().hex
        if vector is COMPUTE:
            vector = self.vector_of(text)
        numbers = self._indexed_numbers(vector)
        member = origin.user_id if scope.kind == "team" else None  # a team's day is shared: each member's share
        for attempt in range(_POSITION_ATTEMPTS):
            position = self._next_position(scope, day, created, f"{write_id}.{attempt}", member)
            note = Note(day=day, position=position, text=text, created_at=created_at, source=source, origin=origin)
            done = completing(note) if completing is not None else None
            items = append_items(
                self._table,
                scope,
                note,
                write_id=write_id,
                vector=vector,
                numbers=numbers,
                chars=chars,
                completing=done,
            )
            try:
                write_with_marker(
                    self._client, self._table, scope, items, created_at=created_at, day=day, write_id=write_id
                )
            except NothingWritten:  # cancelled for conflicts every time
                self.usage.give_back_position(scope, day, note.position, member)
                raise
            except StorageUnavailable:  # every answer lost: found at its place, or its place abandoned
                if settle_lost_note(self._client, self._table, scope, note, write_id=write_id, member=member):
                    return note  # written, and counted with it: only its answers were lost
                raise
            except ClientError as error:
                if place_abandoned(error, note):  # counted by its take: given back, and the next position taken
                    self.usage.give_back_notes(scope, day, 1, {member: 1} if member else None)
                    continue
                if not position_taken(error):
                    if cancellation_codes(error):  # a cancelled transaction (its reasons, item by item) wrote nothing
                        self.usage.give_back_position(scope, day, note.position, member)
                    if cancellation_codes(error)[1:2] == ["ConditionalCheckFailed"]:
                        raise self.usage.refusal(len(text)) from None
                    raise
                if holder_write_id(error) != write_id:
                    continue  # another note holds the position: take the next one
                # else: our own earlier attempt, retried by the client after its answer was lost (its
                # characters were counted and its scope made due then: the conditions may fail now, harmlessly)
            return note
        raise StorageUnavailable("could not find a free position for the note; nothing was written, try again")

    def completion_refused(self, error: Exception) -> bool:
        """Whether ``append`` raised ``error`` because its ``completing`` item's condition failed (another writer
        recorded first what it records): nothing was written, the position given back."""
        return completion_refused(error)

    def append_completing_flush(
        self, scope: Scope, *, created: datetime, text: StoredText, origin: Origin, token: str
    ) -> Note:
        """Append the flush's note and mark its compaction event's claim ``written`` together, in one
        transaction (``storage.flush_store``): both or neither. A claim that is no longer ``token``'s fails
        the transaction, which surfaces as a ClientError. Otherwise as ``append``."""
        compaction_id = origin.compaction_id
        assert compaction_id is not None  # a flush note always carries its compaction event

        def completion(note: Note) -> dict[str, Any]:
            return completion_update(self._table, scope, origin.thread_id, compaction_id, token=token, note_id=note.id)

        return self.append(scope, created=created, text=text, source="flush", origin=origin, completing=completion)

    def _next_position(self, scope: Scope, day: str, now: datetime, take_id: str, member: str | None = None) -> int:
        """The day's next position. The same request counts the note against the daily quotas (no extra
        request): ``live``, the day's notes that still exist, and in a team scope the member's own counter.
        The counter remembers the last take (``last_take``): an ADD whose answer was lost and that botocore
        sends again finds its own take there and answers the position it took, instead of counting the note
        twice (only the last take is kept: another writer's take in between leaves a gap, as a failed write
        does)."""
        quota = self.usage.quota
        request = position_take(self._table, scope, day, take_id, member=member, quota=quota)
        try:
            counter = self._client.update_item(**request)
        except StorageUnavailable:  # every answer lost: the counter's last take says whether it applied
            if (taken := self.usage.own_take(scope, day, take_id)) is None:
                raise
            return taken
        except ClientError as error:
            if not condition_failed(error):
                raise
            held = error.response.get("Item") or {}
            if held.get("last_take", {}).get("S") == take_id:
                return int(held["next_position"]["N"])  # this very take, its answer lost: counted once
            if quota is not None:
                raise notes_quota_error(
                    quota, now, member=member if self.usage.member_full(scope, day, member) else None
                ) from None
            raise
        return int(counter["Attributes"]["next_position"]["N"])

    def load(self, scope: Scope, note: Note) -> None:
        """Write a note as it was exported (same day, position, origin, flag, with its vector when recall keeps
        them in the table); its day's counter moves past it, its characters are counted once, and an
        unconsolidated note makes its scope due. Loading the same note again changes nothing."""
        checked(note.text)  # what the text pipeline made, nothing else (``domain.text_pipeline``)
        vector = self._vectors(note.text) if self._vectors is not None else None
        item = note_item(scope, note) | ({"vec": {"B": vector}} if vector is not None else {})
        put = {"TableName": self._table, "Item": item, "ConditionExpression": "attribute_not_exists(sk)"}
        try:
            if note.consolidated:
                self._client.put_item(**put)
            else:  # with its scope's due marker, in one transaction
                write_with_marker(
                    self._client, self._table, scope, [{"Put": put}], created_at=note.created_at, day=note.day
                )
        except ClientError as error:
            if not position_taken(error):
                raise
            return  # loaded before (a resumed load): counted and marked then
        if (numbers := self._indexed_numbers(vector)) is not None:
            self._client.put_item(**indexed_vector_put(self._table, scope, note.day, note.position, numbers)["Put"])
        try:
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": day_sk(note.day)}},
                UpdateExpression="SET next_position = :p",
                ConditionExpression="attribute_not_exists(next_position) OR next_position < :p",
                ExpressionAttributeValues={":p": {"N": str(note.position)}},
            )
        except ClientError as error:
            if not condition_failed(error):
                raise
        self.usage.add(scope, len(note.text))

    def get(self, scope: Scope, day: str, position: int, *, consistent: bool = False) -> Note | None:
        key = {"pk": {"S": scope.key}, "sk": {"S": note_sk(day, position)}}
        item = self._client.get_item(TableName=self._table, Key=key, ConsistentRead=consistent).get("Item")
        return note_from_item(item) if item else None

    def delete(self, scope: Scope, day: str, position: int) -> bool:
        """Remove one note; False if the scope holds no such note. The stream carries the removal to the index.

        The note leaves in one transaction with a move of the scope's erase mark (``storage.due_markers``), so a
        consolidation that read it cannot save it into a version after; a scope without a due marker has no
        consolidation to refuse, and its note leaves alone. Sent again after a lost answer, the transaction and
        the give-backs apply once: the note's key is their request token and their ``once`` on the counters. Its
        items are built by ``storage.note_delete``."""
        key = {"pk": {"S": scope.key}, "sk": {"S": note_sk(day, position)}}
        old = self._client.get_item(TableName=self._table, Key=key, ConsistentRead=True).get("Item")
        if old is None:
            return False
        once = f"delete#{note_sk(day, position)}"
        mark: dict[str, Any] | None = erase_mark_move(self._table, scope)  # one move, however often it is sent
        # The notes it superseded lose its id in the same transaction: no note is superseded by a note that is gone.
        # The delete holds on condition that the note superseded no other since it was read (a fold saved meanwhile).
        read = sorted(old.get(SUPERSEDES, {}).get("SS", []))
        links = read
        for _ in range(_DELETE_ATTEMPTS):
            items = delete_items(
                self._table, scope, day, position, read=read, links=links, mark=mark, indexed=self._indexed is not None
            )
            try:
                self._client.transact_write_items(TransactItems=items, ClientRequestToken=request_token(once, items))
                break
            except ClientError as error:
                codes = cancellation_codes(error)
                if codes[:1] == ["ConditionalCheckFailed"]:
                    now = cancelled_item(error, 0)
                    if not now:
                        return False  # deleted meanwhile: by the other call, which gave its usage back
                    read = links = sorted(now.get(SUPERSEDES, {}).get("SS", []))  # it superseded more since
                    continue
                unmarked = mark is not None and codes[1:2] == ["ConditionalCheckFailed"]
                failed = [code == "ConditionalCheckFailed" for code in codes[1 + (mark is not None) :]]
                if not unmarked and not any(failed):
                    raise
                if unmarked:
                    mark = None  # no due marker: no consolidation to refuse, the note leaves without the erase mark
                links = [link for link, refused in zip(links, failed, strict=False) if not refused]  # notes gone
        else:
            raise StorageUnavailable("the note's delete kept meeting changes; nothing was deleted, try again")
        self.usage.give_back_note(scope, day, old, once=once)
        return True

    def days_before(self, scope: Scope, *, before: str, days: int) -> tuple[list[tuple[str, list[Note]]], bool]:
        """The ``days`` most recent days that have notes, strictly before ``before``, newest first, with
        their notes newest first; and whether any older note exists (the "Load older" cursor).

        One descending Query over the notes, paged: empty days cost nothing, only notes are read.
        """
        high = f"{NOTE_PREFIX}{before}#"
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, ":low": {"S": NOTE_PREFIX}, ":high": {"S": high}},
            "ScanIndexForward": False,
            "Limit": min(_DAY_PAGE_MAX, _NOTES_PER_DAY_PAGE * (days + 1)),
        }
        pages = query_pages(self._client, kwargs)  # lazy: a page is read only when ``by_day`` needs its notes
        return by_day((note_from_item(item) for page in pages for item in page["Items"]), days)

    def newest_texts(self, scope: Scope, *, limit: int, vectors: bool = False, threads: bool = False) -> list[NoteText]:
        """The scope's ``limit`` newest notes, newest first, text only: a Query on its ``note#`` range.

        Only ``pk``, ``sk`` and ``text`` are fetched: parsing DynamoDB JSON dominates the client's time, and
        the three attributes parse about four times faster than the whole item (12 against 47 ms for 1,000
        notes). Each page asks for no more than is still wanted, so at most ``limit`` notes are read, in as
        many 1 MB pages as their size needs. ``vectors`` adds each note's stored vector (``vec``), ``threads``
        its conversation (``origin_thread_id``).
        """
        texts: list[NoteText] = []
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :notes)",
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, ":notes": {"S": NOTE_PREFIX}},
            "ProjectionExpression": NoteText.projection(vectors=vectors, threads=threads),
            "ExpressionAttributeNames": _TEXT,
            "ScanIndexForward": False,
            "Limit": limit,
        }
        for page in query_pages(self._client, request):
            texts += map(NoteText.of, page["Items"])
            if len(texts) >= limit:
                break
            request["Limit"] = limit - len(texts)  # the next page asks only for what is still wanted
        return texts

    def around(self, scope: Scope, day: str, position: int, *, span: int) -> list[NoteText]:
        """The notes of ``day`` within ``span`` positions of ``position`` (its own included), with their
        conversation: one Query on that range of the scope's partition (recall's neighbours)."""
        low, high = note_sk(day, max(1, position - span)), note_sk(day, position + span)
        projection = NoteText.projection(vectors=False, threads=True)
        items = self._between(scope, low, high, ProjectionExpression=projection, ExpressionAttributeNames=_TEXT)
        return [NoteText.of(item) for item in items]

    def get_many(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[KeyedNote]:
        """Whole notes by ``(day, position)``, in the order asked, in one BatchGetItem (at most 100 keys).

        A note deleted meanwhile is simply missing from the answer. Keys DynamoDB leaves unprocessed
        (throttling) are asked again, a few times, before the read counts as unavailable.
        """
        return [KeyedNote(item["pk"]["S"], note_from_item(item)) for item in self._batch_get(scope, wanted, {})]

    def texts_of(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[NoteText]:
        """What ranking reads of these notes (text, vector, conversation), as ``get_many`` reads notes: the notes the
        vector index found beyond the newest ones read."""
        projection = {
            "ProjectionExpression": NoteText.projection(vectors=True, threads=True),
            "ExpressionAttributeNames": _TEXT,
        }
        return [NoteText.of(item) for item in self._batch_get(scope, wanted, projection)]

    def _batch_get(
        self, scope: Scope, wanted: list[tuple[str, int]], projection: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The items of these notes that exist, in the order asked: one BatchGetItem, unprocessed keys asked again."""
        keys = [{"pk": {"S": scope.key}, "sk": {"S": note_sk(day, position)}} for day, position in wanted]
        found: dict[str, dict[str, Any]] = {}
        request: dict[str, Any] = {self._table: {"Keys": keys, **projection}} if keys else {}
        for attempt in range(_BATCH_GET_ATTEMPTS):
            if not request:
                break
            if attempt:
                time.sleep(0.02 * 2**attempt)  # unprocessed keys mean throttling: back off before asking again
            answer = self._client.batch_get_item(RequestItems=request)
            found.update((item["sk"]["S"], item) for item in answer["Responses"].get(self._table, []))
            request = answer.get("UnprocessedKeys") or {}
        if request:
            raise StorageUnavailable("memory storage is busy or unavailable; nothing was read, try again")
        return [item for key in keys if (item := found.get(key["sk"]["S"])) is not None]

    def newest_first(self, scope: Scope, *, first_day: str, last_day: str, limit: int) -> list[Note]:
        """The notes of ``first_day``..``last_day`` (inclusive), newest first, in one Query."""
        items = self._between(scope, *notes_of_days(first_day, last_day), ScanIndexForward=False, Limit=limit)
        return [note_from_item(item) for item in items]

    def _between(self, scope: Scope, low: str, high: str, **request: Any) -> list[dict[str, Any]]:
        """The items of the scope's sort keys ``low``..``high`` (inclusive): one Query, its first page."""
        values = {":pk": {"S": scope.key}, ":low": {"S": low}, ":high": {"S": high}}
        condition = "pk = :pk AND sk BETWEEN :low AND :high"
        items: list[dict[str, Any]] = self._client.query(
            TableName=self._table, KeyConditionExpression=condition, ExpressionAttributeValues=values, **request
        )["Items"]
        return items

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

    def set_vector(self, scope: Scope, day: str, position: int, vector: bytes) -> bool:
        """Store a note's vector (the vector fill), and its indexed vector where the table has a vector index, in one
        transaction on condition that the note is there: False if it is gone meanwhile (nothing written), so a delete
        landing between the two writes never leaves a vector without its note (``storage.vector_fill``)."""
        items = vector_fill_items(self._table, scope, day, position, vector, self._indexed_numbers(vector))
        try:
            if len(items) > 1:
                self._client.transact_write_items(TransactItems=items)
            else:
                self._client.update_item(**items[0]["Update"])
        except ClientError as error:
            if condition_failed(error) or cancellation_codes(error)[:1] == ["ConditionalCheckFailed"]:
                return False
            raise
        return True

    def _indexed_numbers(self, vector: bytes | None) -> list[int] | None:
        """The numbers of a note's indexed vector (``note_append.indexed_vector_put``), when the table has a vector
        index and the note a vector of this model; else None."""
        return self._indexed(vector) if self._indexed is not None and vector is not None else None

    def count(self, scope: Scope) -> int:
        """How many notes the scope holds: a paged ``Select=COUNT`` Query (for the drift check)."""
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :notes)",
            "ExpressionAttributeValues": {":pk": {"S": scope.key}, ":notes": {"S": NOTE_PREFIX}},
            "Select": "COUNT",
        }
        return sum(int(page["Count"]) for page in query_pages(self._client, request))
