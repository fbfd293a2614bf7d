"""A note's append (docs/storage.md "Write protocols"): its requests' items, each built by a pure function, and the
sending of its transaction. ``NoteStore.append`` calls them; ``storage.lost_note_writes`` settles an append whose
every answer was lost.

Two requests. First the day's position (``position_take``): an atomic ``ADD`` on the day's item, on condition of
the day's quotas, which makes positions unique. Then one ``TransactWriteItems`` (``append_items``), in this order:

0. the note at its place (``note_put``), on condition the place is free;
1. the scope's characters counter (``chars_counted``), on condition of the quota and that the note's place is not
   ``abandoned``;
2. the caller's own item, if any (the flush's claim, an extraction's claim, an import's outcome);
3. the note's indexed vector, if the table has a vector index and the note a vector (``indexed_vector_put``);
4. last, the scope's due marker (``marker_item``; ``marker_moved_back`` for a note older than the marker).

The readers of a refused transaction (``place_abandoned``, ``marker_refused``) know these places.
"""

from __future__ import annotations

import random
import time
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.basics.errors import NothingWritten
from agent_memory.domain.notes import Note
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, cancellation_codes, error_code, request_token
from agent_memory.storage.due_markers import marker_update
from agent_memory.storage.keys import day_sk, due_index_sk, note_sk, unconsolidated_shard
from agent_memory.storage.note_items import note_item, vector_item
from agent_memory.storage.usage_store import Quota, member_counter

# The condition of the usage item that a note's place is not abandoned (``storage.lost_note_writes``).
NOT_ABANDONED = "(attribute_not_exists(abandoned) OR NOT contains(abandoned, :place))"
_CANCELLED = "TransactionCanceledException"
_CONFLICT_ATTEMPTS = 5


def position_take(
    table: str, scope: Scope, day: str, take_id: str, *, member: str | None, quota: Quota | None
) -> dict[str, Any]:
    """The ``UpdateItem`` taking the day's next position. The same request counts the note against the daily quotas:
    ``live``, the day's notes that still exist (its position counter on an item from before ``live``), and in a team
    scope the member's own counter. It records its ``take_id`` as ``last_take``, on condition the counter does not
    hold it already: a take sent again after its answer was lost is refused with the item, and reads its position
    there. The day's item and the members' counters are ``storage.usage_store``'s."""
    condition = "(attribute_not_exists(last_take) OR last_take <> :take)"
    values: dict[str, Any] = {":one": {"N": "1"}, ":zero": {"N": "0"}, ":take": {"S": take_id}}
    if quota is not None:
        condition += (
            " AND ((attribute_not_exists(live) AND (attribute_not_exists(next_position) OR next_position < :quota))"
            " OR live < :quota)"
        )
        values[":quota"] = {"N": str(quota.notes_per_day)}
        if member and quota.notes_per_member_day is not None:
            condition += " AND (attribute_not_exists(#member) OR #member < :share)"
            values[":share"] = {"N": str(quota.notes_per_member_day)}
    names = {"#member": member_counter(member)} if member else {}
    return {
        "TableName": table,
        "Key": {"pk": {"S": scope.key}, "sk": {"S": day_sk(day)}},
        "UpdateExpression": "ADD next_position :one"
        + (", #member :one" if member else "")
        + " SET live = if_not_exists(live, :zero) + :one, last_take = :take",
        "ConditionExpression": condition,
        "ExpressionAttributeValues": values,
        "ReturnValues": "UPDATED_NEW",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        **({"ExpressionAttributeNames": names} if names else {}),
    }


