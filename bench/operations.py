"""The per-turn operations (context, remember, update_memory): DynamoDB requests and latency against a floor.

Latency is measured in-process on moto, next to a *floor*: the bare boto3 calls each operation cannot do
without (``bench.floors``), made on the same moto in the same run. moto answers in-process and costs far
more than a network round trip's CPU, so absolute numbers only compare within a run; the ratio to the
floor is what tells how much our own code adds per call.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from bench.capacity import Units, requests_of, units
from bench.cold_start import ColdStart
from bench.floors import context_floor, remember_floor, update_floor
from bench.runner import (
    NOW_MS,
    TABLE,
    TODAY,
    YESTERDAY,
    LambdaContext,
    RequestCounter,
    create_tables,
    document_text,
    fact_text,
    instrumented_client,
    log,
    moto,
    percentile_ms,
    timed,
)

# One scope per operation, so that writes never grow the partition another operation reads.
CONTEXT_USER = "bench-context"
REMEMBER_USER = "bench-remember"
UPDATE_WORKSPACE = "bench-update"
FLOOR_REMEMBER_PK = "user#bench-remember-floor"
FLOOR_UPDATE_PK = "ws#bench-update-floor"


@dataclass(frozen=True)
class Operation:
    """One route: how to build its i-th event, the status it must answer, and its bare-boto3 floor.

    ``tidy`` runs untimed after the i-th pair of calls, to keep moto's costs from growing with the run.
    """

    name: str
    function: str  # the logical id of the function in template.yaml
    status: int
    event: Callable[[int], dict[str, Any]]
    floor: Callable[[int], object]
    tidy: Callable[[int], object] = lambda _: None


def _conversation(route: str, **overrides: Any) -> dict[str, Any]:
    """The conversation context of ``events/<route>.json``, with the bench's own ids."""
    from tests.support.events import event_body

    context: dict[str, Any] = {**event_body(route)["context"], **overrides}
    return context


def context_operation(client: Any) -> Operation:
    """The per-turn read and its record. Floor: ``context_floor``, the three requests the route makes."""
    from agent_memory.storage.keys import INJECTION_PREFIX
    from tests.support.events import load_event

    context = _conversation("context", user_id=CONTEXT_USER, thread_owner_id=CONTEXT_USER, document_version=1)
    key = {"S": f"user#{CONTEXT_USER}"}
    floor = context_floor(client, key["S"], (YESTERDAY, TODAY), ThreadPoolExecutor(max_workers=1))

    def tidy(_: int) -> None:
        """The records the call and its floor wrote, deleted: moto's Query reads the whole partition."""
        records = client.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :inj)",
            ExpressionAttributeValues={":pk": key, ":inj": {"S": INJECTION_PREFIX}},
            ProjectionExpression="pk, sk",
        )["Items"]
        for record in records:
            client.delete_item(TableName=TABLE, Key=record)

    event = load_event("context", {"context": context})
    return Operation("context", "ContextFunction", 200, lambda _: event, lambda _: floor(), tidy)


def remember_operation(client: Any) -> Operation:
    """A note appended to a scope that holds ``SIMILAR_WINDOW`` notes of yesterday (the ``similar`` check reads a
    full window). Floor: ``remember_floor``, the three requests the route makes, on a scope seeded alike."""
    from agent_memory.memory.service import SIMILAR_WINDOW
    from agent_memory.storage.keys import day_sk, notes_of_days
    from tests.support.events import load_event

    context = _conversation("remember", user_id=REMEMBER_USER, thread_owner_id=REMEMBER_USER)
    pks = (f"user#{REMEMBER_USER}", FLOOR_REMEMBER_PK)
    for pk in pks:
        seed_notes(client, pk.removeprefix("user#"), SIMILAR_WINDOW, days=(YESTERDAY,))
    floor = remember_floor(client, FLOOR_REMEMBER_PK, context["thread_id"])
    low, high = notes_of_days(TODAY, TODAY)

    def event(index: int) -> dict[str, Any]:
        return load_event("remember", {"context": context, "arguments": {"text": fact_text(index)}})

    def tidy(_: int) -> None:
        """Today's notes of the call and its floor deleted, and the day's quota given back: the scopes stay at
        one window of notes (moto's Query reads the whole partition) and under the daily quota."""
        for pk in pks:
            key = {"S": pk}
            notes = client.query(
                TableName=TABLE,
                KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
                ExpressionAttributeValues={":pk": key, ":low": {"S": low}, ":high": {"S": high}},
                ProjectionExpression="pk, sk",
            )["Items"]
            for note in notes:
                client.delete_item(TableName=TABLE, Key=note)
            client.update_item(
                TableName=TABLE,
                Key={"pk": key, "sk": {"S": day_sk(TODAY)}},
                UpdateExpression="ADD live :n",
                ExpressionAttributeValues={":n": {"N": str(-len(notes))}},
            )

    return Operation("remember", "ToolsFunction", 201, event, floor, tidy)


