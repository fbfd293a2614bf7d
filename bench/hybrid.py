"""Figures on a real OpenSearch node: notes per second through the stream indexer, and hybrid recall's latency.

Called by ``bench.run`` after the other figures. It starts a throwaway node (``local.opensearch``, as the
test tier does; Java and, once, Maven), writes ``Options.notes`` notes spread over ``Options.scopes``
personal scopes into a moto table, and then:

- **indexing**: the table's stream, read by ``make run``'s stream mapping (``local/stream_mapping.py``, batches
  of 100 as the template's mapping), goes through IndexerFunction's handler: a batch's texts embedded in
  one call by the OpenAI-compatible provider over HTTP (``tests/support/fake_openai.py``'s ``/embeddings``, a fake
  model, so the model's own latency is not in the figure), then one ``_bulk`` to the node. Notes per
  second, end to end and in the handler alone;
- **hybrid recall**: ToolsFunction's handler with events/recall.json's shape, each call for a random scope
  and a query of two words of the notes' vocabulary: the query embedded (same fake, over HTTP), one
  ``_msearch`` (BM25 and kNN), the fusion, one BatchGetItem on moto. p50 and p99, and the ``_msearch``
  alone for the node's share.

Without Java (or a node that will not start) the section is skipped with the reason, and the rest of
``make bench`` stands.
"""

from __future__ import annotations

import json
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from bench.keyword_recall import recall_items
from bench.runner import (
    TABLE,
    Context,
    Toolkit,
    batch_write,
    clear_metrics,
    percentile_ms,
    quiet_powertools,
    settings_environment,
)


@dataclass(frozen=True)
class Options:
    notes: int = 10_000
    scopes: int = 100
    warmup: int = 20
    calls: int = 300


@dataclass(frozen=True)
class HybridResult:
    notes: int
    scopes: int
    indexing_s: float
    handler_s: float  # of indexing_s, the time in IndexerFunction's handler (the rest: reading moto's stream)
    batches: int
    failed_records: int
    recall_ns: list[int]
    msearch_ns: list[int]
    modes: dict[str, int]

    def as_json(self) -> dict[str, dict[str, Any]]:
        return {
            f"indexer_{self.notes}_notes": {
                "notes_per_s": round(self.notes / self.indexing_s, 1),
                "seconds": round(self.indexing_s, 2),
                "handler_notes_per_s": round(self.notes / self.handler_s, 1),
                "batches": self.batches,
                "failed_records": self.failed_records,
            },
            f"recall_hybrid_{self.notes}_notes_{self.scopes}_scopes": {
                "p50_ms": round(percentile_ms(self.recall_ns, 0.50), 3),
                "p99_ms": round(percentile_ms(self.recall_ns, 0.99), 3),
                "msearch_p50_ms": round(percentile_ms(self.msearch_ns, 0.50), 3),
                "msearch_p99_ms": round(percentile_ms(self.msearch_ns, 0.99), 3),
                "modes": self.modes,
            },
        }


def measure_hybrid(toolkit: Toolkit, options: Options) -> HybridResult | str:
    """The figures, or why they could not be measured."""
    from local.opensearch import NodeUnavailable, throwaway_node
    from tests.support.calls import free_port
    from tests.support.fake_openai import fake_openai_server

    toolkit.log("hybrid recall: starting a throwaway OpenSearch node")
    try:
        with (
            throwaway_node(free_port()) as endpoint,
            fake_openai_server(reply="unused") as model,
            settings_environment(
                OPENSEARCH_ENDPOINT=endpoint,
                MEMORY_EMBEDDING_MODEL="openai:fake-embeddings",
                OPENAI_BASE_URL=model.base_url,
                MEMORY_OPENSEARCH_TIMEOUT_S="10",
            ),
        ):
            return _measure(toolkit, options)
    except NodeUnavailable as why:
        toolkit.log(f"hybrid recall skipped: {why}")
        return str(why)


def _users(options: Options) -> list[str]:
    return [f"bench-hybrid-{n:03d}" for n in range(options.scopes)]


def _measure(toolkit: Toolkit, options: Options) -> HybridResult:
    from agent_memory import bootstrap
    from agent_memory.domain.scope import Scope
    from local.stream_mapping import LocalStreamMapping
    from local.template import load_handler

    per_scope = options.notes // options.scopes
    with toolkit.moto() as (_, client), quiet_powertools():
        indexer = load_handler("IndexerFunction")
        context = Context("IndexerFunction", remaining_ms=60_000)
        answers: list[dict[str, Any]] = []
        handler_ns: list[int] = []

        def invoke(event: dict[str, Any]) -> Any:
            start = time.perf_counter_ns()
            answers.append(indexer(event, context))
            handler_ns.append(time.perf_counter_ns() - start)
            clear_metrics()
            return answers[-1]

        # bench.run creates its tables without their stream (see create_tables); this section reads it.
        client.update_table(
            TableName=TABLE, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
        )
        mapping = LocalStreamMapping(None, invoke)  # from the stream's end: before the notes are written
        toolkit.log(f"hybrid recall: writing {options.notes:,} notes in {options.scopes} scopes to the table")
        for user in _users(options):
            batch_write(client, recall_items(Scope("personal", user), user, 0, per_scope, toolkit.fact_text))
        assert bootstrap.services().notes_indexer is not None  # building it ensures the index: not a cost of the notes
        toolkit.log("hybrid recall: indexing them through the stream and IndexerFunction")
        start = time.perf_counter()
        delivered = 0
        while (count := mapping.poll_once()) > 0:
            delivered += count
        indexing_s = time.perf_counter() - start
        failed = sum(len(answer["batchItemFailures"]) for answer in answers)
        index = bootstrap.services().notes_index
        assert index is not None
        index.refresh()
        indexed = sum(index.count(f"user#{user}") for user in _users(options))
        if delivered != options.notes or indexed != options.notes or failed:
            raise SystemExit(f"indexing: {delivered} delivered, {indexed} indexed, {failed} failed records")
        recall_ns, modes = _time_recall(toolkit, options)
        msearch_ns = _time_msearch(toolkit, options)
    return HybridResult(
        notes=options.notes,
        scopes=options.scopes,
        indexing_s=indexing_s,
        handler_s=sum(handler_ns) / 1e9,
        batches=len(answers),
        failed_records=failed,
        recall_ns=recall_ns,
        msearch_ns=msearch_ns,
        modes=modes,
    )


