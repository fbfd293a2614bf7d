"""What moto needs to behave like DynamoDB under concurrency; used by the tests and by ``make bench``."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def _transaction_token(handler: Any) -> str | None:
    """The ClientRequestToken of a TransactWriteItems request, else None."""
    if not handler.headers.get("X-Amz-Target", "").endswith(".TransactWriteItems"):
        return None
    token = json.loads(handler.body or "{}").get("ClientRequestToken")
    return str(token) if token else None


@contextmanager
def atomic_moto_requests() -> Iterator[None]:
    """Serialise moto's handling of DynamoDB requests for the block, as real DynamoDB serialises writes to an item.

    moto in-process is not thread-safe: an UpdateItem ADD or a conditional put is applied without a lock
    (two requests can read the same counter or both pass ``attribute_not_exists``), and concurrent
    TransactWriteItems copy and change a table at once ("dictionary changed size during iteration").
    Requests still interleave with each other (botocore's serialising and parsing run outside the lock),
    which is what the concurrency tests exercise. The patch is undone when the block ends.

    It also gives TransactWriteItems DynamoDB's idempotency, which moto lacks: botocore fills in a
    ``ClientRequestToken`` and sends it again when it retries a call whose answer was lost, and DynamoDB
    answers such a retry with success instead of applying the transaction again (or refusing it on a
    condition the first attempt changed). Without this, a write applied but answered too late looked
    like a conflict to its caller under load.
    """
    from moto.dynamodb.responses import DynamoHandler

    lock = threading.Lock()
    original = DynamoHandler.call_action
    applied: dict[str, Any] = {}  # ClientRequestToken -> the answer of the transaction it applied

    def atomic(self: DynamoHandler) -> Any:
        with lock:
            token = _transaction_token(self)
            if token is not None and token in applied:
                return applied[token]
            answer = original(self)
            if token is not None and answer[0] == 200:
                applied[token] = answer
            return answer

    DynamoHandler.call_action = atomic  # type: ignore[method-assign]
    try:
        with _transactions_without_copying_streams():
            yield
    finally:
        DynamoHandler.call_action = original  # type: ignore[method-assign]


class _CopyKeepingStreams:
    """``copy`` for moto's transaction backup: a table's stream records are not copied (they only grow, so a
    backup of every record made each transaction cost as much as the table's whole history)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        memo = {} if memo is None else memo
        shard = getattr(value, "stream_shard", None)
        if shard is not None:
            memo[id(shard)] = shard
        return copy.deepcopy(value, memo)


@contextmanager
def _transactions_without_copying_streams() -> Iterator[None]:
    """moto backs up every table a TransactWriteItems touches, stream included; keep the stream out of the
    backup, and on a rollback drop the records the cancelled transaction appended, as DynamoDB never
    emits them."""
    from moto.dynamodb import models
    from moto.dynamodb.models import DynamoDBBackend

    original = DynamoDBBackend.transact_write_items

    def transact(self: Any, transact_items: list[dict[str, Any]]) -> None:
        shards = [table.stream_shard for table in self.tables.values() if table.stream_shard is not None]
        lengths = [len(shard.items) for shard in shards]
        try:
            original(self, transact_items)
        except BaseException:
            for shard, length in zip(shards, lengths, strict=True):
                del shard.items[length:]
            raise

    models.copy = _CopyKeepingStreams()  # type: ignore[assignment]
    DynamoDBBackend.transact_write_items = transact  # type: ignore[method-assign]
    try:
        yield
    finally:
        models.copy = copy
        DynamoDBBackend.transact_write_items = original  # type: ignore[method-assign]
