"""Measure remember, update_memory and context: DynamoDB requests, latency against a floor, cold import.

Run with ``make bench`` (``python -m bench.run``). Latency is measured in-process on moto, next to a
*floor*: the bare boto3 calls each operation cannot do without, made on the same moto in the same run.
moto answers in-process and costs far more than a network round trip's CPU, so absolute numbers only
compare within a run; the ratio to the floor is what tells how much our own code adds per call.

The pre-compaction flush is measured too, with a fake chat model of fixed latency (0 ms and 1 s): its
requests per call and its latency against its 5-second budget, and the duplicate call's.

Then the figures that grow with the data (bench/scale.py): a nightly consolidation run over 50 groups
with a 2-second fake model, "Load older" over 90 days of notes, and recall's keyword fallback over
100, 1,000 and 10,000 notes; and on a throwaway OpenSearch node (bench/hybrid.py), the indexer's
throughput and hybrid recall at 10,000 notes in 100 scopes.

Every figure goes to docs/benchmarks.json (machine-readable, merged run to run) and the whole report
to docs/benchmarks.md (rewritten each run, with the command and the machine it ran on).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache, partial
from importlib.metadata import version as package_version
from math import ceil
from pathlib import Path
from typing import Any, TypeVar

from moto import mock_aws

from bench import consolidation_scale, hybrid, scale

ROOT = Path(__file__).resolve().parent.parent
LAYER = ROOT / "layers" / "shared"
RESULTS = ROOT / "docs" / "benchmarks.json"
REPORT = ROOT / "docs" / "benchmarks.md"

TABLE = "MemoryTable"
NOW = "2026-12-03T10:15:00Z"
NOW_MS = "2026-12-03T10:15:00.000Z"
TODAY, YESTERDAY = "2026-12-03", "2026-12-02"

# Set before agent_memory or a handler is imported: Powertools reads its settings when the Logger and
# Metrics of agent_memory.observability are built, at import.
ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "eu-west-1",
    "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
    "MEMORY_TABLE_NAME": TABLE,
    "MEMORY_NOW": NOW,
    "POWERTOOLS_SERVICE_NAME": "agent-memory",
    "POWERTOOLS_METRICS_NAMESPACE": "AgentMemory",
    "POWERTOOLS_LOGGER_LOG_EVENT": "false",
    # Powertools' console output is not ours to time: no INFO lines, and no EMF blob printed per call.
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "POWERTOOLS_METRICS_DISABLED": "true",
}
UNSET = ("MEMORY_CHAT_MODEL", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE", "POWERTOOLS_DEV")

# The targets of the issue.
MAX_REQUESTS = {"context": 2, "remember": 2}
MAX_TOOLS_IMPORT_MS = 300.0
MAX_CONTEXT_RATIO = 1.3
# The flush's budget (agent_memory.flush.FLUSH_BUDGET_S): the chat backend waits at most this long.
MAX_FLUSH_P99_MS = 5_000.0

# One scope per operation, so that writes never grow the partition another operation reads.
CONTEXT_USER = "bench-context"
REMEMBER_USER = "bench-remember"
UPDATE_WORKSPACE = "bench-update"
FLOOR_REMEMBER_PK = "user#bench-remember-floor"
FLOOR_UPDATE_PK = "ws#bench-update-floor"

T = TypeVar("T")

_SECTIONS = ("Preferences", "Projects", "Conventions", "People", "Open questions", "Environment")
_FACTS = (
    "Prefers metric units and ISO dates in every answer",
    "Deploys happen on Tuesdays, after the stand-up and never on a Friday",
    "The staging database is stg-eu-1; production is prod-eu-1 behind the bastion host",
    "Writes Python 3.13 with ruff and mypy; prefers dataclasses over plain dicts",
    "On-call rotation changes every Monday at 09:00 CET",
    "Wants answers short first, with the details after a blank line",
    "The quarterly report is due on the first Thursday of each quarter",
    "Uses British spelling in customer-facing documents",
    "The design review board meets every second Wednesday",
    "Avoids ORMs; raw SQL with parameterised queries only",
)
_DETAILS = (
    "confirmed twice in review",
    "mentioned while planning the migration",
    "agreed with the whole team in the retro",
    "a standing rule since the spring",
    "see the runbook for the exceptions, which are rare",
)


# --- workload -------------------------------------------------------------------------------------


@cache
def document_text(chars: int, seed: int) -> str:
    """Markdown as a model curates it (headings and one-line bullets), about ``chars`` long.

    Cached so that a floor call reuses the very text its service call sent, without building it inside
    the timed region.
    """
    rng = random.Random(seed)
    lines = [f"# Memory (revision {seed})"]
    while sum(len(line) + 1 for line in lines) < chars:
        if rng.random() < 0.15:
            lines += ["", f"## {rng.choice(_SECTIONS)}"]
        else:
            lines.append(f"- {rng.choice(_FACTS)}; {rng.choice(_DETAILS)}.")
    return "\n".join(lines)[:chars]


@cache
def fact_text(index: int) -> str:
    """A note of varying length (about 50 to 250 characters), as a model passes it to ``remember``.

    Cached for the same reason as ``document_text``.
    """
    rng = random.Random(index)
    extra = "; ".join(rng.sample(_DETAILS, k=index % 4))
    return f"- {_FACTS[index % len(_FACTS)]} (noted in thread t-{index}{'; ' + extra if extra else ''})"


# --- counting requests ----------------------------------------------------------------------------


class RequestCounter:
    """The DynamoDB operation of every HTTP request botocore sends, retries included.

    It is registered on ``before-send.dynamodb`` of boto3's default session *before* the service builds
    its client, rather than on the client found through ``memory_service()``'s private attributes:
    botocore copies a session's handlers into every client created from it, so the counter sees each
    client the service makes (today one, from ``boto3.client``) even if that wiring changes, and it
    sees the floor's client the same way. ``before-send`` fires once per attempt, so a retry counts
    as the extra request it is. moto answers from a ``before-send`` handler as well; botocore calls
    every handler of that event, so the order of the two does not matter.
    """

    def __init__(self) -> None:
        self._operations: list[str] = []

    def __call__(self, event_name: str, **_: Any) -> None:
        self._operations.append(event_name.rsplit(".", 1)[-1])

    def take(self) -> tuple[str, ...]:
        """The operations sent since the last ``take``, in order."""
        taken, self._operations = tuple(self._operations), []
        return taken


def instrumented_client(counter: RequestCounter) -> Any:
    """The floor's client, built like the service's (same factory, timeouts and retry mode) so that
    the two differ only by our code; the counter is on the session both clients come from."""
    import boto3

    from agent_memory import runtime
    from agent_memory.settings import get_settings
    from agent_memory.storage.client import make_dynamodb_client

    boto3.setup_default_session()  # inside mock_aws, which patches the default session away
    assert boto3.DEFAULT_SESSION is not None
    boto3.DEFAULT_SESSION.events.register("before-send.dynamodb", counter)
    runtime.reset()  # the service builds its client on its next call, from this session
    return make_dynamodb_client(get_settings())


# --- the three operations -------------------------------------------------------------------------


@dataclass(frozen=True)
class LambdaContext:
    """The attributes Powertools' Logger reads from Lambda's context object."""

    function_name: str
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:bench"
    aws_request_id: str = "c6af9ac6-7b61-11e6-9a41-93e812345678"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


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
    from tests.events import event_body

    context: dict[str, Any] = {**event_body(route)["context"], **overrides}
    return context


def context_operation(client: Any) -> Operation:
    """The per-turn read. Floor: GetItem of the head, then one Query of today's and yesterday's notes."""
    from agent_memory.service import RECENT_NOTES_QUERY_LIMIT
    from agent_memory.storage.keys import DOC_HEAD, notes_of_days
    from tests.events import load_event

    context = _conversation("context", user_id=CONTEXT_USER, thread_owner_id=CONTEXT_USER, document_version=1)
    pk = {"S": f"user#{CONTEXT_USER}"}
    low, high = notes_of_days(YESTERDAY, TODAY)

    def floor(_: int) -> object:
        client.get_item(TableName=TABLE, Key={"pk": pk, "sk": {"S": DOC_HEAD}}, ConsistentRead=False)
        return client.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues={":pk": pk, ":low": {"S": low}, ":high": {"S": high}},
            ScanIndexForward=False,
            Limit=RECENT_NOTES_QUERY_LIMIT,
        )

    return Operation("context", "ContextFunction", 200, lambda _: load_event("context", {"context": context}), floor)


def remember_operation(client: Any) -> Operation:
    """A note appended. Floor: the day counter's atomic ADD, then the conditional PutItem of the note."""
    from agent_memory.storage.keys import day_sk, note_sk, unconsolidated_shard
    from tests.events import load_event

    context = _conversation("remember", user_id=REMEMBER_USER, thread_owner_id=REMEMBER_USER)

    def event(index: int) -> dict[str, Any]:
        return load_event("remember", {"context": context, "arguments": {"text": fact_text(index)}})

    def floor(index: int) -> object:
        counter = client.update_item(
            TableName=TABLE,
            Key={"pk": {"S": FLOOR_REMEMBER_PK}, "sk": {"S": day_sk(TODAY)}},
            UpdateExpression="ADD next_position :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
        position = int(counter["Attributes"]["next_position"]["N"])
        item = {
            "pk": {"S": FLOOR_REMEMBER_PK},
            "sk": {"S": note_sk(TODAY, position)},
            "day": {"S": TODAY},
            "position": {"N": str(position)},
            "text": {"S": fact_text(index).removeprefix("- ")},
            "created_at": {"S": NOW_MS},
            "source": {"S": "remember"},
            "origin_user_id": {"S": REMEMBER_USER},
            "origin_thread_id": {"S": context["thread_id"]},
            "consolidated": {"BOOL": False},
            "uc_pk": {"S": unconsolidated_shard(FLOOR_REMEMBER_PK)},
            "uc_sk": {"S": f"{NOW_MS}#{FLOOR_REMEMBER_PK}#{TODAY}.{position}"},
        }
        return client.put_item(TableName=TABLE, Item=item, ConditionExpression="attribute_not_exists(sk)")

    return Operation("remember", "ToolsFunction", 201, event, floor)


def update_memory_operation(client: Any) -> Operation:
    """A 2,000-character rewrite at the version the caller saw (call i sends ``document_version`` i).

    Floor: one TransactWriteItems putting the new version's item and moving the head, both conditional.
    """
    from agent_memory.storage.keys import DOC_HEAD, version_sk
    from tests.events import load_event

    context = _conversation("update_memory", workspace_id=UPDATE_WORKSPACE)

    def event(index: int) -> dict[str, Any]:
        body = {"context": {**context, "document_version": index}, "arguments": {"content": document_text(2000, index)}}
        return load_event("update_memory", body)

    def floor(index: int) -> object:
        version = index + 1
        attributes = {
            "pk": {"S": FLOOR_UPDATE_PK},
            "content": {"S": document_text(2000, index)},
            "version": {"N": str(version)},
            "updated_at": {"S": NOW_MS},
            "reason": {"S": "tool"},
            "by_user_id": {"S": context["user_id"]},
            "by_thread_id": {"S": context["thread_id"]},
        }
        head_condition: dict[str, Any] = (
            {"ConditionExpression": "attribute_not_exists(sk)"}
            if index == 0
            else {
                "ConditionExpression": "version = :expected",
                "ExpressionAttributeValues": {":expected": {"N": str(index)}},
            }
        )
        version_item = {**attributes, "sk": {"S": version_sk(version)}}
        head_item = {**attributes, "sk": {"S": DOC_HEAD}}
        return client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": version_item, "ConditionExpression": "attribute_not_exists(sk)"}},
                {"Put": {"TableName": TABLE, "Item": head_item, **head_condition}},
            ]
        )

    def tidy(index: int) -> None:
        # moto deep-copies the whole table on every TransactWriteItems (its rollback), so a table that
        # grows by two items a call makes each call slower than the last. Superseded versions are never
        # read by a write, so deleting them keeps the table, and moto's share, the same for every call.
        for pk in (f"ws#{UPDATE_WORKSPACE}", FLOOR_UPDATE_PK):
            client.delete_item(TableName=TABLE, Key={"pk": {"S": pk}, "sk": {"S": version_sk(index)}})

    return Operation("update_memory", "ToolsFunction", 200, event, floor, tidy)


