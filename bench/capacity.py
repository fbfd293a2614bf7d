"""The DynamoDB capacity units one call consumes, derived from the sizes of the items its requests touch.

moto does not meter capacity, so the units are worked out from DynamoDB's published rules, on the items as
they stand right after the call (``requests_of`` keeps the requests, ``units`` sizes their items):

- a write costs 1 write unit per started KB of each item it writes (for an update, the item as it ends up:
  the counters and markers here only grow), and twice that for every item of a ``TransactWriteItems``
  (a ``ConditionCheck`` included);
- a ``GetItem`` or a ``Query`` costs 1 read unit per started 4 KB of the whole items it reads (a projection
  trims the answer, not the bill; a ``Query`` sums its items before rounding), half when eventually
  consistent; a read that finds nothing still costs its minimum.

An item's size is the UTF-8 length of its attribute names and values, numbers at about one byte per two
digits plus one, 1 byte for a boolean, and 3 bytes plus 1 per element for a list or map.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench.runner import Counted


@dataclass(frozen=True)
class Units:
    write: float
    read: float

    def __str__(self) -> str:
        return f"{self.write:g}+{self.read:g}"


def value_size(value: dict[str, Any]) -> int:
    (kind, inner), *_ = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "N":
        return (len(inner.strip("-").replace(".", "").strip("0")) + 1) // 2 + 1
    if kind == "B":
        return len(inner) * 3 // 4  # base64 in a request's JSON
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(1 + value_size(element) for element in inner)
    if kind == "M":
        return 3 + sum(len(name.encode()) + 1 + value_size(element) for name, element in inner.items())
    return sum(value_size({kind[0]: element}) for element in inner)  # SS, NS, BS


def item_size(item: dict[str, Any]) -> int:
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


@contextmanager
def requests_of(counter: Counted) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """The DynamoDB requests sent inside the block (by any client the counter sees), as (operation, body)."""
    seen: list[tuple[str, dict[str, Any]]] = []
    counter.bodies = seen
    try:
        yield seen
    finally:
        counter.bodies = None


def units(client: Any, requests: list[tuple[str, dict[str, Any]]]) -> Units:
    """The units of ``requests``, read back through ``client`` (call it before anything deletes their items)."""

    def stored(request: dict[str, Any]) -> int:
        found = client.get_item(TableName=request["TableName"], Key=request["Key"], ConsistentRead=True)
        return item_size(found.get("Item") or {})

    def written(kind: str, request: dict[str, Any]) -> int:
        size = item_size(request["Item"]) if kind == "Put" else stored(request)
        return max(1, math.ceil(size / 1024))

    def read(size: int, request: dict[str, Any]) -> float:
        return max(1, math.ceil(size / 4096)) * (1.0 if request.get("ConsistentRead") else 0.5)

    sizers: dict[str, Callable[[dict[str, Any]], Units]] = {
        "PutItem": lambda request: Units(written("Put", request), 0),
        "UpdateItem": lambda request: Units(written("Update", request), 0),
        "TransactWriteItems": lambda request: Units(
            sum(2 * written(kind, item) for entry in request["TransactItems"] for kind, item in entry.items()), 0
        ),
        "GetItem": lambda request: Units(0, read(stored(request), request)),
        "Query": lambda request: Units(0, read(sum(map(item_size, _whole_items(client, request))), request)),
    }
    total = [sizers[operation](request) for operation, request in requests]
    return Units(sum(unit.write for unit in total), sum(unit.read for unit in total))


def _whole_items(client: Any, request: dict[str, Any]) -> list[dict[str, Any]]:
    """The whole items a Query read: the same Query without its projection (and the names only it used)."""
    whole = {key: value for key, value in request.items() if key != "ProjectionExpression"}
    expressions = " ".join(str(whole.get(key, "")) for key in ("KeyConditionExpression", "FilterExpression"))
    names = {name: real for name, real in whole.pop("ExpressionAttributeNames", {}).items() if name in expressions}
    items: list[dict[str, Any]] = client.query(**whole, **({"ExpressionAttributeNames": names} if names else {}))[
        "Items"
    ]
    return items
