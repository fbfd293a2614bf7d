"""The index path's ranking: the notes index's candidates for a query, through recall's shared steps.

``RecallService`` calls ``rank_index`` and then reads the chosen notes whole from the table;
``bench/recall_quality.py --node`` calls it over a real node, so that the bench measures what a
deployment with OpenSearch answers, not the node's halves alone. It asks the index for the scope's
BM25 ranking and, with a query vector, its nearest neighbours (one ``_msearch``), then one more BM25
search with the feedback terms (``search.expansion``) and one for the days the question names
(``search.dates``), each only when its step is on and has something to ask; then the steps of
``recall.ranking`` (fusion, expansion, time, neighbours, slots), as the table's path takes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from agent_memory.domain.shapes import RecallMode
from agent_memory.recall.neighbours import STRONG_HITS, neighboured
from agent_memory.recall.ranking import Tuning, coverage, dated
from agent_memory.recall.selection import CANDIDATE_WINDOW, answer_slots
from agent_memory.search.bm25 import query_terms, words
from agent_memory.search.dates import named_days
from agent_memory.search.expansion import EXPANSION_DOCS, anchored, expansion_terms
from agent_memory.search.fusion import weighted_fusion
from agent_memory.storage.note_items import NoteText

if TYPE_CHECKING:  # given, never built here: its module loads only where an index is configured
    from agent_memory.search.notes_index import IndexHit, NotesIndex

Place = tuple[str, int]  # a note's (day, position)
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
    if vector is None:
        halves = [index.keyword(scope_key, query, k=window)]
    else:
        halves = list(index.hybrid(scope_key, query, vector, size=window))
    terms, extra = query_terms(query), dict[str, float]()
    again: list[IndexHit] = []
    if tuning.expansion_terms and halves[0]:
        feedback = [(words(hit.text), hit.score) for hit in halves[0][:EXPANSION_DOCS]]
        extra = expansion_terms(terms, feedback, None, count=tuning.expansion_terms)
        if extra:
            again = index.keyword(scope_key, query, k=window, expansion=extra)
    days = named_days(query, today) if tuning.date_boost else None
    on_days = index.within_days(scope_key, query, days, size=window) if days is not None else []
    everything = [*halves, again, on_days]
    own = [[hit for hit in found if hit.scope == scope_key] for found in everything]
    foreign = sum(map(len, everything)) - sum(map(len, own))
    texts = {_place(hit): hit.text for found in own for hit in found}
    semantic_hits = own[1] if vector is not None else []

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
        holding = {_place(hit) for hit in own[0]}
        ranked = [(place, score) for place, score in ranked if place in holding]
    return IndexRanking(answer_slots(ranked, texts, k=k, diversity_weight=tuning.diversity_weight), mode, foreign)


def _place(hit: IndexHit) -> Place:
    return hit.day, hit.position
