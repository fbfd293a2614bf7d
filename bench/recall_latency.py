"""Recall latency without OpenSearch: the table's keyword path against its hybrid path, and MiniLM's cold load.

    PYTHONPATH=layers/shared .venv/bin/python -m bench.recall_latency [--calls 30]

``RecallService`` over one scope grown to 100, 1,000 and 2,000 notes, each stored with a 384-number
vector (zero-padded to 1,024, int8 as ``search.vectors`` stores it), in four ways per size:

- ``keyword``: no embedding model, BM25 over the scope's newest notes (today's fallback);
- ``hybrid, fixed vector``: the query's "embedding" is a fixed vector answered at once, so the difference
  from ``keyword`` is the hybrid path's own cost (the larger Query with ``vec``, decoding, cosine, fusion);
- ``hybrid, local:minilm``: all-MiniLM-L6-v2 in process embeds each query, so the difference from the
  fixed vector is the embedding's cost (reported apart as ``embed``, timed around the model's call);
- ``earlier defaults``: the same, ranked with the defaults recall had before they were chosen on two real
  conversations as well (``bench.ranking_variants.EARLIER``: no neighbours, no session window, a pool of 20 from
  each half, diversity 0.4), so that what the present defaults cost in time is measured in the same run.
  (The model is the fixed vector's when ``local:minilm`` is not installed.)

DynamoDB is moto, recorded once per size and way and then replayed byte for byte (``Replay``): the
timings hold everything the function does (botocore's requests and parsing of the real answers, BM25,
the vectors, the fusion, the model) and none of moto's own time, which is not DynamoDB's (seconds per
call at 2,000 notes on a loaded machine). DynamoDB's own time is not measured here; what it reads is (the
answers' size per recall). The four are interleaved call by call (their order rotating each round), so
that the machine's load, which drifts during a run, weighs on all four alike; p50 and p95 over
``calls`` calls each, after a few untimed ones. Target: hybrid at most 1.5 times keyword at
1,000 notes.

**Cold load** of ``local:minilm``: a fresh interpreter imports the module, builds the model (reads the
weights) and embeds one text, three times; the medians, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SIZES = (100, 1000, 2000)
MODEL = "local:minilm"
MODES = ("keyword", "fixed", "minilm", "earlier")
LABELS = {
    "keyword": "keyword",
    "fixed": "hybrid, fixed vector",
    "minilm": "hybrid, local:minilm",
    "earlier": "the same, earlier defaults",
}
QUERIES = ("coffee meeting deadline", "where does she travel in spring", "allergic to peanuts", "the team's budget")
TARGET_RATIO = 1.5  # hybrid / keyword at 1,000 notes
EARLIER_RATIO = 1.3  # the present defaults / the earlier ones, at 1,000 notes


@dataclass
class LatencyResult:
    samples_ms: dict[int, dict[str, list[float]]] = field(default_factory=dict)  # notes -> mode -> samples
    embed_ms: dict[int, list[float]] = field(default_factory=dict)  # notes -> MiniLM's call within each recall
    read_kb: dict[int, dict[str, float]] = field(default_factory=dict)  # notes -> mode -> KiB of answers a recall
    cold: dict[str, float] = field(default_factory=dict)  # import_s, load_s, first_embed_ms, peak_rss_mb
    minilm: bool = True  # False: local:minilm is not installed (its column is missing)

    def quantile(self, size: int, mode: str, q: float) -> float:
        return _quantile(self.samples_ms[size][mode], q)

    def as_json(self) -> dict[str, Any]:
        return {
            "recall_table_latency": {
                str(size): {
                    mode: {
                        "p50_ms": round(self.quantile(size, mode, 0.5), 2),
                        "p95_ms": round(self.quantile(size, mode, 0.95), 2),
                    }
                    for mode in modes
                }
                for size, modes in self.samples_ms.items()
            },
            "recall_table_read_kib": {str(size): modes for size, modes in self.read_kb.items()},
            "minilm_cold": self.cold,
        }


def _quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class FixedVectorEmbedder:
    """The query's vector without a model: one fixed unit vector, answered at once."""

    def __init__(self, vector: list[float]) -> None:
        self._vector = vector

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._vector for _ in texts]


