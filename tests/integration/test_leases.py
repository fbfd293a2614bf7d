"""A record claimed by one caller at a time (``storage.client.claim_record``): the flush's claim on a compaction
event and the ``Idempotency-Key`` record both start with it."""

from __future__ import annotations

from typing import Any

from agent_memory.basics.settings import get_settings
from agent_memory.storage.client import claim_record

KEY = {"pk": {"S": "user#u-1"}, "sk": {"S": "flush#cmp-1"}}


def _claim(client: Any, now: int, token: str) -> dict[str, Any] | None:
    item = {**KEY, "token": {"S": token}}
    return claim_record(client, get_settings().table_name, item, now_epoch=now, lease_s=10, keep_s=100)


def _finish(client: Any) -> None:
    client.update_item(
        TableName=get_settings().table_name,
        Key=KEY,
        UpdateExpression="SET #status = :done",
        ExpressionAttributeNames={"#status": "status"},
        ExpressionAttributeValues={":done": {"S": "done"}},
    )


def test_a_free_key_is_claimed_and_a_second_caller_gets_the_holder(aws: Any) -> None:
    assert _claim(aws, 1_000, "first") is None

    holder = _claim(aws, 1_005, "second")

    assert holder is not None and holder["token"] == {"S": "first"}
    stored = aws.get_item(TableName=get_settings().table_name, Key=KEY)["Item"]
    assert stored["token"] == {"S": "first"} and stored["status"] == {"S": "in_progress"}
    assert stored["lease_until"] == {"N": "1010"} and stored["expires_at"] == {"N": "1100"}


def test_a_claim_whose_holder_died_is_taken_over_after_its_lease(aws: Any) -> None:
    _claim(aws, 1_000, "died")

    assert _claim(aws, 1_010, "too-early") is not None  # the lease ends after 1_010, not at it
    assert _claim(aws, 1_011, "retry") is None

    assert aws.get_item(TableName=get_settings().table_name, Key=KEY)["Item"]["token"] == {"S": "retry"}


def test_a_finished_record_holds_its_key_until_it_expires(aws: Any) -> None:
    _claim(aws, 1_000, "first")
    _finish(aws)

    held = _claim(aws, 1_050, "repeat")  # long after the lease: a finished record is no lease
    assert held is not None and held["status"] == {"S": "done"}

    assert _claim(aws, 1_101, "after-ttl") is None  # expired: DynamoDB's TTL removes it late, it counts as absent
