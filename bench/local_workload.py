"""A real workload on the local stack: its process memory and ``remember`` latency as the table grows.

``make run``'s stack (embedded moto) is started on free ports; notes are remembered one after another,
to 100 scopes in turn and then to one scope (its daily quota raised); after each thousand the stack's
resident memory (moto's tables are in its process) is read from /proc and that thousand's p50 taken.

    python -m bench.local_workload --notes 10000 --one-scope 2000
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.local_load import local_stack, request

CHECKPOINT = 1000


@dataclass
class Workload:
    name: str
    checkpoints: list[dict[str, Any]] = field(default_factory=list)  # {"notes", "rss_mb", "p50_ms"}
    failures: int = 0


def resident_mb(pid: int) -> float:
    """The process's resident memory (VmRSS), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def remember_many(port: int, pid: int, workload: Workload, notes: int, scopes: int) -> None:
    latencies: list[float] = []
    for number in range(notes):
        context = {"user_id": f"u-work-{number % scopes}", "thread_id": "t-1", "visibility": "private"}
        body = {"context": context, "arguments": {"text": f"workload fact {number}: prefers option {number % 7}"}}
        started = time.perf_counter()
        status, _ = request(port, "POST", "/v1/tools/remember", body)
        latencies.append((time.perf_counter() - started) * 1000)
        workload.failures += status != 201
        if (number + 1) % CHECKPOINT == 0 or number + 1 == notes:
            p50 = round(statistics.median(latencies), 1)
            workload.checkpoints.append({"notes": number + 1, "rss_mb": round(resident_mb(pid)), "p50_ms": p50})
            latencies = []


def measure(notes: int = 10_000, one_scope: int = 2_000) -> list[Workload]:
    """Two fresh stacks: ``notes`` notes over 100 scopes, then ``one_scope`` notes to one scope."""
    runs = []
    for name, count, scopes in (("100 scopes", notes, 100), ("one scope", one_scope, 1)):
        workload = Workload(name)
        with local_stack(MEMORY_QUOTA_NOTES_PER_DAY=str(count + 1)) as (port, pid):
            workload.checkpoints.append({"notes": 0, "rss_mb": round(resident_mb(pid)), "p50_ms": 0.0})
            remember_many(port, pid, workload, count, scopes)
        runs.append(workload)
    return runs


def report(runs: list[Workload]) -> str:
    """The section of docs/benchmarks.md."""
    lines = [
        "`make run`'s stack (embedded moto, local/moto_fast.py) after N `remember`s sent one after another: "
        "its process's resident memory and the p50 of the last thousand. Targets: memory at most 1 GB, the "
        "last thousand's p50 at most 1.5x the first's.",
        "",
        f"{'workload':<12} {'notes':>7} {'memory':>9} {'p50 of the last 1,000':>22}",
    ]
    for workload in runs:
        for point in workload.checkpoints[1:]:
            lines.append(f"{workload.name:<12} {point['notes']:>7,} {point['rss_mb']:>6,} MB {point['p50_ms']:>19} ms")
        first, last = workload.checkpoints[1]["p50_ms"], workload.checkpoints[-1]["p50_ms"]
        ratio = f"{last / first:.2f}x" if first else "-"
        lines.append(f"{workload.name:<12} last / first p50: {ratio}; failed remembers: {workload.failures}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.local_workload", description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000, help="notes over 100 scopes (default 10,000)")
    parser.add_argument("--one-scope", type=int, default=2_000, help="notes to one scope (default 2,000)")
    args = parser.parse_args(argv)
    runs = measure(args.notes, args.one_scope)
    print(report(runs))
    print(json.dumps([workload.__dict__ for workload in runs], indent=1))


if __name__ == "__main__":
    main()
