"""Redaction's figures (``python -m bench.redaction --record``; also a section of ``make bench``).

- Every detector's time on each 200 KB input of tests/support/redos_inputs.py (built to make a backtracking pattern
  slow), the best of five runs, and the whole table's (``redact`` with email and phone on).
- The corpus of tests/support/secrets_samples.py on every write path (remember, update_memory, the dashboard's PUT,
  the flush, a consolidation's and a compression's result, a restore, a loaded export;
  tests/support/redaction_paths.py): how many secrets survive, as written and with each invisible and separator
  character inserted, and how many benign texts change (tests/support/benign_samples.py's too).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

RUNS = 5


def _best_ms(work: Callable[[], object], runs: int = RUNS) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best * 1000


@dataclass
class RedactionResult:
    # detector label -> (worst input, its best-of-five ms)
    detectors: dict[str, tuple[str, float]] = field(default_factory=dict)
    whole: dict[str, float] = field(default_factory=dict)  # input -> redact() ms
    paths: dict[str, dict[str, Any]] = field(default_factory=dict)  # write path -> corpus figures

    def as_json(self) -> dict[str, Any]:
        return {
            "redaction": {
                "detector_worst_ms": {
                    label: {"input": name, "ms": round(ms, 2)} for label, (name, ms) in self.detectors.items()
                },
                "redact_ms": {name: round(ms, 2) for name, ms in self.whole.items()},
                "paths": self.paths,
            }
        }


def _spans(detector: Any, text: str) -> None:
    list(detector.spans(text))


def measure_detectors(result: RedactionResult, runs: int = RUNS) -> None:
    from agent_memory.domain.redaction import DETECTORS, redact
    from tests.support.redos_inputs import ADVERSARIAL

    every = frozenset({"email", "phone"})
    for name, text in ADVERSARIAL.items():
        for index, detector in enumerate(DETECTORS):
            label = f"{index:2d} {detector.kind}"
            ms = _best_ms(partial(_spans, detector, text), runs)
            if ms > result.detectors.get(label, ("", -1.0))[1]:
                result.detectors[label] = (name, ms)
        result.whole[name] = _best_ms(partial(redact, text, extra=every), runs)


def report(result: RedactionResult) -> str:
    from agent_memory.domain.redaction import DETECTORS

    lines = [
        f"Each detector on {len(result.whole)} adversarial inputs of 200,000 characters "
        f"(tests/support/redos_inputs.py), best of {RUNS} runs; its slowest input:",
        "",
        "| detector | pattern starts with | slowest input | ms |",
        "|---|---|---|---|",
    ]
    for label, (name, ms) in result.detectors.items():
        pattern = DETECTORS[int(label.split()[0])].pattern.pattern[:28].replace("|", "\\|")
        lines.append(f"| {label} | `{pattern}` | {name} | {ms:.1f} |")
    worst = max(result.whole.items(), key=lambda item: item[1])
    lines += [
        "",
        f"The whole table (redact, email and phone on): at most {worst[1]:.1f} ms ({worst[0]}); median "
        f"{sorted(result.whole.values())[len(result.whole) // 2]:.1f} ms.",
    ]
    if result.paths:
        lines += ["", *paths_report(result.paths)]
    return "\n".join(lines)


def paths_report(paths: dict[str, dict[str, Any]]) -> list[str]:
    first = next(iter(paths.values()))
    ways = list(first["surviving"])
    lines = [
        f"The corpus ({first['secrets']} secrets, as written and with each character inserted inside them or, "
        f"`separator`, at their white space; {first['benign']} benign look-alikes; {first['technical']} benign "
        "technical texts: identifiers, paths, code, URLs without credentials) on every write path. Secrets "
        "surviving:",
        "",
        f"| write path | {' | '.join(ways)} | benign changed | technical changed |",
        f"|---|{'---|' * len(ways)}---|---|",
    ]
    for path, figures in paths.items():
        surviving = " | ".join(str(figures["surviving"][way]) for way in ways)
        lines.append(
            f"| {path} | {surviving} | {figures['benign_changed']} of {figures['benign']} | "
            f"{figures['technical_changed']} of {figures['technical']} "
            f"({100 * figures['technical_changed'] / figures['technical']:.1f}%) |"
        )
    return lines


def measure(runs: int = RUNS, *, paths: bool = True) -> RedactionResult:
    result = RedactionResult()
    measure_detectors(result, runs)
    if paths:
        result.paths = measure_paths()
    return result


def measure_paths() -> dict[str, dict[str, Any]]:
    """tests/support/redaction_paths.py on each write path, each in a fresh moto. A night folds one group at a time: the
    in-process moto is not thread-safe (two groups' transactions at once failed one, "dictionary changed size
    during iteration", in 3 of 4 runs of the 9 nights here), and what is measured is the text, not the fan-out."""
    from agent_memory import bootstrap
    from bench.runner import fresh_moto, log, quiet_powertools, settings_environment
    from tests.support.redaction_paths import PATHS, measure

    figures = {}
    with settings_environment(MEMORY_CONSOLIDATION_CONCURRENCY="1"):
        for path in PATHS:
            log(f"redaction: the corpus through {path}")
            bootstrap.reset()
            with quiet_powertools(), fresh_moto() as (_counter, client):
                figures[path] = measure(path, client)
            bootstrap.reset()
    return figures


def main(argv: list[str] | None = None) -> int:
    from bench.report import machine, write_section
    from bench.runner import REPORT, RESULTS, configure, log

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs per detector and input, the best kept ({RUNS})")
    parser.add_argument("--record", action="store_true", help="write into docs/benchmarks.json and docs/benchmarks.md")
    args = parser.parse_args(argv)
    configure()
    started = machine()
    result = measure(args.runs)
    text = report(result)
    print(text)
    if args.record:
        data: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        data.update(result.as_json())
        data["redaction"]["date"] = started["date"]
        data["redaction"]["load_average"] = started["load_average"][0]
        RESULTS.write_text(json.dumps(data, indent=2) + "\n")
        write_section(
            TITLE,
            f"Run from {started['date']} with `nice`, load average {started['load_average'][0]:.1f} when it "
            f"started, {started['cpu_count']} CPUs shared with other work; `python -m bench.redaction --record` "
            "(`make bench` runs it too).",
            text,
            REPORT,
        )
        log(f"wrote the redaction figures into {RESULTS.name} and {REPORT.name}")
    return 0


TITLE = "## Redaction: detectors on adversarial inputs, the corpus on every write path"

if __name__ == "__main__":
    sys.exit(main())
