"""Reciprocal rank fusion: several rankings of the same items merged into one, by rank alone.

An item's fused score is the sum, over the rankings that hold it, of ``1 / (RANK_CONSTANT + rank)``
(rank counted from 1). BM25 scores and cosine similarities live on scales that cannot be compared, and
normalising them needs the whole result distribution; ranks need nothing. 60 is the constant of the
original paper (Cormack, Clarke and Büttcher, SIGIR 2009) and of OpenSearch's and Elasticsearch's RRF.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

RANK_CONSTANT = 60

Item = TypeVar("Item", bound=Hashable)


def reciprocal_rank_fusion(*rankings: Sequence[Item]) -> list[tuple[Item, float]]:
    """Every item of any ranking with its fused score, best first; ties keep the order of first appearance."""
    scores: dict[Item, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (RANK_CONSTANT + rank)
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)