# The operations measured, in order; each builds its Operation from the floor's client.
OPERATIONS: dict[str, Callable[[Any], Operation]] = {
    "context": context_operation,
    "remember": remember_operation,
    "update_memory": update_memory_operation,
}


def create_tables(client: Any) -> None:
    """The tables of template.yaml, as the tests create them, but without their stream.

    moto keeps every stream record inside its table object and deep-copies that object on every
    TransactWriteItems (its rollback), so with the stream on, each write makes every later transaction
    slower (update_memory went from about 10 to over 300 ms per call over a run). A stream costs the
    writer nothing in DynamoDB, and nothing measured here reads it.
    """
    from local.template import table_definitions

    for definition in table_definitions().values():
        client.create_table(**{key: value for key, value in definition.items() if key != "StreamSpecification"})


def seed_context_scope(client: Any) -> None:
    """A realistic scope for the per-turn read: a 3,000-character document and 10 notes over two days.

    Written through the stores so the items have exactly the service's shape.
    """
    from agent_memory.document import Author
    from agent_memory.notes import Origin
    from agent_memory.scope import Scope
    from agent_memory.storage.document_store import DocumentStore
    from agent_memory.storage.note_store import NoteStore

    scope = Scope("personal", CONTEXT_USER)
    author = Author(user_id=CONTEXT_USER, thread_id="t-1")
    DocumentStore(client, TABLE).save(
        scope, document_text(3000, 0), expected_version=0, updated_at=NOW_MS, reason="tool", by=author
    )
    notes = NoteStore(client, TABLE)
    for index in range(10):
        day = TODAY if index % 2 else YESTERDAY
        origin = Origin(user_id=CONTEXT_USER, thread_id=f"t-{index}")
        text = fact_text(index).removeprefix("- ")
        created = datetime.fromisoformat(f"{day}T09:{index:02d}:00+00:00")
        notes.append(scope, created=created, text=text, source="remember", origin=origin)


