"""Recall through the table's vector index against the table's path, at 100, 1,000, 2,000 and 10,000 notes.

    PYTHONPATH=layers/shared .venv/bin/python -m bench.vector_recall [--calls 20]

``RecallService`` over one scope grown to each size, every note stored as the service stores it with an
embedding model and no OpenSearch: its ``vec`` on the note and its indexed vector beside it (384 numbers,
MiniLM's own size, ``EmbeddingDimensions=384``; random directions, so that at 10,000 notes most of the 50
nearest are older than the newest 2,000), in two ways per size, both with a fixed query vector (no model):

- ``table``: the newest 2,000 notes and their own vectors (no vector index);
- ``index``: the same, and ``SearchVectors`` over every note of the scope, the hits the newest read did not
  hold read with one ``BatchGetItem``.

DynamoDB is moto with the local stack's ``SearchVectors`` (an exact search, where DynamoDB's is approximate),
recorded once per size and way and replayed byte for byte (``bench.recall_latency.Replay``): the timings hold
what the function does (botocore's requests and parsing, ranking) and none of moto's own time; DynamoDB's own
time is not in them. Per recall: the requests it makes, and the read units of the table's requests by
DynamoDB's rules (``bench.capacity``: a Query is billed for the whole items it reads, half a unit per 4 KB
eventually consistent; a BatchGetItem per item); the search is billed in vector-search bytes, not read units.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SIZES = (100, 1000, 2000, 10_000)
DIMENSIONS = 384
MODEL = "bench:random"
WAYS = ("table", "index")
QUERIES = ("coffee meeting deadline", "where does she travel in spring", "allergic to peanuts", "the team's budget")
FLAT = 1.3  # the index path's p50 at 10,000 notes, at most this times its p50 at 100


@dataclass
class VectorRecallResult:
    samples_ms: dict[int, dict[str, list[float]]] = field(default_factory=dict)  # notes -> way -> samples
    requests: dict[int, dict[str, tuple[str, ...]]] = field(default_factory=dict)  # notes -> way -> one recall's
    read_units: dict[int, dict[str, float]] = field(default_factory=dict)  # notes -> way -> a recall's, mean

    def p50(self, size: int, way: str) -> float:
        ordered = sorted(self.samples_ms[size][way])
        return ordered[len(ordered) // 2]

    def as_json(self) -> dict[str, Any]:
        return {
            "recall_vector_index": {
                str(size): {
                    way: {
                        "p50_ms": round(self.p50(size, way), 2),
                        "requests": len(self.requests[size][way]),
                        "read_units": round(self.read_units[size][way], 1),
                    }
                    for way in WAYS
                }
                for size in self.samples_ms
            }
        }


def _read_units(client: Any, requests: list[tuple[str, dict[str, Any]]]) -> float:
    """The read units of a recall's table requests (see the module docstring), read back through ``client``."""
    from bench.capacity import item_size

    total = 0.0
    for operation, request in requests:
        if operation == "Query":
            whole = {key: value for key, value in request.items() if key != "ProjectionExpression"}
            whole.pop("ExpressionAttributeNames", None)
            items = client.query(**whole)["Items"]
            total += max(1, math.ceil(sum(map(item_size, items)) / 4096)) * 0.5
        elif operation == "BatchGetItem":
            for table, wanted in request["RequestItems"].items():
                for key in wanted["Keys"]:
                    found = client.get_item(TableName=table, Key=key).get("Item") or {}
                    total += max(1, math.ceil(item_size(found) / 4096)) * 0.5
    return total


