"""Figures that grow with the data: the nightly consolidation, "Load older" and recall's keyword fallback.

Called by ``bench.run`` (which runs as ``__main__``, so this module never imports it): ``run`` hands in a
``Toolkit`` with a fresh counted moto, the note texts and its logger, and merges what ``measure_all``
returns into docs/benchmarks.json. Each figure runs on a moto of its own.
"""

from __future__ import annotations

import json
import random
import re
import statistics
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from math import ceil
from typing import Any, Protocol

from tests.moto_support import atomic_moto_requests

TABLE = "MemoryTable"
TODAY = date(2026, 12, 3)  # MEMORY_NOW's day
# The consolidation's run time: events/scheduled.json's own ``time``.
RUN_AT = datetime(2026, 12, 3, 3, 0, tzinfo=UTC)
LOCAL_JWT_SECRET = "local-dev-secret"  # noqa: S105 - the local stack's documented secret
# BatchWriteItem takes at most 25 items.
BATCH = 25


class Counted(Protocol):
    def take(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Toolkit:
    """What ``bench.run`` lends: a fresh moto (its request counter and a client of the counted session)."""

    moto: Callable[[], AbstractContextManager[tuple[Counted, Any]]]
    fact_text: Callable[[int], str]
    log: Callable[[str], None]


@dataclass(frozen=True)
class Options:
    consolidation_model_s: float = 2.0
    load_older_passes: int = 3
    # (notes in the scope, warm-up calls, timed calls)
    recall_calls: tuple[tuple[int, int, int], ...] = (
        (100, 3, 50),
        (1000, 2, 20),
        (2000, 1, 8),
        (10_000, 1, 5),
    )


@dataclass(frozen=True)
class Context:
    """Lambda's context object, with as much time left as the function is given."""

    function_name: str
    remaining_ms: int = 29_000
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:bench"
    aws_request_id: str = "c6af9ac6-7b61-11e6-9a41-93e812345678"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def percentile_ms(samples_ns: list[int], fraction: float) -> float:
    """Nearest-rank percentile, in milliseconds (as ``bench.run``'s)."""
    ordered = sorted(samples_ns)
    return ordered[max(0, ceil(fraction * len(ordered)) - 1)] / 1e6


@contextmanager
def quiet_powertools() -> Iterator[None]:
    """Powertools warns on every call whose handler added no metric (ManagementFunction's reads): not ours."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        yield


def clear_metrics() -> None:
    """Untimed after each call, as ``bench.run`` does: Powertools would print its metric set every 100 values."""
    from agent_memory.observability import metrics

    metrics.clear_metrics()


def batch_write(client: Any, items: list[dict[str, Any]]) -> None:
    """Prebuilt items, 25 per BatchWriteItem (moto processes every item; unprocessed ones are sent again)."""
    for start in range(0, len(items), BATCH):
        request: dict[str, Any] = {TABLE: [{"PutRequest": {"Item": item}} for item in items[start : start + BATCH]]}
        while request:
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}


# --- consolidation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsolidationResult:
    scopes: int
    notes: int
    model_s: float
    concurrency: int
    wall_s: float
    operations: dict[str, int]

    @property
    def sequential_bound_s(self) -> float:
        return self.scopes * self.model_s

    @property
    def concurrent_bound_s(self) -> float:
        """The model's share alone with ``concurrency`` groups at once: what no run can beat."""
        return ceil(self.scopes / self.concurrency) * self.model_s

    @property
    def requests(self) -> int:
        return sum(self.operations.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "wall_s": round(self.wall_s, 3),
            "sequential_bound_s": self.sequential_bound_s,
            "requests": self.requests,
            "requests_per_note": round(self.requests / self.notes, 3),
            "concurrency": self.concurrency,
        }


def merge(system: str, prompt: str) -> str:
    """The fake model's consolidation (as in tests/integration/test_consolidation.py): the current
    document followed by each note's line."""
    document = re.search(r"<document>\n(.*)\n</document>", prompt, re.S)
    notes = re.search(r"<notes>\n(.*)\n</notes>", prompt, re.S)
    if document is None or notes is None:
        raise ValueError("the consolidation prompt lost its <document> or <notes>")
    base = "" if document.group(1).startswith("(empty") else document.group(1) + "\n"
    return base + notes.group(1)


def measure_consolidation(
    toolkit: Toolkit, options: Options, scopes: int = 50, notes_each: int = 4
) -> ConsolidationResult:
    """One run of ConsolidateFunction's handler over ``scopes`` scopes of ``notes_each`` notes, 8 days old.

    The notes are written through the store ``remember`` uses; the fake model answers after
    ``options.consolidation_model_s`` seconds, so the wall time shows how well the groups overlap.
    """
    from agent_memory import runtime
    from agent_memory.notes import Origin
    from agent_memory.scope import Scope
    from agent_memory.settings import get_settings
    from local.template import load_handler
    from tests.events import event_body
    from tests.fakes import FakeChatModel

    with toolkit.moto() as (counter, _), atomic_moto_requests(), quiet_powertools():
        notes = runtime.memory_service()._notes
        created = RUN_AT - timedelta(days=8)
        for scope_index in range(scopes):
            user = f"bench-consolidate-{scope_index:02d}"
            scope = Scope("personal", user)
            for index in range(notes_each):
                at = created + timedelta(minutes=scope_index * notes_each + index)
                notes.append(
                    scope,
                    created=at,
                    text=toolkit.fact_text(scope_index * notes_each + index).removeprefix("- "),
                    source="remember",
                    origin=Origin(user, "t-1"),
                )
        model = FakeChatModel(reply=merge, delay_s=options.consolidation_model_s)
        consolidator = runtime.consolidator()
        consolidator._chat_model = lambda: model
        concurrency = get_settings().consolidation_concurrency
        handler = load_handler("ConsolidateFunction")
        context = Context("ConsolidateFunction", remaining_ms=900_000, memory_limit_in_mb=1024)
        event = event_body("scheduled")
        counter.take()
        toolkit.log(
            f"timing consolidation: {scopes} scopes x {notes_each} notes, model {options.consolidation_model_s:g} s,"
            f" concurrency {concurrency}"
        )
        start = time.perf_counter()
        result = handler(event, context)
        wall_s = time.perf_counter() - start
        operations = Counter(counter.take())
        clear_metrics()
    total = scopes * notes_each
    if result.get("groups_done") != scopes or result.get("notes_consolidated") != total:
        raise SystemExit(f"consolidation answered {result}, not {scopes} groups and {total} notes done")
    if len(model.calls) != scopes:
        raise SystemExit(f"consolidation called the model {len(model.calls)} times, not {scopes}")
    return ConsolidationResult(scopes, total, options.consolidation_model_s, concurrency, wall_s, dict(operations))


# --- "Load older" ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadOlderResult:
    days_with_notes: int
    notes: int
    passes: int
    pages: int  # per pass
    requests_per_page: list[int]  # of one pass: every pass makes the same requests
    items_per_page: list[int]  # notes the page's Queries read, of one pass
    listed_per_page: list[int]  # notes the page lists, of one pass
    samples_ns: list[int]  # every page of every pass

    def as_json(self) -> dict[str, Any]:
        return {
            "pages": self.pages,
            "requests_per_page_max": max(self.requests_per_page),
            "requests_per_page_mean": round(statistics.mean(self.requests_per_page), 3),
            "p50_ms": round(percentile_ms(self.samples_ns, 0.50), 3),
            "p99_ms": round(percentile_ms(self.samples_ns, 0.99), 3),
        }


def load_older_notes(span_days: int = 90, days_with_notes: int = 60, seed: int = 90) -> list[tuple[str, int]]:
    """(day, notes that day) over the last ``span_days`` days, newest first: random gaps, 1 to 10 a day."""
    rng = random.Random(seed)
    days = sorted(rng.sample(range(span_days), days_with_notes))
    return [((TODAY - timedelta(days=back)).isoformat(), rng.randint(1, 10)) for back in days]


def measure_load_older(toolkit: Toolkit, options: Options) -> LoadOlderResult:
    """Page through GET /v1/memory/personal/notes (days=2, then ``before=next_before`` until null).

    ManagementFunction's handler with events/management/personal_notes.json, verifying a locally
    minted token itself (MEMORY_LOCAL_JWT_SECRET), as tests/integration/test_management.py calls it.
    The notes are prebuilt with the store's own item builder and written with BatchWriteItem.
    """
    import os

    from agent_memory.notes import Note, Origin
    from agent_memory.scope import Scope
    from agent_memory.storage.note_store import _note_item
    from local.template import load_handler
    from local.token import mint
    from tests.events import load_event

    user = "bench-load-older"
    scope = Scope("personal", user)
    plan = load_older_notes()
    items = []
    index = 0
    for day, count in plan:
        for position in range(1, count + 1):
            note = Note(
                day=day,
                position=position,
                text=toolkit.fact_text(index).removeprefix("- "),
                created_at=f"{day}T{8 + position:02d}:00:00.000Z",
                source="remember",
                origin=Origin(user, f"t-{index}"),
                consolidated=day < (TODAY - timedelta(days=7)).isoformat(),
            )
            items.append(_note_item(scope, note))
            index += 1
    os.environ["MEMORY_LOCAL_JWT_SECRET"] = LOCAL_JWT_SECRET  # before moto() rebuilds the settings
    try:
        with toolkit.moto() as (counter, client), quiet_powertools():
            import boto3

            batch_write(client, items)
            read: list[int] = []

            def count_items(parsed: dict[str, Any], **_: Any) -> None:
                read.append(len(parsed.get("Items", [])))

            # Registered before the handler's first call builds the service's client from this session.
            assert boto3.DEFAULT_SESSION is not None
            boto3.DEFAULT_SESSION.events.register("after-call.dynamodb.Query", count_items)
            token = mint(user, [])
            handler = load_handler("ManagementFunction")
            context = Context("ManagementFunction")

            def event(before: str | None) -> dict[str, Any]:
                page: dict[str, Any] = load_event("management/personal_notes")
                query = {"days": "2", **({"before": before} if before else {})}
                page["rawQueryString"] = "&".join(f"{key}={value}" for key, value in query.items())
                page["queryStringParameters"] = query
                page["headers"]["authorization"] = f"Bearer {token}"
                del page["requestContext"]["authorizer"]  # locally the handler checks the token itself
                return page

            toolkit.log(
                f"timing load older: {len(items)} notes on {len(plan)} of 90 days, {options.load_older_passes} passes"
            )
            samples_ns: list[int] = []
            requests: list[int] = []
            items_read: list[int] = []
            listed: list[int] = []
            pages = 0
            for pass_index in range(options.load_older_passes + 1):  # the first pass warms up
                before: str | None = None
                seen: list[str] = []
                requests_of_pass: list[int] = []
                read_of_pass: list[int] = []
                listed_of_pass: list[int] = []
                while True:
                    page = event(before)
                    counter.take()
                    read.clear()
                    start = time.perf_counter_ns()
                    answer = handler(page, context)
                    elapsed_ns = time.perf_counter_ns() - start
                    requests_of_pass.append(len(counter.take()))
                    clear_metrics()
                    if answer["statusCode"] != 200:
                        raise SystemExit(f"load older answered {answer['statusCode']}: {answer.get('body')}")
                    body = json.loads(answer["body"])
                    seen += [listed_day["day"] for listed_day in body["days"]]
                    read_of_pass.append(sum(read))
                    listed_of_pass.append(sum(len(listed_day["notes"]) for listed_day in body["days"]))
                    if pass_index:
                        samples_ns.append(elapsed_ns)
                    before = body["next_before"]
                    if before is None:
                        break
                if seen != [day for day, _ in plan]:
                    raise SystemExit(f"load older listed {len(seen)} days, not the {len(plan)} seeded ones")
                requests, pages = requests_of_pass, len(requests_of_pass)
                items_read, listed = read_of_pass, listed_of_pass
    finally:
        os.environ.pop("MEMORY_LOCAL_JWT_SECRET", None)
    return LoadOlderResult(
        len(plan), len(items), options.load_older_passes, pages, requests, items_read, listed, samples_ns
    )


# --- recall's keyword fallback --------------------------------------------------------------------


@dataclass(frozen=True)
class RecallResult:
    notes: int
    calls: int
    requests: tuple[str, ...]  # the longest sequence seen
    varying_requests: bool
    samples_ns: list[int]

    def as_json(self) -> dict[str, Any]:
        return {
            "requests": len(self.requests),
            "p50_ms": round(percentile_ms(self.samples_ns, 0.50), 3),
            "p99_ms": round(percentile_ms(self.samples_ns, 0.99), 3),
        }


def recall_items(scope: Any, user: str, first: int, last: int, fact_text: Callable[[int], str]) -> list[dict[str, Any]]:
    """Notes ``first``..``last - 1`` of a scope, index 0 the newest: 20 a day going back from today.

    Notes past the consolidation's 7 days are flagged consolidated, as the nightly run leaves them.
    """
    from agent_memory.notes import Note, Origin
    from agent_memory.storage.note_store import _note_item

    week_ago = (TODAY - timedelta(days=7)).isoformat()
    items = []
    for index in range(first, last):
        day = (TODAY - timedelta(days=index // 20)).isoformat()
        position = 20 - index % 20
        note = Note(
            day=day,
            position=position,
            text=fact_text(index).removeprefix("- "),
            created_at=f"{day}T{position:02d}:00:00.000Z",
            source="remember",
            origin=Origin(user, f"t-{index}"),
            consolidated=day < week_ago,
        )
        items.append(_note_item(scope, note))
    return items


def measure_recall(toolkit: Toolkit, options: Options) -> dict[str, RecallResult]:
    """ToolsFunction's recall with events/recall.json, over one scope grown to each size in turn.

    The scope grows by older notes, so its newest ones (what the fallback reads first) stay the same.
    No notes index is configured, so every call takes the DynamoDB keyword path.
    """
    from agent_memory.api import parse_envelope
    from agent_memory.scope import bind_scope
    from local.template import load_handler
    from tests.events import event_body, load_event

    body = event_body("recall")
    scope = bind_scope(parse_envelope(json.dumps(body), takes_arguments=True)[0])
    results: dict[str, RecallResult] = {}
    with toolkit.moto() as (counter, client), quiet_powertools():
        handler = load_handler("ToolsFunction")
        context = Context("ToolsFunction")
        seeded = 0
        for notes, warmup, calls in options.recall_calls:
            toolkit.log(f"timing recall over {notes:,} notes: seeding, then {warmup} warm-up + {calls} calls")
            batch_write(client, recall_items(scope, body["context"]["user_id"], seeded, notes, toolkit.fact_text))
            seeded = notes
            events = [load_event("recall", body) for _ in range(warmup + calls)]
            counter.take()
            samples_ns: list[int] = []
            sequences: set[tuple[str, ...]] = set()
            for index, recall_event in enumerate(events):
                start = time.perf_counter_ns()
                answer = handler(recall_event, context)
                elapsed_ns = time.perf_counter_ns() - start
                requests = counter.take()
                clear_metrics()
                if answer["statusCode"] != 200 or not json.loads(answer["body"])["notes"]:
                    raise SystemExit(f"recall over {notes} notes answered {answer['statusCode']}: {answer.get('body')}")
                if index >= warmup:
                    samples_ns.append(elapsed_ns)
                    sequences.add(requests)
            results[f"recall_keyword_{notes}"] = RecallResult(
                notes, calls, max(sequences, key=len), len(sequences) > 1, samples_ns
            )
    return results


# --- report ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaleResults:
    consolidation: ConsolidationResult
    load_older: LoadOlderResult
    recall: dict[str, RecallResult]

    def as_json(self) -> dict[str, dict[str, Any]]:
        return {
            "consolidation_50_groups_2s_model"
            if self.consolidation.scopes == 50 and self.consolidation.model_s == 2.0
            else f"consolidation_{self.consolidation.scopes}_groups_{self.consolidation.model_s:g}s_model": (
                self.consolidation.as_json()
            ),
            "load_older_90_days": self.load_older.as_json(),
            **{name: result.as_json() for name, result in self.recall.items()},
        }


def measure_all(toolkit: Toolkit, options: Options) -> ScaleResults:
    return ScaleResults(
        consolidation=measure_consolidation(toolkit, options),
        load_older=measure_load_older(toolkit, options),
        recall=measure_recall(toolkit, options),
    )


def consolidation_report(result: ConsolidationResult) -> list[str]:
    operations = ", ".join(
        f"{name} {count}" for name, count in sorted(result.operations.items(), key=lambda kv: -kv[1])
    )
    header = (
        f"{'consolidation':<26}{'wall s':>9}{'sequential s':>14}{'ratio':>8}{'ideal s':>9}"
        f"{'requests':>10}{'per note':>10}"
    )
    return [
        header,
        "-" * len(header),
        f"{f'{result.scopes} groups x {result.notes // result.scopes} notes':<26}{result.wall_s:>9.2f}"
        f"{result.sequential_bound_s:>14.0f}{result.wall_s / result.sequential_bound_s:>7.3f}x"
        f"{result.concurrent_bound_s:>9.0f}{result.requests:>10}{result.requests / result.notes:>10.2f}",
        "",
        "consolidation: one run of ConsolidateFunction's handler (events/scheduled.json, 900 s left) over",
        f"{result.scopes} scopes of {result.notes // result.scopes} notes 8 days old; fake model of "
        f"{result.model_s:g} s per group, MEMORY_CONSOLIDATION_CONCURRENCY {result.concurrency};",
        f"sequential: {result.scopes} x {result.model_s:g} s; ideal: ceil({result.scopes}/{result.concurrency}) x "
        f"{result.model_s:g} s, the model's share at that concurrency.",
        f"requests: {operations}",
        "moto's request handling is serialised by a lock here (it is not thread-safe), as in the tests.",
    ]


def load_older_report(result: LoadOlderResult) -> list[str]:
    per_page = result.requests_per_page
    header = f"{'load older':<26}{'pages':>7}{'req/page min':>14}{'max':>6}{'mean':>7}{'p50 ms':>10}{'p99 ms':>10}"
    return [
        header,
        "-" * len(header),
        f"{f'{result.notes} notes, {result.days_with_notes} days':<26}{result.pages:>7}{min(per_page):>14}"
        f"{max(per_page):>6}{statistics.mean(per_page):>7.2f}{percentile_ms(result.samples_ns, 0.50):>10.3f}"
        f"{percentile_ms(result.samples_ns, 0.99):>10.3f}",
        "",
        "load older: ManagementFunction's handler, GET /v1/memory/personal/notes?days=2 then before=next_before until",
        f"null, over a personal scope with notes on {result.days_with_notes} of the last 90 days (1 to 10 a day, "
        f"fixed seed); {result.passes} timed passes",
        f"of {result.pages} pages after one warm-up pass; p50/p99 over all {len(result.samples_ns)} pages "
        "(the local token is verified in the handler).",
        f"items: each page lists {statistics.mean(result.listed_per_page):.1f} notes on average (max "
        f"{max(result.listed_per_page)}) but its Query reads {statistics.mean(result.items_per_page):.1f} "
        f"(max {max(result.items_per_page)}): days_before sizes its Query by the days asked for (10 notes a day,",
        "plus one day to see where the next page starts), so a page reads little more than it lists.",
    ]


def recall_report(results: dict[str, RecallResult]) -> list[str]:
    header = f"{'recall (keyword)':<18}{'requests':<24}{'p50 ms':>10}{'p99 ms':>10}{'calls':>7}{'p50 / 100':>11}"
    rows = [header, "-" * len(header)]
    base = percentile_ms(next(iter(results.values())).samples_ns, 0.50)
    for result in results.values():
        requests = f"{len(result.requests)} {'+'.join(result.requests)}" + (" *" if result.varying_requests else "")
        p50 = percentile_ms(result.samples_ns, 0.50)
        rows.append(
            f"{f'{result.notes:,} notes':<18}{requests:<24}{p50:>10.3f}{percentile_ms(result.samples_ns, 0.99):>10.3f}"
            f"{result.calls:>7}{p50 / base:>10.1f}x"
        )
    notes = [
        "recall: ToolsFunction's handler with events/recall.json, no notes index (the DynamoDB keyword fallback),",
        "one scope grown to each size (20 notes a day back from today). The fallback reads at most the 2,000",
        "newest notes, so 10,000 should cost about what 2,000 does. moto's response serialisation dominates",
        "from 1,000 notes on: our own code was measured at about 19 ms of some 385 ms at 1,000 notes.",
        "moto's Query also walks every item of the table and sorts the whole partition before it applies Limit,",
        "a cost DynamoDB does not have; with this few calls the 2,000 and 10,000 p50s move by a third run to run.",
    ]
    if any(result.varying_requests for result in results.values()):
        notes.append("* calls did not all make the same requests; the longest sequence is shown")
    return [*rows, "", *notes]


def report(results: ScaleResults) -> str:
    return "\n".join(
        [
            *consolidation_report(results.consolidation),
            "",
            *load_older_report(results.load_older),
            "",
            *recall_report(results.recall),
        ]
    )
