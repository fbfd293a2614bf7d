"""A note write whose every answer was lost (botocore's retries spent on timeouts or dropped connections), settled
so that the day's count always equals the notes the table holds.

Reading the note's place cannot settle it alone: an empty place may still be filled by an attempt in flight (seen
on a moto server, where the read overtook a slow transaction), so the count had to stay, over by one. Instead, the
note's transaction carries one more condition on an item it already writes, the scope's usage item: its place is
not ``abandoned``. After every answer was lost, one more transaction either finds the note at its place (it was
written: answered as such, counted once) or, on condition the place is still empty, adds the place to
``abandoned`` and gives the day's counts back. DynamoDB applies whichever comes first; a late attempt of the note's
transaction is then refused. The position is not taken back: a gap, as after any failed write. No extra item or
request on the path that succeeds.
"""

from __future__ import annotations

import random
import time
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.basics.errors import StorageUnavailable
from agent_memory.basics.observability import logger
from agent_memory.domain.notes import Note
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, cancellation_codes, error_code, request_token
from agent_memory.storage.keys import USAGE_SK, day_sk, note_sk
from agent_memory.storage.note_append import NOT_ABANDONED
from agent_memory.storage.note_items import holder_write_id, write_id_at
from agent_memory.storage.usage_store import member_counter

_SETTLE_ATTEMPTS = 3


def lost_note_items(table: str, scope: Scope, note: Note, *, member: str | None) -> list[dict[str, Any]]:
    """The settling transaction, in this order: the note's place is still empty (a ``ConditionCheck`` that returns
    the note when it is there); the place added to the usage item's ``abandoned``, on condition it is not there
    yet (this transaction sent again is refused); the day's counts (in a team scope, the member's too) given back
    once, under the note's delete key, and only on the day item that counted the note."""
    place = note_sk(note.day, note.position)
    day_names = {"#member": member_counter(member)} if member else {}
    counted_here = "attribute_exists(live) AND next_position >= :position"
    once = "(attribute_not_exists(given_back) OR given_back <> :once)"
    return [
        {
            "ConditionCheck": {
                "TableName": table,
                "Key": {"pk": {"S": scope.key}, "sk": {"S": place}},
                "ConditionExpression": "attribute_not_exists(sk)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        },
        {
            "Update": {
                "TableName": table,
                "Key": {"pk": {"S": scope.key}, "sk": {"S": USAGE_SK}},
                "UpdateExpression": "ADD abandoned :places",
                "ConditionExpression": NOT_ABANDONED,
                "ExpressionAttributeValues": {":places": {"SS": [place]}, ":place": {"S": place}},
            }
        },
        {
            "Update": {
                "TableName": table,
                "Key": {"pk": {"S": scope.key}, "sk": {"S": day_sk(note.day)}},
                "UpdateExpression": "ADD live :minus"
                + (", #member :minus" if member else "")
                + " SET given_back = :once",
                "ConditionExpression": f"{counted_here} AND {once}",
                "ExpressionAttributeValues": {
                    ":minus": {"N": "-1"},
                    ":position": {"N": str(note.position)},
                    ":once": {"S": f"delete#{place}"},
                },
                **({"ExpressionAttributeNames": day_names} if day_names else {}),
            }
        },
    ]


def settle_lost_note(
    client: DynamoDB, table: str, scope: Scope, note: Note, *, write_id: str, member: str | None
) -> bool:
    """True if the note is at its place (written by this call: answer it), False if nothing was written and its
    place is now abandoned, its day's counts given back; answer the failure. The counts are given back once, and
    only to the day item that counted the note: under the note's delete key (``NoteStore.delete`` gives back under
    it too, so a note written, then deleted, then found gone here is not given back twice), and not to a day that
    an erase removed or restarted meanwhile (then the place alone is abandoned). Raises ``StorageUnavailable``
    when neither can be told (this transaction's every answer lost too, on every attempt, and neither read
    back): the count then stays, over by one, never under."""
    items = lost_note_items(table, scope, note, member=member)
    for attempt in range(1, _SETTLE_ATTEMPTS + 1):
        try:
            client.transact_write_items(TransactItems=items, ClientRequestToken=request_token(write_id, items))
            logger.info(
                "a note whose answers were lost was not written; its place is abandoned", extra={"scope": scope.kind}
            )
            return False
        except StorageUnavailable:  # its answers lost too: the table says which applied, if either did
            if (written := _read_back(client, table, scope, note, write_id=write_id)) is not None:
                return written
        except ClientError as error:
            codes = cancellation_codes(error)
            if codes[:1] == ["ConditionalCheckFailed"]:  # the note is there: ours, or (a collision) another's
                return holder_write_id(error) == write_id
            if codes[1:2] == ["ConditionalCheckFailed"]:  # this transaction, sent again after its answer was lost
                return False
            if codes[2:3] == ["ConditionalCheckFailed"]:  # given back already, or not this day's to give: abandon only
                items = items[:2]
                continue
            if not codes and error_code(error) != "TransactionInProgressException":
                raise  # a request DynamoDB refused as malformed: a defect, not an outcome
            if codes and not {"TransactionConflict", "ThrottlingError"} & set(codes):
                raise StorageUnavailable("memory storage is unavailable; the note's outcome is unknown") from None
        time.sleep(random.uniform(0.005, 0.02) * 2**attempt)  # noqa: S311 - jitter, not security
    logger.warning("a note's outcome stayed unknown; the day's count may be over by one", extra={"scope": scope.kind})
    raise StorageUnavailable("memory storage is unavailable; the note's outcome is unknown")


def _read_back(client: DynamoDB, table: str, scope: Scope, note: Note, *, write_id: str) -> bool | None:
    """After the settling transaction's every answer was lost: False if it applied (the place is abandoned), True
    if the note is at its place, None if neither (both may still be in flight, or this read failed too)."""
    place = note_sk(note.day, note.position)
    try:
        key = {"pk": {"S": scope.key}, "sk": {"S": USAGE_SK}}
        usage = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item") or {}
    except StorageUnavailable:
        return None
    if place in usage.get("abandoned", {}).get("SS", []):
        return False
    if (found := write_id_at(client, table, scope, note)) == write_id:
        return True
    return None if not found else False  # another's note there (a collision): ours can no longer land
