"""moto as the local stack's DynamoDB, the tests' and the benches': safe under concurrency, idempotent
transactions, and fast at any table size, with moto's own answers (moto 5.2.5, pinned in
requirements-dev.txt; each speed-up replaces how moto finds an answer, never the answer; each is checked
against moto's own in tests/integration/test_moto_fast.py):

- **Serialised, idempotent requests** (``serialised_requests``): moto is not thread-safe (an UpdateItem ADD
  or a conditional put is applied without a lock; concurrent TransactWriteItems copy and change a table at
  once), so its DynamoDB requests are handled one at a time, as DynamoDB serialises writes to an item. A
  TransactWriteItems carrying a ``ClientRequestToken`` already applied within ten minutes answers as it
  did, without applying again (DynamoDB's idempotency, which moto lacks); the same token with another
  request is refused with ``IdempotentParameterMismatchException``, as DynamoDB does.
- **Transactions** (``cheap_transaction_backups``): moto backs up every table a TransactWriteItems names,
  once per item of the transaction (to roll back a cancelled one), stream records included, so a
  transaction cost as much as the table and its whole history. Here the backup is made once per table
  and copies only the items the transaction names (each partition it names is a dict of its own, every
  other item shared: what a transaction does not name it never changes); the stream's records are never
  copied, and a rollback drops those the cancelled transaction appended, as DynamoDB never emits them: a
  rollback restores exactly what moto's own would.
- **No object kept for the dashboard** (``untracked_models``): moto appends every model object it makes
  (each item, each backup's copy of it, each stream record) to its class's ``instances_tracked``, for the
  moto server's dashboard, and never lets go until a reset; with whole-table backups that held every copy
  of the table ever made (6.3 GB after 500 notes to one scope on the local stack). DynamoDB's objects are
  not kept there; no DynamoDB answer reads that list.
- **Queries** (``queries_read_their_partition``): moto's ``Table.query`` starts from ``all_items()``, every
  item of the table sorted by its key, then keeps the items of the queried partition (or index key) and
  sorts them again. The first sort costs O(n log n) DynamoType comparisons of the whole table per Query
  (90 % of a fold's time at 400 scopes, and growing with the table). Here, inside ``query`` only, a table
  Query starts from its own partition's items and an index Query from the items unsorted. Safe because
  ``query`` sorts what it keeps by a total order afterwards: a table Query by the sort key (unique within a
  partition), an index Query by (index keys, table keys), and the table keys are unique; so the order it
  started from never shows, and a partition's items are exactly those ``query``'s own filter on the hash
  key keeps. ``all_items()`` elsewhere (Scan, export) is moto's own.
- **Items in answers** (``plain_item_answers``): moto 5 serialises an answer by walking botocore's model of
  the operation value by value (about 30 model look-ups per attribute), so a Query's answer cost 0.2 ms per
  item it returned, two thirds of the Query (a remember's check of the scope's 50 newest notes took 12 ms
  where 10 took 4). The items of an answer (``Items``, ``Item``, ``Attributes``, ``LastEvaluatedKey``) are
  already DynamoDB's wire form, attribute-value maps whose only non-JSON values are a binary's bytes: here
  they are written as JSON directly, the bytes base64-encoded as the model says, and the rest of the answer
  (counts, consumed capacity, errors) by moto's own serialiser. Only the local stack has it
  (``local.environment``): the tests' and the benches' moto keep the timings their suites and floors were
  measured with (a load test's fold contends with twenty writers on one document).
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

import base64
import copy
import inspect
import json
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest.mock import patch


def _transaction_request(handler: Any) -> tuple[str, str] | None:
    """The ClientRequestToken of a TransactWriteItems request and the request without it, else None."""
    if not handler.headers.get("X-Amz-Target", "").endswith(".TransactWriteItems"):
        return None
    request = json.loads(handler.body or "{}")
    token = request.pop("ClientRequestToken", None)
    return (str(token), json.dumps(request, sort_keys=True)) if token else None


TOKEN_SECONDS = 600  # how long DynamoDB answers a repeated ClientRequestToken as it did the first time
# The requests that only read: every other one may change a table (local/saved_data.py counts those).
_READS = {
    *("GetItem", "BatchGetItem", "Query", "Scan", "SearchVectors", "TransactGetItems"),
    *("DescribeTable", "ListTables"),
}


class _Requests:
    """The one lock moto's DynamoDB requests are handled under, and how many may have changed data: the
    local stack's snapshot (local/saved_data.py) takes the lock to see every table at one instant."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # reentrant: a nested embedded_moto wraps the wrapper
        self.writes = 0


