"""A faster moto for the consolidation benches, with the same answers (moto 5.2.5, pinned in
requirements-dev.txt; each patch replaces how moto finds an answer, never the answer):

- **Transactions** (``cheap_transaction_backups``): moto backs up a whole table before every
  TransactWriteItems (to roll back a cancelled one), so a transaction costs as much as the table is large.
  Here the backup deep-copies only the partitions the transaction names and shares the others, which a
  cancelled transaction never changed (requests are serialised by ``tests.moto_support.atomic_moto_requests``):
  a rollback restores exactly what moto's own would.
- **Queries** (``queries_read_their_partition``): moto's ``Table.query`` starts from ``all_items()``, every
  item of the table sorted by its key, then keeps the items of the queried partition (or index key) and
  sorts them again. The first sort costs O(n log n) DynamoType comparisons of the whole table per Query
  (90 % of a fold's time at 400 scopes, and growing with the table). Here, inside ``query`` only, a table
  Query starts from its own partition's items and an index Query from the items unsorted. Safe because
  ``query`` sorts what it keeps by a total order afterwards: a table Query by the sort key (unique within a
  partition), an index Query by (index keys, table keys), and the table keys are unique; so the order it
  started from never shows, and a partition's items are exactly those ``query``'s own filter on the hash
  key keeps. ``all_items()`` elsewhere (Scan, export) is moto's own.
- **Sends and receives** (``cheap_message_sends``): moto's SQS ``send_message`` reads ``queue.attributes``
  to learn whether the queue deduplicates by content, and ``receive_message`` reads it (through
  ``is_message_valid_based_on_retention_period``) for every message it hands out; that property counts
  the queue's messages three times (visible, delayed, in flight; a clock read per message), so with n
  messages queued each send and each received message cost O(n): 50,000 sends took most of an hour, and
  receives were a quarter of the fan-out's CPU at 1,000 scopes. Inside those two methods only,
  ``queue.attributes`` is moto's own dict without the three counts, which neither reads (they read
  ``ContentBasedDeduplication`` and ``MessageRetentionPeriod``, moto 5.2.5); elsewhere (GetQueueAttributes)
  it is moto's own, counts included.
"""

from __future__ import annotations

import copy
import inspect
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest.mock import patch


class _CopyTouchedPartitions:
    def __init__(self, inner: Any) -> None:
        self._inner = inner  # the copy module moto was given before (tests.moto_support's, keeping streams)
        self.touched: set[str] = set()
        self.backups: dict[int, Any] = {}  # this transaction's backup of each table, made once

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def deepcopy(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        from moto.dynamodb.models.dynamo_type import DynamoType

        items = getattr(value, "items", None)
        keyed_by_pk = getattr(value, "hash_key_attr", None) == "pk" and getattr(value, "hash_key_type", None) == "S"
        if not (isinstance(items, dict) and hasattr(value, "stream_shard") and keyed_by_pk):
            return self._inner.deepcopy(value, memo)  # not a table keyed as MemoryTable: moto's own backup
        if id(value) in self.backups:  # moto backs the table up again for each of the transaction's items
            return self.backups[id(value)]
        backup = copy.copy(value)  # a Table: its partitions shared, copied where this transaction writes
        backup.items = defaultdict(dict, items)
        for key in self.touched:
            hash_key = DynamoType({"S": key})  # the table's keys are strings; a key not stored is not copied
            if hash_key in items:
                backup.items[hash_key] = copy.deepcopy(items[hash_key])
        self.backups[id(value)] = backup
        return backup


@contextmanager
def cheap_transaction_backups() -> Iterator[None]:
    from moto.dynamodb import models
    from moto.dynamodb.models import DynamoDBBackend

    fast = _CopyTouchedPartitions(models.copy)
    original = DynamoDBBackend.transact_write_items

    def transact(self: Any, transact_items: list[dict[str, Any]]) -> None:
        fast.touched = {
            op.get("Key", op.get("Item", {})).get("pk", {}).get("S", "")
            for item in transact_items
            for op in item.values()
        }
        fast.backups = {}
        try:
            original(self, transact_items)
        finally:
            fast.backups = {}

    with patch.object(models, "copy", fast), patch.object(DynamoDBBackend, "transact_write_items", transact):
        yield


_ALL = object()  # not inside a Query: all_items() is moto's own


@contextmanager
def queries_read_their_partition() -> Iterator[None]:
    from moto.dynamodb.models.table import Table

    querying = threading.local()  # per thread: a moto server answers requests on several threads
    original_query, original_all_items = Table.query, Table.all_items
    signature = inspect.signature(original_query)

    def all_items(self: Table) -> list[Any]:
        partition = getattr(querying, "partition", _ALL)
        if partition is _ALL or not self.range_key_attr:
            return original_all_items(self)
        if partition is None:  # an index Query: every item, in no particular order
            return [item for items in self.items.values() for item in items.values()]
        return list(self.items.get(partition, {}).values())

    def query(self: Table, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs).arguments
        querying.partition = None if bound.get("index_name") else bound["hash_key"]
        try:
            return original_query(self, *args, **kwargs)
        finally:
            del querying.partition

    with patch.object(Table, "query", query), patch.object(Table, "all_items", all_items):
        yield


_COUNTS = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesDelayed",
    "ApproximateNumberOfMessagesNotVisible",
)


class _QueueWithoutCounts:
    """A queue as moto's ``Queue.attributes`` reads it, but with no message counted."""

    def __init__(self, queue: Any) -> None:
        self._queue = queue

    def __getattr__(self, name: str) -> Any:
        return None if name.startswith("approximate_number_of_messages") else getattr(self._queue, name)


@contextmanager
def cheap_message_sends() -> Iterator[None]:
    from moto.sqs.models import Queue, SQSBackend

    uncounted = threading.local()
    full = Queue.attributes
    send, retention = SQSBackend.send_message, "is_message_valid_based_on_retention_period"

    def attributes(self: Queue) -> dict[str, Any]:
        if not getattr(uncounted, "active", False):
            return full.fget(self)  # type: ignore[attr-defined]
        result: dict[str, Any] = full.fget(_QueueWithoutCounts(self))  # type: ignore[attr-defined]
        for name in _COUNTS:
            result.pop(name, None)
        return result

    def without_counts(method: Any) -> Any:
        def call(self: SQSBackend, *args: Any, **kwargs: Any) -> Any:
            uncounted.active = True
            try:
                return method(self, *args, **kwargs)
            finally:
                uncounted.active = False

        return call

    with ExitStack() as stack:
        stack.enter_context(patch.object(Queue, "attributes", property(attributes)))
        stack.enter_context(patch.object(SQSBackend, "send_message", without_counts(send)))
        stack.enter_context(patch.object(SQSBackend, retention, without_counts(getattr(SQSBackend, retention))))
        yield


@contextmanager
def fast_moto() -> Iterator[None]:
    """Every patch, for the block."""
    with ExitStack() as stack:
        stack.enter_context(cheap_transaction_backups())
        stack.enter_context(queries_read_their_partition())
        stack.enter_context(cheap_message_sends())
        yield
