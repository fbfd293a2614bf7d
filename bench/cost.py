"""What 1,000 active users cost a month in AWS, from the bench's measured figures (docs/deploying.md).

The measured part: the DynamoDB requests of each operation (``make bench``'s figures in docs/benchmarks.json:
context, the flush, keyword recall, consolidation's requests per note), the units remember and update_memory
consume per call (``bench.capacity``, from their items' sizes) and the chat model's tokens per fold
(``bench.fold_tokens``: the service's own fold against the scripted model, counted without its sleeps). The
assumed part, named below: one active user's traffic in a month, the size of what each other request moves,
how long each function runs, and the list prices. Free tiers are left out, so the table is what a stack pays
once they are used up.

    python -m bench.cost     # the table, as Markdown, from docs/benchmarks.json
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import fold_tokens

TITLE = "What 1,000 active users cost a month (docs/deploying.md)"
RESULTS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.json"

# One active user's month (the fold and flush counts are bench.fold_tokens', which prices the model).
TURNS = 600  # 20 turns a day: one /v1/context each
REMEMBERS = 90  # 3 remember calls a day
RECALLS = 90  # 3 recall calls a day
UPDATES = 10  # update_memory calls by the agent
FLUSHES = fold_tokens.FLUSHES_PER_MONTH
FOLDS = fold_tokens.FOLDS_PER_MONTH
# Request units: a 4 KB read unit, a 1 KB write unit. The turn reads a document of fold_tokens'
# FOLD_DOCUMENT_CHARS (10 KB: 3 read units) and a day's notes (1 unit): 2 units a read request on average.
# Keyword recall reads a scope's newest notes (300 notes of 300 bytes: 23 units) and the hits (8 units).
# A write is a note or a record under 1 KB, twice for a transaction's items: 2 units a write request; a fold
# saves a 10 KB version in a transaction (20 units) besides its per-note requests.
TURN_READ_UNITS_PER_REQUEST = 2
RECALL_READ_UNITS = 31
WRITE_UNITS_PER_REQUEST = 2
FOLD_VERSION_WRITE_UNITS = 20
TURN_RECORD_WRITES = 1  # the injection record: the turn's PutItem, one of its measured requests and a write
STORED_GB_PER_USER = 0.0015  # 100 versions of a 10 KB document (the history kept) and a year of notes
# Lambda: 512 MB (template.yaml's Globals), billed milliseconds an invocation. The flush and the fold wait for
# the model: the flush on a one-second model (bench.flush's), the fold on fold_tokens' latency for its output.
MEMORY_GB = 0.5
ARCHITECTURE = "arm64"  # template.yaml's default Architecture: Graviton's GB-second price below
TURN_MS = 60
TOOL_MS = 80
FLUSH_MS = 1_100
INDEXER_MS = 100
LOG_KB_PER_INVOCATION = 1.5  # START, END and REPORT lines, one structured access line, the metrics
ALARMS = 5  # template.yaml's CloudWatch alarms; one more with a notes index
EMBEDDING_TOKENS = 60  # a note, or a recall's query, embedded (with the notes index)
# POST /v1/extract, when the backend calls it (at a session's end): one a day, on the session's transcript, each
# proposing a few facts (10 at most, each at most 300 characters). Its own line: a backend may not call it.
EXTRACTIONS = 30
EXTRACTION_INPUT_TOKENS = 2_000  # the system prompt, the tool's schema and the numbered messages
EXTRACTION_OUTPUT_TOKENS = 250  # a save_facts call of about five facts
EXTRACTION_MS = 1_100  # waiting for the model (as the flush), then a few notes written
DOMAIN_HOURS = 730  # NotesIndex=create's default domain: one t3.small.search node, 10 GiB of gp3
DOMAIN_GB = 10

# List prices in USD, us-east-1, on-demand, as published by AWS in 2025 (DynamoDB's after its November 2024
# cut). Not re-checked on the day of a run: change them here. The chat model's are bench.fold_tokens'.
CHAT_MODEL = fold_tokens.CHAT_MODEL
CHAT_PRICES = (fold_tokens.PRICE_INPUT_PER_M, fold_tokens.PRICE_OUTPUT_PER_M)
PRICE = {
    "api_per_m": 1.00,  # HTTP API requests
    "lambda_per_m": 0.20,  # Lambda requests
    "lambda_gb_s": 0.0000133334,  # arm64 (x86_64: 0.0000166667)
    "dynamodb_write_per_m": 0.625,  # on-demand write request units
    "dynamodb_read_per_m": 0.125,  # on-demand read request units
    "dynamodb_gb_month": 0.25,
    "dynamodb_pitr_gb_month": 0.20,  # point-in-time recovery, on in template.yaml
    "logs_gb": 0.50,  # CloudWatch Logs ingestion
    "xray_per_m": 5.00,  # traces recorded (Tracing: Active; every invocation counted)
    "alarm_month": 0.10,
    "embedding_per_m": 0.02,  # Amazon Titan Text Embeddings V2
    "domain_hour": 0.036,  # t3.small.search
    "domain_gb_month": 0.122,  # gp3
}


@dataclass(frozen=True)
class Measured:
    """The figures this table takes from a bench run."""

    context_requests: int
    remember_requests: int
    update_requests: int
    remember_units: tuple[float, float]  # write and read units a call consumes (bench/capacity.py)
    update_units: tuple[float, float]
    flush_requests: int
    recall_requests: int
    consolidation_requests_per_note: float
    fold_input_tokens: int
    fold_output_tokens: int
    model_usd_per_user: float

    @classmethod
    def load(cls, results: Path = RESULTS) -> Measured:
        figures: dict[str, Any] = json.loads(results.read_text())
        folds = fold_tokens.measure(scale=0)  # tokens only: the scripted model does not sleep
        fold = next(
            f
            for f in folds
            if (f.chars, f.notes, f.mode) == (fold_tokens.FOLD_DOCUMENT_CHARS, fold_tokens.FOLD_NOTES, "edits")
        )
        return cls(
            context_requests=figures["context"]["requests"],
            remember_requests=figures["remember"]["requests"],
            update_requests=figures["update_memory"]["requests"],
            remember_units=(figures["remember"]["write_units"], figures["remember"]["read_units"]),
            update_units=(figures["update_memory"]["write_units"], figures["update_memory"]["read_units"]),
            flush_requests=figures["flush_model_0ms"]["requests"],
            recall_requests=figures["recall_keyword_1000"]["requests"],
            consolidation_requests_per_note=figures["consolidation_50_groups_2s_model"]["requests_per_note"],
            fold_input_tokens=fold.input_tokens,
            fold_output_tokens=fold.output_tokens,
            model_usd_per_user=fold_tokens.cost_per_user_month(folds, "edits", CHAT_PRICES),
        )


@dataclass(frozen=True)
class Line:
    item: str
    quantity: str
    without_index: float
    with_domain: float


def lines(m: Measured, users: int = 1_000) -> list[Line]:
    """The month's bill for ``users`` active users, item by item, without a notes index and with the domain."""
    fold_s = fold_tokens.LATENCY_BASE_S + fold_tokens.LATENCY_PER_TOKEN_S * m.fold_output_tokens
    api = users * (TURNS + REMEMBERS + RECALLS + UPDATES)
    writes = REMEMBERS + UPDATES + FLUSHES + FOLDS  # each one also an indexer invocation with an index
    invocations = api + users * (FLUSHES + FOLDS)
    indexed = users * writes
    busy_ms = TURNS * TURN_MS + (REMEMBERS + RECALLS + UPDATES) * TOOL_MS + FLUSHES * FLUSH_MS + FOLDS * fold_s * 1000
    gb_s = MEMORY_GB * users * busy_ms / 1000
    indexer_gb_s = MEMORY_GB * indexed * INDEXER_MS / 1000
    turn_reads = TURNS * (m.context_requests - TURN_RECORD_WRITES) * TURN_READ_UNITS_PER_REQUEST
    tool_writes = REMEMBERS * m.remember_units[0] + UPDATES * m.update_units[0]  # measured units, not requests
    tool_reads = REMEMBERS * m.remember_units[1] + UPDATES * m.update_units[1]
    reads = users * (turn_reads + RECALLS * RECALL_READ_UNITS + tool_reads)
    write_requests = (
        TURNS * TURN_RECORD_WRITES
        + FLUSHES * m.flush_requests
        + FOLDS * fold_tokens.FOLD_NOTES * m.consolidation_requests_per_note
    )
    write_units = users * (write_requests * WRITE_UNITS_PER_REQUEST + tool_writes + FOLDS * FOLD_VERSION_WRITE_UNITS)
    logs_gb = invocations * LOG_KB_PER_INVOCATION / 1024 / 1024
    index_logs_gb = indexed * LOG_KB_PER_INVOCATION / 1024 / 1024
    embedded = users * (REMEMBERS + FLUSHES + RECALLS) * EMBEDDING_TOKENS
    tokens_in = users * (FOLDS * m.fold_input_tokens + FLUSHES * fold_tokens.FLUSH_INPUT_TOKENS)
    tokens_out = users * (FOLDS * m.fold_output_tokens + FLUSHES * fold_tokens.FLUSH_OUTPUT_TOKENS)
    extraction_in, extraction_out = (
        users * EXTRACTIONS * EXTRACTION_INPUT_TOKENS,
        users * EXTRACTIONS * EXTRACTION_OUTPUT_TOKENS,
    )
    p = PRICE

    def both(item: str, quantity: str, usd: float, more: float = 0.0) -> Line:
        return Line(item, quantity, usd, usd + more)

    return [
        both("HTTP API", f"{api / 1e6:.2f} M requests", api / 1e6 * p["api_per_m"]),
        both(
            "Lambda requests",
            f"{invocations / 1e6:.2f} M (+{indexed / 1e6:.2f} M indexer)",
            invocations / 1e6 * p["lambda_per_m"],
            indexed / 1e6 * p["lambda_per_m"],
        ),
        both(
            "Lambda duration",
            f"{gb_s:,.0f} GB-s (+{indexer_gb_s:,.0f})",
            gb_s * p["lambda_gb_s"],
            indexer_gb_s * p["lambda_gb_s"],
        ),
        both(
            "DynamoDB on-demand",
            f"{reads / 1e6:.2f} M read, {write_units / 1e6:.2f} M write units",
            reads / 1e6 * p["dynamodb_read_per_m"] + write_units / 1e6 * p["dynamodb_write_per_m"],
        ),
        both(
            "DynamoDB storage and its point-in-time recovery",
            f"{users * STORED_GB_PER_USER:.1f} GB",
            users * STORED_GB_PER_USER * (p["dynamodb_gb_month"] + p["dynamodb_pitr_gb_month"]),
        ),
        both(
            f"Chat model ({CHAT_MODEL})",
            f"{tokens_in / 1e6:.0f} M in, {tokens_out / 1e6:.1f} M out tokens",
            users * m.model_usd_per_user,
        ),
        both(
            f"Extraction at each session's end ({CHAT_MODEL}, HTTP API, Lambda)",
            f"{users * EXTRACTIONS / 1e3:.0f} k calls: {extraction_in / 1e6:.0f} M in, "
            f"{extraction_out / 1e6:.1f} M out tokens",
            extraction_in / 1e6 * CHAT_PRICES[0]
            + extraction_out / 1e6 * CHAT_PRICES[1]
            + users * EXTRACTIONS / 1e6 * (p["api_per_m"] + p["lambda_per_m"])
            + MEMORY_GB * users * EXTRACTIONS * EXTRACTION_MS / 1000 * p["lambda_gb_s"],
        ),
        Line("Embeddings (Titan V2)", f"{embedded / 1e6:.1f} M tokens", 0.0, embedded / 1e6 * p["embedding_per_m"]),
        both(
            "CloudWatch Logs",
            f"{logs_gb:.2f} GB (+{index_logs_gb:.2f})",
            logs_gb * p["logs_gb"],
            index_logs_gb * p["logs_gb"],
        ),
        both(
            "X-Ray traces",
            f"{invocations / 1e6:.2f} M (+{indexed / 1e6:.2f} M)",
            invocations / 1e6 * p["xray_per_m"],
            indexed / 1e6 * p["xray_per_m"],
        ),
        both("CloudWatch alarms", f"{ALARMS} (+1)", ALARMS * p["alarm_month"], p["alarm_month"]),
        Line(
            "OpenSearch domain",
            f"{DOMAIN_HOURS} h of t3.small.search, {DOMAIN_GB} GiB gp3",
            0.0,
            DOMAIN_HOURS * p["domain_hour"] + DOMAIN_GB * p["domain_gb_month"],
        ),
    ]


def table(m: Measured, users: int = 1_000) -> str:
    """The Markdown table docs/deploying.md shows, with its total."""
    rows = lines(m, users)
    out = [
        f"| per {users:,} active users, a month | quantity | without a notes index | with `NotesIndex=create` |",
        "|---|---|--:|--:|",
    ]
    out += [f"| {r.item} | {r.quantity} | ${r.without_index:,.2f} | ${r.with_domain:,.2f} |" for r in rows]
    total = sum(r.without_index for r in rows), sum(r.with_domain for r in rows)
    out.append(f"| **total** | | **${total[0]:,.2f}** | **${total[1]:,.2f}** |")
    return "\n".join(out)


def main() -> None:
    print(table(Measured.load()))


if __name__ == "__main__":
    main()