REQUESTS = _Requests()


@contextmanager
def serialised_requests() -> Iterator[None]:
    """moto's DynamoDB requests handled one at a time, and its transactions idempotent by their token.

    Requests still interleave with each other (botocore's serialising and parsing run outside the lock),
    which is what the concurrency tests exercise.
    """
    from moto.dynamodb.responses import DynamoHandler

    lock = REQUESTS.lock
    original = DynamoHandler.call_action
    applied: dict[str, tuple[float, str, Any]] = {}  # token -> (when, the request, the answer it applied)

    def atomic(self: DynamoHandler) -> Any:
        with lock:
            transaction = _transaction_request(self)
            now = time.monotonic()
            while applied and next(iter(applied.values()))[0] < now - TOKEN_SECONDS:
                del applied[next(iter(applied))]  # oldest first: the dict keeps the order they were applied in
            if transaction is not None and transaction[0] in applied:
                _, request, answer = applied[transaction[0]]
                if request == transaction[1]:
                    return answer
                message = "the ClientRequestToken was used with another request"
                body = {"__type": f"{_PREFIX}IdempotentParameterMismatchException", "message": message}
                return 400, {}, json.dumps(body)
            answer = original(self)
            if self.headers.get("X-Amz-Target", "").rpartition(".")[2] not in _READS:
                REQUESTS.writes += 1
            if transaction is not None and answer[0] == 200:
                applied[transaction[0]] = (now, transaction[1], answer)
            return answer

    with patch.object(DynamoHandler, "call_action", atomic):
        yield


_PREFIX = "com.amazonaws.dynamodb.v20120810#"


