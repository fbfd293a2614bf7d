"""The faster moto of the local stack, the tests and the benches (local/moto_fast.py) answers every request
exactly as moto does."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from local.moto_fast import embedded_moto, fast_moto, plain_item_answers
from local.template import table_definitions

TABLE = "MemoryTable"


@pytest.fixture
def aws() -> Iterator[Any]:
    """moto's own (no patch, unlike the shared fixture's), with the tables; the comparisons patch it in turn."""
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("dynamodb")
        for definition in table_definitions().values():
            client.create_table(**definition)
        yield client


def _seed(aws: Any) -> None:
    """Notes in several partitions (some in the sparse index), markers, and items of other kinds."""
    for scope in range(6):
        pk = f"user#u-{scope}"
        for day in ("2026-11-20", "2026-11-21", "2026-11-25"):
            for position in (1, 2, 10, 11):  # "note#…#10" sorts before "note#…#2": order is the key's
                item = {
                    "pk": {"S": pk},
                    "sk": {"S": f"note#{day}#{position}"},
                    "day": {"S": day},
                    "position": {"N": str(position)},
                    "text": {"S": f"fact {position} of {day}"},
                    "created_at": {"S": f"{day}T10:00:{position:02d}.000Z"},
                    "consolidated": {"BOOL": position == 2},
                }
                if position != 2:
                    item["uc_pk"] = {"S": f"uc#{scope % 3:02d}"}
                    item["uc_sk"] = {"S": f"{day}T10:00:{position:02d}.000Z#{pk}#{position}"}
                aws.put_item(TableName=TABLE, Item=item)
        aws.put_item(
            TableName=TABLE,
            Item={
                "pk": {"S": pk},
                "sk": {"S": "consolidation#due"},
                "uc_pk": {"S": f"uc#{scope % 3:02d}"},
                "uc_sk": {"S": f"due#2026-11-20T10:00:0{scope}.000Z#{pk}"},
                "oldest": {"S": f"2026-11-20T10:00:0{scope}.000Z"},
                "notes": {"N": "9"},
            },
        )
        aws.put_item(TableName=TABLE, Item={"pk": {"S": pk}, "sk": {"S": "doc"}, "version": {"N": "1"}})


def _pages(aws: Any, request: dict[str, Any]) -> list[dict[str, Any]]:
    pages = []
    while True:
        answer = aws.query(**request)
        answer.pop("ResponseMetadata")
        pages.append(answer)
        if "LastEvaluatedKey" not in answer:
            return pages
        request = {**request, "ExclusiveStartKey": answer["LastEvaluatedKey"]}


def _partition(pk: str, **more: Any) -> dict[str, Any]:
    return {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":low": {"S": "note#2026-11-21"}, ":high": {"S": "note#~"}},
        **more,
    }


QUERIES: dict[str, dict[str, Any]] = {
    "a partition, every item": {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": "user#u-3"}},
    },
    "a partition's range, paged": _partition("user#u-1", Limit=3, ConsistentRead=True),
    "newest first, paged": _partition("user#u-2", Limit=4, ScanIndexForward=False),
    "with a filter": {
        **_partition("user#u-4", Limit=5),
        "FilterExpression": "consolidated = :false",
        "ExpressionAttributeValues": {**_partition("user#u-4")["ExpressionAttributeValues"], ":false": {"BOOL": False}},
    },
    "a count": _partition("user#u-5", Select="COUNT"),
    "a projection": _partition(
        "user#u-0", ProjectionExpression="created_at, #d", ExpressionAttributeNames={"#d": "day"}
    ),
    "begins_with": {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :p)",
        "ExpressionAttributeValues": {":pk": {"S": "user#u-1"}, ":p": {"S": "note#2026-11-25"}},
    },
    "a partition not stored": {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": "user#nobody"}},
    },
    "the index's markers, paged": {
        "TableName": TABLE,
        "IndexName": "Unconsolidated",
        "KeyConditionExpression": "uc_pk = :shard AND uc_sk BETWEEN :low AND :high",
        "ExpressionAttributeValues": {
            ":shard": {"S": "uc#01"},
            ":low": {"S": "due#"},
            ":high": {"S": "due#2026-11-20T10:00:05"},
        },
        "ProjectionExpression": "pk, oldest, notes",
        "Limit": 1,
    },
    "the index's notes, paged": {
        "TableName": TABLE,
        "IndexName": "Unconsolidated",
        "KeyConditionExpression": "uc_pk = :shard AND uc_sk < :markers",
        "ExpressionAttributeValues": {":shard": {"S": "uc#00"}, ":markers": {"S": "due#"}},
        "Limit": 5,
    },
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_a_query_answers_as_moto_does(aws, name):
    _seed(aws)
    request = QUERIES[name]
    moto_own = _pages(aws, request)
    with fast_moto():
        assert _pages(aws, request) == moto_own
    assert sum(page["Count"] for page in moto_own) > 0 or name == "a partition not stored"


def _everything(aws: Any) -> list[dict[str, Any]]:
    return sorted(aws.scan(TableName=TABLE)["Items"], key=lambda item: (item["pk"]["S"], item["sk"]["S"]))


def _document_to_version_2(pk: str, *, seen: int) -> dict[str, Any]:
    """The document's version moves to 2 on condition it is at ``seen``."""
    values = {":seen": {"N": str(seen)}, ":two": {"N": "2"}}
    key = {"pk": {"S": pk}, "sk": {"S": "doc"}}
    condition = {"ConditionExpression": "version = :seen", "ExpressionAttributeValues": values}
    return {"Update": {"TableName": TABLE, "Key": key, "UpdateExpression": "SET version = :two", **condition}}


