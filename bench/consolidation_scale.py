"""The consolidation at scale (docs/consolidation.md): the fan-out over SQS and the planner's memory.

Called by ``bench.run`` (``measure`` and ``report``), or alone: ``python -m bench.consolidation_scale
--scopes 2000 --concurrency 50``. Each figure runs on a moto of its own (DynamoDB and SQS in-process).

- **Fan-out**: ``scopes`` due scopes of ``notes_each`` notes (seeded with BatchWriteItem as the note store
  writes them), a fake model of ``model_s`` seconds, and ``concurrency`` worker threads, each playing one
  Lambda of the SQS mapping; one poller plays the mapping itself (ReceiveMessage 10 at a time, never more
  than ``concurrency`` messages in flight, DeleteMessage unless the batch handler reported the message).
  Real: the planner, ConsolidateWorkerFunction's batch handler and every DynamoDB and SQS request (moto,
  in-process). Simulated: the model (a sleep), Lambda's concurrency (threads of one process) and the
  mapping's poller. The wall time runs from the planner's start to the run's ``finished_at``, against the
  ideal ceil(scopes / concurrency) x model_s; ``moto busy`` is the time moto spent handling DynamoDB
  requests (serialised; wall time inside its lock, so it includes waits for the interpreter), its share
  of the wall time; ``cpu`` is the CPU the whole process used: near one core, the one interpreter that
  runs the planner, the workers, botocore and moto (Python's GIL) bounds the run, not the fan-out.
- **Planner memory**: tracemalloc's peak while the planner walks 10,000 and 200,000 due notes (4 a scope)
  with ``MEMORY_CONSOLIDATION_MAX_GROUPS=0``, sending every scope's message.
- **Requests**: DynamoDB requests per folded note and per scope; SQS requests per scope (the planner's
  sends, and the mapping's receives and deletes).
"""

from __future__ import annotations

import argparse
import os
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from math import ceil
from typing import Any

RUN_AT = datetime(2026, 12, 3, 3, 0, tzinfo=UTC)
TABLE = "MemoryTable"


@dataclass(frozen=True)
class FanOut:
    scopes: int
    notes_each: int
    model_s: float
    concurrency: int
    run: dict[str, Any]  # what _fan_out_once measured

    @property
    def ideal_s(self) -> float:
        return ceil(self.scopes / self.concurrency) * self.model_s

    def as_json(self) -> dict[str, Any]:
        notes = self.scopes * self.notes_each
        run, record = self.run, self.run["record"]
        dynamodb, sqs = run["dynamodb"], run["sqs"]
        return {
            "planner_s": round(run["planner_s"], 2),
            "messages_sent": record["groups_planned"],
            "wall_s": round(run["wall_s"], 2),
            "ideal_s": self.ideal_s,
            "ratio": round(run["wall_s"] / self.ideal_s, 2) if self.ideal_s else None,
            "moto_busy_s": round(run["moto_busy_s"], 2),
            "cpu_s": round(run["cpu_s"], 2),
            "groups_done": record["groups_done"],
            "groups_failed": record["groups_failed"],
            "notes_folded": record["notes_consolidated"],
            "notes_due": notes,
            "dynamodb_requests_per_note": round(sum(dynamodb.values()) / notes, 2),
            "dynamodb_requests_per_scope": round(sum(dynamodb.values()) / self.scopes, 2),
            "sqs_requests_per_scope": round(sum(sqs.values()) / self.scopes, 2),
            "dynamodb": dynamodb,
            "sqs": sqs,
        }


@contextmanager
def _moto() -> Iterator[Callable[[], tuple[Counter[str], Counter[str]]]]:
    """A moto of its own with the tables; yields ``take()`` -> (DynamoDB, SQS) operations since the last take."""
    import boto3
    from moto import mock_aws

    from agent_memory import runtime
    from bench.moto_fast import fast_moto
    from local.template import table_definitions
    from tests.moto_support import atomic_moto_requests

    seen: dict[str, list[str]] = {"dynamodb": [], "sqs": []}
    with mock_aws(), atomic_moto_requests(), fast_moto():
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
        runtime.reset()

        def take() -> tuple[Counter[str], Counter[str]]:
            taken = Counter(seen["dynamodb"]), Counter(seen["sqs"])
            seen["dynamodb"].clear()
            seen["sqs"].clear()
            return taken

        yield take


def _seed(scopes: int, notes_each: int, *, markers_only: bool = False) -> None:
    """Due notes and their scopes' markers, as the note store writes them, 25 per BatchWriteItem."""
    import boto3

    from agent_memory.notes import Note, Origin
    from agent_memory.scope import Scope
    from agent_memory.storage.keys import unconsolidated_shard
    from agent_memory.storage.note_items import note_item
    from agent_memory.storage.scope_index import DUE_SK

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


