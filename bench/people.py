"""People's control at scale: export and erase of a large scope, and the per-turn cost of the injection
record (``/v1/context``'s p50 with and without it, in blocks of the same run).

``make bench`` measures a 10,000-note scope (``--people-notes``), so that it stays short; the full size is
one command, ``make bench-people`` (``python -m bench.people --notes 100000 --record``), which writes its
figures into docs/benchmarks.json (``people_100000``) and its section into docs/benchmarks.md, where every
later ``make bench`` keeps them. The notes are seeded with BatchWriteItem straight into the table (the
write path's two requests per note would take most of an hour on moto for 100,000), in chunks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import people_context
from bench.report import write_section
from bench.runner import REPORT, RESULTS, TABLE, Toolkit, batch_write, clear_metrics, percentile_ms, quiet_powertools

USER = "u-people"
CONTEXT_USER = "u-people-ctx"
FULL_SIZE = 100_000
SEED_CHUNK = 5_000  # items built and written at a time, so that the seed does not set the process's peak


def _status_mb(field: str) -> float:
    """``VmRSS`` or ``VmHWM`` (the peak resident set) of this process, in MB, from /proc (Linux); 0 elsewhere."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _reset_peak() -> bool:
    """Start the process's peak resident set again from now (Linux: ``5`` into clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class PeopleResult:
    notes: int
    seed_s: float
    export_s: float
    export_pages: int
    export_bytes: int
    export_peak_mb: float
    rss_before_mb: float
    rss_peak_mb: float
    erase_s: float
    erased: dict[str, int]
    context_calls: int
    context_p50_without_ms: float
    context_p50_with_ms: float
    record_writes: int
    http_p50: dict[str, float]  # bench.people_context's sides: DynamoDB in another process

    def as_json(self) -> dict[str, Any]:
        return {
            "people": {
                "notes": self.notes,
                "export_s": round(self.export_s, 2),
                "export_pages": self.export_pages,
                "export_mb": round(self.export_bytes / 1e6, 1),
                "export_peak_mb_per_page": round(self.export_peak_mb, 1),
                "export_rss_before_mb": round(self.rss_before_mb, 1),
                "export_rss_peak_mb": round(self.rss_peak_mb, 1),
                "erase_s": round(self.erase_s, 2),
                "erased": self.erased,
                "context_p50_without_ms": round(self.context_p50_without_ms, 3),
                "context_p50_with_ms": round(self.context_p50_with_ms, 3),
                "context_ratio": round(self.context_ratio, 3),
                "record_writes": self.record_writes,
                "context_http_p50_without_ms": round(self.http_p50["without"], 3),
                "context_http_p50_with_ms": round(self.http_p50["with"], 3),
                "context_http_p50_floor_ms": round(self.http_p50["floor"], 3),
                "context_http_ratio": round(self.http_p50["with"] / self.http_p50["without"], 3),
                "context_http_floor_ratio": round(self.http_p50["with"] / self.http_p50["floor"], 3),
            }
        }

    @property
    def context_ratio(self) -> float:
        """What the injection record costs a turn: context's p50 with it over without it."""
        return self.context_p50_with_ms / self.context_p50_without_ms


