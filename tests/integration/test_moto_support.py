"""The tests' moto behaves like DynamoDB where the concurrency tests rely on it."""

from __future__ import annotations


def _put_counter(aws, token):
    return aws.transact_write_items(
        ClientRequestToken=token,
        TransactItems=[
            {
                "Update": {
                    "TableName": "MemoryTable",
                    "Key": {"pk": {"S": "user#u-1"}, "sk": {"S": "day#2026-12-03"}},
                    "UpdateExpression": "ADD next_position :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                }
            }
        ],
    )


def test_a_retried_transaction_with_its_token_is_answered_not_applied_again(aws):
    """botocore sends a lost answer's retry with the same ClientRequestToken; DynamoDB applies it once."""
    _put_counter(aws, "token-a")
    _put_counter(aws, "token-a")
    _put_counter(aws, "token-b")

    item = aws.get_item(TableName="MemoryTable", Key={"pk": {"S": "user#u-1"}, "sk": {"S": "day#2026-12-03"}})
    assert item["Item"]["next_position"] == {"N": "2"}
