""" "Load older" over 90 days of notes: the dashboard's notes by day, page after page."""

from __future__ import annotations

import json
import random
import statistics
import time
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from bench.runner import Context, Options, Toolkit, batch_write, clear_metrics, percentile_ms, quiet_powertools

TODAY = date(2026, 12, 3)  # MEMORY_NOW's day
LOCAL_JWT_SECRET = "local-dev-secret"  # noqa: S105 - the local stack's documented secret


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

    from agent_memory.domain.notes import Note, Origin
    from agent_memory.domain.scope import Scope
    from agent_memory.storage.note_items import note_item
    from local.template import load_handler
    from local.token import mint
    from tests.support.events import load_event

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
            items.append(note_item(scope, note))
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