def _queue() -> Any:
    from agent_memory import runtime
    from local.sqs_mapping import LocalQueueMapping

    mapping = LocalQueueMapping(None, lambda event: None, visibility_s=300)
    os.environ["MEMORY_CONSOLIDATION_QUEUE_URL"] = mapping.url
    os.environ["MEMORY_CONSOLIDATION_MAX_GROUPS"] = "0"
    runtime.reset()
    return mapping


def _event() -> Any:
    """The scheduled run the planner takes, adapted from an EventBridge event as the handler does."""
    from agent_memory.edges.events import scheduled_run

    return scheduled_run({"id": f"bench-{time.monotonic_ns()}", "time": RUN_AT.isoformat().replace("+00:00", "Z")})


@contextmanager
def _moto_busy() -> Iterator[list[float]]:
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


def _fan_out_once(scopes: int, notes_each: int, model_s: float, concurrency: int) -> dict[str, Any]:
    """One run: the planner sends a message per scope to the queue (moto's SQS); one poller plays the event
    source mapping (ReceiveMessage 10 at a time, never more than ``concurrency`` messages in flight) and
    hands each message to one of ``concurrency`` threads, each a worker Lambda (its batch handler, then
    DeleteMessage unless it reported the message failed)."""
    from concurrent.futures import ThreadPoolExecutor

    import boto3

    from agent_memory import runtime
    from agent_memory.consolidation_queue import handle_batch
    from agent_memory.edges.events import queued_groups
    from bench.consolidation import merge
    from tests.fakes import FakeChatModel

    with _moto_busy() as busy, _moto() as take:
        _seed(scopes, notes_each)
        mapping = _queue()
        model = FakeChatModel(reply=merge, delay_s=model_s)
        consolidator = runtime.consolidator()
        consolidator._chat_model = lambda: model
        take()
        sqs = boto3.client("sqs")
        slots = threading.Semaphore(concurrency)
        done = threading.Event()

        def worker(message: dict[str, Any]) -> None:
            try:
                record = {
                    "messageId": message["MessageId"],
                    "body": message["Body"],
                    "attributes": message["Attributes"],
                }
                answer = handle_batch(consolidator, queued_groups({"Records": [record]}), max_receives=3, claim_s=330)
                if not answer["batchItemFailures"]:
                    sqs.delete_message(QueueUrl=mapping.url, ReceiptHandle=message["ReceiptHandle"])
            finally:
                slots.release()

        def poller(pool: ThreadPoolExecutor) -> None:
            while not done.is_set():
                free = 0
                while free < 10 and slots.acquire(timeout=0.05):
                    free += 1
                if free == 0:
                    continue  # every worker is busy: receive nothing, as the mapping does at its concurrency
                messages = sqs.receive_message(
                    QueueUrl=mapping.url, MaxNumberOfMessages=free, AttributeNames=["All"]
                ).get("Messages", [])
                for _ in range(free - len(messages)):
                    slots.release()
                for message in messages:
                    pool.submit(worker, message)
                if not messages:
                    time.sleep(0.2)  # Lambda's pollers back off on an empty queue too

        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            polling = threading.Thread(target=poller, args=(pool,), daemon=True)
            polling.start()
            start, cpu = time.perf_counter(), time.process_time()
            planned = consolidator.run(_event(), remaining_ms=lambda: 900_000)
            planner_s = time.perf_counter() - start
            run = _run_sk(planned, consolidator)
            record = planned
            while record["status"] != "finished":
                time.sleep(0.05)
                record = consolidator._store.read_run(run)
            wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu
            done.set()
            polling.join()
        dynamodb, sqs_requests = take()
    return {
        "wall_s": wall_s,
        "planner_s": planner_s,
        "moto_busy_s": busy[0],
        "cpu_s": cpu_s,
        "dynamodb": dict(dynamodb),
        "sqs": dict(sqs_requests),
        "record": record,
    }


def _run_sk(planned: dict[str, Any], consolidator: Any) -> str:
    from agent_memory.storage.run_records import run_sk

    listed = next(run for run in consolidator._store.runs(5) if run["run_id"] == planned["run_id"])
    return run_sk(listed["started_at"], listed["run_id"])


def measure_fan_out(scopes: int, notes_each: int = 4, model_s: float = 1.0, concurrency: int = 50) -> FanOut:
    run = _fan_out_once(scopes, notes_each, model_s, concurrency)
    return FanOut(scopes, notes_each, model_s, concurrency, run)