def _transactions(aws: Any) -> list[str]:
    """A fold's two transactions on one scope, a cancelled one, then one across two scopes."""
    outcomes = []
    batches: list[list[dict[str, Any]]] = [
        [
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "user#u-1"}, "sk": {"S": "doc#v#2"}}}},
            _document_to_version_2("user#u-1", seen=1),
        ],
        [  # refused by its last item: the first item's write and the delete must be rolled back
            {"Delete": {"TableName": TABLE, "Key": {"pk": {"S": "user#u-2"}, "sk": {"S": "note#2026-11-20#1"}}}},
            _document_to_version_2("user#u-2", seen=2),  # it is at 1
        ],
        [
            {"Delete": {"TableName": TABLE, "Key": {"pk": {"S": "user#u-3"}, "sk": {"S": "note#2026-11-20#1"}}}},
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "user#u-4"}, "sk": {"S": "pending"}}}},
        ],
    ]
    for batch in batches:
        try:
            aws.transact_write_items(TransactItems=batch)
            outcomes.append("applied")
        except ClientError as error:
            outcomes.append(error.response["Error"]["Code"])
    return outcomes


def test_transactions_apply_and_roll_back_as_moto_does(aws):
    def run(wrap: Callable[[], Any] | None) -> tuple[list[str], list[dict[str, Any]]]:
        for item in _everything(aws):
            aws.delete_item(TableName=TABLE, Key={"pk": item["pk"], "sk": item["sk"]})
        _seed(aws)
        if wrap is None:
            return _transactions(aws), _everything(aws)
        with wrap():
            return _transactions(aws), _everything(aws)

    moto_own = run(None)
    assert moto_own[0] == ["applied", "TransactionCanceledException", "applied"]
    assert run(fast_moto) == moto_own
    assert run(embedded_moto) == moto_own


def _sends(sqs: Any) -> list[Any]:
    """A standard queue's batch and a FIFO queue deduplicating by content, then what a receive gets."""
    seen: list[Any] = []
    for name, attributes in (
        ("standard", {}),
        ("dedup.fifo", {"FifoQueue": "true", "ContentBasedDeduplication": "true"}),
        ("strict.fifo", {"FifoQueue": "true"}),
    ):
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        fifo = {"MessageGroupId": "g"} if name.endswith(".fifo") else {}
        entries = [{"Id": str(i), "MessageBody": f"body {i % 2}", **fifo} for i in range(4)]
        try:
            answer = sqs.send_message_batch(QueueUrl=url, Entries=entries)
            seen.append(sorted(entry["Id"] for entry in answer.get("Successful", [])))
        except ClientError as error:
            seen.append(error.response["Error"]["Message"])
        bodies = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        seen.append(sorted(message["Body"] for message in bodies))
        counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        seen.append({key: value for key, value in counts.items() if "Timestamp" not in key and key != "QueueArn"})
    return seen


