"""DynamoDB clients that fail or lose answers on purpose, and reads of what the table holds after."""

from __future__ import annotations

import random
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.domain.scope import Scope


class FaultyClient:
    """The real client, except that the operations in ``failing`` raise ``ClientError(code)`` (after
    ``after`` successful calls of that operation)."""

    def __init__(self, real: Any, failing: dict[str, str], after: int = 0) -> None:
        self._real = real
        self.failing = failing
        self.after = after
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._real, name)
        if name not in self.failing:
            return method

        def _maybe_fail(**kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            if self.fails(self.calls[name]):
                raise ClientError({"Error": {"Code": self.failing[name], "Message": "injected"}}, name)
            return method(**kwargs)

        return _maybe_fail

    def fails(self, call: int) -> bool:
        """Whether the ``call``-th call (from 1) of a failing operation fails."""
        return call > self.after


def items(aws, scope: Scope) -> list[dict[str, Any]]:
    return aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": scope.key}},
        ConsistentRead=True,
    )["Items"]


def notes(aws, scope: Scope) -> list[str]:
    return [item["text"]["S"] for item in items(aws, scope) if item["sk"]["S"].startswith("note#")]


def document_items(aws, scope: Scope) -> list[dict[str, Any]]:
    return [item for item in items(aws, scope) if item["sk"]["S"].startswith("doc")]


class SeededLoss:
    """The real client, except that about one write in ``every`` (a seeded schedule) is applied and then its
    answer is lost for good: botocore's retries spent, the caller gets a 500 (the outcome unknown to it)."""

    writes = frozenset({"transact_write_items", "update_item", "delete_item"})

    def __init__(self, real: Any, chance: random.Random, every: int) -> None:
        self._real, self._chance, self._every = real, chance, every
        self.lost = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._real, name)
        if name not in self.writes:
            return method

        def _maybe_lost(**kwargs: Any) -> Any:
            answer = method(**kwargs)
            if not self.loses():
                return answer
            self.lost += 1
            raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, name)

        return _maybe_lost

    def loses(self) -> bool:
        """Whether the write just applied loses its answer."""
        return not self._chance.randrange(self._every)
