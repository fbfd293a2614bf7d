"""DynamoDB clients that fail or lose answers on purpose, handed to the object graph as its client factory
(``provide_clients``), and reads of what the table holds after."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import make_dynamodb_client
from agent_memory.storage.keys import VERSION_PREFIX


def provide_clients(wrap: Callable[[Any], Any]) -> list[Any]:
    """Every DynamoDB client the object graph builds from now on is the real one as ``wrap`` makes it (a fault, a
    spy, a hook on its events): provided to the graph as its factory (``bootstrap.provide``), never patched into a
    store. Answers the clients as they are built."""
    made: list[Any] = []

    def _make(*args: Any, **kwargs: Any) -> Any:
        made.append(wrap(make_dynamodb_client(*args, **kwargs)))
        return made[-1]

    bootstrap.provide(make_dynamodb_client=_make)
    return made


def wrap_clients(wrap: Callable[[Any], Any]) -> None:
    """Every DynamoDB client the graph builds from now on is the one it builds now (a fault provided already
    included) as ``wrap`` makes it: a spy that sees each call a store makes once, however often a fault under it
    sends the call again."""
    inner = bootstrap.provided("make_dynamodb_client") or make_dynamodb_client
    bootstrap.provide(make_dynamodb_client=lambda *args, **kwargs: wrap(inner(*args, **kwargs)))


def provide_real_clients() -> None:
    """The storage is back: the clients the graph builds from now on are the real ones."""
    bootstrap.provide(make_dynamodb_client=make_dynamodb_client)


def on_events(event: str, handler: Callable[..., None]) -> Callable[[Any], Any]:
    """A ``provide_clients`` wrap: ``handler`` registered on each client's botocore ``event`` (e.g. every request's
    parameters, ``provide-client-params.dynamodb.TransactWriteItems``)."""

    def _hooked(client: Any) -> Any:
        client.meta.events.register(event, handler)
        return client

    return _hooked


def conflict(operation: str = "TransactWriteItems") -> ClientError:
    """What DynamoDB answers a transaction cancelled for a conflict with another on the same item: it did nothing."""
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "conflict"},
            "CancellationReasons": [{"Code": "None"}, {"Code": "TransactionConflict"}],
        },
        operation,
    )


class ScriptedClient:
    """The real client, except that each operation named in ``scripted`` goes through its function, called with the
    real method and the request: a conflict raised, a call seen, or held, before it is sent (or instead)."""

    def __init__(self, real: Any, **scripted: Callable[..., Any]) -> None:
        self._real, self._scripted = real, scripted

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._real, name)
        script = self._scripted.get(name)
        if script is None:
            return method
        return lambda **request: script(method, **request)


class Crash:
    """A crash point at the storage, where the real stores make their calls (``crash_at``), instead of a store's
    method patched: of the calls of DynamoDB ``operation`` (``update_item``) whose request ``at`` matches, counted
    together over every client the graph builds, the ``nth`` (from 1) and the ``times - 1`` after it raise ``error``
    (the function dying there) before they are sent, or after they applied (``applied``: the answer never read).
    ``seen`` keeps the matching requests, ``crashed`` counts the calls that raised."""

    def __init__(
        self,
        operation: str,
        at: Callable[[dict[str, Any]], bool] = lambda request: True,
        *,
        nth: int = 1,
        times: int = 1,
        applied: bool = False,
        error: BaseException | None = None,
    ) -> None:
        self.operation, self.at, self.nth, self.times, self.applied = operation, at, nth, times, applied
        self.error = error or RuntimeError("the function died here")
        self.seen: list[dict[str, Any]] = []
        self.crashed = 0
        self._lock = threading.Lock()  # a night's groups fold on threads

    def __call__(self, client: Any) -> ScriptedClient:
        return ScriptedClient(client, **{self.operation: self._script})

    def _script(self, method: Callable[..., Any], **request: Any) -> Any:
        if not self.at(request):
            return method(**request)
        with self._lock:
            self.seen.append(request)
            dies = self.nth <= len(self.seen) < self.nth + self.times
            self.crashed += dies
        if not dies:
            return method(**request)
        if self.applied:
            method(**request)
        raise self.error


def crash_at(operation: str, at: Callable[[dict[str, Any]], bool] = lambda request: True, **when: Any) -> Crash:
    """Every client the graph builds from now on crashes as ``Crash(operation, at, **when)`` says."""
    crash = Crash(operation, at, **when)
    provide_clients(crash)
    return crash


def saving_a_version(request: dict[str, Any]) -> bool:
    """A ``Crash``'s ``at``: a transaction that puts a document version (a save: ``update_memory``'s, a fold's)."""
    return any(
        item.get("Put", {}).get("Item", {}).get("sk", {}).get("S", "").startswith(VERSION_PREFIX)
        for item in request["TransactItems"]
    )


def updating(prefix: str) -> Callable[[dict[str, Any]], bool]:
    """A ``Crash``'s ``at``: an UpdateItem whose update expression starts with ``prefix``."""
    return lambda request: request.get("UpdateExpression", "").startswith(prefix)


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