def _queries(toolkit: Toolkit, options: Options, count: int) -> list[tuple[str, str]]:
    """(user, query) pairs: a random scope, two words of one of its notes' texts (fixed seed)."""
    rng = random.Random(42)
    per_scope = options.notes // options.scopes
    pairs = []
    for _ in range(count):
        words = re.findall(r"[a-z]{4,}", toolkit.fact_text(rng.randrange(per_scope)).lower())
        pairs.append((rng.choice(_users(options)), " ".join(rng.sample(words, k=2))))
    return pairs


def _time_recall(toolkit: Toolkit, options: Options) -> tuple[list[int], dict[str, int]]:
    from local.template import load_handler
    from tests.support.events import event_body, load_event

    handler = load_handler("ToolsFunction")
    context = Context("ToolsFunction")
    body = event_body("recall")
    toolkit.log(f"hybrid recall: {options.warmup} warm-up + {options.calls} calls over random scopes")
    samples_ns: list[int] = []
    modes: dict[str, int] = {}
    for n, (user, query) in enumerate(_queries(toolkit, options, options.warmup + options.calls)):
        event = load_event(
            "recall",
            {
                **body,
                "context": {**body["context"], "user_id": user, "thread_owner_id": user},
                "arguments": {"query": query, "k": 8},
            },
        )
        start = time.perf_counter_ns()
        answer = handler(event, context)
        elapsed_ns = time.perf_counter_ns() - start
        clear_metrics()
        found = json.loads(answer["body"])
        if answer["statusCode"] != 200 or not found["notes"]:
            raise SystemExit(f"hybrid recall answered {answer['statusCode']}: {answer['body']}")
        if any(note["origin"]["user_id"] != user for note in found["notes"]):
            raise SystemExit("hybrid recall returned a note of another scope")
        if n >= options.warmup:
            samples_ns.append(elapsed_ns)
            modes[found["mode"]] = modes.get(found["mode"], 0) + 1
    return samples_ns, modes


def _time_msearch(toolkit: Toolkit, options: Options) -> list[int]:
    """The node's share: the same queries' ``_msearch`` alone (the query vectors computed beforehand)."""
    from agent_memory import bootstrap
    from agent_memory.recall.index_path import RESCORE_POOL
    from agent_memory.recall.selection import CANDIDATE_WINDOW

    index, embedder = bootstrap.services().notes_index, bootstrap.services().embedding_model
    assert index is not None and embedder is not None
    pairs = _queries(toolkit, options, options.calls)
    vectors = embedder.embed([query for _, query in pairs])
    samples_ns = []
    for (user, query), vector in zip(pairs, vectors, strict=True):
        start = time.perf_counter_ns()
        index.hybrid(f"user#{user}", query, vector, size=CANDIDATE_WINDOW, keyword_size=RESCORE_POOL)
        samples_ns.append(time.perf_counter_ns() - start)
    return samples_ns


def report(result: HybridResult | str) -> list[str]:
    if isinstance(result, str):
        return [f"hybrid recall and indexing on a real node: skipped ({result})"]
    header = f"{'on a real node':<34}{'figure':>28}{'p50 ms':>10}{'p99 ms':>10}"
    modes = ", ".join(f"{mode} {count}" for mode, count in sorted(result.modes.items()))
    return [
        header,
        "-" * len(header),
        f"{f'indexer, {result.notes:,} notes':<34}{f'{result.notes / result.indexing_s:,.0f} notes/s':>28}",
        f"{'':<34}{f'handler: {result.notes / result.handler_s:,.0f} notes/s':>28}",
        f"{f'recall, {result.notes:,} notes / {result.scopes} scopes':<34}{'handler':>28}"
        f"{percentile_ms(result.recall_ns, 0.5):>10.3f}{percentile_ms(result.recall_ns, 0.99):>10.3f}",
        f"{'':<34}{'_msearch alone':>28}"
        f"{percentile_ms(result.msearch_ns, 0.5):>10.3f}{percentile_ms(result.msearch_ns, 0.99):>10.3f}",
        "",
        f"indexer: {result.notes:,} notes in {result.scopes} personal scopes written to moto, then the table's",
        f"stream through IndexerFunction's handler in {result.batches} batches ({result.indexing_s:.1f} s, "
        f"{result.failed_records} failed records):",
        "the texts of a batch embedded in one call over HTTP by the OpenAI-compatible provider (a fake model",
        "answering at once, tests/support/fake_openai.py), then one _bulk to OpenSearch 2.19.1. handler: the time in",
        "the handler alone; the rest is moto serving the stream.",
        f"recall: ToolsFunction's handler, {len(result.recall_ns)} calls, a random scope and two words of its notes "
        f"each, k 8 ({modes});",
        "the query embedded (same fake), one _msearch (BM25's 50 candidates with the scope's statistics, the scope's",
        "count, kNN's 20, Lucene HNSW), the weighted fusion, one BatchGetItem on moto. _msearch alone: the node's",
        "share, same queries, vectors first.",
    ]
