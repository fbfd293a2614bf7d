"""A record claimed by one caller at a time: a conditional put that either takes the key or answers its holder.

The flush's claim on a compaction event and the ``Idempotency-Key`` record both start this way: the key is
free, or its holder's lease ran out (it died without releasing), or the record outlived its TTL (DynamoDB
removes expired items late, so an expired one counts as absent).
"""

from __future__ import annotations

import uuid
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.storage.client import DynamoDB, condition_failed


def claim_record(
    client: DynamoDB, table: str, item: dict[str, Any], *, now_epoch: int, lease_s: int, keep_s: int
) -> dict[str, Any] | None:
    """Put ``item`` (its key and own attributes) ``in_progress`` for ``lease_s``, kept ``keep_s``, in one request.

    None: the claim is this caller's. Otherwise the record that holds the key, as DynamoDB returned it.

    The put carries a ``claim_id`` of its own: when botocore sends it again after its answer was lost (a
    timeout after DynamoDB applied it), the condition fails on this very claim, and that is this caller's
    claim, not another's (else a flush whose claim's answer was lost answered ``duplicate`` and wrote no note).
    """
    claim_id = uuid.uuid4().hex
    try:
        client.put_item(
            TableName=table,
            Item={
                **item,
                "claim_id": {"S": claim_id},
                "status": {"S": "in_progress"},
                "lease_until": {"N": str(now_epoch + lease_s)},
                "expires_at": {"N": str(now_epoch + keep_s)},
            },
            ConditionExpression="attribute_not_exists(sk) OR (#status = :in_progress AND lease_until < :now) "
            "OR expires_at < :now",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={":in_progress": {"S": "in_progress"}, ":now": {"N": str(now_epoch)}},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
        return None
    except ClientError as error:
        if not condition_failed(error):
            raise
        holder: dict[str, Any] = error.response.get("Item") or {}
        if holder.get("claim_id", {}).get("S") == claim_id:
            return None  # this very put, its answer lost
        return holder