def update_memory_operation(client: Any) -> Operation:
    """A 2,000-character rewrite at the version the caller saw (call i sends ``document_version`` i), so past
    version 100 each call also prunes the version that leaves the kept history. Floor: ``update_floor``."""
    from agent_memory.domain.scope import Scope
    from agent_memory.storage.keys import USAGE_SK, version_sk
    from tests.support.events import load_event

    context = _conversation("update_memory", workspace_id=UPDATE_WORKSPACE)
    floor = update_floor(client, Scope("team", FLOOR_UPDATE_PK.removeprefix("ws#")), context)

    def event(index: int) -> dict[str, Any]:
        body = {"context": {**context, "document_version": index}, "arguments": {"content": document_text(2000, index)}}
        return load_event("update_memory", body)

    def tidy(index: int) -> None:
        """The version this call superseded deleted, and its characters given back, as a prune would: moto
        deep-copies the whole table on every TransactWriteItems (its rollback), so a table that grows by a
        version a call makes each call slower than the last, and the scope would reach its characters quota."""
        for pk in (f"ws#{UPDATE_WORKSPACE}", FLOOR_UPDATE_PK):
            key = {"pk": {"S": pk}, "sk": {"S": version_sk(index)}}
            old = client.delete_item(TableName=TABLE, Key=key, ReturnValues="ALL_OLD").get("Attributes")
            if old:
                client.update_item(
                    TableName=TABLE,
                    Key={"pk": {"S": pk}, "sk": {"S": USAGE_SK}},
                    UpdateExpression="ADD chars :n",
                    ExpressionAttributeValues={":n": {"N": f"-{old['chars']['N']}"}},
                )

    return Operation("update_memory", "ToolsFunction", 200, event, lambda index: floor(index), tidy)


# The operations measured, in order; each builds its Operation from the floor's client.
OPERATIONS: dict[str, Callable[[Any], Operation]] = {
    "context": context_operation,
    "remember": remember_operation,
    "update_memory": update_memory_operation,
}


def seed_context_scope(client: Any) -> None:
    """A realistic scope for the per-turn read: a 3,000-character document and 10 notes over two days."""
    from agent_memory.domain.document import Author
    from agent_memory.domain.scope import Scope
    from agent_memory.domain.text_pipeline import DOCUMENT, prepare
    from agent_memory.storage.document_store import DocumentStore

    scope = Scope("personal", CONTEXT_USER)
    author = Author(user_id=CONTEXT_USER, thread_id="t-1")
    DocumentStore(client, TABLE).save(
        scope,
        prepare(document_text(3000, 0), "tool", DOCUMENT, extra=frozenset()).text,
        expected_version=0,
        updated_at=NOW_MS,
        reason="tool",
        by=author,
    )
    seed_notes(client, CONTEXT_USER, 10, days=(YESTERDAY, TODAY))