class TimedEmbedder:
    """A model whose every call is timed (milliseconds, in ``spent``)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.spent: list[float] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter_ns()
        try:
            vectors: list[list[float]] = self._model.embed(texts)
            return vectors
        finally:
            self.spent.append((time.perf_counter_ns() - started) / 1e6)


def _minilm() -> Any | None:
    try:
        from agent_memory.providers.minilm import MiniLMEmbeddingModel

        return MiniLMEmbeddingModel(dimensions=1024)
    except (ImportError, RuntimeError):
        return None


class Replay:
    """DynamoDB's answers recorded from moto once, then served byte for byte to another client.

    botocore still builds, signs and sends each request and parses each answer (the client's real work);
    only moto's own time, which is not DynamoDB's and grows to seconds per call on a loaded machine, is
    left out. Answers are keyed by the request's body, so each recall gets exactly its own pages.
    """

    def __init__(self) -> None:
        self.answers: dict[bytes, tuple[int, dict[str, str], bytes]] = {}
        self.received = 0  # bytes of the answers recorded so far
        self._body = b""

    def record(self, client: Any) -> Any:
        client.meta.events.register_first("before-send", self._stash)
        client.meta.events.register("after-call", self._keep)
        return client

    def serve(self, client: Any) -> Any:
        client.meta.events.register_first("before-send", self._answer)
        return client

    def _stash(self, request: Any, **_: Any) -> None:
        self._body = _bytes(request.body)

    def _keep(self, http_response: Any, **_: Any) -> None:
        content = http_response.content
        self.answers[self._body] = (http_response.status_code, dict(http_response.headers), content)
        self.received += len(content)

    def _answer(self, request: Any, **_: Any) -> Any:
        """The recorded answer (a request never recorded is an error: the replay would not be the same work)."""
        from botocore.awsrequest import AWSResponse
        from moto.core.botocore_stubber import MockRawResponse

        status, headers, content = self.answers[_bytes(request.body)]
        return AWSResponse(request.url, status, headers, MockRawResponse(content))


def _bytes(body: object) -> bytes:
    if isinstance(body, bytes):
        return body
    return body.encode() if isinstance(body, str) else b""


def measure_latency(log: Callable[[str], None], *, calls: int = 30, warmup: int = 3) -> LatencyResult:
    """The four ways at each size, interleaved, on DynamoDB's answers replayed (see ``Replay``)."""
    import boto3

    from agent_memory.domain.scope import Scope
    from agent_memory.recall.ranking import Tuning
    from agent_memory.recall.service import RecallService
    from agent_memory.search.vectors import encode, model_tag
    from agent_memory.storage.note_store import NoteStore
    from bench.keyword_recall import recall_items
    from bench.ranking_variants import EARLIER, constants
    from bench.runner import TABLE, batch_write, clear_metrics, create_tables, fact_text, moto, quiet_powertools

    rng = random.Random(7)
    tag = model_tag(MODEL, 1024)

    def vector() -> list[float]:
        return [rng.gauss(0, 1) for _ in range(384)] + [0.0] * 640

    model = _minilm()
    timed = TimedEmbedder(model) if model is not None else None
    result = LatencyResult(minilm=timed is not None)
    embedders: dict[str, Any] = {"keyword": None, "fixed": FixedVectorEmbedder(vector())}
    if timed is not None:
        embedders["minilm"] = timed
    embedders["earlier"] = model if model is not None else embedders["fixed"]  # untimed: ``embed`` is minilm's
    tunings = {"earlier": Tuning(**EARLIER.changes)}

    def services(client: Any) -> dict[str, RecallService]:
        notes = NoteStore(client, TABLE)
        return {
            mode: RecallService(
                notes,
                embedder=embedder,
                vector_tag=None if embedder is None else tag,
                tuning=tunings.get(mode, Tuning()),
            )
            for mode, embedder in embedders.items()
        }

    def ranked_as(mode: str) -> Any:
        """The earlier defaults' constants in place for its calls (entered and left outside the timing)."""
        return constants(EARLIER) if mode == "earlier" else contextlib.nullcontext()

    scope = Scope("personal", "bench-recall")
    replays: dict[int, Replay] = {}
    with moto(), quiet_powertools():  # record: moto answers each way's recalls once per size
        create_tables(boto3.client("dynamodb"))
        seeded = 0
        for size in SIZES:
            log(f"recall latency: {size:,} notes with vectors, recording DynamoDB's answers on moto")
            items = recall_items(scope, "bench-recall", seeded, size, fact_text)
            for item in items:
                item["vec"] = {"B": encode(vector(), tag=tag)}
            batch_write(boto3.client("dynamodb"), items)
            seeded = size
            replays[size] = replay = Replay()
            result.read_kb[size] = {}
            for mode, service in services(replay.record(boto3.client("dynamodb"))).items():
                before = replay.received
                for query in QUERIES:
                    with ranked_as(mode):
                        service.recall(scope, query, k=8)
                    clear_metrics()
                result.read_kb[size][mode] = (replay.received - before) / len(QUERIES) / 1024
    with quiet_powertools():  # time: outside moto, so that only the replay answers
        for size in SIZES:
            log(f"recall latency: {size:,} notes, {' / '.join(embedders)} interleaved, {calls} calls each")
            served = services(replays[size].serve(boto3.client("dynamodb")))
            samples: dict[str, list[float]] = {mode: [] for mode in served}
            if timed is not None:
                timed.spent.clear()
            for n in range(warmup + calls):
                order = list(served)[n % len(served) :] + list(served)[: n % len(served)]
                query = QUERIES[n % len(QUERIES)]
                for mode in order:
                    with ranked_as(mode):
                        started = time.perf_counter_ns()
                        answer = served[mode].recall(scope, query, k=8)
                        elapsed = (time.perf_counter_ns() - started) / 1e6
                    assert answer.mode == ("keyword" if mode == "keyword" else "hybrid"), (mode, answer.mode)
                    clear_metrics()
                    if n >= warmup:
                        samples[mode].append(elapsed)
            result.samples_ms[size] = samples
            if timed is not None:
                result.embed_ms[size] = timed.spent[warmup:]
    if model is not None:
        result.cold = measure_cold_load(log)
    return result


_COLD = """
import json, resource, sys, time
started = time.perf_counter()
from agent_memory.providers.minilm import MiniLMEmbeddingModel
imported = time.perf_counter()
model = MiniLMEmbeddingModel(dimensions=1024)
loaded = time.perf_counter()
model.embed(["does she have a kitten?"])
embedded = time.perf_counter()
print(json.dumps({"import_s": imported - started, "load_s": loaded - imported,
                  "first_embed_ms": (embedded - loaded) * 1e3,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure_cold_load(log: Callable[[str], None], *, runs: int = 3) -> dict[str, float]:
    """``local:minilm`` in fresh interpreters: the medians of ``runs``."""
    from bench.runner import ROOT

    log(f"local:minilm cold load: {runs} fresh interpreters")
    env = {"PYTHONPATH": f"{ROOT / 'layers' / 'shared'}"}
    found = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _COLD], env=env, capture_output=True, text=True, check=True, timeout=300
        )
        found.append(json.loads(done.stdout))
    return {key: round(statistics.median(run[key] for run in found), 3) for key in found[0]}


def report(result: LatencyResult) -> list[str]:
    modes = [mode for mode in MODES if mode != "minilm" or result.minilm]
    lines = [
        "Recall latency without OpenSearch (RecallService on DynamoDB answers recorded from moto and replayed, "
        f"one scope, k 8, {len(next(iter(result.samples_ms.values()))['keyword'])} calls per cell, interleaved; "
        "p50 / p95 in ms; the ratio is p50 against keyword's; read: the answers' KiB per recall, keyword / hybrid):",
        "",
        "| notes | "
        + " | ".join(LABELS[mode] for mode in modes)
        + (" | MiniLM's embed" if result.minilm else "")
        + " | read |",
        "|---" * (len(modes) + 2 + int(result.minilm)) + "|",
    ]
    for size in result.samples_ms:
        keyword = result.quantile(size, "keyword", 0.5)
        cells = []
        for mode in modes:
            p50, p95 = result.quantile(size, mode, 0.5), result.quantile(size, mode, 0.95)
            ratio = "" if mode == "keyword" else f" ({p50 / keyword:.2f}x)"
            cells.append(f"{p50:.1f} / {p95:.1f}{ratio}")
        if result.minilm:
            spent = result.embed_ms[size]
            cells.append(f"{_quantile(spent, 0.5):.1f} / {_quantile(spent, 0.95):.1f}")
        read = result.read_kb.get(size, {})
        cells.append(f"{read.get('keyword', 0):,.0f} / {read.get('fixed', 0):,.0f}")
        lines.append(f"| {size:,} | " + " | ".join(cells) + " |")
    if 1000 in result.samples_ms:
        fixed = result.quantile(1000, "fixed", 0.5) / result.quantile(1000, "keyword", 0.5)
        verdict = "met" if fixed <= TARGET_RATIO else "NOT met"
        lines += [
            "",
            f"Target: hybrid (fixed vector) at most {TARGET_RATIO}x keyword at 1,000 notes: {fixed:.2f}x, {verdict}.",
        ]
        if result.minilm:
            with_model = result.quantile(1000, "minilm", 0.5) / result.quantile(1000, "keyword", 0.5)
            lines.append(f"With the query embedded by local:minilm in process: {with_model:.2f}x.")
        now = result.quantile(1000, "minilm" if result.minilm else "fixed", 0.5)
        earlier = result.quantile(1000, "earlier", 0.5)
        verdict = "met" if now <= EARLIER_RATIO * earlier else "NOT met"
        lines.append(
            f"The present defaults against the earlier ones at 1,000 notes (p50, the same model): {now:.1f} against "
            f"{earlier:.1f} ms, {now / earlier:.2f}x; at most {EARLIER_RATIO}x: {verdict}."
        )
    if result.cold:
        cold = result.cold
        lines += [
            "",
            f"local:minilm cold load (fresh interpreter, median of 3): import {cold['import_s']:.2f} s, "
            f"weights {cold['load_s']:.2f} s, first query {cold['first_embed_ms']:.0f} ms; "
            f"peak RSS {cold['peak_rss_mb']:.0f} MB.",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall_latency", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30, help="timed calls per size and way (default 30)")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    from bench.runner import configure

    configure()
    result = measure_latency(log, calls=args.calls)
    print("\n".join(report(result)), flush=True)
    print(json.dumps(result.as_json()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