def test_message_sends_are_decided_as_moto_does():
    import boto3
    from moto import mock_aws

    with mock_aws():
        moto_own = _sends(boto3.client("sqs"))
    with mock_aws(), fast_moto():
        assert _sends(boto3.client("sqs")) == moto_own
    assert moto_own[4] == ["body 0", "body 1"]  # content-based deduplication kept one message per body
    assert "MessageDeduplicationId" in moto_own[6]  # a FIFO queue without it wants a deduplication id


def _stream_records(aws: Any) -> list[dict[str, Any]]:
    import boto3

    streams = boto3.client("dynamodbstreams")
    arn = aws.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")
    records = streams.get_records(ShardIterator=iterator["ShardIterator"])["Records"]
    return [{"event": r["eventName"], "keys": r["dynamodb"]["Keys"]} for r in records]


def test_a_cancelled_transaction_leaves_no_stream_record(aws):
    _seed(aws)
    with embedded_moto():
        before = _stream_records(aws)
        assert _transactions(aws) == ["applied", "TransactionCanceledException", "applied"]
        after = _stream_records(aws)
    added = after[len(before) :]
    assert after[: len(before)] == before
    # the first and third transactions' writes only: the cancelled delete of u-2's note emitted nothing
    assert [(r["event"], r["keys"]["pk"]["S"]) for r in added] == [
        ("INSERT", "user#u-1"),
        ("MODIFY", "user#u-1"),
        ("REMOVE", "user#u-3"),
        ("INSERT", "user#u-4"),
    ]


def _put(pk: str, sk: str) -> dict[str, Any]:
    return {"Put": {"TableName": TABLE, "Item": {"pk": {"S": pk}, "sk": {"S": sk}}}}


def test_a_transaction_sent_again_with_its_token_answers_as_it_did_and_applies_once(aws):
    """DynamoDB's idempotency, which moto lacks: a retry whose first attempt committed is not applied again."""
    item = {"Update": {**_document_to_version_2("user#u-1", seen=1)["Update"]}}
    batch = [_put("user#u-1", "doc#v#2"), item]
    _seed(aws)
    with embedded_moto():
        first = aws.transact_write_items(TransactItems=batch, ClientRequestToken="write-1")
        again = aws.transact_write_items(TransactItems=batch, ClientRequestToken="write-1")  # its condition fails now
        with pytest.raises(ClientError) as refused:
            aws.transact_write_items(TransactItems=batch, ClientRequestToken="write-2")
        with pytest.raises(ClientError) as mismatch:
            aws.transact_write_items(TransactItems=[_put("user#u-9", "x")], ClientRequestToken="write-1")
    first.pop("ResponseMetadata")
    again.pop("ResponseMetadata")
    assert again == first
    assert refused.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert mismatch.value.response["Error"]["Code"] == "IdempotentParameterMismatchException"
    assert "Item" not in aws.get_item(TableName=TABLE, Key={"pk": {"S": "user#u-9"}, "sk": {"S": "x"}})