def seed_notes(client: Any, user_id: str, count: int, *, days: tuple[str, ...]) -> None:
    """``count`` notes of a personal scope, spread over ``days`` in turn, written through the store so that the
    items have exactly the service's shape."""
    from agent_memory.domain.notes import Origin
    from agent_memory.domain.scope import Scope
    from agent_memory.domain.text_pipeline import NOTE, prepare
    from agent_memory.storage.note_store import NoteStore

    scope = Scope("personal", user_id)
    notes = NoteStore(client, TABLE)
    for index in range(count):
        day = days[index % len(days)]
        origin = Origin(user_id=user_id, thread_id=f"t-{index}")
        text = fact_text(index).removeprefix("- ")
        created = datetime.fromisoformat(f"{day}T09:{index % 60:02d}:00+00:00")
        stored = prepare(text, "remember", NOTE, extra=frozenset()).text
        notes.append(scope, created=created, text=stored, source="remember", origin=origin)


@dataclass
class Samples:
    """Latencies in nanoseconds and the distinct request sequences seen, of the service and its floor."""

    service_ns: list[int] = field(default_factory=list)
    floor_ns: list[int] = field(default_factory=list)
    service_requests: set[tuple[str, ...]] = field(default_factory=set)
    floor_requests: set[tuple[str, ...]] = field(default_factory=set)
    units: tuple[Units, Units] = (Units(0, 0), Units(0, 0))  # of a call and of its floor (``measure_units``)
    unrecorded: int = 0  # timed answers that say the turn's record was not written (``degraded``)


def measure(operation: Operation, counter: RequestCounter, *, warmup: int, calls: int) -> Samples:
    """Warm up, then time ``calls`` handler calls, each followed by one floor call.

    Service and floor alternate so that a noisy neighbour or a clock change on this shared machine hits
    both alike. Events are built before the loop, so only the handler itself is timed.
    """
    from agent_memory.basics.observability import metrics
    from local.template import load_handler

    handler = load_handler(operation.function)
    context = LambdaContext(function_name=operation.function)
    events = [operation.event(index) for index in range(warmup + calls)]
    samples = Samples()
    for index, event in enumerate(events):
        service_ns, answer = timed(partial(handler, event, context))
        service_requests = counter.take()
        # With printing disabled, Powertools never clears its metric set and prints it anyway once a
        # metric holds 100 values; clearing it here, untimed, is what an enabled flush does per call.
        metrics.clear_metrics()
        if answer["statusCode"] != operation.status:
            raise SystemExit(f"{operation.name} call {index} answered {answer['statusCode']}: {answer.get('body')}")
        floor_ns, _ = timed(partial(operation.floor, index))
        floor_requests = counter.take()
        operation.tidy(index)
        counter.take()
        if index >= warmup:
            samples.service_ns.append(service_ns)
            samples.floor_ns.append(floor_ns)
            samples.service_requests.add(service_requests)
            samples.floor_requests.add(floor_requests)
            samples.unrecorded += "injection_record" in json.loads(answer.get("body") or "{}").get("degraded", [])
    return samples


def measure_units(operation: Operation, client: Any, counter: RequestCounter, *, index: int) -> tuple[Units, Units]:
    """The capacity units of the ``index``-th call and of its floor, untimed, after the timed calls: the items
    are sized right after each (``bench.capacity``), before ``tidy`` deletes any."""
    from agent_memory.basics.observability import metrics
    from local.template import load_handler

    with requests_of(counter) as service:
        answer = load_handler(operation.function)(operation.event(index), LambdaContext(operation.function))
    metrics.clear_metrics()
    if answer["statusCode"] != operation.status:
        raise SystemExit(f"{operation.name} call {index} answered {answer['statusCode']}: {answer.get('body')}")
    service_units = units(client, service)
    with requests_of(counter) as floor:
        operation.floor(index)
    floor_units = units(client, floor)
    operation.tidy(index)
    counter.take()
    return service_units, floor_units


