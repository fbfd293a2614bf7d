"""The report: the targets' verdicts, the per-turn table, docs/benchmarks.json (merged) and docs/benchmarks.md
(rewritten each run, with the command and the machine it ran on).
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import UTC, datetime
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from bench.cold_start import ColdStart
from bench.flush import FlushResult, flush_report
from bench.operations import Result

# The targets the service promises.
# context: its two reads and its record; remember: the position, the note's transaction, the similar check's read
MAX_REQUESTS = {"context": 3, "remember": 3}
MAX_TOOLS_IMPORT_MS = 300.0
MAX_CONTEXT_RATIO = 1.1  # against its floor: the same three requests as bare boto3 calls
# The flush's budget (agent_memory.memory.flush.FLUSH_BUDGET_S): the chat backend waits at most this long.
MAX_FLUSH_P99_MS = 5_000.0


def verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def target_lines(
    results: dict[str, Result], imports: dict[str, ColdStart], flushes: dict[str, FlushResult]
) -> list[str]:
    """One line per target, PASS or FAIL first."""
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


def report(
    results: dict[str, Result], imports: dict[str, ColdStart], flushes: dict[str, FlushResult], calls: int
) -> str:
    header = (
        f"{'operation':<14}{'requests':<40}{'p50 ms':>9}{'p99 ms':>9}{'floor p50':>11}{'ratio':>8}{'ours ms':>9}"
        f"  {'floor requests':<16}{'import ms':>10}{'units w+r':>11}"
    )
    rows = [header, "-" * len(header)]
    for result in results.values():
        requests = f"{len(result.requests)} {'+'.join(result.requests)}" + (" *" if result.varying_requests else "")
        floor = f"{len(result.floor_requests)} {'+'.join(result.floor_requests)}"
        if sorted(result.floor_requests) == sorted(result.requests):
            floor = "the same"  # in any order: the context's two reads run at once
        rows.append(
            f"{result.name:<14}{requests:<40}{result.p50_ms:>9.3f}{result.p99_ms:>9.3f}{result.floor_p50_ms:>11.3f}"
            f"{result.ratio:>7.2f}x{result.p50_ms - result.floor_p50_ms:>9.3f}  {floor:<16}{result.import_ms:>10.0f}"
            f"{result.units!s:>11}"
        )
    notes = [
        f"latency: {calls} in-process handler calls per operation on moto; floor: the bare boto3 calls, same run;",
        "ours: p50 minus floor p50, what our code adds per call (moto's own cost is most of every floor)",
        "import: median cold import of the serving function's handler module in a fresh interpreter,",
        "then building the service there, which the first invocation pays: "
        + ", ".join(f"{name} {cold.import_ms:.0f} + {cold.service_ms:.0f} ms" for name, cold in imports.items()),
        "units w+r: DynamoDB write and read units of one call, from the sizes of the items its requests touch",
        "(bench/capacity.py): 1 write unit per started KB of each item written, twice in a transaction; 1 read unit",
        "per started 4 KB of the whole items a read reads, whatever its projection, half when eventually consistent",
        "floors' units: "
        + ", ".join(f"{result.name} {result.floor_units}" for result in results.values())
        + " (a floor that differs makes other requests than its call)",
        "records not written: "
        + ", ".join(f"{result.name} {result.unrecorded}" for result in results.values() if result.name == "context")
        + f" of {calls} turns (answers whose `degraded` says `injection_record`: the turn's record failed, counted)",
        "update_memory: call i writes version i + 1, so past version 100 a call also reads the length of the version",
        "that leaves the kept history (GetItem, for the characters quota) and deletes it: below, one request",
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
    *,
    meta_key: str = "_meta",
) -> None:
    """Merge into the existing file: other benches add their own operations to it. A run of one area keeps
    its ``meta`` under its own ``meta_key``, so that ``_meta`` still describes the last whole run."""
    data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    data.update({name: result.as_json() for name, result in results.items()})
    data.update({name: result.as_json() for name, result in flushes.items()})
    data.update(more or {})
    data.pop(meta_key, None)
    data[meta_key] = meta  # last, after any key this run added
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def write_report(sections: dict[str, str], path: Path, meta: dict[str, Any], argv: list[str] | None) -> None:
    """docs/benchmarks.md: every figure of this run, with the command and the machine, for a newcomer to redo."""
    arguments = " ".join(argv if argv is not None else sys.argv[1:])
    command = f"make bench ARGS={arguments!r}" if arguments else "make bench"
    lines = [
        "# Benchmarks",
        "",
        "Every figure the service promises, from one run of the command below; `make bench` rewrites this file",
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


def write_section(title: str, preamble: str, text: str, report_path: Path) -> None:
    """One section of docs/benchmarks.md written by a bench run alone (``## title``, a line on how it ran,
    then the figures), replacing the section of an earlier run with the same title."""
    section = [title, "", preamble, "", "```text", text.rstrip(), "```"]
    lines = report_path.read_text().splitlines() if report_path.exists() else ["# Benchmarks"]
    if title in lines:
        start = lines.index(title)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines[start:end] = [*section, ""] if end < len(lines) else section
    else:
        lines += ["", *section]
    report_path.write_text("\n".join(lines) + "\n")