# --- measuring ------------------------------------------------------------------------------------


@dataclass
class Samples:
    """Latencies in nanoseconds and the distinct request sequences seen, of the service and its floor."""

    service_ns: list[int] = field(default_factory=list)
    floor_ns: list[int] = field(default_factory=list)
    service_requests: set[tuple[str, ...]] = field(default_factory=set)
    floor_requests: set[tuple[str, ...]] = field(default_factory=set)


def timed(call: Callable[[], T]) -> tuple[int, T]:
    """Nanoseconds of one call (perf_counter_ns: monotonic, and no float rounding of short spans)."""
    start = time.perf_counter_ns()
    result = call()
    return time.perf_counter_ns() - start, result


def measure(operation: Operation, counter: RequestCounter, *, warmup: int, calls: int) -> Samples:
    """Warm up, then time ``calls`` handler calls, each followed by one floor call.

    Service and floor alternate so that a noisy neighbour or a clock change on this shared machine hits
    both alike. Events are built before the loop, so only the handler itself is timed.
    """
    from agent_memory.observability import metrics
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
    return samples


def percentile_ms(samples_ns: Iterable[int], fraction: float) -> float:
    """Nearest-rank percentile, in milliseconds (p99 of 1,000 calls is the 10th slowest)."""
    ordered = sorted(samples_ns)
    return ordered[max(0, ceil(fraction * len(ordered)) - 1)] / 1e6


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

    @property
    def ratio(self) -> float:
        return self.p50_ms / self.floor_p50_ms

    def as_json(self) -> dict[str, Any]:
        """The shape of docs/benchmarks.json, shared with the operations later issues add."""
        return {
            "requests": len(self.requests),
            "p50_ms": round(self.p50_ms, 3),
            "p99_ms": round(self.p99_ms, 3),
            "floor_p50_ms": round(self.floor_p50_ms, 3),
            "import_ms": round(self.import_ms, 1),
        }


