"""A faster moto for the fan-out bench, with the same answers: moto backs up a whole table before every
TransactWriteItems (to roll back a cancelled one), so a transaction costs as much as the table is large
and 2,000 scopes take hours. Here the backup deep-copies only the partitions the transaction names and
shares the others, which a cancelled transaction never changed (requests are serialised by
``tests.moto_support.atomic_moto_requests``): a rollback restores exactly what moto's own would."""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _CopyTouchedPartitions:
    def __init__(self, inner: Any) -> None:
        self._inner = inner  # the copy module moto was given before (tests.moto_support's, keeping streams)
        self.touched: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def deepcopy(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        items = getattr(value, "items", None)
        if not (isinstance(items, dict) and hasattr(value, "stream_shard")):
            return self._inner.deepcopy(value, memo)
        backup = copy.copy(value)  # a Table: its partitions, copied where this transaction writes
        backup.items = defaultdict(dict)
        for hash_key, partition in items.items():
            touched = str(getattr(hash_key, "value", hash_key)) in self.touched
            backup.items[hash_key] = copy.deepcopy(partition) if touched else partition
        return backup


@contextmanager
def cheap_transaction_backups() -> Iterator[None]:
    from moto.dynamodb import models
    from moto.dynamodb.models import DynamoDBBackend

    fast = _CopyTouchedPartitions(models.copy)
    inner_copy, original = models.copy, DynamoDBBackend.transact_write_items

    def transact(self: Any, transact_items: list[dict[str, Any]]) -> None:
        fast.touched = {
            op.get("Key", op.get("Item", {})).get("pk", {}).get("S", "")
            for item in transact_items
            for op in item.values()
        }
        original(self, transact_items)

    models.copy = fast  # type: ignore[assignment]
    DynamoDBBackend.transact_write_items = transact  # type: ignore[method-assign]
    try:
        yield
    finally:
        models.copy = inner_copy
        DynamoDBBackend.transact_write_items = original  # type: ignore[method-assign]
