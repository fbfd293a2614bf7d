"""The consolidation fan-out bench's setting (bench/consolidation_scale.py): a counted moto with the tables, due
scopes seeded as the note store writes them, the local queue, the scheduled event, and moto's busy time."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

RUN_AT = datetime(2026, 12, 3, 3, 0, tzinfo=UTC)
TABLE = "MemoryTable"


@contextmanager
def counted_moto() -> Iterator[Callable[[], tuple[Counter[str], Counter[str]]]]:
    """A moto of its own with the tables; yields ``take()`` -> (DynamoDB, SQS) operations since the last take."""
    import boto3

    from agent_memory import bootstrap
    from bench.runner import moto
    from local.template import table_definitions
    from tests.support.moto_support import atomic_moto_requests

    seen: dict[str, list[str]] = {"dynamodb": [], "sqs": []}
    with moto(), atomic_moto_requests():  # fast as the local stack's
        boto3.setup_default_session()
        assert boto3.DEFAULT_SESSION is not None
        for service in seen:
            boto3.DEFAULT_SESSION.events.register(
                f"before-send.{service}",
                lambda event_name, _s=service, **_: seen[_s].append(event_name.rsplit(".")[-1]),
            )
        client = boto3.client("dynamodb")
        for definition in table_definitions().values():
            client.create_table(**definition)
        bootstrap.reset()

        def take() -> tuple[Counter[str], Counter[str]]:
            taken = Counter(seen["dynamodb"]), Counter(seen["sqs"])
            seen["dynamodb"].clear()
            seen["sqs"].clear()
            return taken

        yield take


def seed_due_scopes(scopes: int, notes_each: int, *, markers_only: bool = False) -> None:
    """Due notes and their scopes' markers, as the note store writes them, 25 per BatchWriteItem."""
    import boto3

    from agent_memory.domain.notes import Note, Origin
    from agent_memory.domain.scope import Scope
    from agent_memory.storage.keys import DUE_SK, unconsolidated_shard
    from agent_memory.storage.note_items import note_item

    client = boto3.client("dynamodb")
    created = RUN_AT - timedelta(days=8)
    batch: list[dict[str, Any]] = []
    for index in range(scopes):
        scope = Scope("personal", f"bench-{index:06d}")
        oldest = ""
        for position in range(1, notes_each + 1):
            at = created + timedelta(milliseconds=index * notes_each + position)  # all due, up to 86M notes
            note = Note(
                day=at.date().isoformat(),
                position=position,
                text=f"fact {position} of scope {index}: prefers tea in the afternoon",
                created_at=at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                source="remember",
                origin=Origin(f"bench-{index:06d}", "t-1"),
            )
            oldest = oldest or note.created_at
            if not markers_only:
                batch.append(note_item(scope, note))
        batch.append(
            {
                "pk": {"S": scope.key},
                "sk": {"S": DUE_SK},
                "uc_pk": {"S": unconsolidated_shard(scope.key)},
                "uc_sk": {"S": f"due#{oldest}#{scope.key}"},
                "oldest": {"S": oldest},
                "floor": {"S": oldest[:10]},
                "notes": {"N": str(notes_each)},
                "writes": {"N": str(notes_each)},
            }
        )
        if len(batch) >= 25 * 8:
            _flush(client, batch)
    _flush(client, batch)


def _flush(client: Any, batch: list[dict[str, Any]]) -> None:
    for start in range(0, len(batch), 25):
        request: dict[str, Any] = {TABLE: [{"PutRequest": {"Item": item}} for item in batch[start : start + 25]]}
        while request:
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
    batch.clear()


def local_queue() -> Any:
    from agent_memory import bootstrap
    from local.sqs_mapping import LocalQueueMapping

    mapping = LocalQueueMapping(None, lambda event: None, visibility_s=300)
    os.environ["MEMORY_CONSOLIDATION_QUEUE_URL"] = mapping.url
    os.environ["MEMORY_CONSOLIDATION_MAX_GROUPS"] = "0"
    bootstrap.reset()
    return mapping


def scheduled_event() -> Any:
    """The scheduled run the planner takes, adapted from an EventBridge event as the handler does."""
    from agent_memory.edges.events import scheduled_run
    from tests.support.events import event_body

    event = event_body("scheduled") | {
        "id": f"bench-{time.monotonic_ns()}",
        "time": RUN_AT.isoformat().replace("+00:00", "Z"),
    }
    return scheduled_run(event)


@contextmanager
def moto_busy() -> Iterator[list[float]]:
    """Seconds moto spends handling DynamoDB requests (inside the lock of ``atomic_moto_requests``, so they
    never overlap): near the wall time, moto's serialised handling bounds the run, not the workers."""
    from moto.dynamodb.responses import DynamoHandler

    busy = [0.0]
    locked = DynamoHandler.call_action

    def timed(self: Any) -> Any:
        start = time.perf_counter()
        try:
            return locked(self)
        finally:
            busy[0] += time.perf_counter() - start

    DynamoHandler.call_action = timed  # type: ignore[method-assign]
    try:
        yield busy
    finally:
        DynamoHandler.call_action = locked  # type: ignore[method-assign]
