"""tests/support/iam.py: the table's permissions that the moto tiers hold each handler's calls to, read from
template.yaml as AWS applies them."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from local.template import RUNNING_FUNCTION
from tests.support.iam import granted, is_granted, needed, refuse_ungranted, refused_calls


class _Operation:
    def __init__(self, name: str) -> None:
        self.name = name


def test_a_transaction_needs_the_action_of_each_of_its_items():
    items = [
        {"Put": {"TableName": "MemoryTable", "Item": {}}},
        {"Update": {"TableName": "MemoryTable", "Key": {}}},
        {"ConditionCheck": {"TableName": "MemoryTable", "Key": {}}},
    ]

    assert needed("TransactWriteItems", {"TransactItems": items}) == [
        ("dynamodb:PutItem", "MemoryTable", None),
        ("dynamodb:UpdateItem", "MemoryTable", None),
        ("dynamodb:ConditionCheckItem", "MemoryTable", None),
    ]
    assert needed("BatchGetItem", {"RequestItems": {"MemoryTable": {}}}) == [
        ("dynamodb:BatchGetItem", "MemoryTable", None)
    ]
    assert needed("Query", {"TableName": "MemoryTable", "IndexName": "Unconsolidated"}) == [
        ("dynamodb:Query", "MemoryTable", "Unconsolidated")
    ]


def test_a_grant_on_the_table_is_not_a_grant_on_its_indexes():
    assert is_granted("ConsolidateFunction", "dynamodb:Query", "MemoryTable", None)
    assert is_granted("ConsolidateFunction", "dynamodb:Query", "MemoryTable", "Unconsolidated")
    assert not is_granted("ToolsFunction", "dynamodb:Query", "MemoryTable", "Unconsolidated")
    assert not is_granted("ToolsFunction", "dynamodb:Query", "OtherTable", None)


def test_a_statement_under_a_condition_counts_and_names_its_index():
    assert granted("ToolsFunction")["dynamodb:SearchVectors"] == frozenset({("MemoryTable", "NoteVectors")})
    assert is_granted("ToolsFunction", "dynamodb:SearchVectors", "MemoryTable", "NoteVectors")
    assert not is_granted("ToolsFunction", "dynamodb:SearchVectors", "MemoryTable", "Elsewhere")
    assert not is_granted("ContextFunction", "dynamodb:SearchVectors", "MemoryTable", "NoteVectors")


def test_a_call_outside_a_handler_is_not_checked_and_one_inside_is_refused_as_on_aws():
    refuse_ungranted({"TableName": "MemoryTable", "Key": {}}, _Operation("DeleteItem"))  # the test's own client
    token = RUNNING_FUNCTION.set("ContextFunction")
    try:
        refuse_ungranted({"TableName": "MemoryTable", "Key": {}}, _Operation("GetItem"))
        with pytest.raises(ClientError) as refused:
            refuse_ungranted({"TableName": "MemoryTable", "Key": {}}, _Operation("DeleteItem"))
    finally:
        RUNNING_FUNCTION.reset(token)
    try:
        assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
        assert refused_calls == [
            "ContextFunction is not allowed dynamodb:DeleteItem on MemoryTable "
            "(template.yaml grants it no such statement)"
        ]
    finally:
        refused_calls.clear()