def _moto_server(ready: Any) -> None:
    """A moto server in a process of its own: what it stores is not the planner's memory."""
    import logging

    from moto.server import ThreadedMotoServer

    from bench.moto_fast import cheap_message_sends, queries_read_their_partition

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    with queries_read_their_partition(), cheap_message_sends():  # no transaction: the planner writes none
        server.start()
        ready.send(server.get_host_and_port())
        threading.Event().wait()


def planner_peak_bytes(due_notes: int, notes_each: int = 4) -> int:
    """tracemalloc's peak while the planner walks the markers of ``due_notes`` due notes (``notes_each`` a
    scope) and sends every scope's message. moto runs in another process, so only the planner's own
    allocations (and boto3's) are traced. The planner never reads a note, so only the markers are seeded."""
    import multiprocessing

    import boto3

    from agent_memory import runtime
    from bench.runner import settings_environment
    from local.template import table_definitions

    receiver, sender = multiprocessing.get_context("spawn").Pipe(duplex=False)
    child = multiprocessing.get_context("spawn").Process(target=_moto_server, args=(sender,), daemon=True)
    child.start()
    host, port = receiver.recv()
    # moto answers an index Query page by reading the whole table (bench/moto_fast.py spares it the sort only).
    endpoint = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "MEMORY_DYNAMODB_READ_TIMEOUT_S": "120"}
    try:
        with settings_environment(**endpoint):
            client = boto3.client("dynamodb")
            for definition in table_definitions().values():
                client.create_table(**definition)
            _seed(due_notes // notes_each, notes_each, markers_only=True)
            _queue()
            consolidator = runtime.consolidator()
            consolidator._store.acquire_lease("warm-up", now_epoch=0, lease_s=0)  # clients built before tracing:
            consolidator._store.release_lease("warm-up")  # loading their models is a constant, not the walk's
            consolidator._queue()
            tracemalloc.start()
            result = consolidator.run(_event(), remaining_ms=lambda: 900_000)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    finally:
        child.terminate()
    if result["groups_planned"] != due_notes // notes_each:
        raise SystemExit(f"the planner planned {result['groups_planned']} groups, not {due_notes // notes_each}")
    return peak


def measure(scopes: int = 2000, concurrency: int = 50, memory_sizes: tuple[int, int] = (10_000, 200_000)) -> dict:
    fan_out = measure_fan_out(scopes, concurrency=concurrency)
    # A first walk, not kept: botocore parses an operation's shapes on its first call and keeps them for the
    # process, so without it the first size measured would carry that one-time load and the second not.
    planner_peak_bytes(400)
    peaks = {size: planner_peak_bytes(size) for size in memory_sizes}
    return {"fan_out": fan_out, "planner_peak_bytes": peaks}


def report(figures: dict[str, Any]) -> list[str]:
    fan_out: FanOut = figures["fan_out"]
    data = fan_out.as_json()
    small, large = sorted(figures["planner_peak_bytes"].items())
    return [
        f"consolidation fan-out: {fan_out.scopes} scopes x {fan_out.notes_each} notes, model {fan_out.model_s:g} s,"
        f" worker concurrency {fan_out.concurrency}",
        f"  planner {data['planner_s']} s, {data['messages_sent']} messages sent",
        f"  all groups folded in {data['wall_s']} s (ideal {data['ideal_s']} s, ratio {data['ratio']});"
        f" moto busy {data['moto_busy_s']} s of it (its DynamoDB handling, serialised)",
        f"  CPU used by the process (planner, workers, botocore and moto, one interpreter) {data['cpu_s']} s"
        f" in {data['wall_s']} s: {data['cpu_s'] / data['wall_s']:.2f} of a core",
        f"  groups done {data['groups_done']}, failed {data['groups_failed']}; notes folded {data['notes_folded']}"
        f" of {data['notes_due']}",
        f"  DynamoDB requests: {data['dynamodb_requests_per_note']} per note, {data['dynamodb_requests_per_scope']}"
        f" per scope {data['dynamodb']}",
        f"  SQS requests: {data['sqs_requests_per_scope']} per scope {data['sqs']}",
        f"  planner peak memory: {small[1] / 1e6:.2f} MB at {small[0]:,} due notes, {large[1] / 1e6:.2f} MB at"
        f" {large[0]:,} (growth {large[1] / small[1]:.2f}x)",
    ]


def main(argv: list[str] | None = None) -> int:
    from bench.runner import main_alone

    def lines(args: argparse.Namespace) -> list[str]:
        small, large = (int(size) for size in args.memory_sizes.split(","))
        return report(measure(args.scopes, args.concurrency, (small, large)))

    options = {"scopes": 2000, "concurrency": 50, "memory-sizes": "10000,200000"}
    return main_alone("consolidation_scale", __doc__ or "", options, lines, argv)


if __name__ == "__main__":
    raise SystemExit(main())