def test_a_transaction_copies_only_the_items_it_names_and_moto_keeps_no_copy(aws):
    """The backup of a transaction is the size of what it names, not of the table or of the scope, and moto
    keeps no model object beyond those the table holds: memory stays flat however many writes."""
    import copy as copy_module

    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.dynamo_type import Item

    _seed(aws)
    kept_before = len(Item.instances_tracked)  # the seed's, made by moto's own
    with embedded_moto():
        copied: list[Any] = []
        real = copy_module.deepcopy

        def counting(value: Any, memo: Any = None) -> Any:
            if memo is None:  # a backup's own call, not deepcopy's recursion into what it copies
                copied.append(value)
            return real(value, memo)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(copy_module, "deepcopy", counting)
            batch = [_put("user#u-1", f"note#x#{n}") for n in range(3)] + [_document_to_version_2("user#u-1", seen=1)]
            aws.transact_write_items(TransactItems=batch)
        for n in range(50):
            aws.transact_write_items(TransactItems=[_put("user#u-2", f"note#y#{n}"), _put("user#u-3", f"z#{n}")])
        table = dynamodb_backends["123456789012"]["eu-west-1"].tables[TABLE]
        stored = sum(len(partition) for partition in table.items.values())
        assert len(Item.instances_tracked) == kept_before  # moto's dashboard list: nothing of these writes
    assert [type(value).__name__ for value in copied] == ["Item"]  # the document the update changes, once
    assert stored == 6 * 14 + 3 + 100


_EVERY_TYPE = {
    "pk": {"S": "user#types"},
    "sk": {"S": "note#2026-11-20#000000001"},
    "text": {"S": 'ünïcode & <tags> "quoted"'},
    "position": {"N": "12.50"},
    "vec": {"B": bytes(range(256))},
    "tags": {"SS": ["a", "b"]},
    "sizes": {"NS": ["1", "2.5"]},
    "blobs": {"BS": [b"\x00\x01", b"\xff"]},
    "nested": {"M": {"list": {"L": [{"S": "x"}, {"N": "3"}, {"NULL": True}, {"BOOL": False}, {"B": b"\x10"}]}}},
    "gone": {"NULL": True},
    "done": {"BOOL": True},
}
_KEY = {"pk": _EVERY_TYPE["pk"], "sk": _EVERY_TYPE["sk"]}


def _answers(aws: Any) -> list[Any]:
    """Every kind of answer that holds items, each as botocore parses it (its metadata left out)."""
    update = {
        "TableName": TABLE,
        "Key": _KEY,
        "UpdateExpression": "ADD #n :one",
        "ExpressionAttributeNames": {"#n": "n"},
    }
    calls: list[Callable[[], Any]] = [
        lambda: aws.put_item(TableName=TABLE, Item=_EVERY_TYPE, ReturnValues="ALL_OLD"),
        lambda: aws.put_item(TableName=TABLE, Item=_EVERY_TYPE, ReturnValues="ALL_OLD"),
        lambda: aws.get_item(TableName=TABLE, Key=_KEY, ConsistentRead=True),
        lambda: aws.get_item(TableName=TABLE, Key={**_KEY, "sk": {"S": "absent"}}),
        lambda: aws.get_item(TableName=TABLE, Key=_KEY, ProjectionExpression="vec, nested.list[4], tags"),
        lambda: aws.query(**_partition("user#u-1", Limit=3)),
        lambda: aws.query(**QUERIES["a partition not stored"]),
        lambda: aws.query(**QUERIES["a count"]),
        lambda: aws.query(**QUERIES["the index's markers, paged"], ReturnConsumedCapacity="TOTAL"),
        lambda: aws.scan(TableName=TABLE, Limit=4),
        *(
            lambda values=values: aws.update_item(
                **update, ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues=values
            )
            for values in ("NONE", "ALL_NEW", "ALL_OLD", "UPDATED_NEW", "UPDATED_OLD")
        ),
        lambda: aws.batch_get_item(RequestItems={TABLE: {"Keys": [_KEY]}}),
        lambda: aws.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": _KEY}}]),
        lambda: aws.delete_item(TableName=TABLE, Key=_KEY, ReturnValues="ALL_OLD"),
    ]
    answers = []
    for call in calls:
        answer = call()
        answer.pop("ResponseMetadata")
        answers.append(answer)
    return answers


def test_answers_holding_items_are_written_as_moto_writes_them(aws):
    _seed(aws)
    moto_own = _answers(aws)
    with fast_moto(), plain_item_answers():
        answers = _answers(aws)
    assert answers == moto_own
    assert moto_own[2]["Item"]["vec"]["B"] == bytes(range(256)) and moto_own[5]["LastEvaluatedKey"]
