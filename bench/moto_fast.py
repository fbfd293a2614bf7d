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
- **Sends** (``cheap_message_sends``): moto's SQS ``send_message`` reads ``queue.attributes`` to learn
  whether the queue deduplicates by content, and that property counts the queue's messages three times
  (visible, delayed, in flight; a clock read per message), so the n-th send costs O(n): 50,000 messages
  took most of an hour. Inside ``send_message`` only, ``queue.attributes`` holds just the FIFO attributes,
  computed as moto computes them; ``send_message``, ``_validate_message`` and ``add_message`` read nothing
  else from it (moto 5.2.5), so every send is decided as before. Elsewhere the property is moto's own.
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


@contextmanager
def cheap_message_sends() -> Iterator[None]:
    from moto.core.utils import camelcase_to_underscores
    from moto.sqs.models import Queue, SQSBackend

    sending = threading.local()
    full, original_send = Queue.attributes, SQSBackend.send_message

    def attributes(self: Queue) -> dict[str, Any]:
        if not getattr(sending, "active", False):
            return full.fget(self)  # type: ignore[attr-defined]
        result: dict[str, Any] = {}
        for attribute in self.FIFO_ATTRIBUTES if self.fifo_queue else []:  # as moto's own property
            value = getattr(self, camelcase_to_underscores(attribute))
            result[attribute] = str(value).lower() if isinstance(value, bool) else value
        return result

    def send_message(self: SQSBackend, *args: Any, **kwargs: Any) -> Any:
        sending.active = True
        try:
            return original_send(self, *args, **kwargs)
        finally:
            sending.active = False

    with (
        patch.object(Queue, "attributes", property(attributes)),
        patch.object(SQSBackend, "send_message", send_message),
    ):
        yield


@contextmanager
def fast_moto() -> Iterator[None]:
    """Every patch, for the block."""
    with ExitStack() as stack:
        stack.enter_context(cheap_transaction_backups())
        stack.enter_context(queries_read_their_partition())
        stack.enter_context(cheap_message_sends())
        yield
