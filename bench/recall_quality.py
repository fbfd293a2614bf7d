"""Recall quality on the project's dev set, and the latency of hybrid recall without OpenSearch.

    python -m bench.recall_quality [--node] [--no-latency]   # this section alone; ``make bench`` runs it too

**Quality.** The dev set (``bench/recall_devset.py``: 3,516 notes in 12 scopes, 528 questions) is ranked
by the functions recall itself uses, over each scope's notes newest first as the table's Query reads them:
``bm25`` (the keyword path), ``dense`` (cosine alone), ``rrf`` (plain reciprocal rank fusion of the two),
and ``hybrid`` (``search.fusion.weighted_fusion`` at the default weight: recall without OpenSearch, and
the fusion of the index path). Each reports evidence recall@1, @5 and @10 (the share of a question's
evidence notes in the first k, averaged), overall and per question kind, and a sweep of the keyword
weight. Then the **ablation**: recall's own ranking (``recall.ranking.rank_rows``) on the table's two paths
(keyword, hybrid), with each mechanism added in turn (one note per fact, time, feedback, neighbours,
then diversity), and a sweep of each new setting with the others at their defaults. The vectors are
all-MiniLM-L6-v2's (``local:minilm``, int8 as stored with notes) when its wheel
is installed, else the test suite's fake model (and the report says so: its figures mean little).

**Latency** (``bench.recall_latency``, reported here): the table's keyword path against its hybrid path at
100, 1,000 and 2,000 notes, with a fixed query vector and with ``local:minilm``, and MiniLM's cold load.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from bench.recall_ablation import (
    K_VALUES,
    PATHS,
    Recall,
    ablation_report,
    kinds_table,
    measure_ablation,
    measure_neighbours,
    neighbours_report,
    pipeline,
    recall_at,
)
from bench.recall_devset import DevSet, generate
from bench.recall_latency import LatencyResult, measure_latency
from bench.recall_latency import report as latency_report

__all__ = ["LatencyResult", "QualityResult", "main", "measure_latency", "measure_quality", "report"]

FULL = {"table": "the table", "node-own": "the node, its own BM25 order", "node": "the node, the scope's statistics"}
WINDOW = 20  # recall.selection.CANDIDATE_WINDOW: each half's candidates
SIZES = (100, 1000, 2000)
MODEL = "local:minilm"


@dataclass
class QualityResult:
    embedder: str
    notes: int
    questions: int
    recall: dict[str, Recall]  # mode -> kind ("all" too) -> k -> recall
    sweep: dict[float, dict[int, float]]  # keyword weight -> k -> recall (all kinds)
    embed_notes_s: float
    per_query_ms: float
    load_s: float
    ablation: dict[str, dict[str, Recall]] = field(default_factory=dict)  # path -> step -> recall
    tuning: dict[str, dict[str, dict[float, Recall]]] = field(
        default_factory=dict
    )  # setting -> path -> value -> recall
    one_sitting: dict[str, Any] = field(default_factory=dict)  # bench.recall_ablation.measure_neighbours


def _embedder() -> tuple[str, Any, float]:
    started = time.perf_counter()
    try:
        from agent_memory.providers.minilm import MiniLMEmbeddingModel

        return "all-MiniLM-L6-v2 (local:minilm)", MiniLMEmbeddingModel(dimensions=1024), time.perf_counter() - started
    except (ImportError, RuntimeError):
        from tests.support.fake_embeddings import FakeEmbeddingModel

        return "the fake model of tests/ (local:minilm not installed)", FakeEmbeddingModel(), 0.0


_EMBEDDED: dict[str, list[list[float]]] = {}  # within a run: the dev set and the ablation embed once


def _cached(texts: list[str], embedder: Any, *, vectors: list[list[float]] | None = None) -> list[list[float]]:
    """The texts' vectors, once per run; with ``RECALL_QUALITY_CACHE`` (a folder) kept there between runs
    (tuning only)."""
    import hashlib
    import os
    import pickle
    from pathlib import Path

    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    if key in _EMBEDDED and vectors is None:
        return _EMBEDDED[key]
    folder = os.environ.get("RECALL_QUALITY_CACHE")
    path = Path(folder) / (key + ".pickle") if folder else None
    if path is not None and path.exists():
        cached: list[list[float]] = pickle.loads(path.read_bytes())  # noqa: S301 - our own file
        return cached
    result = _EMBEDDED[key] = vectors if vectors is not None else embedder.embed(texts)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(result))
    return result


def _rankings(
    devset: DevSet, embedder: Any, log: Callable[[str], None]
) -> tuple[list[dict[str, Any]], float, float, dict[str, Any]]:
    """Per question: the BM25 and cosine candidates over its scope (indexes into the scope's notes, oldest first)."""
    from agent_memory.search.bm25 import query_terms, rank, words
    from agent_memory.search.fusion import query_coverage
    from agent_memory.search.vectors import QueryVector, encode, model_tag
    from agent_memory.storage.note_items import NoteText

    tag = model_tag(MODEL, 1024)
    scopes = {scope.key: scope for scope in devset.scopes}
    rows: dict[str, list[NoteText]] = {}
    started = time.perf_counter()
    raw: dict[str, Any] = {}
    for scope in devset.scopes:
        log(f"recall quality: embedding the {len(scope.notes)} notes of {scope.key}")
        vectors = raw[scope.key] = _cached(scope.notes, embedder)
        newest_first = list(reversed(range(len(scope.notes))))
        rows[scope.key] = [
            NoteText(scope.key, scope.days[n], n, scope.notes[n], encode(vectors[n], tag=tag), scope.threads[n])
            for n in newest_first
        ]
    embed_notes_s = time.perf_counter() - started
    from agent_memory.recall.ranking import cosine_ranking

    timed = devset.questions[:20]  # one text per call, as recall embeds a query
    started = time.perf_counter()
    for question in timed:
        embedder.embed([question.text])
    per_query_ms = (time.perf_counter() - started) / len(timed) * 1000
    query_vectors = _cached([q.text for q in devset.questions], embedder)
    out = []
    for question, vector in zip(devset.questions, query_vectors, strict=True):
        own = rows[question.scope]
        keyword = [(own[r.index].position, r.score) for r in rank(question.text, [row.text for row in own])[:WINDOW]]
        dense = [(own[n].position, c) for n, c in cosine_ranking(QueryVector(vector), own, tag=tag, size=WINDOW)]
        qterms = query_terms(question.text)
        cover = {n: query_coverage(qterms, words(own[len(own) - 1 - n].text)) for n, _ in keyword}
        out.append({
            "question": question, "keyword": keyword, "dense": dense, "vector": vector, "coverage": cover,
            "rows": own, "today": date.fromisoformat(scopes[question.scope].today),
        })  # fmt: skip
    return out, embed_notes_s, per_query_ms, raw


def _ranked(mode: str, item: dict[str, Any], weight: float) -> list[int]:
    from agent_memory.search.fusion import reciprocal_rank_fusion, weighted_fusion

    if mode.startswith("full-"):  # recall's whole ranking, answered already (``_full_paths``)
        answered: list[int] = item[mode]
        return answered
    node = mode.startswith("node-")
    keyword, dense = (item["node-keyword"], item["node-dense"]) if node else (item["keyword"], item["dense"])
    mode = mode.removeprefix("node-")
    if mode == "bm25":
        return [n for n, _ in keyword]
    if mode == "dense":
        return [n for n, _ in dense]
    if mode == "rrf":
        return [n for n, _ in reciprocal_rank_fusion([n for n, _ in keyword], [n for n, _ in dense])]
    coverage = item["node-coverage"] if node else item["coverage"]
    return [n for n, _ in weighted_fusion(keyword, dense, keyword_weight=weight, coverage=coverage)]


class _NodeOrder:
    """The index without the scope's statistics: the node's own BM25 order, which is recall's fallback when
    they are missing and was its ranking before they were asked (the full path's "before")."""

    def __init__(self, index: Any) -> None:
        self._index = index

    def keyword(self, *args: Any, **kwargs: Any) -> Any:
        from agent_memory.providers.index_queries import Candidates

        return Candidates(self._index.keyword(*args, **kwargs).hits)

    def hybrid(self, *args: Any, **kwargs: Any) -> Any:
        from agent_memory.providers.index_queries import Candidates

        keyword, semantic = self._index.hybrid(*args, **kwargs)
        return Candidates(keyword.hits), semantic

    def within_days(self, *args: Any, **kwargs: Any) -> Any:
        return self._index.within_days(*args, **kwargs)


def _full_paths(item: dict[str, Any], index: Any, tag: int) -> None:
    """Recall's whole ranking (the defaults, k = 10) of one question on each path, as positions: the table's
    (``recall.ranking.rank_rows``), and the service's own over the node (``recall.index_path``), with the
    scope's statistics and in the node's own BM25 order."""
    from agent_memory.basics.observability import logger
    from agent_memory.recall.index_path import rank_index
    from agent_memory.recall.ranking import Tuning
    from bench.runner import clear_metrics

    question = item["question"]
    for path in PATHS:
        item[f"full-table-{path}"] = pipeline(item, Tuning(), path, None, tag)
        vector = item["vector"] if path == "hybrid" else None
        searched: Any
        for label, searched in (("node", index), ("node-own", _NodeOrder(index))):
            level = logger.log_level
            logger.setLevel("ERROR")  # the node's own order is the fallback, which warns on every recall
            try:
                ranking = rank_index(
                    searched, question.scope, question.text, vector=vector, today=item["today"], k=10, tuning=Tuning()
                )
            finally:
                logger.setLevel(level)
            clear_metrics()  # the fallback counts every recall
            item[f"full-{label}-{path}"] = [position for (_, position), _ in ranking.slots]


def _on_node(devset: DevSet, items: list[dict[str, Any]], vectors: dict[str, Any], log: Callable[[str], None]) -> None:
    """The same questions on a throwaway OpenSearch node: its BM25 (the English analyzer) and its kNN
    become the ``node-bm25`` and ``node-hybrid`` modes (the fusion is recall's), and recall's whole ranking
    over the node the ``full-node-*`` modes (``_full_paths``). No Java: left out."""
    from agent_memory.domain.notes import Note, Origin
    from agent_memory.providers.notes_index import NotesIndex, make_opensearch_client
    from agent_memory.search.bm25 import query_terms, words
    from agent_memory.search.fusion import query_coverage
    from agent_memory.search.vectors import model_tag
    from local.opensearch import NodeUnavailable, throwaway_node
    from tests.support.calls import free_port

    try:
        with throwaway_node(free_port(), start_timeout_s=180) as endpoint:
            index = NotesIndex(make_opensearch_client(endpoint, timeout_s=30), alias="devset")
            index.ensure()
            for scope in devset.scopes:
                log(f"recall quality: indexing {scope.key} on the node")
                notes = [
                    Note(scope.days[n], n, text, f"{scope.days[n]}T10:00:00.000Z", "remember", Origin("dev", "t"))
                    for n, text in enumerate(scope.notes)
                ]
                index.put_many(scope.key, notes, embeddings=vectors[scope.key])
            index.refresh()
            log("recall quality: the node's halves and recall's whole ranking over the node")
            for item in items:
                question = item["question"]
                keyword, dense = index.hybrid(question.scope, question.text, item["vector"], size=WINDOW)
                item["node-keyword"] = [(hit.position, hit.score) for hit in keyword.hits]
                terms = query_terms(question.text)
                item["node-coverage"] = {hit.position: query_coverage(terms, words(hit.text)) for hit in keyword.hits}
                item["node-dense"] = [(hit.position, hit.score) for hit in dense]
                _full_paths(item, index, model_tag(MODEL, 1024))
    except NodeUnavailable as why:
        log(f"recall quality: no OpenSearch node ({why}); the node's modes are left out")


def measure_quality(log: Callable[[str], None], *, on_node: bool = False) -> QualityResult:
    from agent_memory.search.fusion import DEFAULT_KEYWORD_WEIGHT

    devset = generate()
    name, embedder, load_s = _embedder()
    items, embed_notes_s, per_query_ms, vectors = _rankings(devset, embedder, log)
    if on_node:
        _on_node(devset, items, vectors, log)
    recall: dict[str, dict[str, dict[int, float]]] = {}
    modes = ["bm25", "dense", "rrf", "hybrid"] + (
        ["node-bm25", "node-rrf", "node-hybrid", *(f"full-{on}-{path}" for on in FULL for path in PATHS)]
        if "node-keyword" in items[0]
        else []
    )
    for mode in modes:
        sums: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        counts: dict[str, int] = defaultdict(int)
        for item in items:
            question = item["question"]
            ranked = _ranked(mode, item, DEFAULT_KEYWORD_WEIGHT)
            for kind in ("all", question.kind):
                counts[kind] += 1
                for k in K_VALUES:
                    sums[kind][k] += recall_at(ranked, question.evidence, k)
        recall[mode] = {kind: {k: sums[kind][k] / counts[kind] for k in K_VALUES} for kind in sums}
    sweep = {}
    for weight in (0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        ranked_all = [(_ranked("hybrid", item, weight), item["question"].evidence) for item in items]
        sweep[weight] = {k: sum(recall_at(r, e, k) for r, e in ranked_all) / len(items) for k in K_VALUES}
    notes = sum(len(scope.notes) for scope in devset.scopes)
    from agent_memory.search.vectors import model_tag

    def before(item: dict[str, Any], path: str) -> list[int]:
        return _ranked("bm25" if path == "keyword" else "hybrid", item, DEFAULT_KEYWORD_WEIGHT)

    ablation, tuned = measure_ablation(items, log, before=before, tag=model_tag(MODEL, 1024))
    told_together, _, _, _ = _rankings(generate(one_sitting=True), embedder, log)
    one_sitting = measure_neighbours(told_together, log, tag=model_tag(MODEL, 1024))
    return QualityResult(
        name, notes, len(items), recall, sweep, embed_notes_s, per_query_ms, load_s, ablation, tuned, one_sitting
    )


def report(quality: QualityResult, latency: LatencyResult) -> list[str]:
    lines = [
        f"Dev set: {quality.notes:,} notes in 12 scopes, {quality.questions} questions (bench/recall_devset.py); "
        f"vectors: {quality.embedder}, int8 as stored.",
        "",
        "| mode | recall@1 | recall@5 | recall@10 |",
        "|---|---|---|---|",
    ]
    for mode, label in (
        ("bm25", "keyword (BM25, the table's path)"),
        ("dense", "cosine alone"),
        ("rrf", "plain RRF (BM25 + cosine)"),
        ("hybrid", "hybrid: weighted score fusion (both paths)"),
        ("node-bm25", "on the node: BM25 (English analyzer)"),
        ("node-rrf", "on the node: plain RRF"),
        ("node-hybrid", "on the node: hybrid, weighted score fusion"),
    ):
        if mode not in quality.recall:
            continue
        row = quality.recall[mode]["all"]
        lines.append(f"| {label} | {row[1]:.3f} | {row[5]:.3f} | {row[10]:.3f} |")
    kinds = sorted(k for k in quality.recall["bm25"] if k != "all")
    lines += [
        "",
        "recall@1 / recall@10 per question kind:",
        "",
        "| kind | " + " | ".join(("bm25", "dense", "rrf", "hybrid")) + " |",
        "|---|---|---|---|---|",
    ]
    for kind in kinds:
        cells = [
            f"{quality.recall[m][kind][1]:.2f} / {quality.recall[m][kind][10]:.2f}"
            for m in ("bm25", "dense", "rrf", "hybrid")
        ]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines += _full_report(quality.recall, kinds)
    lines += [
        "",
        "Keyword weight (MEMORY_RECALL_KEYWORD_WEIGHT) sweep, all kinds:",
        "",
        "| weight | @1 | @5 | @10 |",
        "|---|---|---|---|",
    ]
    lines += [f"| {w} | {r[1]:.3f} | {r[5]:.3f} | {r[10]:.3f} |" for w, r in quality.sweep.items()]
    lines += ablation_report(quality.ablation, quality.tuning) + neighbours_report(quality.one_sitting)
    lines += [
        "",
        f"Embedding model: loaded in {quality.load_s:.2f} s; {quality.per_query_ms:.1f} ms per query (one text); "
        f"{quality.embed_notes_s:.1f} s for the {quality.notes:,} notes in batches.",
        "",
    ]
    return lines + (latency_report(latency) if latency.samples_ms else [])


def _full_report(recall: dict[str, Recall], kinds: list[str]) -> list[str]:
    """Recall's whole ranking on each path (``_full_paths``), when the node ran."""
    if "full-node-hybrid" not in recall:
        return []
    return kinds_table(
        "Recall's whole ranking (the defaults, k = 10) on the table and on the node: recall@1 / @5 / @10, then"
        " recall@1 / @10 per kind:",
        ("mode", "ranked on"),
        [(path, label, recall[f"full-{on}-{path}"]) for path in PATHS for on, label in FULL.items()],
        kinds,
    )


def main() -> int:
    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    from bench.runner import configure

    configure()
    quality = measure_quality(log, on_node="--node" in sys.argv)
    print("\n".join(report(quality, LatencyResult())), flush=True)
    if "--no-latency" not in sys.argv:
        print("\n".join(latency_report(measure_latency(log))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
