"""Recall's ranking steps, shared by both paths, and the table path's whole ranking over the rows it read.

The steps, in order (each one a setting; docs/recall-quality.md has the ablation that chose the defaults):

1. **BM25**, and **fusion** with the cosine half when there is a query vector (``search.fusion``, at
   ``MEMORY_RECALL_KEYWORD_WEIGHT``), each half giving its ``FUSION_POOL`` best on the table's path.
2. **Expansion** (``search.expansion``): the first pass's best texts lend their words to a second BM25
   pass (``MEMORY_RECALL_EXPANSION_TERMS``; 0: off), fused again (an expansion term counts toward a
   note's coverage by its weight); the first ranking's best note stays first (``anchored``).
3. **Time** (``search.dates``): the notes written on the days the question names get
   ``MEMORY_RECALL_DATE_BOOST`` times the best score added, and the notes of those days that no half
   found join the candidates with that boost alone (so "what did she do yesterday?" finds yesterday's
   notes whatever their words).
4. **Session window** (``recall.neighbours.windowed``, the table's hybrid path only: the index's
   candidates come without their vectors): a candidate gains a share of the best score among the
   candidates its conversation wrote just around it about the same thing (their stored vectors near).
5. **Neighbours** (``recall.neighbours``): the notes the best hit's conversation wrote just before and
   after it join the candidates (``MEMORY_RECALL_NEIGHBOURS``; 0: off).
6. **Slots** (``recall.selection``): a note asking a question weighs less (``MEMORY_RECALL_QUESTION_WEIGHT``),
   one note per group of near-identical notes, then diversity (off by default: it cost real
   conversations ten points at 10).

``bench/recall_quality.py`` runs ``rank_rows`` itself, step by step, for its ablation table.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TypeVar

from agent_memory.domain.shapes import RecallMode
from agent_memory.recall.neighbours import neighboured, windowed
from agent_memory.recall.selection import CANDIDATE_WINDOW, DEFAULT_QUESTION_WEIGHT, answer_slots
from agent_memory.search.bm25 import query_terms, rank_terms, words
from agent_memory.search.dates import named_days
from agent_memory.search.diversity import DEFAULT_DIVERSITY_WEIGHT
from agent_memory.search.expansion import DEFAULT_EXPANSION_TERMS, EXPANSION_DOCS, anchored, expansion_terms
from agent_memory.search.fusion import DEFAULT_KEYWORD_WEIGHT, weighted_fusion
from agent_memory.search.near_duplicates import Cosine
from agent_memory.search.vectors import QueryVector, decode
from agent_memory.storage.note_items import NoteText

DEFAULT_DATE_BOOST = 1.0
# The best hit's turn before and after it: on two real conversations it added about a point at 10 and cost
# nothing on the dev set (docs/recall-quality.md).
DEFAULT_NEIGHBOURS = 1
# Candidates each half (BM25, cosine) gives the fusion on the table's path, whatever ``k``: a note ranked
# 30th by one half and well by the other needs to be in both pools to be fused at its worth. 50 against
# 20 added two points at 10 on two real conversations and moved the dev set by under one; 100 gave no
# more at 10 (docs/recall-quality.md). The rows are in hand: the wider pool costs no read.
FUSION_POOL = 50

Place = TypeVar("Place", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Tuning:
    """The ranking's settings (``basics.settings``: ``MEMORY_RECALL_*``)."""

    keyword_weight: float = DEFAULT_KEYWORD_WEIGHT
    diversity_weight: float = DEFAULT_DIVERSITY_WEIGHT
    expansion_terms: int = DEFAULT_EXPANSION_TERMS
    date_boost: float = DEFAULT_DATE_BOOST
    neighbours: int = DEFAULT_NEIGHBOURS
    question_weight: float = DEFAULT_QUESTION_WEIGHT


def coverage(terms: Sequence[str], expansion: Mapping[str, float], text_terms: Sequence[str]) -> float:
    """The share of the query's terms a text holds (``search.fusion.query_coverage``), an expansion term
    counting its weight; at most 1 (1 for a query without terms)."""
    if not terms:
        return 1.0
    held = set(text_terms)
    found = sum(1 for term in set(terms) if term in held) + sum(w for t, w in expansion.items() if t in held)
    return min(1.0, found / len(set(terms)))


def dated(
    ranked: Sequence[tuple[Place, float]], on_days: Sequence[Place], *, holds: Callable[[Place], bool], boost: float
) -> list[tuple[Place, float]]:
    """``ranked`` with ``boost`` times its best score added to the places ``holds`` (written on the named days),
    and ``on_days`` (such places, best first) added where missing; best first, ties in the order given."""
    top = max((score for _, score in ranked), default=1.0) or 1.0
    scores = dict(ranked)
    for place in on_days:
        scores.setdefault(place, 0.0)
    boosted = [(place, score + boost * top if holds(place) else score) for place, score in scores.items()]
    return sorted(boosted, key=lambda pair: -pair[1])