def summarize(operation: Operation, samples: Samples, import_ms: float) -> Result:
    return Result(
        name=operation.name,
        function=operation.function,
        requests=max(samples.service_requests, key=len),
        floor_requests=max(samples.floor_requests, key=len),
        varying_requests=len(samples.service_requests) > 1,
        p50_ms=percentile_ms(samples.service_ns, 0.50),
        p99_ms=percentile_ms(samples.service_ns, 0.99),
        floor_p50_ms=percentile_ms(samples.floor_ns, 0.50),
        import_ms=import_ms,
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
    from agent_memory.observability import metrics
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


# --- the flush ------------------------------------------------------------------------------------

FLUSH_FUNCTION = "FlushFunction"
# What the fake model answers: a note of about 200 characters, as the flush's prompt asks for.
FLUSH_SUMMARY = (
    "Planning the Q1 migration of the billing service to the new cluster; tentative cutover the week of "
    "January 12. Open: payments sign-off from Dana, a rollback plan draft, the final cutover date and time."
)


@dataclass(frozen=True)
class FlushVariant:
    """One way of calling the flush, with events/flush.json and a fake model of ``model_ms`` latency.

    A written variant sends a fresh ``compaction_id`` every call, so every call claims, asks the model
    and writes; ``duplicate`` sends one that was already written (once, before timing), every call.
    """

    name: str  # its key in docs/benchmarks.json
    label: str
    model_ms: float
    warmup: int
    calls: int
    duplicate: bool = False


def flush_variants(args: argparse.Namespace) -> list[FlushVariant]:
    return [
        FlushVariant("flush_model_0ms", "model 0 ms", 0.0, args.warmup, args.flush_calls),
        FlushVariant("flush_model_1s", "model 1 s", 1000.0, args.flush_slow_warmup, args.flush_slow_calls),
        FlushVariant("flush_duplicate", "duplicate", 0.0, args.warmup, args.flush_calls, duplicate=True),
    ]


@dataclass(frozen=True)
class FlushResult:
    """One variant's numbers, as the report prints them and docs/benchmarks.json keeps them."""

    variant: FlushVariant
    requests: tuple[str, ...]  # the longest sequence seen, should calls differ
    varying_requests: bool
    p50_ms: float
    p99_ms: float

    @property
    def over_model_ms(self) -> float:
        """p50 minus the model's latency: what the flush adds around the model call."""
        return self.p50_ms - self.variant.model_ms

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "requests": len(self.requests),
            "p50_ms": round(self.p50_ms, 3),
            "p99_ms": round(self.p99_ms, 3),
        }
        if not self.variant.duplicate:
            data["model_ms"] = self.variant.model_ms
        return data


def check_flush_answer(call: str, answer: dict[str, Any], model_calls: int, *, duplicate: bool) -> None:
    """A written call must answer ``written`` with one model call; a duplicate, ``duplicate`` without one."""
    status, expected_calls = ("duplicate", 0) if duplicate else ("written", 1)
    if answer.get("status") != status or answer.get("note") is None:
        raise SystemExit(f"flush {call} answered {answer}, not {status!r} with its note")
    if model_calls != expected_calls:
        raise SystemExit(f"flush {call} called the model {model_calls} times, not {expected_calls}")