def note_put(table: str, scope: Scope, note: Note, *, write_id: str, vector: bytes | None) -> dict[str, Any]:
    """The note at its place, on condition the place is free; the note carries its call's ``write_id`` (a put sent
    again after its answer was lost fails on the note this very call wrote: its success) and its stored vector."""
    extra = {"write_id": {"S": write_id}} | ({"vec": {"B": vector}} if vector is not None else {})
    return {
        "Put": {
            "TableName": table,
            "Item": {**note_item(scope, note), **extra},
            "ConditionExpression": "attribute_not_exists(sk)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


def chars_counted(chars: dict[str, Any], note: Note) -> dict[str, Any]:
    """The scope's characters counter's item of the note (``usage_store.chars_change_item``, within the quota),
    refused once the note's place is abandoned (``storage.lost_note_writes``)."""
    update = chars["Update"]
    condition = update.get("ConditionExpression")
    return {
        "Update": {
            **update,
            "ConditionExpression": f"({condition}) AND {NOT_ABANDONED}" if condition else NOT_ABANDONED,
            "ExpressionAttributeValues": {
                **update["ExpressionAttributeValues"],
                ":place": {"S": note_sk(note.day, note.position)},
            },
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


def indexed_vector_put(table: str, scope: Scope, day: str, position: int, numbers: list[int]) -> dict[str, Any]:
    """The note's indexed vector (``note_items.vector_item``), put whole: it replaces a stale one."""
    return {"Put": {"TableName": table, "Item": vector_item(scope, day, position, numbers)}}


def _marker_update(table: str, scope: Scope, update: str, condition: str, values: dict[str, Any]) -> dict[str, Any]:
    """The due marker's item (``due_markers.marker_update``), counting one note in its shard, returning the marker
    as it is when refused (``marker_refused``)."""
    values = values | {":shard": {"S": unconsolidated_shard(scope.key)}, ":one": {"N": "1"}}
    item = marker_update(table, scope, update, condition, values)
    item["Update"]["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return item


def marker_item(table: str, scope: Scope, *, created_at: str, day: str) -> dict[str, Any]:
    """The scope's due marker (``storage.due_markers``) counting one more note, in the ``Unconsolidated`` index from
    the oldest unconsolidated note on; on condition the note is not older than the marker's ``oldest`` and
    ``floor``."""
    return _marker_update(
        table,
        scope,
        "SET uc_pk = :shard, uc_sk = if_not_exists(uc_sk, :uc_sk), oldest = if_not_exists(oldest, :at),"
        " floor = if_not_exists(floor, :day) ADD writes :one, notes :one",
        "(attribute_not_exists(oldest) OR oldest <= :at) AND (attribute_not_exists(floor) OR floor <= :day)",
        {":uc_sk": {"S": due_index_sk(created_at, scope.key)}, ":at": {"S": created_at}, ":day": {"S": day}},
    )


def marker_moved_back(table: str, scope: Scope, *, created_at: str, day: str, seen: dict[str, Any]) -> dict[str, Any]:
    """The due marker's item for a note older than the marker as it was ``seen`` (``marker_refused``): ``oldest`` and
    ``floor`` move back to this note, on condition the marker is still exactly as seen."""

    def earlier(name: str, mine: str) -> str:
        held = seen.get(name, {}).get("S")
        return mine if held is None else min(held, mine)

    oldest, floor = earlier("oldest", created_at), earlier("floor", day)
    values: dict[str, Any] = {":at": {"S": oldest}, ":day": {"S": floor}}
    values[":uc_sk"] = {"S": due_index_sk(oldest, scope.key)}
    condition = []
    for name in ("oldest", "floor", "writes"):  # the marker exactly as seen, or the transaction is refused again
        if name in seen:
            values[f":seen_{name}"] = seen[name]
            condition.append(f"{name} = :seen_{name}")
        else:
            condition.append(f"attribute_not_exists({name})")
    return _marker_update(
        table,
        scope,
        "SET uc_pk = :shard, uc_sk = :uc_sk, oldest = :at, floor = :day ADD writes :one, notes :one",
        " AND ".join(condition),
        values,
    )


def marker_refused(error: ClientError) -> dict[str, Any] | None:
    """The due marker as DynamoDB returned it when its condition alone refused the transaction (the note is older
    than the marker), else None."""
    reasons = (error.response.get("CancellationReasons") or []) if error_code(error) == _CANCELLED else []
    codes = [str(reason.get("Code")) for reason in reasons]
    if not codes or codes[-1] != "ConditionalCheckFailed" or "ConditionalCheckFailed" in codes[:-1]:
        return None
    seen: dict[str, Any] = reasons[-1].get("Item") or {}
    return seen


def append_items(
    table: str,
    scope: Scope,
    note: Note,
    *,
    write_id: str,
    vector: bytes | None,
    numbers: list[int] | None,
    chars: dict[str, Any],
    completing: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    """The append transaction's items before its due marker (``write_with_marker`` puts the marker last):
    ``numbers``, the note's vector as the table's vector index reads it (None: no indexed vector); ``chars``, the
    note's change of the characters counter (``usage_store.chars_change_item``, built once: a note larger than the
    whole quota is refused before its position is taken)."""
    return [
        note_put(table, scope, note, write_id=write_id, vector=vector),
        chars_counted(chars, note),
        *([completing] if completing is not None else []),
        *([indexed_vector_put(table, scope, note.day, note.position, numbers)] if numbers is not None else []),
    ]


def completion_refused(error: Exception) -> bool:
    """Whether a note's transaction was refused by its ``completing`` item's condition (the third of
    ``append_items``: another writer recorded first what that item records); nothing was written."""
    return isinstance(error, ClientError) and cancellation_codes(error)[2:3] == ["ConditionalCheckFailed"]


def place_abandoned(error: ClientError, note: Note) -> bool:
    """Whether the note's transaction was refused because its place is abandoned (a position that a day restarted
    by an erase, not yet finished, gives out again): not a quota refusal; the note takes the next position."""
    reasons = error.response.get("CancellationReasons") or []
    if len(reasons) < 2 or reasons[1].get("Code") != "ConditionalCheckFailed":
        return False
    usage: dict[str, Any] = reasons[1].get("Item") or {}
    return note_sk(note.day, note.position) in usage.get("abandoned", {}).get("SS", [])


def write_with_marker(
    client: DynamoDB,
    table: str,
    scope: Scope,
    items: list[dict[str, Any]],
    *,
    created_at: str,
    day: str,
    write_id: str | None = None,
) -> None:
    """A transaction of ``items`` with the scope's due marker last, for a note created at ``created_at`` on ``day``.
    Concurrent writers of one scope share its characters counter and due marker: a transaction cancelled for a
    conflict on them did nothing, so it is sent again (a few times, after a short pause), and so is one whose marker
    item alone was refused (the note is older than the marker: sent with ``marker_moved_back``). With ``write_id``
    (the note's) the transaction carries a ``ClientRequestToken`` derived from it and the request: DynamoDB applies
    a retry whose first attempt committed once, and answers it."""
    marker = marker_item(table, scope, created_at=created_at, day=day)
    for attempt in range(_CONFLICT_ATTEMPTS):
        sent = [*items, marker]
        token = {"ClientRequestToken": request_token(write_id, sent)} if write_id else {}
        try:
            client.transact_write_items(TransactItems=sent, **token)
            return
        except ClientError as error:
            seen = marker_refused(error)
            if seen is not None:
                marker = marker_moved_back(table, scope, created_at=created_at, day=day, seen=seen)
            codes = cancellation_codes(error)
            if seen is None and ("TransactionConflict" not in codes or "ConditionalCheckFailed" in codes):
                raise
            if attempt == _CONFLICT_ATTEMPTS - 1:
                raise NothingWritten("memory storage is busy; nothing was written, try again") from None
            if seen is None:
                time.sleep(random.uniform(0.005, 0.02) * 2**attempt)  # noqa: S311 - jitter, not security
