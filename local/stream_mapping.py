"""The indexer's event source mapping, locally: ``make run`` polls the table's stream and invokes IndexerFunction.

Only with ``OPENSEARCH_ENDPOINT`` set. Like Lambda's mapping in ``template.yaml``: it starts at the
stream's end (``LATEST``) for the shards there at start-up, reads new shards from their start, delivers
batches of at most ``BatchSize`` records in order, and when the function reports failed records it
delivers them again, from the first one, on the next poll, up to ``MaximumRetryAttempts``; then the
records are dropped with a log line (in AWS their description would go to the failure queue). It works on
the embedded moto and on DynamoDB Local alike: both serve DynamoDB Streams on the DynamoDB endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from local.poller import BackgroundPoller
from local.template import load_template

TABLE = "MemoryTable"


def _mapping_setting(name: str, default: int) -> int:
    events = load_template()["Resources"]["IndexerFunction"]["Properties"]["Events"]
    return int(events["TableStream"]["Properties"].get(name, default))


class LocalStreamMapping(BackgroundPoller):
    """Reads the stream with boto3's ``dynamodbstreams`` client; ``invoke`` runs one event through the function."""

    thread_name = "stream-mapping"

    def __init__(self, endpoint: str | None, invoke: Callable[[dict[str, Any]], Any], *, table: str = TABLE) -> None:
        import boto3

        self._streams = boto3.client("dynamodbstreams", endpoint_url=endpoint)
        dynamodb = boto3.client("dynamodb", endpoint_url=endpoint)
        self._arn: str = dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
        self._invoke = invoke
        self._batch_size = _mapping_setting("BatchSize", 100)
        self._max_retries = _mapping_setting("MaximumRetryAttempts", 10)
        self._iterators: dict[str, str | None] = {}
        self._pending: list[dict[str, Any]] = []
        self._attempts = 0
        for shard in self._shards():
            self._iterators[shard] = self._iterator(shard, "LATEST")
        super().__init__()

    def _shards(self) -> list[str]:
        description = self._streams.describe_stream(StreamArn=self._arn)["StreamDescription"]
        return [shard["ShardId"] for shard in description["Shards"]]

    def _iterator(self, shard: str, kind: str) -> str:
        answer = self._streams.get_shard_iterator(StreamArn=self._arn, ShardId=shard, ShardIteratorType=kind)
        iterator: str = answer["ShardIterator"]
        return iterator

    def _read(self) -> list[dict[str, Any]]:
        for shard in self._shards():
            if shard not in self._iterators:
                self._iterators[shard] = self._iterator(shard, "TRIM_HORIZON")
        records: list[dict[str, Any]] = []
        for shard, iterator in list(self._iterators.items()):
            if iterator is None:
                continue  # a closed shard, read to its end
            answer = self._streams.get_records(ShardIterator=iterator, Limit=self._batch_size)
            self._iterators[shard] = answer.get("NextShardIterator")
            records += [self._as_delivered(record) for record in answer["Records"]]
        return records

    def _as_delivered(self, record: dict[str, Any]) -> dict[str, Any]:
        """Lambda delivers the creation time as epoch seconds, and the stream's ARN with every record."""
        stream = dict(record["dynamodb"])
        created = stream.get("ApproximateCreationDateTime")
        if created is not None and not isinstance(created, int | float):
            stream["ApproximateCreationDateTime"] = int(created.timestamp())
        return {**record, "dynamodb": stream, "eventSourceARN": self._arn}

    def poll_once(self) -> int:
        """Deliver what the stream holds (and what failed before); returns how many records were delivered."""
        self._pending += self._read()
        delivered = 0
        while self._pending:
            batch = self._pending[: self._batch_size]
            try:
                answer = self._invoke({"Records": batch})
                failed = {item["itemIdentifier"] for item in (answer or {}).get("batchItemFailures", [])}
            except Exception:  # noqa: BLE001 - the whole batch failed, as Lambda sees an error
                failed = {record["dynamodb"]["SequenceNumber"] for record in batch}
            delivered += len(batch)
            first = next((i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] in failed), None)
            if first is None:
                self._pending = self._pending[len(batch) :]
                self._attempts = 0
                continue
            self._attempts += 1
            if self._attempts > self._max_retries:
                _log(f"indexer: gave up on {len(batch) - first} stream records after {self._max_retries} retries")
                self._pending = self._pending[len(batch) :]
                self._attempts = 0
                continue
            self._pending = self._pending[first:]
            break  # retried on the next poll, from the first failed record
        return delivered

    def run(self, interval_s: float = 0.5) -> None:
        while not self._stop.wait(interval_s):
            try:
                self.poll_once()
            except Exception as error:  # noqa: BLE001 - the poller outlives a hiccup of the stream
                _log(f"indexer: could not read the table's stream: {error}")


def _log(message: str) -> None:
    from local.environment import log

    log(message)
