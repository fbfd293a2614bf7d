"""Import throughput through the route on the local stack: notes a second written by ``POST
/v1/platform/users/{user_id}/import``, in pages of 500 (the most a request carries), spread over the past year.

Each page is a ``notes/1`` request of 500 distinct notes (no near-duplicate is skipped) two hours apart,
sent by one client after the other, as the migration command sends them; the figures are the pages' wall time
(the stack's HTTP, the text pipeline, two DynamoDB requests and the note's outcome item per note, on embedded
moto), the notes a second, and a repeat of the first page (its receipt answered, nothing written). Without an
embedding model: with ``local:minilm`` each note is embedded too.

    python -m bench.importing --pages 4 [--record]   # --record: into docs/benchmarks.md and .json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.local_load import local_stack, request
from bench.report import write_section
from bench.runner import REPORT, RESULTS, configure, fact_text

TITLE = "Import through the route on the local stack"
PAGE = 500


def page_body(number: int) -> dict[str, Any]:
    start = datetime(2025, 6, 1, tzinfo=UTC) + timedelta(hours=2 * PAGE * number)
    notes = [
        {
            "text": f"{fact_text(number * PAGE + n)} (import {number}.{n})",
            "created_at": (start + timedelta(hours=2 * n)).isoformat(),
        }
        for n in range(PAGE)
    ]
    return {"import_id": f"bench-{number}", "format": "notes/1", "notes": notes}


def measure(pages: int = 4) -> dict[str, Any]:
    """``pages`` imports of 500 notes into one user's memory, then the first again."""
    with local_stack() as (port, _):
        path = "/v1/platform/users/u-import-bench/import"
        seconds: list[float] = []
        written = calls = 0
        for number in range(pages):
            began = time.perf_counter()
            status, body = 503, dict[str, Any]()
            while status == 503 and body.get("error", {}).get("code", "import_unfinished") == "import_unfinished":
                status, body = request(port, "POST", path, page_body(number))  # a 503: the same request continues
                calls += 1
            seconds.append(time.perf_counter() - began)
            if status != 200:
                raise RuntimeError(f"the import answered {status}: {body}")
            written += len(body["notes"])
        usage = "/v1/platform/users/u-import-bench/usage"
        before = request(port, "GET", usage)[1]
        began = time.perf_counter()
        status, again = request(port, "POST", path, page_body(0))
        repeat_s = time.perf_counter() - began
        if status != 200 or request(port, "GET", usage)[1] != before:
            raise RuntimeError(f"the same import_id again wrote something, or answered {status}: {again}")
    return {
        "pages": pages,
        "notes_written": written,
        "calls": calls,
        "page_s_median": round(statistics.median(seconds), 2),
        "notes_per_s": round(written / sum(seconds), 1),
        "repeat_ms": round(repeat_s * 1000, 1),
    }


def report(figures: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"{figures['pages']} pages of {PAGE} notes (notes/1, one user, dated over the past year), one after the "
            "other through POST /v1/platform/users/{user_id}/import",
            "on python -m local.server (embedded moto, no embedding model); a call stops after 20 s and the same "
            "request continues it.",
            f"notes written                    {figures['notes_written']:,}",
            f"requests                         {figures['calls']} (each 503 import_unfinished sent again)",
            f"a page of 500, median            {figures['page_s_median']} s",
            f"throughput                       {figures['notes_per_s']} notes a second",
            f"the first page again             {figures['repeat_ms']} ms (its receipt; nothing written)",
        ]
    )


def record(pages: int) -> list[str]:
    """``--record``: the section into docs/benchmarks.md and the figures into docs/benchmarks.json."""
    figures = measure(pages)
    text = report(figures)
    write_section(f"## {TITLE}", f"`python -m bench.importing --pages {pages} --record`", text, REPORT)
    stored = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    RESULTS.write_text(json.dumps({**stored, "import": figures}, indent=2) + "\n")
    return [text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.importing", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pages", type=int, default=4, help="pages of 500 notes (default 4)")
    parser.add_argument("--record", action="store_true", help="into docs/benchmarks.md and docs/benchmarks.json")
    args = parser.parse_args(argv)
    configure()
    print("\n".join(record(args.pages) if args.record else [report(measure(args.pages))]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