def measure_flush(variant: FlushVariant, client: Any, counter: RequestCounter) -> FlushResult:
    """Warm up, then time ``variant.calls`` calls of FlushFunction's handler.

    The fake model is swapped into the service the way the tests do it, after the service is built (on
    the counted session) and before the first call. The note and the claim of every written call are
    deleted after it, untimed: moto deep-copies the whole table on every TransactWriteItems (its
    rollback), and the flush's one transaction per call would otherwise grow the table by two items a
    call and make each call slower than the last (without this, the p50 of a 250-call window climbed
    from about 20 to 280 ms over 1,500 calls). DynamoDB's own cost does not grow with the partition, and
    no flush reads another event's claim or note, so this keeps only moto's growth out of the numbers.
    """
    from agent_memory import runtime
    from agent_memory.api import parse_flush_request
    from agent_memory.observability import metrics
    from agent_memory.scope import bind_scope
    from agent_memory.storage.keys import note_sk
    from local.template import load_handler
    from tests.events import event_body, load_event
    from tests.fakes import FakeChatModel

    model = FakeChatModel(reply=lambda system, prompt: FLUSH_SUMMARY, delay_s=variant.model_ms / 1e3)
    runtime.flush_service()._chat_model = lambda: model
    handler = load_handler(FLUSH_FUNCTION)
    context = LambdaContext(function_name=FLUSH_FUNCTION)
    body = event_body("flush")
    pk = {"S": bind_scope(parse_flush_request(body).context).key}

    def event(compaction_id: str) -> dict[str, Any]:
        flush_event: dict[str, Any] = load_event("flush", {**body, "compaction_id": compaction_id})
        return flush_event

    def tidy(compaction_id: str, note: dict[str, Any]) -> None:
        client.delete_item(TableName=TABLE, Key={"pk": pk, "sk": {"S": note_sk(note["day"], note["position"])}})
        client.delete_item(TableName=TABLE, Key={"pk": pk, "sk": {"S": f"flush#{compaction_id}"}})  # the claim

    total = variant.warmup + variant.calls
    if variant.duplicate:
        written = handler(event("bench-duplicate"), context)
        metrics.clear_metrics()
        check_flush_answer("(the duplicate's first write)", written, len(model.calls), duplicate=False)
        compaction_ids = ["bench-duplicate"] * total
    else:
        compaction_ids = [f"bench-{variant.name}-{index}" for index in range(total)]
    events = [event(compaction_id) for compaction_id in compaction_ids]
    counter.take()
    samples_ns: list[int] = []
    sequences: set[tuple[str, ...]] = set()
    for index, (compaction_id, flush_event) in enumerate(zip(compaction_ids, events, strict=True)):
        model_calls = len(model.calls)
        elapsed_ns, answer = timed(partial(handler, flush_event, context))
        requests = counter.take()
        metrics.clear_metrics()  # as in ``measure``: Powertools would print its metric set every 100 calls
        check_flush_answer(
            f"({variant.label}) call {index}", answer, len(model.calls) - model_calls, duplicate=variant.duplicate
        )
        if variant.duplicate:
            if answer["note"] != written["note"]:
                raise SystemExit(f"flush duplicate call {index} answered {answer['note']}, not {written['note']}")
        else:
            tidy(compaction_id, answer["note"])
            counter.take()
        if index >= variant.warmup:
            samples_ns.append(elapsed_ns)
            sequences.add(requests)
    return FlushResult(
        variant=variant,
        requests=max(sequences, key=len),
        varying_requests=len(sequences) > 1,
        p50_ms=percentile_ms(samples_ns, 0.50),
        p99_ms=percentile_ms(samples_ns, 0.99),
    )


def run_flush(variant: FlushVariant) -> FlushResult:
    """One variant on a moto of its own, like ``run_operation``."""
    with mock_aws():
        counter = RequestCounter()
        client = instrumented_client(counter)
        create_tables(client)
        counter.take()
        log(f"timing flush ({variant.label}): {variant.warmup} warm-up + {variant.calls} calls")
        return measure_flush(variant, client, counter)


# --- cold import ----------------------------------------------------------------------------------

_IMPORT_SNIPPET = """\
import importlib, sys, time
sys.path[:0] = sys.argv[1:3]
start = time.perf_counter_ns()
importlib.import_module(sys.argv[3])
imported = time.perf_counter_ns()
from agent_memory.runtime import memory_service
memory_service()
print((imported - start) / 1e6, (time.perf_counter_ns() - imported) / 1e6)
"""


@dataclass(frozen=True)
class ColdStart:
    """A fresh sandbox's two costs: importing the handler module, then building the service on the
    first call. The second is shown next to the first because whatever an import defers (boto3 is only
    imported when the service builds its client) the first invocation pays instead; an import time
    alone can be met by moving work, not only by removing it."""

    import_ms: float
    service_ms: float


def import_command(function: str, pycache: Path) -> tuple[list[str], dict[str, str]]:
    """How to import a function's handler module in a fresh interpreter, as Lambda's init does.

    ``sys.path`` starts with the function's code and the layer (Lambda's /var/task and /opt/python),
    and ``-I`` keeps the working directory and PYTHONPATH out. The environment has Lambda's own
    variables because libraries branch on them at import: outside Lambda, the X-Ray recorder behind
    Powertools' Tracer builds two botocore clients for its sampler (some 250 ms Lambda never pays),
    while in Lambda it patches every supported library it finds instead, ``requests`` included, which
    this virtualenv has (moto's) and the deployed layer does not. Bytecode goes to ``pycache`` rather
    than into the repository; Lambda, shipping no .pyc of ours, also compiles our modules (about 20 ms).
    """
    from local.template import load_template

    properties = load_template()["Resources"][function]["Properties"]
    code = ROOT / properties["CodeUri"]
    module = properties["Handler"].rpartition(".")[0]
    environment = {
        **os.environ,
        "LAMBDA_TASK_ROOT": str(code),
        "AWS_LAMBDA_FUNCTION_NAME": function,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
    }
    interpreter = [sys.executable, "-I", "-X", f"pycache_prefix={pycache}"]
    return [*interpreter, "-c", _IMPORT_SNIPPET, str(code), str(LAYER), module], environment


