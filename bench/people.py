"""People's control at scale: export and erase of a 100,000-note scope, and the per-turn cost of the
injection record (``/v1/context``'s p50 with and without it, interleaved in the same run).

Run alone with ``python -m bench.people [--notes N] [--calls N]`` or as part of ``make bench``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any

from bench.runner import TABLE, Toolkit, batch_write, clear_metrics, percentile_ms, quiet_powertools

USER = "u-people"
CONTEXT_USER = "u-people-ctx"


@dataclass(frozen=True)
class PeopleResult:
    notes: int
    seed_s: float
    export_s: float
    export_pages: int
    export_bytes: int
    export_peak_mb: float
    erase_s: float
    erased: dict[str, int]
    context_calls: int
    context_p50_without_ms: float
    context_p50_with_ms: float
    record_writes: int

    @property
    def ratio(self) -> float:
        return self.context_p50_with_ms / self.context_p50_without_ms

    def as_json(self) -> dict[str, Any]:
        return {
            "people": {
                "notes": self.notes,
                "export_s": round(self.export_s, 2),
                "export_pages": self.export_pages,
                "export_mb": round(self.export_bytes / 1e6, 1),
                "export_peak_mb_per_page": round(self.export_peak_mb, 1),
                "erase_s": round(self.erase_s, 2),
                "erased": self.erased,
                "context_p50_without_ms": round(self.context_p50_without_ms, 3),
                "context_p50_with_ms": round(self.context_p50_with_ms, 3),
                "context_ratio": round(self.ratio, 3),
                "record_writes": self.record_writes,
            }
        }


def _note_items(count: int, fact_text: Any) -> list[dict[str, Any]]:
    from datetime import date, timedelta

    from agent_memory.notes import Note, Origin
    from agent_memory.scope import Scope
    from agent_memory.storage.note_items import note_item

    scope = Scope("personal", USER)
    start = date(2026, 12, 3) - timedelta(days=count // 100)
    items = []
    for index in range(count):
        day = (start + timedelta(days=index // 100)).isoformat()
        note = Note(day, index % 100 + 1, fact_text(index), f"{day}T09:00:00.000Z", "remember", Origin(USER, "t-1"))
        items.append(note_item(scope, note))
    return items


def measure_people(toolkit: Toolkit, *, notes: int = 100_000, calls: int = 200) -> PeopleResult:
    from agent_memory import runtime
    from agent_memory.scope import Scope
    from local.template import load_handler
    from tests.events import load_event

    scope = Scope("personal", USER)
    with toolkit.moto() as (_, client), quiet_powertools():
        toolkit.log(f"people: seeding {notes:,} notes")
        started = time.perf_counter()
        batch_write(client, _note_items(notes, toolkit.fact_text))
        seed_s = time.perf_counter() - started
        people = runtime.people()

        toolkit.log("people: export")
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
        module = sys.modules["_handler_ContextFunction"]
        recording = getattr(module, "record_injection")  # noqa: B009
        lambda_context = _Context()
        samples: dict[bool, list[int]] = {True: [], False: []}
        block = max(1, calls // 2)  # blocks, not alternate calls: the writer thread's work lands on the calls
        for index in range(2 * calls + 20):  # after a recorded one, which then belong to the same side
            record = index < 20 or ((index - 20) // block) % 2 == 1
            setattr(module, "record_injection", recording if record else (lambda *_: None))  # noqa: B010
            event = load_event("context", {"context": context})
            begun = time.perf_counter_ns()
            answer = handler(event, lambda_context)
            elapsed = time.perf_counter_ns() - begun
            assert answer["statusCode"] == 200
            clear_metrics()
            if index >= 20:  # warm-up
                samples[record].append(elapsed)
        setattr(module, "record_injection", recording)  # noqa: B010
        runtime.injection_recorder().wait(30)
        written = client.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :inj)",
            ExpressionAttributeValues={":pk": {"S": f"user#{CONTEXT_USER}"}, ":inj": {"S": "inj#"}},
            Select="COUNT",
        )["Count"]
    return PeopleResult(
        notes=notes,
        seed_s=seed_s,
        export_s=export_s,
        export_pages=pages,
        export_bytes=size,
        export_peak_mb=peak / 1e6,
        erase_s=erase_s,
        erased=receipt.erased.json_body(),
        context_calls=calls,
        context_p50_without_ms=percentile_ms(samples[False], 0.5),
        context_p50_with_ms=percentile_ms(samples[True], 0.5),
        record_writes=written,
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
    target = "met" if result.ratio <= 1.1 else "MISSED"
    return "\n".join(
        [
            f"Export, erase and the injection record (moto in-process; a {result.notes:,}-note personal scope)",
            "",
            "| figure | value |",
            "|---|---|",
            f"| export, every page | {result.export_s:.1f} s, {result.export_pages} pages, "
            f"{result.export_bytes / 1e6:.1f} MB of JSON |",
            f"| export, peak memory of one page (traced) | {result.export_peak_mb:.1f} MB |",
            f"| erase | {result.erase_s:.1f} s; receipt {result.erased} |",
            f"| context p50 without the record | {result.context_p50_without_ms:.2f} ms |",
            f"| context p50 with the record | {result.context_p50_with_ms:.2f} ms "
            f"({result.ratio:.2f}x, target <= 1.1x: {target}) |",
            f"| records written (behind the turns) | {result.record_writes} of {result.context_calls + 20} "
            "recorded calls (20 in the warm-up) |",
            "",
            "The record adds no synchronous request: it is queued and written by a background thread in "
            "BatchWriteItem requests of what arrived within a second, at most 25 (agent_memory/injections.py).",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    from bench.runner import configure, fact_text, fresh_moto, log

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    configure()
    result = measure_people(Toolkit(moto=fresh_moto, fact_text=fact_text, log=log), notes=args.notes, calls=args.calls)
    print(report(result))
    print(json.dumps(result.as_json(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
