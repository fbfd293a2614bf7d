"""A transaction's ClientRequestToken: the same for the same write sent again, another for another request."""

from __future__ import annotations

import re

from agent_memory.storage.client import request_token

NOTE = [{"Put": {"TableName": "MemoryTable", "Item": {"pk": {"S": "user#u-1"}, "vec": {"B": b"\x01\x02"}}}}]


def test_the_same_write_and_request_give_the_same_token_in_dynamodb_s_shape():
    token = request_token("w-1", NOTE)

    assert token == request_token("w-1", [dict(item) for item in NOTE])
    assert re.fullmatch(r"[a-f0-9]{36}", token)  # DynamoDB allows 1 to 36 characters


def test_another_write_or_another_request_gives_another_token():
    other_vector = [{"Put": {"TableName": "MemoryTable", "Item": {"pk": {"S": "user#u-1"}, "vec": {"B": b"\x01"}}}}]

    assert request_token("w-2", NOTE) != request_token("w-1", NOTE)
    assert request_token("w-1", other_vector) != request_token("w-1", NOTE)
