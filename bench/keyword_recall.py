"""Recall's keyword fallback over 100, 1,000, 2,000 and 10,000 notes: BM25 over the scope's newest notes
read from DynamoDB.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from bench.runner import Context, Options, Toolkit, batch_write, clear_metrics, percentile_ms, quiet_powertools

TODAY = date(2026, 12, 3)  # MEMORY_NOW's day


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
    from agent_memory.domain.notes import Note, Origin
    from agent_memory.storage.note_items import note_item

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
        items.append(note_item(scope, note))
    return items


def measure_recall(toolkit: Toolkit, options: Options) -> dict[str, RecallResult]:
    """ToolsFunction's recall with events/recall.json, over one scope grown to each size in turn.

    The scope grows by older notes, so its newest ones (what the fallback reads first) stay the same.
    No notes index is configured, so every call takes the DynamoDB keyword path.
    """
    from agent_memory.edges.requests.chat import RecallArgs, tool_call
    from local.template import load_handler
    from tests.support.events import event_body, load_event

    body = event_body("recall")
    scope = tool_call(body, RecallArgs).scope
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