def _note_items(count: int, fact_text: Any) -> Iterator[list[dict[str, Any]]]:
    from datetime import date, timedelta

    from agent_memory.domain.notes import Note, Origin
    from agent_memory.domain.scope import Scope
    from agent_memory.storage.note_items import note_item

    scope = Scope("personal", USER)
    start = date(2026, 12, 3) - timedelta(days=count // 100)
    items = []
    for index in range(count):
        day = (start + timedelta(days=index // 100)).isoformat()
        note = Note(day, index % 100 + 1, fact_text(index), f"{day}T09:00:00.000Z", "remember", Origin(USER, "t-1"))
        items.append(note_item(scope, note))
        if len(items) == SEED_CHUNK:
            yield items
            items = []
    if items:
        yield items


def measure_people(toolkit: Toolkit, *, notes: int = 100_000, calls: int = 200) -> PeopleResult:
    from agent_memory import bootstrap
    from agent_memory.domain.scope import Scope
    from local.template import load_handler
    from tests.support.events import load_event

    scope = Scope("personal", USER)
    with toolkit.moto() as (_, client), quiet_powertools():
        toolkit.log(f"people: seeding {notes:,} notes")
        started = time.perf_counter()
        for chunk in _note_items(notes, toolkit.fact_text):
            batch_write(client, chunk)
        seed_s = time.perf_counter() - started
        people = bootstrap.services().people

        toolkit.log("people: export")
        rss_before = _status_mb("VmRSS")  # moto's in-memory table is part of it
        traced_peak = _reset_peak()
        pages, size, cursor = 0, 0, None
        started = time.perf_counter()
        while True:
            page = people.export(scope, cursor)
            size += len(json.dumps(page.json_body()))  # what the handler serialises
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
        export_s = time.perf_counter() - started
        rss_peak = _status_mb("VmHWM") if traced_peak else 0.0
        tracemalloc.start()  # a second, traced pass over three pages: the peak one page holds
        cursor = people.export(scope, None).next_cursor
        for _ in range(3):
            page = people.export(scope, cursor)
            json.dumps(page.json_body())
            cursor = page.next_cursor
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

        toolkit.log("people: erase")
        started = time.perf_counter()
        receipt = people.erase(scope)
        erase_s = time.perf_counter() - started

        toolkit.log("people: context with and without the injection record")
        context = {"user_id": CONTEXT_USER, "thread_id": "t-1", "visibility": "private"}
        handler = load_handler("ContextFunction")
        lambda_context = _Context()
        samples: dict[bool, list[int]] = {True: [], False: []}
        block = max(1, calls // 2)  # blocks, not alternate calls: the writer thread's work lands on the calls
        for index in range(2 * calls + 20):  # after a recorded one, which then belong to the same side
            record = index < 20 or ((index - 20) // block) % 2 == 1
            event = load_event("context", {"context": context})
            with nullcontext() if record else people_context.unrecorded():
                begun = time.perf_counter_ns()
                answer = handler(event, lambda_context)
                elapsed = time.perf_counter_ns() - begun
            assert answer["statusCode"] == 200
            clear_metrics()
            if index >= 20:  # warm-up
                samples[record].append(elapsed)
        written = client.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :inj)",
            ExpressionAttributeValues={":pk": {"S": f"user#{CONTEXT_USER}"}, ":inj": {"S": "inj#"}},
            Select="COUNT",
        )["Count"]
    toolkit.log("people: context against its floor and without the record, DynamoDB in another process")
    http = people_context.measure(calls=2 * calls, block=50)
    return PeopleResult(
        notes=notes,
        seed_s=seed_s,
        export_s=export_s,
        export_pages=pages,
        export_bytes=size,
        export_peak_mb=peak / 1e6,
        rss_before_mb=rss_before,
        rss_peak_mb=rss_peak,
        erase_s=erase_s,
        erased=receipt.erased.json_body(),
        context_calls=calls,
        context_p50_without_ms=percentile_ms(samples[False], 0.5),
        context_p50_with_ms=percentile_ms(samples[True], 0.5),
        record_writes=written,
        http_p50=http,
    )


@dataclass(frozen=True)
class _Context:
    function_name: str = "ContextFunction"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:ContextFunction"
    aws_request_id: str = "c6af9ac6-7b61-11e6-9a41-93e812345678"

    def get_remaining_time_in_millis(self) -> int:
        return 5_000


def report(result: PeopleResult) -> str:
    return "\n".join(
        [
            f"Export, erase and the injection record (moto in-process; a {result.notes:,}-note personal scope)",
            "",
            "| figure | value |",
            "|---|---|",
            f"| export, every page | {result.export_s:.1f} s, {result.export_pages} pages, "
            f"{result.export_bytes / 1e6:.1f} MB of JSON |",
            f"| export, peak memory of the process (VmHWM) | {result.rss_peak_mb:.0f} MB, "
            f"{result.rss_peak_mb - result.rss_before_mb:+.0f} MB over its {result.rss_before_mb:.0f} MB before "
            "the export (moto's in-memory table included) |",
            f"| export, peak memory of one page (traced) | {result.export_peak_mb:.1f} MB |",
            f"| erase | {result.erase_s:.1f} s; receipt {result.erased} |",
            f"| context p50 without the record | {result.context_p50_without_ms:.2f} ms |",
            f"| context p50 with the record | {result.context_p50_with_ms:.2f} ms "
            f"({result.context_ratio:.2f}x the turn without it: moto in-process does the record's PutItem on the "
            "turn's own interpreter, so it cannot overlap; against its floor, the target of 1.1x, see the "
            "per-turn section and the next line) |",
            f"| DynamoDB in another process (moto server, blocks of 50) | {people_context.report(result.http_p50)} |",
            f"| records written | {result.record_writes} of {result.context_calls + 20} "
            "recorded calls (20 in the warm-up) |",
            "",
            "The record is one PutItem written before the answer, started as soon as the two reads have answered and "
            "in flight while the answer is built (agent_memory/people/injections.py): a turn whose record cannot be "
            "written says so in `degraded`, and no record waits in a thread a frozen sandbox stops.",
            "Export and erase times are mostly moto's own: its response serializer took 39 of 46 s of a profiled "
            "3,000-note export (moto.core.serialize); the seed is BatchWriteItem straight into the table.",
            *_recorded_lines(result.notes),
        ]
    )


def _recorded_lines(measured: int) -> list[str]:
    """The last full-size run's figures (``make bench-people``), kept in docs/benchmarks.json, when this run
    measured a smaller scope."""
    recorded = json.loads(RESULTS.read_text()).get(f"people_{FULL_SIZE}") if RESULTS.exists() else None
    if measured >= FULL_SIZE or not recorded:
        return []
    return [
        "",
        f"The last {FULL_SIZE:,}-note run (make bench-people, {recorded['date']}, load average "
        f"{recorded['load_average']:.1f}): export {recorded['export_s']} s over {recorded['export_pages']} pages, "
        f"process peak {recorded['export_rss_peak_mb']} MB ({recorded['export_rss_before_mb']} MB before it); "
        f"erase {recorded['erase_s']} s; context p50 {recorded['context_p50_without_ms']} ms without the record, "
        f"{recorded['context_p50_with_ms']} ms with it ({recorded['context_ratio']}x).",
    ]


def record(
    result: PeopleResult, text: str, meta: dict[str, Any], *, results: Path = RESULTS, report_path: Path = REPORT
) -> None:
    """Keep a run's figures: merged into docs/benchmarks.json as ``people_<notes>``, and its section written
    into docs/benchmarks.md (replacing the one of an earlier run of the same size). ``meta``: the machine
    as the run began (``bench.report.machine``)."""
    data: dict[str, Any] = json.loads(results.read_text()) if results.exists() else {}
    data[f"people_{result.notes}"] = {
        **result.as_json()["people"],
        "date": meta["date"],
        "load_average": meta["load_average"][0],
        "command": f"python -m bench.people --notes {result.notes} --calls {result.context_calls} --record",
    }
    results.write_text(json.dumps(data, indent=2) + "\n")
    write_section(
        f"## People's control at {result.notes:,} notes (make bench-people)",
        f"Run from {meta['date']} with `nice`, load average {meta['load_average'][0]:.1f} when it started, "
        f"{meta['cpu_count']} CPUs shared with other work; `python -m bench.people --notes {result.notes} --record`.",
        text,
        report_path,
    )


def main(argv: list[str] | None = None) -> int:
    from bench.runner import configure, fact_text, fresh_moto, log

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=FULL_SIZE, help=f"notes in the scope (default {FULL_SIZE:,})")
    parser.add_argument("--calls", type=int, default=200, help="timed context calls per side (default 200)")
    parser.add_argument(
        "--record", action="store_true", help="write the figures into docs/benchmarks.json and docs/benchmarks.md"
    )
    args = parser.parse_args(argv)
    configure()
    from bench.report import machine

    started = machine()
    result = measure_people(Toolkit(moto=fresh_moto, fact_text=fact_text, log=log), notes=args.notes, calls=args.calls)
    text = report(result)
    print(text)
    print(json.dumps(result.as_json(), indent=2))
    if args.record:
        record(result, text, started)
        log(f"wrote the {result.notes:,}-note figures into {RESULTS.name} and {REPORT.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