def cold_start_once(command: list[str], environment: dict[str, str]) -> tuple[float, float]:
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=True, timeout=60)
    import_ms, service_ms = done.stdout.strip().splitlines()[-1].split()
    return float(import_ms), float(service_ms)


def cold_starts(runs: int, functions: tuple[str, ...] = ("ToolsFunction", "ContextFunction")) -> dict[str, ColdStart]:
    """Median cold import (and first service build) of each function, in milliseconds.

    A first, discarded run per function fills the bytecode cache and warms the page cache, so every
    timed run reads compiled modules. The functions take turns, so that this shared machine's slow
    spells (run-to-run spread is easily 20%) fall on both rather than on one.
    """
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as pycache:
        commands = {function: import_command(function, Path(pycache)) for function in functions}
        for command, environment in commands.values():
            cold_start_once(command, environment)
        samples: dict[str, list[tuple[float, float]]] = {function: [] for function in functions}
        log(f"cold imports: {runs} fresh interpreters per function, in turns")
        for _ in range(runs):
            for function, (command, environment) in commands.items():
                samples[function].append(cold_start_once(command, environment))
    return {
        function: ColdStart(
            import_ms=statistics.median(sample[0] for sample in values),
            service_ms=statistics.median(sample[1] for sample in values),
        )
        for function, values in samples.items()
    }


# --- report ---------------------------------------------------------------------------------------


def verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def target_lines(
    results: dict[str, Result], imports: dict[str, ColdStart], flushes: dict[str, FlushResult]
) -> list[str]:
    """One line per target of the issue, PASS or FAIL first."""
    lines = []
    for name, limit in MAX_REQUESTS.items():
        count = len(results[name].requests)
        lines.append(f"{verdict(count <= limit)}  {name}: {count} DynamoDB requests per call (target <= {limit})")
    tools_ms = imports["ToolsFunction"].import_ms
    lines.append(
        f"{verdict(tools_ms < MAX_TOOLS_IMPORT_MS)}  ToolsFunction cold import: {tools_ms:.0f} ms "
        f"(target < {MAX_TOOLS_IMPORT_MS:.0f} ms)"
    )
    ratio = results["context"].ratio
    lines.append(
        f"{verdict(ratio <= MAX_CONTEXT_RATIO)}  context p50: {ratio:.2f}x its floor p50 "
        f"(target <= {MAX_CONTEXT_RATIO}x)"
    )
    flush_p99 = flushes["flush_model_1s"].p99_ms
    lines.append(
        f"{verdict(flush_p99 < MAX_FLUSH_P99_MS)}  flush p99 with a 1 s model: {flush_p99:,.0f} ms "
        f"(target < {MAX_FLUSH_P99_MS:,.0f} ms, the flush's budget)"
    )
    return lines


def flush_report(flushes: dict[str, FlushResult]) -> list[str]:
    """The flush's own table: no floor, but the model's share taken out of the 1 s variant."""
    header = f"{'flush':<14}{'requests':<42}{'p50 ms':>10}{'p99 ms':>10}{'p50-model':>11}{'calls':>7}"
    rows = [header, "-" * len(header)]
    for result in flushes.values():
        variant = result.variant
        requests = f"{len(result.requests)} {'+'.join(result.requests)}" + (" *" if result.varying_requests else "")
        over = "-" if variant.duplicate else f"{result.over_model_ms:.3f}"
        rows.append(
            f"{variant.label:<14}{requests:<42}{result.p50_ms:>10.3f}{result.p99_ms:>10.3f}{over:>11}{variant.calls:>7}"
        )
    slow = flushes["flush_model_1s"].variant
    last = "its p99 is its slowest call" if ceil(0.99 * slow.calls) == slow.calls else "fewer than the others"
    notes = [
        f"flush: {FLUSH_FUNCTION}'s handler in-process on moto with events/flush.json; a written call has a fresh",
        "compaction_id, so it claims, asks the model and writes; duplicate: an already written compaction_id again",
        "(no model call). The model is tests.fakes.FakeChatModel, which answers "
        f"a {len(FLUSH_SUMMARY)}-character note after its latency;",
        "p50-model: p50 minus the model's latency, what the flush adds around the model call.",
        f"The 1 s model ran {slow.calls} timed calls after {slow.warmup} warm-up ({last}).",
    ]
    if any(result.varying_requests for result in flushes.values()):
        notes.append("* calls of this variant did not all make the same requests; the longest sequence is shown")
    return [*rows, "", *notes]


