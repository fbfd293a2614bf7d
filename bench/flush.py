"""The pre-compaction flush, with a fake chat model of fixed latency (0 ms and 1 s): its requests per call and
its latency against its 5-second budget, and the duplicate call's.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import partial
from math import ceil
from typing import Any

from bench.runner import (
    TABLE,
    LambdaContext,
    RequestCounter,
    create_tables,
    instrumented_client,
    log,
    moto,
    percentile_ms,
    timed,
)

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
    from agent_memory import bootstrap
    from agent_memory.basics.observability import metrics
    from agent_memory.domain.scope import bind_scope
    from agent_memory.edges.requests.chat import parse_flush_request
    from agent_memory.storage.keys import day_sk, flush_sk, note_sk
    from agent_memory.storage.usage_store import member_counter
    from local.template import load_handler
    from tests.support.events import event_body, load_event
    from tests.support.fakes import FakeChatModel

    model = FakeChatModel(reply=lambda system, prompt: FLUSH_SUMMARY, delay_s=variant.model_ms / 1e3)
    bootstrap.services().flush_service.chat_model = lambda: model
    handler = load_handler(FLUSH_FUNCTION)
    context = LambdaContext(function_name=FLUSH_FUNCTION)
    body = event_body("flush")
    pk = {"S": bind_scope(parse_flush_request(body).context).key}

    def event(compaction_id: str) -> dict[str, Any]:
        flush_event: dict[str, Any] = load_event("flush", {**body, "compaction_id": compaction_id})
        return flush_event

    def tidy(compaction_id: str, note: dict[str, Any]) -> None:
        """The note and its claim deleted, and the day's quotas given back as a note's delete does: the day's
        notes and the member's own stay under their quotas however many calls a run makes."""
        client.delete_item(TableName=TABLE, Key={"pk": pk, "sk": {"S": note_sk(note["day"], note["position"])}})
        claim = flush_sk(body["context"]["thread_id"], compaction_id)
        client.delete_item(TableName=TABLE, Key={"pk": pk, "sk": {"S": claim}})
        client.update_item(
            TableName=TABLE,
            Key={"pk": pk, "sk": {"S": day_sk(note["day"])}},
            UpdateExpression="ADD live :minus, #member :minus",
            ExpressionAttributeNames={"#member": member_counter(body["context"]["user_id"])},
            ExpressionAttributeValues={":minus": {"N": "-1"}},
        )

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
    with moto():
        counter = RequestCounter()
        client = instrumented_client(counter)
        create_tables(client)
        counter.take()
        log(f"timing flush ({variant.label}): {variant.warmup} warm-up + {variant.calls} calls")
        return measure_flush(variant, client, counter)


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
        "(no model call). The model is tests.support.fakes.FakeChatModel, which answers "
        f"a {len(FLUSH_SUMMARY)}-character note after its latency;",
        "p50-model: p50 minus the model's latency, what the flush adds around the model call.",
        f"The 1 s model ran {slow.calls} timed calls after {slow.warmup} warm-up ({last}).",
    ]
    if any(result.varying_requests for result in flushes.values()):
        notes.append("* calls of this variant did not all make the same requests; the longest sequence is shown")
    return [*rows, "", *notes]
