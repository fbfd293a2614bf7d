"""Every figure the service promises (``make bench``, ``python -m bench.run``): area by area, into one report.

The areas, each a module on the shared runner (``bench.runner``): the per-turn operations against their
floor (``operations``), the flush (``flush``), cold import (``cold_start``), what grows with the data
(``scale``: ``consolidation``, ``load_older``, ``keyword_recall``) and, on a throwaway OpenSearch node,
``hybrid``; redaction's detectors and its corpus (``redaction``). Every figure goes to docs/benchmarks.json
(merged run to run) and the whole report to docs/benchmarks.md (rewritten each run, with the command and the
machine it ran on).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bench import (
    consolidation_scale,
    context_reads,
    cost,
    extraction,
    fold_tokens,
    hybrid,
    importing,
    local_load,
    local_workload,
    people,
    recall_knobs,
    recall_locomo,
    recall_quality,
    redaction,
    scale,
    vector_quality,
    vector_recall,
)
from bench.cold_start import ColdStart, cold_starts
from bench.flush import FLUSH_FUNCTION, FlushResult, flush_variants, measure_flush, run_flush
from bench.operations import OPERATIONS, Operation, Result, measure, run_operation
from bench.report import machine, report, target_lines, write_report, write_results, write_section
from bench.runner import (
    REPORT,
    RESULTS,
    ROOT,
    LambdaContext,
    RequestCounter,
    configure,
    create_tables,
    document_text,
    fact_text,
    fresh_moto,
    instrumented_client,
    log,
)

# The names other modules used to import from here stay importable from here.
__all__ = [
    "FLUSH_FUNCTION",
    "OPERATIONS",
    "ColdStart",
    "FlushResult",
    "LambdaContext",
    "Operation",
    "RequestCounter",
    "Result",
    "cold_starts",
    "create_tables",
    "document_text",
    "fact_text",
    "fresh_moto",
    "instrumented_client",
    "main",
    "measure",
    "measure_flush",
    "run_flush",
    "run_operation",
    "target_lines",
]


def _recall_calls(text: str) -> tuple[tuple[int, int, int], ...]:
    sizes = [tuple(int(part) for part in size.split(":")) for size in text.split(",")]
    if any(len(size) != 3 for size in sizes):
        raise argparse.ArgumentTypeError("expected NOTES:WARMUP:CALLS,...")
    return tuple((size[0], size[1], size[2]) for size in sizes)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per operation (default 1000)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed calls first (default 50)")
    parser.add_argument(
        "--flush-calls", type=int, default=500, help="timed flushes with the 0 ms model, and duplicates (default 500)"
    )
    parser.add_argument(
        "--flush-slow-calls", type=int, default=30, help="timed flushes with the 1 s model (default 30)"
    )
    parser.add_argument(
        "--flush-slow-warmup", type=int, default=3, help="untimed flushes with the 1 s model first (default 3)"
    )
    parser.add_argument(
        "--consolidation-model-s", type=float, default=2.0, help="the consolidation's fake model latency (default 2)"
    )
    parser.add_argument(
        "--load-older-passes", type=int, default=3, help="timed passes through every 'Load older' page (default 3)"
    )
    parser.add_argument(
        "--recall-calls",
        type=_recall_calls,
        default=scale.Options().recall_calls,
        help="recall sizes as NOTES:WARMUP:CALLS,... (default 100:3:50,1000:2:20,2000:1:8,10000:1:5)",
    )
    parser.add_argument(
        "--hybrid-notes", type=int, default=10_000, help="notes indexed on the real node (default 10000)"
    )
    parser.add_argument("--hybrid-scopes", type=int, default=100, help="scopes they are spread over (default 100)")
    parser.add_argument("--hybrid-calls", type=int, default=300, help="timed hybrid recalls (default 300)")
    parser.add_argument("--import-runs", type=int, default=7, help="fresh interpreters per import median (default 7)")
    parser.add_argument("--fanout-scopes", type=int, default=200, help="consolidation fan-out scopes (target: 2000)")
    parser.add_argument(
        "--people-notes", type=int, default=10_000, help="notes exported and erased (default 10000; make bench-people)"
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help="the JSON file to merge into")
    parser.add_argument("--report", type=Path, default=REPORT, help="the Markdown report to write")
    parser.add_argument("--profile", choices=list(OPERATIONS), help="also cProfile one operation's handler")
    parser.add_argument(
        "--per-turn", action="store_true", help=f"only the section {PER_TURN!r}, written into the report alone"
    )
    return parser.parse_args(argv)


PER_TURN = "Requests, latency and cold start of the per-turn operations; the flush"


def per_turn(args: argparse.Namespace, started: dict[str, Any], argv: list[str] | None) -> int:
    """The per-turn operations and the flush alone (a few minutes, against the whole bench's hour): their
    section of docs/benchmarks.md replaced, their figures merged into docs/benchmarks.json."""
    imports = cold_starts(args.import_runs)
    results = {name: run_operation(name, args, imports) for name in OPERATIONS}
    flushes = {variant.name: run_flush(variant) for variant in flush_variants(args)}
    text = report(results, imports, flushes, args.calls)
    print(text)
    command = " ".join(["python -m bench.run", *(argv if argv is not None else sys.argv[1:])])
    preamble = (
        f"`{command}` at {started['date']}, load average {started['load_average'][0]:.1f} when it started, "
        f"{started['cpu_count']} CPUs shared with other work (`make bench` runs it too)."
    )
    write_section(f"## {PER_TURN}", preamble, text, args.report)
    write_results(
        results, flushes, args.output, {**started, "command": command, "calls": args.calls}, meta_key="_meta_per_turn"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """A report, not a gate: the exit code is 0 even when a target fails."""
    args = parse_args(argv)
    configure()
    started = machine()  # its date and load average: when the run began
    if args.per_turn:
        return per_turn(args, started, argv)
    imports = cold_starts(args.import_runs)
    results = {name: run_operation(name, args, imports) for name in OPERATIONS}
    flushes = {variant.name: run_flush(variant) for variant in flush_variants(args)}
    options = scale.Options(
        consolidation_model_s=args.consolidation_model_s,
        load_older_passes=args.load_older_passes,
        recall_calls=args.recall_calls,
    )
    toolkit = scale.Toolkit(moto=fresh_moto, fact_text=fact_text, log=log)
    scaled = scale.measure_all(toolkit, options)
    on_node = hybrid.measure_hybrid(
        toolkit, hybrid.Options(notes=args.hybrid_notes, scopes=args.hybrid_scopes, calls=args.hybrid_calls)
    )
    fanned = consolidation_scale.measure(args.fanout_scopes, concurrency=50)  # bench/consolidation_scale.py
    folds = fold_tokens.measure()  # bench/fold_tokens.py: edits against the rewrite, about 3 minutes of model sleeps
    controls = people.measure_people(toolkit, notes=args.people_notes)  # export, erase, the injection record
    extracted = extraction.measure()  # bench/extraction.py: POST /v1/extract around a 1-second model, about 70 s
    sections = {
        "Consolidation fan-out over SQS and the planner's memory": "\n".join(consolidation_scale.report(fanned)),
        PER_TURN: report(results, imports, flushes, args.calls),
        "Extraction around a 1-second model": extraction.report(extracted),
        "Consolidation, Load older and the keyword fallback's growth": scale.report(scaled),
        "Consolidation by cited edits against the rewrite: tokens and time per fold": fold_tokens.report(folds),
        "Hybrid recall and the indexer on a real OpenSearch node": "\n".join(hybrid.report(on_node)),
        "People's control: export, erase and the injection record": people.report(controls),
        "200 concurrent clients against the local stack": local_load.report(local_load.measure_on_local_stack()),
        "The local stack under a real workload": local_workload.report(local_workload.measure()),
        "/v1/context's two reads at once": "\n".join(context_reads.report(context_reads.measure())),
        redaction.TITLE.removeprefix("## "): redaction.report(redaction.measure()),  # bench/redaction.py
    }
    imported = importing.measure()  # bench/importing.py: notes a second through the import route, local stack
    sections[importing.TITLE] = importing.report(imported)
    quality = recall_quality.measure_quality(log, on_node=True), recall_quality.measure_latency(log)
    sections["Recall quality (dev set) and hybrid recall without OpenSearch"] = "\n".join(
        recall_quality.report(*quality)
    )
    locomo = recall_locomo.measure(log)  # bench/recall_locomo.py: skipped without the two conversations
    sections["Recall on two real conversations (LoCoMo dev)"] = "\n".join(
        recall_locomo.report(locomo) + (["", *recall_knobs.report(recall_knobs.measure(locomo, log))] if locomo else [])
    )
    vectors = vector_recall.measure(log)  # bench/vector_recall.py: the table's vector index against the table's path
    sections["Recall through the table's vector index: latency, requests and read units"] = "\n".join(
        vector_recall.report(vectors)
    )
    sections["Recall quality through the table's vector index (both dev sets)"] = "\n".join(
        vector_quality.report(vector_quality.measure(log))
    )
    print("\n\n".join(sections.values()))
    meta = {
        **started,
        "calls": args.calls,
        "warmup": args.warmup,
        "flush_calls": args.flush_calls,
        "flush_slow_calls": args.flush_slow_calls,
        "flush_slow_warmup": args.flush_slow_warmup,
        "consolidation_model_s": args.consolidation_model_s,
        "load_older_passes": args.load_older_passes,
        "recall_calls": [list(size) for size in args.recall_calls],
        "hybrid_calls": args.hybrid_calls,
    }
    more = {**scaled.as_json(), **(on_node.as_json() if isinstance(on_node, hybrid.HybridResult) else {})}
    more.update(controls.as_json())
    more.update(quality[1].as_json())  # bench/recall_latency.py
    more.update(vectors.as_json())
    more.update(fold_tokens.as_json(folds))
    more.update(extracted.as_json())
    more["import"] = imported
    write_results(results, flushes, args.output, meta, more)
    sections[cost.TITLE] = cost.table(cost.Measured.load(args.output))  # from the figures just written
    write_report(sections, args.report, meta, argv)
    for path in (args.output, args.report):
        log(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