def report(
    results: dict[str, Result], imports: dict[str, ColdStart], flushes: dict[str, FlushResult], calls: int
) -> str:
    header = (
        f"{'operation':<14}{'requests':<22}{'p50 ms':>9}{'p99 ms':>9}{'floor p50':>11}{'ratio':>8}{'ours ms':>9}"
        f"  {'floor requests':<24}{'import ms':>10}"
    )
    rows = [header, "-" * len(header)]
    for result in results.values():
        requests = f"{len(result.requests)} {'+'.join(result.requests)}" + (" *" if result.varying_requests else "")
        floor = f"{len(result.floor_requests)} {'+'.join(result.floor_requests)}"
        rows.append(
            f"{result.name:<14}{requests:<22}{result.p50_ms:>9.3f}{result.p99_ms:>9.3f}{result.floor_p50_ms:>11.3f}"
            f"{result.ratio:>7.2f}x{result.p50_ms - result.floor_p50_ms:>9.3f}  {floor:<24}{result.import_ms:>10.0f}"
        )
    notes = [
        f"latency: {calls} in-process handler calls per operation on moto; floor: the bare boto3 calls, same run;",
        "ours: p50 minus floor p50, what our code adds per call (moto's own cost is most of every floor)",
        "import: median cold import of the serving function's handler module in a fresh interpreter,",
        "then building the service there, which the first invocation pays: "
        + ", ".join(f"{name} {cold.import_ms:.0f} + {cold.service_ms:.0f} ms" for name, cold in imports.items()),
    ]
    if any(result.varying_requests for result in results.values()):
        notes.append("* calls of this operation did not all make the same requests; the longest sequence is shown")
    targets = [f"  {line}" for line in target_lines(results, imports, flushes)]
    return "\n".join([*rows, "", *notes, "", *flush_report(flushes), "", "targets:", *targets])


