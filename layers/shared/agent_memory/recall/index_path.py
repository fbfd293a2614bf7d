"""The index path's ranking: the notes index's candidates for a query, through recall's shared steps.

``RecallService`` calls ``rank_index`` and then reads the chosen notes whole from the table;
``bench/recall_quality.py --node`` calls it over a real node, so that the bench measures what a
deployment with OpenSearch answers, not the node's halves alone. It asks the index for the scope's
BM25 ranking and, with a query vector, its nearest neighbours (one ``_msearch``); BM25's candidates are
scored again with the scope's own statistics, which the same request counts (``providers.index_queries``:
the node's are its shard's, every scope routed there), so that they rank as on the table. Then one more BM25
search with the feedback terms (``search.expansion``) and one for the days the question names
(``search.dates``), each only when its step is on and has something to ask; then the steps of
``recall.ranking`` (fusion, expansion, time, neighbours, slots), as the table's path takes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

from agent_memory.basics.observability import logger, metrics
from agent_memory.domain.shapes import RecallMode
from agent_memory.recall.neighbours import STRONG_HITS, neighboured
from agent_memory.recall.ranking import Tuning, coverage, dated
from agent_memory.recall.selection import CANDIDATE_WINDOW, answer_slots
from agent_memory.search.bm25 import Collection, query_terms, rank_terms, words
from agent_memory.search.dates import named_days
from agent_memory.search.expansion import EXPANSION_DOCS, anchored, expansion_terms
from agent_memory.search.fusion import weighted_fusion
from agent_memory.storage.note_items import NoteText

if TYPE_CHECKING:  # given, never built here: its module loads only where an index is configured
    from agent_memory.providers.index_queries import IndexHit
    from agent_memory.providers.notes_index import NotesIndex

Place = tuple[str, int]  # a note's (day, position)
# The node's BM25 candidates scored again with the scope's statistics: measured on the dev set, its first 50
# rescored rank as the scope's whole BM25 does (its first 20 lose 0.04 of recall@10: docs/recall-quality.md).
RESCORE_POOL = 50
# The notes written near the strong hits (``recall.neighbours``), read from the caller's partition.
Around = Callable[[list[Place]], Sequence[NoteText]]


@dataclass(frozen=True, slots=True)
class IndexRanking:
    """The places to answer with their scores, best first; the mode; hits of another scope set aside."""

    slots: list[tuple[Place, float]]
    mode: RecallMode
    foreign: int


def rank_index(
    index: NotesIndex,
    scope_key: str,
    query: str,
    *,
    vector: list[float] | None,
    today: date,
    k: int,
    tuning: Tuning,
    around: Around | None = None,
) -> IndexRanking:
    """The ``k`` notes of the scope to answer (see the module docstring); ``around`` reads the neighbours
    (``MEMORY_RECALL_NEIGHBOURS``). Every hit whose stored scope is not ``scope_key`` is set aside first."""
    window = max(k, CANDIDATE_WINDOW)
    pool = max(window, RESCORE_POOL)
    terms, extra = query_terms(query), dict[str, float]()
    semantic: list[IndexHit] = []
    if vector is None:
        first = index.keyword(scope_key, query, k=pool)
    else:
        first, semantic = index.hybrid(scope_key, query, vector, size=window, keyword_size=pool)
    found, searches = [first.hits, semantic], [first]
    keyword_hits = _rescored(_own(scope_key, first.hits), terms, {}, first.collection)[:window]
    again: list[IndexHit] = []
    if tuning.expansion_terms and keyword_hits:
        feedback = [(words(hit.text), hit.score) for hit in keyword_hits[:EXPANSION_DOCS]]
        extra = expansion_terms(terms, feedback, None, count=tuning.expansion_terms)
        if extra:
            expanded = index.keyword(scope_key, query, k=pool, expansion=extra)
            found.append(expanded.hits)
            searches.append(expanded)
            again = _rescored(_own(scope_key, expanded.hits), terms, extra, expanded.collection)[:window]
    days = named_days(query, today) if tuning.date_boost else None
    on_days = index.within_days(scope_key, query, days, size=window) if days is not None else []
    found.append(on_days)
    own = [keyword_hits, _own(scope_key, semantic), again, _own(scope_key, on_days)]
    foreign = sum(len(hits) - len(_own(scope_key, hits)) for hits in found)
    if any(search.collection is None and search.hits for search in searches):
        logger.warning("the index gave no scope statistics; keeping its own BM25 order")
        metrics.add_metric(name="RecallRescoreSkipped", unit="Count", value=1)
    texts = {_place(hit): hit.text for hits in own for hit in hits}
    semantic_hits = own[1]

    def fused(keyword_hits: list[IndexHit], added: dict[str, float]) -> list[tuple[Place, float]]:
        keyword = [(_place(hit), hit.score) for hit in keyword_hits]
        if vector is None:
            return keyword
        covered = {_place(hit): coverage(terms, added, words(hit.text)) for hit in keyword_hits if hit.text}
        semantic = [(_place(hit), hit.score) for hit in semantic_hits]
        return weighted_fusion(keyword, semantic, keyword_weight=tuning.keyword_weight, coverage=covered)

    ranked = fused(own[0], {})
    if extra and ranked:
        ranked = anchored(ranked[0], fused(own[-2], extra))
    mode: RecallMode = "keyword"
    if vector is not None and semantic_hits:
        mode = "hybrid" if own[0] else "semantic"
    if days is not None:
        named = days
        ranked = dated(
            ranked, [_place(hit) for hit in own[-1]], holds=lambda place: named.holds(place[0]), boost=tuning.date_boost
        )
    if tuning.neighbours and ranked and around is not None:
        near = around([place for place, _ in ranked[:STRONG_HITS]])
        texts.update(((row.day, row.position), row.text) for row in near)
        ranked = neighboured(ranked, (((row.day, row.position), row) for row in near), count=tuning.neighbours)
    if mode == "keyword":  # keyword mode answers notes holding a query word: time and expansion only reorder
        holding = {_place(hit) for hit in _own(scope_key, first.hits)}
        ranked = [(place, score) for place, score in ranked if place in holding]
    slots = answer_slots(
        ranked, texts, k=k, diversity_weight=tuning.diversity_weight, question_weight=tuning.question_weight
    )
    return IndexRanking(slots, mode, foreign)


def _own(scope_key: str, hits: list[IndexHit]) -> list[IndexHit]:
    """The hits stored under the caller's scope: another scope's never reach a statistic or the answer."""
    return [hit for hit in hits if hit.scope == scope_key]


def _rescored(
    hits: list[IndexHit], terms: list[str], expansion: dict[str, float], collection: Collection | None
) -> list[IndexHit]:
    """The hits scored again by BM25 with the scope's statistics (``collection``; see ``providers.index_queries``),
    their term frequencies and lengths from their texts as ``search.analysis`` makes them, best first, ties
    newest first as on the table's path. Without statistics, the node's own order (``rank_index`` logs and
    counts it once per recall)."""
    if collection is None:
        return hits
    newest_first = sorted(hits, key=_place, reverse=True)
    ranked = rank_terms(terms, [words(hit.text) for hit in newest_first], expansion=expansion, collection=collection)
    return [replace(newest_first[r.index], score=r.score) for r in ranked]


def _place(hit: IndexHit) -> Place:
    return hit.day, hit.position