class _BackupNamedItems:
    """``copy`` as moto's TransactWriteItems sees it: a table's backup shares what the transaction leaves alone."""

    def __init__(self) -> None:
        self.named: dict[str, set[str]] = {}  # partition key -> the sort keys the transaction names in it
        self.backups: dict[int, Any] = {}  # this transaction's backup of each table, made once

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    def deepcopy(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        if id(value) in self.backups:  # moto backs the table up again for each of the transaction's items
            return self.backups[id(value)]
        items = getattr(value, "items", None)
        keyed = (getattr(value, "hash_key_attr", None), getattr(value, "range_key_attr", None)) == ("pk", "sk")
        if isinstance(items, dict) and hasattr(value, "stream_shard") and keyed:
            backup = _named_items_backup(value, self.named)
        else:  # not a table keyed as MemoryTable: moto's own backup, its stream's records aside (they only grow)
            memo = {} if memo is None else memo
            shard = getattr(value, "stream_shard", None)
            if shard is not None:
                memo[id(shard)] = shard
            backup = copy.deepcopy(value, memo)
        self.backups[id(value)] = backup
        return backup


def _named_items_backup(table: Any, named: dict[str, set[str]]) -> Any:
    """A Table that shares every item with ``table`` but those ``named``: a partition the transaction names is
    a dict of its own (a put or a delete changes the dict), and each item it names a copy (an update changes
    the item in place). What the transaction does not name it never changes, so a rollback to this backup
    restores exactly what moto's own deep copy of the whole table would."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    backup = copy.copy(table)
    backup.items = defaultdict(dict, table.items)
    for pk, sort_keys in named.items():
        hash_key = DynamoType({"S": pk})  # the table's keys are strings; a partition not stored is not copied
        if hash_key not in table.items:
            continue
        partition = backup.items[hash_key] = dict(table.items[hash_key])
        for sk in sort_keys:
            range_key = DynamoType({"S": sk})
            if range_key in partition:
                partition[range_key] = copy.deepcopy(partition[range_key])
    return backup


def _named(transact_items: list[dict[str, Any]]) -> dict[str, set[str]]:
    named: dict[str, set[str]] = defaultdict(set)
    for item in transact_items:
        for op in item.values():
            key = op.get("Key", op.get("Item", {}))
            named[key.get("pk", {}).get("S", "")].add(key.get("sk", {}).get("S", ""))
    return named


@contextmanager
def cheap_transaction_backups() -> Iterator[None]:
    from moto.dynamodb import models
    from moto.dynamodb.models import DynamoDBBackend

    fast = _BackupNamedItems()
    original = DynamoDBBackend.transact_write_items

    def transact(self: Any, transact_items: list[dict[str, Any]]) -> None:
        fast.named = _named(transact_items)
        fast.backups = {}
        shards = [table.stream_shard for table in self.tables.values() if table.stream_shard is not None]
        lengths = [len(shard.items) for shard in shards]
        try:
            original(self, transact_items)
        except BaseException:
            for shard, length in zip(shards, lengths, strict=True):
                del shard.items[length:]  # DynamoDB never emits the records of a cancelled transaction
            raise
        finally:
            fast.backups = {}

    with patch.object(models, "copy", fast), patch.object(DynamoDBBackend, "transact_write_items", transact):
        yield


@contextmanager
def untracked_models() -> Iterator[None]:
    """moto keeps every model object it ever made (each item, each copy of an item, each stream record) in
    its class's ``instances_tracked``, for its server's dashboard (``/moto-api/data.json``), until a reset:
    memory that grows with every write and never comes back. Here DynamoDB's are not kept; no DynamoDB
    answer reads that list."""
    from moto.core.common_models import BaseModel

    tracked = BaseModel.__dict__["__new__"]

    def new(cls: type, *args: Any, **kwargs: Any) -> Any:
        if cls.__module__.startswith("moto.dynamodb"):
            return object.__new__(cls)
        return tracked.__func__(cls, *args, **kwargs)

    with patch.object(BaseModel, "__new__", staticmethod(new)):
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


# The members of a DynamoDB answer that hold attribute-value maps, written by ``plain_item_answers``.
_ITEM_MEMBERS = ("Items", "Item", "Attributes", "LastEvaluatedKey")


def _wire(value: Any) -> Any:
    """An attribute value (or a map or list of them) as DynamoDB's JSON: a binary's bytes base64-encoded."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {key: _wire(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_wire(inner) for inner in value]
    return value


@contextmanager
def plain_item_answers() -> Iterator[None]:
    from moto.dynamodb.responses import DynamoResult

    original = DynamoResult.execute_result

    def execute_result(self: DynamoResult, context: Any) -> Any:
        result = self.result
        if not isinstance(result, dict) or not any(member in result for member in _ITEM_MEMBERS):
            return original(self, context)
        items = {member: _wire(result[member]) for member in _ITEM_MEMBERS if result.get(member) is not None}
        self._result = {member: value for member, value in result.items() if member not in _ITEM_MEMBERS}
        try:
            status, headers, body = original(self, context)  # the rest of the answer, as moto writes it
        finally:
            self._result = result
        return status, headers, json.dumps({**(json.loads(body) if body else {}), **items})

    with patch.object(DynamoResult, "execute_result", execute_result):
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
    """Every speed-up, for the block (requests serialised by the caller, as the benches' moto is)."""
    with ExitStack() as stack:
        stack.enter_context(untracked_models())
        stack.enter_context(cheap_transaction_backups())
        stack.enter_context(queries_read_their_partition())
        stack.enter_context(cheap_message_sends())
        yield


@contextmanager
def embedded_moto() -> Iterator[None]:
    """moto as the local stack and the tests use it: serialised, idempotent and fast, for the block."""
    with serialised_requests(), fast_moto():
        yield