def cosine_ranking(query: QueryVector, rows: Sequence[NoteText], *, tag: int, size: int) -> list[tuple[int, float]]:
    """The ``size`` rows (their places in ``rows``) whose stored vector of model ``tag`` is nearest the
    query, with their cosines, best first; rows without one are left out. Ties keep the rows' order."""
    stored = [(n, v) for n, row in enumerate(rows) if row.vector is not None and (v := decode(row.vector, tag=tag))]
    if not stored:
        return []
    cosines = query.cosines([v for _, v in stored])
    return heapq.nlargest(size, ((n, c) for (n, _), c in zip(stored, cosines, strict=True)), key=_second)


def _second(pair: tuple[int, float]) -> float:
    return pair[1]


def rank_rows(
    query: str,
    rows: Sequence[NoteText],
    *,
    vector: QueryVector | None,
    tag: int | None,
    today: date,
    k: int,
    tuning: Tuning,
) -> tuple[list[tuple[int, float]], RecallMode]:
    """The ``k`` rows to answer (their places in ``rows``, newest first as read), with their scores, and the
    mode: the steps of the module docstring over the rows in hand (no read)."""
    texts = [row.text for row in rows]
    bags = [words(text) for text in texts]  # analysed once for both passes and the feedback
    window = max(k, CANDIDATE_WINDOW, FUSION_POOL)
    terms = query_terms(query, texts)
    ranked = rank_terms(terms, bags)
    extra: dict[str, float] = {}
    if tuning.expansion_terms and ranked:
        best = [(bags[r.index], r.score) for r in ranked[:EXPANSION_DOCS]]
        extra = expansion_terms(terms, best, [set(bag) for bag in bags], count=tuning.expansion_terms)
    similar = cosine_ranking(vector, rows, tag=tag, size=window) if vector is not None and tag is not None else None

    def fused(keyword: list[tuple[int, float]], added: dict[str, float]) -> list[tuple[int, float]]:
        if similar is None:
            return keyword
        covered = {n: coverage(terms, added, bags[n]) for n, _ in keyword}
        return weighted_fusion(keyword, similar, keyword_weight=tuning.keyword_weight, coverage=covered)

    order = fused([(r.index, r.score) for r in ranked[:window]], {})
    if extra and order:
        again = [(r.index, r.score) for r in rank_terms(terms, bags, expansion=extra)[:window]]
        order = anchored(order[0], fused(again, extra))
    mode: RecallMode = "keyword" if similar is None else "hybrid"
    days = named_days(query, today) if tuning.date_boost else None
    if days is not None:
        matched = {r.index: r.score for r in ranked}
        on_days = sorted((n for n, row in enumerate(rows) if days.holds(row.day)), key=lambda n: -matched.get(n, 0.0))
        order = dated(order, on_days[:window], holds=lambda n: days.holds(rows[n].day), boost=tuning.date_boost)
    cosine = stored_cosine(rows, tag) if tag is not None else None
    if similar is not None and cosine is not None:
        order = windowed(order, {n: rows[n] for n, _ in order}, cosine)
    if tuning.neighbours:  # the rows carry their threads (``NoteStore.newest_texts(threads=True)``)
        order = neighboured(order, enumerate(rows), count=tuning.neighbours)
    if mode == "keyword":  # keyword mode answers notes holding a query word: time and expansion only reorder them
        holding = {r.index for r in ranked}
        order = [(n, score) for n, score in order if n in holding]
    slots = answer_slots(
        order, {n: texts[n] for n, _ in order}, k=k, diversity_weight=tuning.diversity_weight,
        question_weight=tuning.question_weight, cosine=cosine, newer=_newer_row,
    )  # fmt: skip
    return slots, mode


def _newer_row(first: int, second: int) -> bool:
    """Rows come newest first: the smaller place in them is the newer note."""
    return first < second


def stored_cosine(rows: Sequence[NoteText], tag: int) -> Cosine:
    """The cosine of two rows' stored vectors (their places in ``rows``), or None when either has none. Each
    row's vector is decoded once (the session window compares a candidate with up to six others)."""
    decoded: dict[int, tuple[QueryVector, tuple[memoryview, float]] | None] = {}

    def vector(place: int) -> tuple[QueryVector, tuple[memoryview, float]] | None:
        if place not in decoded:
            blob = rows[place].vector
            found = decode(blob, tag=tag) if blob is not None else None
            decoded[place] = (QueryVector(found[0].tolist()), found) if found is not None else None
        return decoded[place]

    def cosine(first: int, second: int) -> float | None:
        left, right = vector(first), vector(second)
        return left[0].cosine(right[1]) if left is not None and right is not None else None

    return cosine