@dataclass(frozen=True)
class Result:
    """One operation's numbers, as the report prints them and docs/benchmarks.json keeps them."""

    name: str
    function: str
    requests: tuple[str, ...]  # the longest sequence seen, should calls differ
    floor_requests: tuple[str, ...]
    varying_requests: bool
    p50_ms: float
    p99_ms: float
    floor_p50_ms: float
    import_ms: float
    units: Units  # write and read units of one call
    floor_units: Units
    unrecorded: int  # answers whose turn's record could not be written (counted, never silent)

    @property
    def ratio(self) -> float:
        return self.p50_ms / self.floor_p50_ms

    def as_json(self) -> dict[str, Any]:
        """The shape of docs/benchmarks.json, shared with the operations other benches add."""
        return {
            "requests": len(self.requests),
            "p50_ms": round(self.p50_ms, 3),
            "p99_ms": round(self.p99_ms, 3),
            "floor_p50_ms": round(self.floor_p50_ms, 3),
            "import_ms": round(self.import_ms, 1),
            "write_units": self.units.write,
            "read_units": self.units.read,
            "records_not_written": self.unrecorded,
        }


def summarize(operation: Operation, samples: Samples, import_ms: float) -> Result:
    return Result(
        name=operation.name,
        function=operation.function,
        requests=max(samples.service_requests, key=len),
        floor_requests=max(samples.floor_requests, key=len),
        varying_requests=len({tuple(sorted(requests)) for requests in samples.service_requests}) > 1,  # reads at once
        p50_ms=percentile_ms(samples.service_ns, 0.50),
        p99_ms=percentile_ms(samples.service_ns, 0.99),
        floor_p50_ms=percentile_ms(samples.floor_ns, 0.50),
        import_ms=import_ms,
        units=samples.units[0],
        floor_units=samples.units[1],
        unrecorded=samples.unrecorded,
    )


def inclusive_seconds(stats: pstats.Stats, function_name: str) -> float:
    """Total inclusive time of every function of that name (none of those summed here recurse)."""
    entries: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    return float(sum(entry[3] for key, entry in entries.items() if key[2] == function_name))


def profile(operation: Operation, first_index: int, calls: int, limit: int = 40) -> None:
    """cProfile over ``calls`` more handler calls, to show where our code spends its share.

    moto's own cost dwarfs ours in every call, so the listing is limited to our code and Powertools,
    ordered by inclusive time, after a summary of handler time outside botocore's API calls.
    """
    from agent_memory.basics.observability import metrics
    from local.template import load_handler

    handler = load_handler(operation.function)
    context = LambdaContext(function_name=operation.function)
    profiler = cProfile.Profile()
    for index in range(first_index, first_index + calls):
        event = operation.event(index)
        profiler.enable()
        handler(event, context)
        profiler.disable()
        metrics.clear_metrics()
        operation.tidy(index)
    stats = pstats.Stats(profiler, stream=sys.stdout)
    total_ms = inclusive_seconds(stats, "lambda_handler") / calls * 1e3
    dynamodb_ms = inclusive_seconds(stats, "_make_api_call") / calls * 1e3
    print(
        f"\nprofile of {calls} {operation.name} calls (cProfile slows every call down): {total_ms:.3f} ms per call"
        f" in the handler, {dynamodb_ms:.3f} in botocore and moto, {total_ms - dynamodb_ms:.3f} in the rest"
    )
    stats.sort_stats("cumulative").print_stats(r"agent_memory|/functions/|aws_lambda_powertools", limit)


def run_operation(name: str, args: argparse.Namespace, imports: dict[str, ColdStart]) -> Result:
    """One operation on a moto of its own (fresh tables, the seeded scope), its floor side by side.

    A fresh moto per operation keeps one operation's writes from slowing the next one's calls.
    """
    with moto():
        counter = RequestCounter()
        client = instrumented_client(counter)
        create_tables(client)
        seed_context_scope(client)
        operation = OPERATIONS[name](client)
        counter.take()
        log(f"timing {name}: {args.warmup} warm-up + {args.calls} calls, each followed by its floor")
        samples = measure(operation, counter, warmup=args.warmup, calls=args.calls)
        samples.units = measure_units(operation, client, counter, index=args.warmup + args.calls)
        if args.profile == name:
            profile(operation, first_index=args.warmup + args.calls + 1, calls=args.calls)
    return summarize(operation, samples, imports[operation.function].import_ms)
