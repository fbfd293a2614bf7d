"""Records put straight into a scope's partition, for the contract tests of both tiers: on the table (moto) as
DynamoDB items, on the fake world (``tests/support/fake_stores.py``) as its plain items. For the records no port
writes (an idempotency record, a turn's injection record, a claim of the shape written before claims named their
thread), so that one contract seeds both the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_memory.domain.scope import Scope
from tests.support.fake_stores import FakeWorld, Write

Seed = Callable[[Scope, str, dict[str, Any]], None]  # seed(scope, sk, attributes)


def _typed(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, list):
        return {"L": [_typed(one) for one in value]}
    return {"S": str(value)}


def table_seed(client: Any, table: str = "MemoryTable") -> Seed:
    """Put each record as a DynamoDB item (str: S, int: N, bool: BOOL, list: L)."""

    def seed(scope: Scope, sk: str, attributes: dict[str, Any]) -> None:
        item = {"pk": {"S": scope.key}, "sk": {"S": sk}} | {name: _typed(v) for name, v in attributes.items()}
        client.put_item(TableName=table, Item=item)

    return seed


def world_seed(world: FakeWorld) -> Seed:
    """Put each record into the fake world as it is."""

    def seed(scope: Scope, sk: str, attributes: dict[str, Any]) -> None:
        world.transact("seed", [Write((scope.key, sk), lambda _: dict(attributes))])

    return seed
