"""The consolidation at scale (docs/consolidation.md): the fan-out over SQS and the planner's memory.

Called by ``bench.run`` (``measure`` and ``report``), or alone: ``python -m bench.consolidation_scale
--scopes 2000 --concurrency 50``. Each figure runs on a moto of its own (DynamoDB and SQS in-process).

- **Fan-out**: ``scopes`` due scopes of ``notes_each`` notes, a fake model of ``model_s`` seconds, and
  ``concurrency`` worker threads, each playing one Lambda of the SQS mapping (receive one message, run
  ConsolidateWorkerFunction's batch handler, delete what it did not report). The wall time runs from the
  planner's start to the run's ``finished_at``, against the ideal ceil(scopes / concurrency) x model_s; the
  same run with a 0 s model gives what is not the model (moto and our code) in the same conditions.
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
    wall_s: float
    overhead_s: float  # the same run with a 0 s model
    dynamodb: dict[str, int]
    sqs: dict[str, int]
    record: dict[str, Any]

    @property
    def ideal_s(self) -> float:
        return ceil(self.scopes / self.concurrency) * self.model_s

    def as_json(self) -> dict[str, Any]:
        notes = self.scopes * self.notes_each
        return {
            "wall_s": round(self.wall_s, 2),
            "ideal_s": self.ideal_s,
            "ratio": round(self.wall_s / self.ideal_s, 2),
            "wall_s_with_0s_model": round(self.overhead_s, 2),
            "dynamodb_requests_per_note": round(sum(self.dynamodb.values()) / notes, 2),
            "dynamodb_requests_per_scope": round(sum(self.dynamodb.values()) / self.scopes, 2),
            "sqs_requests_per_scope": round(sum(self.sqs.values()) / self.scopes, 2),
            "dynamodb": self.dynamodb,
            "sqs": self.sqs,
        }


@contextmanager
def _moto() -> Iterator[Callable[[], tuple[Counter[str], Counter[str]]]]:
    """A moto of its own with the tables; yields ``take()`` -> (DynamoDB, SQS) operations since the last take."""
    import boto3
    from moto import mock_aws

    from agent_memory import runtime
    from local.template import table_definitions
    from tests.moto_support import atomic_moto_requests

    seen: dict[str, list[str]] = {"dynamodb": [], "sqs": []}
    with mock_aws(), atomic_moto_requests():
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
            at = created + timedelta(seconds=index * notes_each + position)
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


def _fan_out_once(scopes: int, notes_each: int, model_s: float, concurrency: int) -> tuple[float, Any, Any, dict]:
    from agent_memory import runtime
    from agent_memory.consolidation_queue import handle_batch
    from agent_memory.edges.events import queued_groups
    from bench.consolidation import merge
    from tests.fakes import FakeChatModel

    with _moto() as take:
        _seed(scopes, notes_each)
        mapping = _queue()
        model = FakeChatModel(reply=merge, delay_s=model_s)
        consolidator = runtime.consolidator()
        consolidator._chat_model = lambda: model
        take()
        done = threading.Event()

        def lambda_instance() -> None:  # one concurrent execution of the mapping: one message at a time
            import boto3

            sqs = boto3.client("sqs")
            while not done.is_set():
                messages = sqs.receive_message(
                    QueueUrl=mapping.url, MaxNumberOfMessages=1, AttributeNames=["All"], WaitTimeSeconds=0
                ).get("Messages", [])
                if not messages:
                    time.sleep(0.2)  # Lambda's pollers back off on an empty queue too
                    continue
                message = messages[0]
                record = {
                    "messageId": message["MessageId"],
                    "body": message["Body"],
                    "attributes": message["Attributes"],
                }
                answer = handle_batch(consolidator, queued_groups({"Records": [record]}), max_receives=3, claim_s=330)
                if not answer["batchItemFailures"]:
                    sqs.delete_message(QueueUrl=mapping.url, ReceiptHandle=message["ReceiptHandle"])

        workers = [threading.Thread(target=lambda_instance, daemon=True) for _ in range(concurrency)]
        for worker in workers:
            worker.start()
        start = time.perf_counter()
        planned = consolidator.run(_event(), remaining_ms=lambda: 900_000)
        run = _run_sk(planned, consolidator)
        record = planned
        while record["status"] != "finished":
            time.sleep(0.05)
            record = consolidator._store.read_run(run)
        wall_s = time.perf_counter() - start
        done.set()
        for worker in workers:
            worker.join()
        dynamodb, sqs = take()
    if (record["groups_done"], record["notes_consolidated"]) != (scopes, scopes * notes_each):
        raise SystemExit(f"the fan-out ended with {record}, not {scopes} groups and {scopes * notes_each} notes")
    return wall_s, dynamodb, sqs, record


def _run_sk(planned: dict[str, Any], consolidator: Any) -> str:
    from agent_memory.storage.run_records import run_sk

    listed = next(run for run in consolidator._store.runs(5) if run["run_id"] == planned["run_id"])
    return run_sk(listed["started_at"], listed["run_id"])


def measure_fan_out(scopes: int, notes_each: int = 4, model_s: float = 1.0, concurrency: int = 50) -> FanOut:
    wall_s, dynamodb, sqs, record = _fan_out_once(scopes, notes_each, model_s, concurrency)
    overhead_s, *_ = _fan_out_once(scopes, notes_each, 0.0, concurrency)
    return FanOut(scopes, notes_each, model_s, concurrency, wall_s, overhead_s, dict(dynamodb), dict(sqs), record)


def _moto_server(ready: Any) -> None:
    """A moto server in a process of its own: what it stores is not the planner's memory."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
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
    # moto answers an index Query page by reading the whole table: seconds per page at this size.
    endpoint = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "MEMORY_DYNAMODB_READ_TIMEOUT_S": "120"}
    try:
        with settings_environment(**endpoint):
            client = boto3.client("dynamodb")
            for definition in table_definitions().values():
                client.create_table(**definition)
            _seed(due_notes // notes_each, notes_each, markers_only=True)
            _queue()
            consolidator = runtime.consolidator()
            consolidator._store.acquire_lease("warm-up", now_epoch=0, lease_s=0)  # clients built before tracing
            consolidator._store.release_lease("warm-up")
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
    peaks = {size: planner_peak_bytes(size) for size in memory_sizes}
    return {"fan_out": fan_out, "planner_peak_bytes": peaks}


def report(figures: dict[str, Any]) -> list[str]:
    fan_out: FanOut = figures["fan_out"]
    data = fan_out.as_json()
    small, large = sorted(figures["planner_peak_bytes"].items())
    return [
        f"consolidation fan-out: {fan_out.scopes} scopes x {fan_out.notes_each} notes, model {fan_out.model_s:g} s,"
        f" {fan_out.concurrency} workers",
        f"  wall {data['wall_s']} s, ideal {data['ideal_s']} s (ratio {data['ratio']}); with a 0 s model"
        f" {data['wall_s_with_0s_model']} s (moto and our code)",
        f"  DynamoDB requests: {data['dynamodb_requests_per_note']} per note, {data['dynamodb_requests_per_scope']}"
        f" per scope {data['dynamodb']}",
        f"  SQS requests: {data['sqs_requests_per_scope']} per scope {data['sqs']}",
        f"  planner peak memory: {small[1] / 1e6:.2f} MB at {small[0]:,} due notes, {large[1] / 1e6:.2f} MB at"
        f" {large[0]:,} (growth {large[1] / small[1]:.2f}x)",
    ]


def main(argv: list[str] | None = None) -> int:
    from bench.runner import configure

    parser = argparse.ArgumentParser(prog="python -m bench.consolidation_scale", description=__doc__.splitlines()[0])
    parser.add_argument("--scopes", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--memory-sizes", default="10000,200000")
    args = parser.parse_args(argv)
    configure()
    sizes = tuple(int(size) for size in args.memory_sizes.split(","))
    print("\n".join(report(measure(args.scopes, args.concurrency, (sizes[0], sizes[1])))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
