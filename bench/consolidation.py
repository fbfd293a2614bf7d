"""A nightly consolidation run over 50 groups with a 2-second fake model: wall time against its bounds, and
its DynamoDB requests per note.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from math import ceil
from typing import Any

from bench.runner import Context, Options, Toolkit, clear_metrics, quiet_powertools
from tests.moto_support import atomic_moto_requests

# The consolidation's run time: events/scheduled.json's own ``time``.
RUN_AT = datetime(2026, 12, 3, 3, 0, tzinfo=UTC)


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
    from agent_memory import bootstrap
    from agent_memory.basics.settings import get_settings
    from agent_memory.domain.notes import Origin
    from agent_memory.domain.scope import Scope
    from local.template import load_handler
    from tests.events import event_body
    from tests.fakes import FakeChatModel

    with toolkit.moto() as (counter, _), atomic_moto_requests(), quiet_powertools():
        notes = bootstrap.services().memory_service.notes
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
        consolidator = bootstrap.services().consolidator
        consolidator.chat_model = lambda: model
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
