"""What moto needs to behave like DynamoDB under concurrency; used by the tests and by ``make bench``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def atomic_moto_requests() -> Iterator[None]:
    """Serialise moto's handling of DynamoDB requests for the block, as real DynamoDB serialises writes to an item.

    moto in-process is not thread-safe: an UpdateItem ADD or a conditional put is applied without a lock
    (two requests can read the same counter or both pass ``attribute_not_exists``), and concurrent
    TransactWriteItems copy and change a table at once ("dictionary changed size during iteration").
    Requests still interleave with each other (botocore's serialising and parsing run outside the lock),
    which is what the concurrency tests exercise. The patch is undone when the block ends.
    """
    from moto.dynamodb.responses import DynamoHandler

    lock = threading.Lock()
    original = DynamoHandler.call_action

    def atomic(self: DynamoHandler) -> Any:
        with lock:
            return original(self)

    DynamoHandler.call_action = atomic  # type: ignore[method-assign]
    try:
        yield
    finally:
        DynamoHandler.call_action = original  # type: ignore[method-assign]