def machine() -> dict[str, Any]:
    """What the numbers were measured on; they compare only with runs of the same machine."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "make bench",
        "load_average": [round(load, 2) for load in os.getloadavg()],
        "boto3": package_version("boto3"),
        "moto": package_version("moto"),
    }


def write_results(
    results: dict[str, Result],
    flushes: dict[str, FlushResult],
    path: Path,
    meta: dict[str, Any],
    more: dict[str, dict[str, Any]] | None = None,
) -> None:
    """Merge into the existing file: later issues add their own operations to it."""
    data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    data.update({name: result.as_json() for name, result in results.items()})
    data.update({name: result.as_json() for name, result in flushes.items()})
    data.update(more or {})
    data.pop("_meta", None)
    data["_meta"] = meta  # last, after any key this run added
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def write_report(sections: dict[str, str], path: Path, meta: dict[str, Any], argv: list[str] | None) -> None:
    """docs/benchmarks.md: every figure of this run, with the command and the machine, for a newcomer to redo."""
    arguments = " ".join(argv if argv is not None else sys.argv[1:])
    command = f"make bench ARGS={arguments!r}" if arguments else "make bench"
    lines = [
        "# Benchmarks",
        "",
        "Every figure the issues ask for, from one run of the command below; `make bench` rewrites this file",
        "(and merges the same figures into `docs/benchmarks.json`). Latency is in-process on moto unless a",
        "section says otherwise: compare figures only with runs on the same kind of machine.",
        "",
        "```sh",
        command,
        "```",
        "",
        f"Machine: {meta['platform']} ({meta['machine']}, {meta['cpu_count']} CPUs), Python {meta['python']}, "
        f"boto3 {meta['boto3']}, moto {meta['moto']}; run at {meta['date']}, load average "
        f"{meta['load_average'][0]:.1f} when it started (other work on the machine makes every figure noisier).",
    ]
    for title, text in sections.items():
        lines += ["", f"## {title}", "", "```text", text.rstrip(), "```"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


# --- entry point ----------------------------------------------------------------------------------


def configure() -> None:
    """The environment of the tests (fake credentials, frozen clock, quiet Powertools) and the import paths."""
    os.environ.update(ENVIRONMENT)
    for name in UNSET:
        os.environ.pop(name, None)
    for path in (str(ROOT), str(LAYER)):
        if path not in sys.path:
            sys.path.insert(0, path)


def _recall_calls(text: str) -> tuple[tuple[int, int, int], ...]:
    sizes = [tuple(int(part) for part in size.split(":")) for size in text.split(",")]
    if any(len(size) != 3 for size in sizes):
        raise argparse.ArgumentTypeError("expected NOTES:WARMUP:CALLS,...")
    return tuple((size[0], size[1], size[2]) for size in sizes)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per operation (default 1000)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed calls first (default 50)")
    parser.add_argument(
        "--flush-calls", type=int, default=500, help="timed flushes with the 0 ms model, and duplicates (default 500)"
    )
    parser.add_argument(
        "--flush-slow-calls", type=int, default=30, help="timed flushes with the 1 s model (default 30)"
    )
    parser.add_argument(
        "--flush-slow-warmup", type=int, default=3, help="untimed flushes with the 1 s model first (default 3)"
    )
    parser.add_argument(
        "--consolidation-model-s", type=float, default=2.0, help="the consolidation's fake model latency (default 2)"
    )
    parser.add_argument(
        "--load-older-passes", type=int, default=3, help="timed passes through every 'Load older' page (default 3)"
    )
    parser.add_argument(
        "--recall-calls",
        type=_recall_calls,
        default=scale.Options().recall_calls,
        help="recall sizes as NOTES:WARMUP:CALLS,... (default 100:3:50,1000:2:20,2000:1:8,10000:1:5)",
    )
    parser.add_argument(
        "--hybrid-notes", type=int, default=10_000, help="notes indexed on the real node (default 10000)"
    )
    parser.add_argument("--hybrid-scopes", type=int, default=100, help="scopes they are spread over (default 100)")
    parser.add_argument("--hybrid-calls", type=int, default=300, help="timed hybrid recalls (default 300)")
    parser.add_argument("--import-runs", type=int, default=7, help="fresh interpreters per import median (default 7)")
    parser.add_argument("--fanout-scopes", type=int, default=200, help="consolidation fan-out scopes (issue: 2000)")
    parser.add_argument("--output", type=Path, default=RESULTS, help="the JSON file to merge into")
    parser.add_argument("--report", type=Path, default=REPORT, help="the Markdown report to write")
    parser.add_argument("--profile", choices=list(OPERATIONS), help="also cProfile one operation's handler")
    return parser.parse_args(argv)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_operation(name: str, args: argparse.Namespace, imports: dict[str, ColdStart]) -> Result:
    """One operation on a moto of its own (fresh tables, the seeded scope), its floor side by side.

    A fresh moto per operation keeps one operation's writes from slowing the next one's calls.
    """
    with mock_aws():
        counter = RequestCounter()
        client = instrumented_client(counter)
        create_tables(client)
        seed_context_scope(client)
        counter.take()
        operation = OPERATIONS[name](client)
        log(f"timing {name}: {args.warmup} warm-up + {args.calls} calls, each followed by its floor")
        samples = measure(operation, counter, warmup=args.warmup, calls=args.calls)
        if args.profile == name:
            profile(operation, first_index=args.warmup + args.calls, calls=args.calls)
    return summarize(operation, samples, imports[operation.function].import_ms)


@contextmanager
def fresh_moto() -> Iterator[tuple[RequestCounter, Any]]:
    """A moto of its own with the tables, its request counter and a client of the counted session."""
    with mock_aws():
        counter = RequestCounter()
        client = instrumented_client(counter)
        create_tables(client)
        counter.take()
        yield counter, client


def main(argv: list[str] | None = None) -> int:
    """A report, not a gate: the exit code is 0 even when a target fails."""
    args = parse_args(argv)
    configure()
    started = machine()  # its date and load average: when the run began
    imports = cold_starts(args.import_runs)
    results = {name: run_operation(name, args, imports) for name in OPERATIONS}
    flushes = {variant.name: run_flush(variant) for variant in flush_variants(args)}
    options = scale.Options(
        consolidation_model_s=args.consolidation_model_s,
        load_older_passes=args.load_older_passes,
        recall_calls=args.recall_calls,
    )
    toolkit = scale.Toolkit(moto=fresh_moto, fact_text=fact_text, log=log)
    scaled = scale.measure_all(toolkit, options)
    on_node = hybrid.measure_hybrid(
        toolkit, hybrid.Options(notes=args.hybrid_notes, scopes=args.hybrid_scopes, calls=args.hybrid_calls)
    )
    fanned = consolidation_scale.measure(args.fanout_scopes, concurrency=50)  # bench/consolidation_scale.py
    sections = {
        "Consolidation fan-out over SQS and the planner's memory": "\n".join(consolidation_scale.report(fanned)),
        "Requests, latency and cold start of the per-turn operations; the flush": report(
            results, imports, flushes, args.calls
        ),
        "Consolidation, Load older and the keyword fallback's growth": scale.report(scaled),
        "Hybrid recall and the indexer on a real OpenSearch node": "\n".join(hybrid.report(on_node)),
    }
    print("\n\n".join(sections.values()))
    meta = {
        **started,
        "calls": args.calls,
        "warmup": args.warmup,
        "flush_calls": args.flush_calls,
        "flush_slow_calls": args.flush_slow_calls,
        "flush_slow_warmup": args.flush_slow_warmup,
        "consolidation_model_s": args.consolidation_model_s,
        "load_older_passes": args.load_older_passes,
        "recall_calls": [list(size) for size in args.recall_calls],
        "hybrid_calls": args.hybrid_calls,
    }
    more = {**scaled.as_json(), **(on_node.as_json() if isinstance(on_node, hybrid.HybridResult) else {})}
    write_results(results, flushes, args.output, meta, more)
    write_report(sections, args.report, meta, argv)
    for path in (args.output, args.report):
        log(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
