"""What moto needs to behave like DynamoDB under concurrency; used by the tests and by ``make bench``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from local.moto_fast import embedded_moto
from local.moto_vectors import vector_indexes


@contextmanager
def atomic_moto_requests() -> Iterator[None]:
    """moto as the local stack runs it (local/moto_fast.py), for the block: requests serialised, as real
    DynamoDB serialises writes to an item; transactions idempotent by their ``ClientRequestToken`` (botocore
    sends the same token again when it retries a call whose answer was lost, and DynamoDB answers such a
    retry as the first attempt instead of applying it again); backups of only what a transaction names; and
    DynamoDB's vector indexes (local/moto_vectors.py). The patches are undone when the block ends."""
    with embedded_moto(), vector_indexes():
        yield
