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
from agent_memory.storage.client import DynamoDB, cancellation_codes, request_token
from agent_memory.storage.keys import USAGE_SK, day_sk, note_sk
from agent_memory.storage.note_items import holder_write_id, write_id_at
from agent_memory.storage.usage_store import member_counter

_FENCE_ATTEMPTS = 3
_NOT_ABANDONED = "(attribute_not_exists(abandoned) OR NOT contains(abandoned, :place))"


def unless_abandoned(usage: dict[str, Any], note: Note) -> dict[str, Any]:
    """The note transaction's usage item (``UsageStore.change_item``), refused once the note's place is abandoned."""
    update = usage["Update"]
    condition = update.get("ConditionExpression")
    return {
        "Update": {
            **update,
            "ConditionExpression": f"({condition}) AND {_NOT_ABANDONED}" if condition else _NOT_ABANDONED,
            "ExpressionAttributeValues": {
                **update["ExpressionAttributeValues"],
                ":place": {"S": note_sk(note.day, note.position)},
            },
        }
    }


def settle_lost_note(
    client: DynamoDB, table: str, scope: Scope, note: Note, *, write_id: str, member: str | None
) -> bool:
    """True if the note is at its place (written by this call: answer it), False if nothing was written and its
    place is now abandoned, its day's counts given back (or the day was erased meanwhile: nothing to give back,
    and no count below zero); answer the failure. Raises ``StorageUnavailable`` when
    neither can be told (this transaction's every answer lost too, and neither read back): the count then stays,
    over by one, never under."""
    place = note_sk(note.day, note.position)
    day_names = {"#member": member_counter(member)} if member else {}
    items: list[dict[str, Any]] = [
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
                "ConditionExpression": _NOT_ABANDONED,
                "ExpressionAttributeValues": {":places": {"SS": [place]}, ":place": {"S": place}},
            }
        },
        {
            "Update": {
                "TableName": table,
                "Key": {"pk": {"S": scope.key}, "sk": {"S": day_sk(note.day)}},
                "UpdateExpression": "ADD live :minus" + (", #member :minus" if member else ""),
                "ConditionExpression": "attribute_exists(live)",  # not a day an erase removed meanwhile
                "ExpressionAttributeValues": {":minus": {"N": "-1"}},
                **({"ExpressionAttributeNames": day_names} if day_names else {}),
            }
        },
    ]
    for attempt in range(1, _FENCE_ATTEMPTS + 1):
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
            if "ConditionalCheckFailed" in codes[1:]:  # sent again after its answer was lost, or the day erased
                return False
            if "TransactionConflict" not in codes:
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
