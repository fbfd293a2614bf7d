"""The table's stream as Lambda delivers it: records read from moto's DynamoDB Streams, shaped as an event.

moto records every write of the ``aws`` fixture's table on its stream (NEW_AND_OLD_IMAGES, as the template
declares); ``StreamReader.next_batch()`` returns the records written since the last call, in order, as the
``{"Records": [...]}`` event the indexer's event source mapping would invoke it with.
"""

from __future__ import annotations

from typing import Any

import boto3


class StreamReader:
    def __init__(self, dynamodb: Any, table: str = "MemoryTable") -> None:
        self._streams = boto3.client("dynamodbstreams")
        self._arn = dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
        shards = self._streams.describe_stream(StreamArn=self._arn)["StreamDescription"]["Shards"]
        self._iterators = {
            shard["ShardId"]: self._streams.get_shard_iterator(
                StreamArn=self._arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            for shard in shards
        }

    def next_batch(self) -> dict[str, Any]:
        records = []
        for shard, iterator in self._iterators.items():
            answer = self._streams.get_records(ShardIterator=iterator)
            self._iterators[shard] = answer["NextShardIterator"]
            records += [self._as_delivered(record) for record in answer["Records"]]
        return {"Records": records}

    def _as_delivered(self, record: dict[str, Any]) -> dict[str, Any]:
        """boto3 parses the creation time; Lambda delivers it as epoch seconds, with the stream's ARN."""
        stream = dict(record["dynamodb"])
        stream["ApproximateCreationDateTime"] = int(stream["ApproximateCreationDateTime"].timestamp())
        return {**record, "dynamodb": stream, "eventSourceARN": self._arn}
