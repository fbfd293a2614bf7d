"""``storage.client.update_if``: a conditional UpdateItem that says whether its condition let it through, on the
client every store wraps (``storage.client.DynamoDB``: a throttle is StorageUnavailable, anything else itself)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from agent_memory.basics.errors import StorageUnavailable
from agent_memory.basics.settings import get_settings
from agent_memory.storage.client import DynamoDB, update_if

KEY = {"pk": {"S": "user#u-1"}, "sk": {"S": "consolidation#due"}}


def _take(client: Any, token: str) -> bool:
    return update_if(
        client,
        TableName=get_settings().table_name,
        Key=KEY,
        UpdateExpression="SET folding = :token",
        ConditionExpression="attribute_not_exists(folding)",
        ExpressionAttributeValues={":token": {"S": token}},
    )


def test_it_is_true_when_applied_and_false_when_its_condition_refuses(aws: Any) -> None:
    assert _take(aws, "first") is True
    assert _take(aws, "second") is False

    assert aws.get_item(TableName=get_settings().table_name, Key=KEY)["Item"]["folding"] == {"S": "first"}


def test_a_throttle_is_storage_unavailable_and_a_bad_request_surfaces_as_itself() -> None:
    class Refusing:
        def __init__(self, code: str) -> None:
            self.code = code

        def update_item(self, **_: Any) -> None:
            raise ClientError({"Error": {"Code": self.code, "Message": "no"}}, "UpdateItem")

    with pytest.raises(StorageUnavailable):
        _take(DynamoDB(Refusing("ProvisionedThroughputExceededException")), "x")
    with pytest.raises(ClientError, match="ValidationException"):
        _take(DynamoDB(Refusing("ValidationException")), "x")


def test_a_client_wrapped_twice_is_wrapped_once() -> None:
    raw = object()

    assert DynamoDB(DynamoDB(raw)).raw is raw
