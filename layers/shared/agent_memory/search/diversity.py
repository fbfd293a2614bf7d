"""Diversity in recall's answer: maximal marginal relevance (Carbonell and Goldstein, 1998) over the candidates.

The fusion ranks each note on its own, so a scope that holds a fact in three wordings can fill three of
the answer's slots with it while a second fact that the question also needs sits at rank nine. MMR picks
the answer one note at a time; each pick maximises

    w * relevance / max(relevance)  -  (1 - w) * max(similarity to the notes already picked)

where ``w`` is ``MEMORY_RECALL_DIVERSITY_WEIGHT`` (1: the fused order unchanged) and the similarity is the
cosine of the two notes' term sets (``search.analysis`` terms, each counted once): no vector is needed, so
both paths and every mode diversify the same way, and it costs a few set intersections per candidate
(20 candidates: well under a millisecond). The first pick is always the most relevant note, so recall@1
never changes; what changes is which notes fill the slots after it.

The answer's score is the pick's value in the relevance's units, ``relevance - max(relevance) * (1 - w) / w
* max similarity`` (at least 0): a note like none picked before it keeps its own score, the score never
rises down the list (a note's penalty only grows as others are picked), and higher is still better.
The default is 1, no diversity: where the dev set and real conversations disagree, the real ones win
(docs/recall-quality.md); a deployment whose notes restate one fact in many wordings can set it lower.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

# Off: on two real conversations (LoCoMo) the evidence of a question is often several turns that resemble
# each other, and diversity at 0.4 cost recall@10 0.686 -> 0.587 there while it helped only the synthetic dev
# set, whose several-note facts are worded apart on purpose (docs/recall-quality.md).
DEFAULT_DIVERSITY_WEIGHT = 1.0

Item = TypeVar("Item", bound=Hashable)


def term_similarity(first: frozenset[str], second: frozenset[str]) -> float:
    """The cosine of two binary term vectors (0..1; 0 when either is empty)."""
    if not first or not second:
        return 0.0
    return len(first & second) / math.sqrt(len(first) * len(second))


def diversified(
    ranked: Sequence[tuple[Item, float]], features: Mapping[Item, frozenset[str]], *, k: int, weight: float
) -> list[tuple[Item, float]]:
    """The ``k`` picks of MMR over ``ranked`` (items with positive relevance, best first), with their scores.

    ``weight`` 1 (or fewer than two candidates) is the ranking's own first ``k``; ``weight`` 0 is taken as a
    very small weight (relevance only breaks ties). Ties keep the ranking's order.
    """
    if weight >= 1.0 or len(ranked) < 2:
        return list(ranked[:k])
    top = max(score for _, score in ranked) or 1.0
    weight = max(weight, 1e-6)
    left = list(ranked)
    penalty = [0.0] * len(left)  # each candidate's largest similarity to a picked note so far
    picked: list[tuple[Item, float]] = []
    while left and len(picked) < k:
        values = [weight * score / top - (1.0 - weight) * penalty[n] for n, (_, score) in enumerate(left)]
        best = max(range(len(left)), key=lambda n: (values[n], -n))
        item, _ = left.pop(best)
        penalty.pop(best)
        picked.append((item, max(0.0, top * values[best] / weight)))
        chosen = features.get(item, frozenset())
        penalty = [
            max(p, term_similarity(chosen, features.get(other, frozenset())))
            for p, (other, _) in zip(penalty, left, strict=True)
        ]
    return picked