def measure(log: Callable[[str], None], *, calls: int = 20, warmup: int = 2) -> VectorRecallResult:
    """Both ways at each size, interleaved, on DynamoDB's answers replayed."""
    import boto3

    from agent_memory.domain.scope import Scope
    from agent_memory.recall.service import RecallService
    from agent_memory.search.vectors import encode, index_components, model_tag
    from agent_memory.storage.note_items import vector_item
    from agent_memory.storage.note_store import NoteStore
    from agent_memory.storage.vector_index import NoteVectorIndex
    from bench.keyword_recall import recall_items
    from bench.recall_latency import FixedVectorEmbedder, Replay
    from bench.runner import TABLE, batch_write, clear_metrics, fact_text, moto, quiet_powertools
    from local.template import table_definitions
    from tests.support.moto_support import atomic_moto_requests

    rng = random.Random(11)
    tag = model_tag(MODEL, DIMENSIONS)
    query = FixedVectorEmbedder([rng.gauss(0, 1) for _ in range(DIMENSIONS)])

    def services(client: Any) -> dict[str, RecallService]:
        notes = NoteStore(client, TABLE)
        index = NoteVectorIndex(client, TABLE, dimensions=DIMENSIONS)
        return {
            "table": RecallService(notes, embedder=query, vector_tag=tag),
            "index": RecallService(notes, embedder=query, vector_tag=tag, vector_index=index),
        }

    scope = Scope("personal", "bench-vectors")
    result = VectorRecallResult()
    replays: dict[int, Replay] = {}
    with atomic_moto_requests(), moto(), quiet_powertools():  # moto with SearchVectors
        client = boto3.client("dynamodb")
        for definition in table_definitions().values():
            vector_index = [{**index, "Dimensions": DIMENSIONS} for index in definition.get("VectorIndexes", [])]
            client.create_table(**definition | ({"VectorIndexes": vector_index} if vector_index else {}))
        seeded = 0
        sent: list[tuple[str, dict[str, Any]]] = []  # the requests of the recall being recorded

        def keep(params: dict[str, Any], model: Any, **_: Any) -> None:
            sent.append((model.name, dict(params)))

        for size in SIZES:
            log(f"vector recall: {size:,} notes with their vectors, recording DynamoDB's answers on moto")
            items = []
            for item in recall_items(scope, "bench-vectors", seeded, size, fact_text):
                blob = encode([rng.gauss(0, 1) for _ in range(DIMENSIONS)], tag=tag)
                numbers = index_components(blob, tag=tag, dimensions=DIMENSIONS)
                assert numbers is not None
                day, position = item["day"]["S"], int(item["position"]["N"])
                items += [item | {"vec": {"B": blob}}, vector_item(scope, day, position, numbers)]
            batch_write(client, items)
            seeded = size
            replays[size] = replay = Replay()
            recorded = replay.record(boto3.client("dynamodb"))
            recorded.meta.events.register("provide-client-params.dynamodb", keep)
            result.requests[size], result.read_units[size] = {}, {}
            for way, service in services(recorded).items():
                units = 0.0
                for text in QUERIES:
                    sent.clear()
                    service.recall(scope, text, k=8)
                    clear_metrics()
                    result.requests[size][way] = tuple(operation for operation, _ in sent)
                    units += _read_units(client, list(sent))
                result.read_units[size][way] = units / len(QUERIES)
    with quiet_powertools():  # time: outside moto, so that only the replay answers
        for size in SIZES:
            log(f"vector recall: {size:,} notes, table / index interleaved, {calls} calls each")
            served = services(replays[size].serve(boto3.client("dynamodb")))
            samples: dict[str, list[float]] = {way: [] for way in served}
            for n in range(warmup + calls):
                order = list(served)[n % 2 :] + list(served)[: n % 2]
                for way in order:
                    started = time.perf_counter_ns()
                    served[way].recall(scope, QUERIES[n % len(QUERIES)], k=8)
                    elapsed = (time.perf_counter_ns() - started) / 1e6
                    clear_metrics()
                    if n >= warmup:
                        samples[way].append(elapsed)
            result.samples_ms[size] = samples
    return result


def report(result: VectorRecallResult) -> list[str]:
    calls = len(next(iter(result.samples_ms.values()))["table"])
    lines = [
        "Recall through the table's vector index against the table's path (RecallService on DynamoDB answers "
        f"recorded from moto and replayed, one scope, {DIMENSIONS}-number vectors, k 8, fixed query vector, "
        f"{calls} calls per cell, interleaved; p50 in ms; per recall: the requests, and the read units of the "
        "table's requests, eventually consistent; SearchVectors is billed in vector-search bytes):",
        "",
        "| notes | table p50 | index p50 | table requests | index requests | table read units | index read units |",
        "|---|---|---|---|---|---|---|",
    ]
    for size in result.samples_ms:
        requests = result.requests[size]
        lines.append(
            f"| {size:,} | {result.p50(size, 'table'):.1f} | {result.p50(size, 'index'):.1f} | "
            f"{len(requests['table'])} {'+'.join(requests['table'])} | "
            f"{len(requests['index'])} {'+'.join(requests['index'])} | "
            f"{result.read_units[size]['table']:.1f} | {result.read_units[size]['index']:.1f} |"
        )
    first, last = min(result.samples_ms), max(result.samples_ms)
    ratio = result.p50(last, "index") / result.p50(first, "index")
    from_2000 = result.p50(last, "index") / result.p50(2000, "index") if 2000 in result.samples_ms else ratio
    verdict = "met" if ratio <= FLAT else "NOT met"
    lines += [
        "",
        f"Target: the index path's p50 at {last:,} notes at most {FLAT}x its p50 at {first:,}: {ratio:.2f}x, {verdict}"
        f" ({from_2000:.2f}x from 2,000 to {last:,}: past 2,000 notes the newest-notes read stops growing, and the",
        "search is DynamoDB's; from 100 to 2,000 the keyword half's read of the newest notes grows with the scope).",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    from bench.runner import log, main_alone

    return main_alone(
        "vector_recall", __doc__ or "", {"calls": 20}, lambda args: report(measure(log, calls=args.calls)), argv
    )


if __name__ == "__main__":
    sys.exit(main())
