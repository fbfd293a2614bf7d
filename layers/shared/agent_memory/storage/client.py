"""The DynamoDB client every store shares (and the other AWS clients, bounded alike): bounded timeouts and
botocore's standard retry mode; the error handling every store shares."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
from functools import partial
from typing import Any

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agent_memory.basics.errors import StorageUnavailable
from agent_memory.basics.settings import Settings

# After botocore's retries, a write may have landed before its answer was lost: its outcome is unknown.
STORAGE_UNAVAILABLE = (
    "memory storage is busy or did not answer in time; for a write the outcome is unknown: retry it "
    "(with the same Idempotency-Key, it is applied at most once)"
)
_UNAVAILABLE = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
}


def bounded_client(
    service: str,
    settings: Settings,
    *,
    connect_timeout_s: float | None = None,
    read_timeout_s: float | None = None,
    max_attempts: int | None = None,
) -> Any:
    """A client that gives up quickly, bounded by ``MEMORY_DYNAMODB_*`` (never botocore's 60 s defaults): a chat
    turn must never hang on storage. The flush, which must answer within 5 seconds whatever happens, passes
    tighter bounds; the planner's SQS client and the Lambda client that starts a run are bounded alike."""
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=connect_timeout_s or settings.dynamodb_connect_timeout_s,
        read_timeout=read_timeout_s or settings.dynamodb_read_timeout_s,
        retries={"mode": "standard", "total_max_attempts": max_attempts or settings.dynamodb_max_attempts},
    )
    return boto3.client(service, config=config)


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def cancellation_codes(error: ClientError) -> list[str]:
    """Per transaction item, why a TransactWriteItems was cancelled (``None`` where that item was fine)."""
    if error_code(error) != "TransactionCanceledException":
        return []
    return [str(reason.get("Code")) for reason in error.response.get("CancellationReasons") or []]


def cancelled_item(error: ClientError, index: int) -> dict[str, Any]:
    """The item as it was when the transaction's item ``index`` failed its condition (asked for with
    ``ReturnValuesOnConditionCheckFailure: ALL_OLD``); empty when there was none."""
    reasons = error.response.get("CancellationReasons") or []
    item: dict[str, Any] = reasons[index].get("Item") or {} if index < len(reasons) else {}
    return item


def request_token(write_id: str, items: list[dict[str, Any]]) -> str:
    """A TransactWriteItems ``ClientRequestToken`` derived from the logical write and the request: the same
    write sent again (by botocore or by the service) carries the same token, and DynamoDB applies it once
    within ten minutes; a changed request (the next position, a moved marker) carries another."""
    request = json.dumps(items, sort_keys=True, default=_binary).encode()  # a note's vector is bytes
    digest = hashlib.sha256(write_id.encode() + request).hexdigest()
    return digest[:36]


def _binary(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return value.hex()
    raise TypeError(f"{type(value).__name__} is not part of a DynamoDB request")


def condition_failed(error: ClientError) -> bool:
    """A conditional write that its condition refused (nothing was written)."""
    return error_code(error) == "ConditionalCheckFailedException"


class DynamoDB:
    """The DynamoDB client as every store calls it: the same operations, with botocore's errors mapped once.

    A throttle, a server fault, a timeout or a lost connection that botocore's retries did not get past is a
    ``StorageUnavailable`` (the edges answer it 503, the per-turn context degrades on it, the consolidation
    tries the step again or counts its group failed: a raw ``ReadTimeoutError`` slipped past all three and
    left groups counted nowhere); every other ``ClientError`` (a refused
    condition, a cancelled transaction, a bad request) is raised as it is, for the store to read or to
    surface as the bug it is. A store wraps the client it is given; wrapping twice wraps once.
    """

    def __init__(self, client: Any) -> None:
        self.raw: Any = client.raw if isinstance(client, DynamoDB) else client

    def __getattr__(self, operation: str) -> Any:
        """The client's ``operation``, mapped; kept on the instance, so that a warm sandbox maps each once (the
        operation itself is looked up on each call: a test may replace it on the client at any time)."""
        call = getattr(self.raw, operation)
        if not callable(call):
            return call

        def mapped(*args: Any, **request: Any) -> Any:
            try:
                return getattr(self.raw, operation)(*args, **request)
            except ClientError as error:
                raise as_unavailable(error) or error from None
            except (BotocoreConnectionError, HTTPClientError) as error:
                raise StorageUnavailable(STORAGE_UNAVAILABLE) from error

        setattr(self, operation, mapped)
        return mapped


def query_pages(client: DynamoDB, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every page of a Query, in order, until DynamoDB says there is no more (or the caller stops reading).

    The first page is read at once (most of the service's Queries fit one page, which then needs no generator
    to resume); ``request`` is read again for each later page, so a caller may change it between pages (e.g.
    its ``Limit``).
    """
    first: dict[str, Any] = client.query(**request)
    if "LastEvaluatedKey" not in first:
        return iter((first,))
    return _pages_from(client, request, first)


def _pages_from(client: DynamoDB, request: dict[str, Any], page: dict[str, Any]) -> Iterator[dict[str, Any]]:
    while True:
        yield page
        if "LastEvaluatedKey" not in page:
            return
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        page = client.query(**request)


def is_unavailable(error: ClientError) -> bool:
    """A throttle or a server fault that botocore's retries did not get past."""
    return error_code(error) in _UNAVAILABLE


def as_unavailable(error: ClientError) -> StorageUnavailable | None:
    """The domain error for a throttle or a server fault, None for anything else (a bug to surface)."""
    if error_code(error) in _UNAVAILABLE:
        return StorageUnavailable(STORAGE_UNAVAILABLE)
    return None


make_dynamodb_client = partial(bounded_client, "dynamodb")  # what every store is given


def update_if(client: DynamoDB, **request: Any) -> bool:
    """One conditional UpdateItem: False when its condition refused it, StorageUnavailable for a fault."""
    try:
        client.update_item(**request)
    except ClientError as error:
        if not condition_failed(error):
            raise
        return False
    return True


def claim_record(
    client: DynamoDB, table: str, item: dict[str, Any], *, now_epoch: int, lease_s: int, keep_s: int
) -> dict[str, Any] | None:
    """Put ``item`` (its key and own attributes) ``in_progress`` for ``lease_s``, kept ``keep_s``, in one request:
    a record claimed by one caller at a time. The flush's claim on a compaction event and the ``Idempotency-Key``
    record both start this way: the key is free, or its holder's lease ran out (it died without releasing), or
    the record outlived its TTL (DynamoDB removes expired items late, so an expired one counts as absent).

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


def live_record(client: DynamoDB, table: str, key: dict[str, Any], *, now_epoch: int) -> dict[str, Any] | None:
    """The record ``claim_record`` left under ``key`` if it still holds its key (a strongly consistent read): not
    past its TTL, and not a claim whose holder's lease ran out. None otherwise, as ``claim_record`` would see it."""
    item: dict[str, Any] | None = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    if item is None or int(item.get("expires_at", {}).get("N", now_epoch)) < now_epoch:
        return None
    lapsed = (
        item.get("status", {}).get("S") == "in_progress" and int(item.get("lease_until", {}).get("N", 0)) < now_epoch
    )
    return None if lapsed else item
