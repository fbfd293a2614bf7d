"""Records put straight into a scope's partition, for the contract tests of both tiers: on the table (moto) as
DynamoDB items, on the fake world (``tests/support/fake_stores.py``) as its plain items. For the records no port
writes (an idempotency record, a turn's injection record, a claim of the shape written before claims named their
thread), so that one contract seeds both the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_memory.domain.notes import parse_note_id
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import note_sk
from agent_memory.storage.note_items import SUPERSEDED_BY, SUPERSEDES
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


def _note_key(scope: Scope, ident: str) -> tuple[str, str]:
    day, position = parse_note_id(ident) or ("", 0)
    return scope.key, note_sk(day, position)


def table_link(client: Any, table: str = "MemoryTable") -> Callable[[Scope, str, str], None]:
    """``new`` supersedes ``old`` on the table, as a fold's save links them (``note_items.superseded_items``)."""

    def link(scope: Scope, old: str, new: str) -> None:
        for ident, name, other in ((old, SUPERSEDED_BY, new), (new, SUPERSEDES, old)):
            pk, sk = _note_key(scope, ident)
            client.update_item(
                TableName=table,
                Key={"pk": {"S": pk}, "sk": {"S": sk}},
                UpdateExpression="ADD #links :one",
                ExpressionAttributeNames={"#links": name},
                ExpressionAttributeValues={":one": {"SS": [other]}},
            )

    return link


def world_link(world: FakeWorld) -> Callable[[Scope, str, str], None]:
    """``new`` supersedes ``old`` in the fake world: the same two sets on the two notes' items."""

    def link(scope: Scope, old: str, new: str) -> None:
        for ident, name, other in ((old, SUPERSEDED_BY, new), (new, SUPERSEDES, old)):
            added = Write(
                _note_key(scope, ident),
                lambda item, n=name, o=other: {**(item or {}), n: {*(item or {}).get(n, ()), o}},
            )
            world.transact("seed", [added])

    return link
