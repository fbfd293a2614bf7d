"""local/saved_data.py: the local stack's snapshot of the embedded moto gives back every item, keeps none of the
stream's records and lets the stream go on where it was; a save with nothing written since is skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
from moto.dynamodb.models import dynamodb_backends

from local.environment import ACCOUNT_ID
from local.saved_data import SNAPSHOT, SavedData

TABLE = "MemoryTable"


def put(aws: Any, sk: str) -> None:
    aws.put_item(TableName=TABLE, Item={"pk": {"S": "user#u-1"}, "sk": {"S": sk}, "text": {"S": f"note {sk}"}})


def stream_records(aws: Any, kind: str = "TRIM_HORIZON") -> tuple[Any, str]:
    streams = boto3.client("dynamodbstreams", region_name=aws.meta.region_name)
    arn = aws.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    return streams, streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType=kind)["ShardIterator"]


def test_the_snapshot_gives_back_every_item_and_the_stream_goes_on_after_its_last_record(
    aws: Any, tmp_path: Path
) -> None:
    put(aws, "note#1")
    put(aws, "note#2")
    streams, iterator = stream_records(aws)
    last_saved = max(
        int(r["dynamodb"]["SequenceNumber"]) for r in streams.get_records(ShardIterator=iterator)["Records"]
    )
    saved = SavedData(tmp_path)
    assert saved.save() is True
    assert saved.save() is False  # nothing written since: no new file

    dynamodb_backends[ACCOUNT_ID][aws.meta.region_name].tables.clear()  # the process ends
    assert SavedData(tmp_path).load() == 2

    keys = aws.query(
        TableName=TABLE, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "user#u-1"}}
    )
    assert [item["text"]["S"] for item in keys["Items"]] == ["note note#1", "note note#2"]
    streams, iterator = stream_records(aws)
    assert streams.get_records(ShardIterator=iterator)["Records"] == []  # the records were not kept
    put(aws, "note#3")
    records = streams.get_records(ShardIterator=iterator)["Records"]
    assert [r["dynamodb"]["Keys"]["sk"]["S"] for r in records] == ["note#3"]
    assert int(records[0]["dynamodb"]["SequenceNumber"]) == last_saved + 1


def test_fresh_starts_empty_and_keeps_the_previous_snapshot_once(aws: Any, tmp_path: Path) -> None:
    put(aws, "note#1")
    SavedData(tmp_path).save()
    dynamodb_backends[ACCOUNT_ID][aws.meta.region_name].tables.clear()

    assert SavedData(tmp_path).load(fresh=True) == 0

    assert not (tmp_path / SNAPSHOT).exists()
    assert (tmp_path / f"{SNAPSHOT}.before-fresh").exists()
