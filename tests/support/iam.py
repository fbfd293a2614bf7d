"""The table's permissions as AWS applies them, for the tests on moto, which checks none.

A DynamoDB call made while a function's handler runs (``local.template.RUNNING_FUNCTION``) must be granted by
that function's policies in template.yaml: each action on the table or on the index the call names. A path that
only a rare fault takes (the settling of a write whose every answer was lost sends a ConditionCheck) could
otherwise call an action its function lacks and pass every test, then fail on AWS with AccessDenied. Here the
call is refused with ``AccessDeniedException``, as on AWS, and recorded, so the test fails even where the code
degrades past the refusal (``refused_calls``, checked after each test by the ``aws`` fixture).

Actions follow DynamoDB's IAM reference: a ``TransactWriteItems`` needs the action of each of its items
(``PutItem``, ``UpdateItem``, ``DeleteItem``, ``ConditionCheckItem``), a ``TransactGetItems`` ``GetItem``; any
other operation its own name. A statement under ``Fn::If`` counts whichever way its condition goes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from botocore.exceptions import ClientError

from local.template import RUNNING_FUNCTION, load_template

# (table, index): a table's logical id (its name locally) and an index of it, None for the table itself; "*" for any.
Resource = tuple[str, str | None]
_TRANSACT_ITEM_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}

refused_calls: list[str] = []


@cache
def granted(function: str) -> dict[str, frozenset[Resource]]:
    """Each ``dynamodb:`` action the function's policies allow, with the resources it is allowed on."""
    actions: dict[str, set[Resource]] = defaultdict(set)
    for policy in load_template()["Resources"][function]["Properties"].get("Policies", []):
        for statement in _statements(policy):
            if statement.get("Effect") != "Allow":
                continue
            resources = {r for r in map(_resource, _listed(statement["Resource"])) if r is not None}
            for action in _listed(statement["Action"]):
                if action.startswith("dynamodb:"):
                    actions[action] |= resources
    return {action: frozenset(resources) for action, resources in actions.items()}


def needed(operation: str, params: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """The (action, table, index) a call needs."""
    if operation in ("TransactWriteItems", "TransactGetItems"):
        return [
            (f"dynamodb:{_TRANSACT_ITEM_ACTIONS[kind]}", body["TableName"], None)
            for item in params["TransactItems"]
            for kind, body in item.items()
        ]
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [(f"dynamodb:{operation}", table, None) for table in params["RequestItems"]]
    return [(f"dynamodb:{operation}", params["TableName"], params.get("IndexName"))]


def is_granted(function: str, action: str, table: str, index: str | None) -> bool:
    return any(
        granted_table in ("*", table) and (granted_index == index or "*" in (granted_table, granted_index))
        for granted_table, granted_index in granted(function).get(action, ())
    )


def refuse_ungranted(params: dict[str, Any], model: Any, **_: Any) -> None:
    """botocore's ``before-parameter-build.dynamodb`` hook: an ungranted call fails as AWS would fail it."""
    function = RUNNING_FUNCTION.get()
    if function is None:
        return
    for action, table, index in needed(model.name, params):
        if not is_granted(function, action, table, index):
            where = table if index is None else f"{table}/index/{index}"
            message = f"{function} is not allowed {action} on {where} (template.yaml grants it no such statement)"
            refused_calls.append(message)
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": message}}, model.name)


@contextmanager
def running_as(function: str | None) -> Iterator[None]:
    """Calls made as ``function`` (None: the test's own, unchecked) while a handler runs: a test that plays
    another caller's writes in the middle of a handler's call (an erase, a dashboard delete) makes them as
    that caller, not as the handler's function."""
    token = RUNNING_FUNCTION.set(function)
    try:
        yield
    finally:
        RUNNING_FUNCTION.reset(token)


def _statements(policy: Any) -> list[dict[str, Any]]:
    if isinstance(policy, dict) and "Fn::If" in policy:
        _, when_true, when_false = policy["Fn::If"]
        return _statements(when_true) + _statements(when_false)
    if isinstance(policy, dict) and "Statement" in policy:
        return list(policy["Statement"])
    return []  # a managed policy's reference, or AWS::NoValue


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _resource(value: Any) -> Resource | None:
    """The table and index an ARN of the template names; None for anything else (a stream, another service)."""
    if value == "*":
        return ("*", "*")
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        target = value["Fn::GetAtt"]
        name, attribute = target.split(".", 1) if isinstance(target, str) else target
        return (name, None) if attribute == "Arn" else None
    if isinstance(value, dict) and isinstance(value.get("Fn::Sub"), str):
        arn, _, index = value["Fn::Sub"].partition("/index/")
        if arn.startswith("${") and arn.endswith(".Arn}") and index:
            return (arn[2:-5], index)
    return None
