"""Fusing recall's two rankings (BM25 and cosine) into one: a weighted sum of normalised scores, or plain RRF.

**Weighted score fusion** (what recall uses, on both paths): each half's scores are brought to 0..1 over
the candidates it returned, then summed with weights,

    fused = w * coverage * bm25 / max(bm25)  +  (1 - w) * (cos - min(cos)) / (max(cos) - min(cos))

where ``w`` is ``MEMORY_RECALL_KEYWORD_WEIGHT`` (default 0.8), ``coverage`` the share of the query's terms
the note holds, and a note absent from a half scores 0 there. Coverage is what lets a paraphrase through:
BM25's maximum alone would give 1 to the best of many notes that match only the person's name in "does
Maya have any pets?", and those would all outrank the kitten note that only cosine finds.
Why not reciprocal rank fusion (kept below, for the bench's comparison): RRF sees ranks only, so BM25's
first hit (often far ahead of its second on a query naming a rare word) gets 1/61 against 1/62 for the
second, and any note ranked second by both halves overtakes it. Measured on the project's dev set
(``make bench``, bench/recall_quality.py), plain RRF's recall@1 falls below BM25's alone; the weighted
sum keeps BM25's strong first hits first and still lifts the notes that only cosine finds (a paraphrase).
Min-max normalisation of the cosines is needed because a model's cosines live in a narrow band (MiniLM's
unrelated texts score 0 to 0.2, related 0.4 to 0.8) that differs between models; dividing BM25 by its
maximum keeps "no match" at 0. The default weight is the best of 0.3..0.8 on the dev set for recall@1
whose recall@1 is not below BM25's alone (docs/recall-quality.md).

**Reciprocal rank fusion**: an item's score is the sum of ``1 / (RANK_CONSTANT + rank)`` over the rankings
that hold it; 60 is the constant of the original paper (Cormack, Clarke and Büttcher, SIGIR 2009).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

RANK_CONSTANT = 60
DEFAULT_KEYWORD_WEIGHT = 0.8

Item = TypeVar("Item", bound=Hashable)


def reciprocal_rank_fusion(*rankings: Sequence[Item]) -> list[tuple[Item, float]]:
    """Every item of any ranking with its fused score, best first; ties keep the order of first appearance."""
    scores: dict[Item, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (RANK_CONSTANT + rank)
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)


def _normalised(scored: Sequence[tuple[Item, float]], *, floor_at_min: bool) -> dict[Item, float]:
    if not scored:
        return {}
    values = [score for _, score in scored]
    high = max(values)
    low = min(values) if floor_at_min else 0.0
    if high <= low:
        return {item: 1.0 for item, _ in scored}
    return {item: (score - low) / (high - low) for item, score in scored}


def weighted_fusion(
    keyword: Sequence[tuple[Item, float]],
    semantic: Sequence[tuple[Item, float]],
    *,
    keyword_weight: float = DEFAULT_KEYWORD_WEIGHT,
    coverage: Mapping[Item, float] | None = None,
) -> list[tuple[Item, float]]:
    """Every item of either half with its fused score (0..1), best first; ties keep BM25's order, then cosine's.

    ``keyword`` holds BM25 scores (positive), ``semantic`` similarity scores (any monotonic form of cosine:
    min-max normalisation makes ``cos`` and OpenSearch's ``(1 + cos) / 2`` the same). ``coverage``: the
    share of the query's terms each keyword item holds (``query_coverage``), which scales its BM25 part.
    """
    bm25 = _normalised(keyword, floor_at_min=False)
    if coverage is not None:
        bm25 = {item: score * coverage.get(item, 1.0) for item, score in bm25.items()}
    cosine = _normalised(semantic, floor_at_min=True)
    order = list(dict.fromkeys([item for item, _ in keyword] + [item for item, _ in semantic]))
    fused = [
        (item, keyword_weight * bm25.get(item, 0.0) + (1.0 - keyword_weight) * cosine.get(item, 0.0)) for item in order
    ]
    return sorted(fused, key=lambda pair: pair[1], reverse=True)


def query_coverage(query_terms: Sequence[str], text_terms: Sequence[str]) -> float:
    """The share of the query's distinct terms that the text holds (0..1; 1 for a query without terms)."""
    wanted = set(query_terms)
    return len(wanted.intersection(text_terms)) / len(wanted) if wanted else 1.0
