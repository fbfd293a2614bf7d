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
import threading
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass
from math import ceil
from typing import Any

from bench.fanout_setup import TABLE, counted_moto, local_queue, moto_busy, scheduled_event, seed_due_scopes


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
            "audit": run["audit"],
            "dynamodb_requests_per_note": round(sum(dynamodb.values()) / notes, 2),
            "dynamodb_requests_per_scope": round(sum(dynamodb.values()) / self.scopes, 2),
            "sqs_requests_per_scope": round(sum(sqs.values()) / self.scopes, 2),
            "dynamodb": dynamodb,
            "sqs": sqs,
        }


def _fan_out_once(scopes: int, notes_each: int, model_s: float, concurrency: int) -> dict[str, Any]:
    """One run: the planner sends a message per scope to the queue (moto's SQS); one poller plays the event
    source mapping (ReceiveMessage 10 at a time, never more than ``concurrency`` messages in flight) and
    hands each message to one of ``concurrency`` threads, each a worker Lambda (its batch handler, then
    DeleteMessage unless it reported the message failed)."""
    from concurrent.futures import ThreadPoolExecutor

    import boto3

    from agent_memory import bootstrap
    from agent_memory.consolidation.delivery import fold_queued
    from agent_memory.edges.events import QueuedGroupRecord, queued_group
    from bench.consolidation import merge
    from local.sqs_mapping import sqs_record
    from tests.support.fakes import FakeChatModel

    with moto_busy() as busy, counted_moto() as take:
        seed_due_scopes(scopes, notes_each)
        mapping = local_queue()
        model = FakeChatModel(reply=merge, delay_s=model_s)
        bootstrap.provide(chat_models=lambda use: model)  # the graph's chat model: the bench's fake, for every use
        services = bootstrap.services()
        take()
        sqs = boto3.client("sqs")
        slots = threading.Semaphore(concurrency)
        done = threading.Event()

        def worker(message: dict[str, Any]) -> None:
            try:
                record = QueuedGroupRecord.model_validate(sqs_record(message, mapping.arn, "us-east-1"))
                try:
                    fold_queued(services.worker, queued_group(record), max_receives=3, claim_s=330)
                except Exception:  # noqa: BLE001 - delivered again after the visibility timeout, as the mapping does
                    return
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
            planned = services.planner.run(scheduled_event(), remaining_ms=lambda: 900_000)
            planner_s = time.perf_counter() - start
            run = _run_sk(planned, services.consolidation_store)
            record = planned
            while record["status"] != "finished":
                time.sleep(0.05)
                record = services.consolidation_store.read_run(run)
            wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu
            done.set()
            polling.join()
        dynamodb, sqs_requests = take()
        audit = _audit()
    return {
        "wall_s": wall_s,
        "planner_s": planner_s,
        "moto_busy_s": busy[0],
        "cpu_s": cpu_s,
        "dynamodb": dict(dynamodb),
        "sqs": dict(sqs_requests),
        "record": record,
        "audit": audit,
    }


def _audit() -> dict[str, int]:
    """What the table says, apart from the run record: each due note listed by exactly one version of its
    scope's document (folded once), and marked consolidated."""
    import boto3

    folds: Counter[tuple[str, str]] = Counter()
    marked = 0
    pages = boto3.client("dynamodb").get_paginator("scan").paginate(TableName=TABLE)
    for item in (item for page in pages for item in page["Items"]):
        if item["sk"]["S"].startswith("doc#v#"):
            folds.update((item["pk"]["S"], note["S"]) for note in item.get("folded_note_ids", {}).get("L", []))
        elif item["sk"]["S"].startswith("note#") and item.get("consolidated", {}).get("BOOL"):
            marked += 1
    times = Counter(folds.values())
    return {"folded_once": times[1], "folded_more": sum(n for k, n in times.items() if k > 1), "marked": marked}


def _run_sk(planned: dict[str, Any], store: Any) -> str:
    from agent_memory.storage.keys import run_sk

    listed = next(run for run in store.runs(5) if run["run_id"] == planned["run_id"])
    return run_sk(listed["started_at"], listed["run_id"])


def measure_fan_out(scopes: int, notes_each: int = 4, model_s: float = 1.0, concurrency: int = 50) -> FanOut:
    run = _fan_out_once(scopes, notes_each, model_s, concurrency)
    return FanOut(scopes, notes_each, model_s, concurrency, run)


def _moto_server(ready: Any) -> None:
    """A moto server in a process of its own: what it stores is not the planner's memory."""
    import logging

    from moto.server import ThreadedMotoServer

    from local.moto_fast import cheap_message_sends, queries_read_their_partition

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

    from agent_memory import bootstrap
    from bench.runner import settings_environment
    from local.template import table_definitions

    receiver, sender = multiprocessing.get_context("spawn").Pipe(duplex=False)
    child = multiprocessing.get_context("spawn").Process(target=_moto_server, args=(sender,), daemon=True)
    child.start()
    host, port = receiver.recv()
    # moto answers an index Query page by reading the whole table (local/moto_fast.py spares it the sort only).
    endpoint = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "MEMORY_DYNAMODB_READ_TIMEOUT_S": "120"}
    try:
        with settings_environment(**endpoint):
            client = boto3.client("dynamodb")
            for definition in table_definitions().values():
                client.create_table(**definition)
            seed_due_scopes(due_notes // notes_each, notes_each, markers_only=True)
            local_queue()
            services = bootstrap.services()
            services.consolidation_store.acquire_lease(
                "warm-up", now_epoch=0, lease_s=0
            )  # clients built before tracing:
            services.consolidation_store.release_lease("warm-up")  # loading their models is a constant, not the walk's
            tracemalloc.start()
            result = services.planner.run(scheduled_event(), remaining_ms=lambda: 900_000)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    finally:
        child.terminate()
    if result["groups_planned"] != due_notes // notes_each:
        raise SystemExit(f"the planner planned {result['groups_planned']} groups, not {due_notes // notes_each}")
    return peak


def measure(scopes: int = 2000, concurrency: int = 50, memory_sizes: tuple[int, int] = (10_000, 200_000)) -> dict:
    from bench.runner import settings_environment

    # The local queue's settings (fanout_setup.local_queue) are this section's only: the next sections fold
    # in-process, as they always did.
    with settings_environment(MEMORY_CONSOLIDATION_QUEUE_URL="", MEMORY_CONSOLIDATION_MAX_GROUPS="0"):
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
        f"  run record: groups done {data['groups_done']}, failed {data['groups_failed']}; notes folded"
        f" {data['notes_folded']} of {data['notes_due']}; the table: {data['audit']['folded_once']} notes listed by"
        f" one version, {data['audit']['folded_more']} by more, {data['audit']['marked']} marked consolidated",
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
