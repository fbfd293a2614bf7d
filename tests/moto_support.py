"""What moto needs to behave like DynamoDB under concurrency; used by the tests and by ``make bench``."""

from __future__ import annotations

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
        yield
    finally:
        DynamoHandler.call_action = original  # type: ignore[method-assign]
