"""A nightly consolidation run over 50 groups with a 2-second fake model: wall time against its bounds, its
DynamoDB requests per note, and what a fold's save costs (its transaction's items and write units), beside
what it cost when the save checked every folded note (one ``ConditionCheck`` per note, where the erase mark
is now one check on the scope's due marker, whatever the group's size).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from math import ceil
from typing import Any

from bench.capacity import requests_of, units
from bench.runner import Context, Options, Toolkit, clear_metrics, quiet_powertools
from tests.support.moto_support import atomic_moto_requests

# The consolidation's run time: events/scheduled.json's own ``time``.
RUN_AT = datetime(2026, 12, 3, 3, 0, tzinfo=UTC)
# The largest group a fold saves (MEMORY_CONSOLIDATION_MAX_NOTES' default), for the per-note check's cost.
LARGEST_GROUP = 100
# A note's ConditionCheck, as the save carried one per folded note before the erase mark: a note is under 1 KB.
CHECK_UNITS = 2


@dataclass(frozen=True)
class ConsolidationResult:
    scopes: int
    notes: int
    model_s: float
    concurrency: int
    wall_s: float
    operations: dict[str, int]
    save_items: int  # the items of one fold's save (TransactWriteItems), the erase mark's one check included
    save_write_units: float

    @property
    def sequential_bound_s(self) -> float:
        return self.scopes * self.model_s

    @property
    def concurrent_bound_s(self) -> float:
        """The model's share alone with ``concurrency`` groups at once: what no run can beat."""
        return ceil(self.scopes / self.concurrency) * self.model_s

    def save_before(self, notes: int) -> tuple[int, float]:
        """The items and write units of a save of ``notes`` notes with one check per note in place of the erase mark."""
        return self.save_items - 1 + notes, self.save_write_units + CHECK_UNITS * (notes - 1)

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
            "fold_save_items": self.save_items,
            "fold_save_write_units": self.save_write_units,
            "fold_save_items_per_note_check_100": self.save_before(LARGEST_GROUP)[0],
            "fold_save_extra_write_units_per_note_check_100": self.save_before(LARGEST_GROUP)[1]
            - self.save_write_units,
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
    from agent_memory.domain.text_pipeline import NOTE, prepare
    from local.template import load_handler
    from tests.support.events import event_body
    from tests.support.fakes import FakeChatModel

    with toolkit.moto() as (counter, client), atomic_moto_requests(), quiet_powertools():
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
                    text=prepare(
                        toolkit.fact_text(scope_index * notes_each + index).removeprefix("- "),
                        "remember",
                        NOTE,
                        extra=frozenset(),
                    ).text,
                    source="remember",
                    origin=Origin(user, "t-1"),
                )
        model = FakeChatModel(reply=merge, delay_s=options.consolidation_model_s)
        bootstrap.provide(chat_models=lambda use: model)  # the graph's chat model: the bench's fake, for every use
        assert bootstrap.services().planner  # built before the timing, as it was
        concurrency = get_settings().consolidation_concurrency
        handler = load_handler("ConsolidateFunction")
        context = Context("ConsolidateFunction", remaining_ms=900_000, memory_limit_in_mb=1024)
        event = event_body("scheduled")
        counter.take()
        toolkit.log(
            f"timing consolidation: {scopes} scopes x {notes_each} notes, model {options.consolidation_model_s:g} s,"
            f" concurrency {concurrency}"
        )
        with requests_of(counter) as sent:
            start = time.perf_counter()
            result = handler(event, context)
            wall_s = time.perf_counter() - start
        operations = Counter(counter.take())
        clear_metrics()
        saves = [(operation, body) for operation, body in sent if operation == "TransactWriteItems" and _is_save(body)]
        if len(saves) != scopes:
            raise SystemExit(f"consolidation saved {len(saves)} folds, not {scopes}")
        save_units = units(client, saves[:1]).write
    total = scopes * notes_each
    if result.get("groups_done") != scopes or result.get("notes_consolidated") != total:
        raise SystemExit(f"consolidation answered {result}, not {scopes} groups and {total} notes done")
    if len(model.calls) != scopes:
        raise SystemExit(f"consolidation called the model {len(model.calls)} times, not {scopes}")
    return ConsolidationResult(
        scopes,
        total,
        options.consolidation_model_s,
        concurrency,
        wall_s,
        dict(operations),
        len(saves[0][1]["TransactItems"]),
        save_units,
    )


def _is_save(body: dict[str, Any]) -> bool:
    """A fold's save: the transaction that puts the pending-marks record with the new version."""
    from agent_memory.storage.keys import PENDING_SK

    return any(
        entry.get("Put", {}).get("Item", {}).get("sk", {}).get("S") == PENDING_SK for entry in body["TransactItems"]
    )


def consolidation_report(result: ConsolidationResult) -> list[str]:
    group = result.notes // result.scopes

    def before(notes: int) -> str:
        items, write_units = result.save_before(notes)
        return f"{items} items and {write_units - result.save_write_units:+g} units for {notes} notes"

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
        f"fold save: {result.save_items} transaction items and {result.save_write_units:g} write units for a "
        f"{group}-note group, {result.save_items} items at any size (one erase mark check on the due marker); with one",
        f"ConditionCheck per folded note, as before the erase mark: {before(group)}; {before(LARGEST_GROUP)} "
        "(1 write unit per KB of each item, twice in a transaction).",
        "moto's request handling is serialised by a lock here (it is not thread-safe), as in the tests.",
    ]
