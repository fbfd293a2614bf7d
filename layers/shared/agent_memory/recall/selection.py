"""From recall's ranked candidates to the answer's slots: one note per group of near-identical notes, then diversity.

Both paths (the index and the table) rank a window of candidates (``CANDIDATE_WINDOW`` at least), fused or
BM25 alone; this step turns it into the ``k`` notes answered:

0. **Questions** (``asking_weighted``): a note that asks a question ("Tell me more about your road trip.
   Was it relaxing?") shares the question's words but holds no answer to it; its score is multiplied by
   ``MEMORY_RECALL_QUESTION_WEIGHT``, so that a note stating the thing comes first, and the question's
   reply (its neighbour) can still join.
1. **Near-duplicates** (``search.near_duplicates``): a group of near-identical notes keeps one entry, its
   newest note, at the best place any member had.
2. **Diversity** (``search.diversity``): maximal marginal relevance over what is left, at
   ``MEMORY_RECALL_DIVERSITY_WEIGHT``.

A candidate's place is ``(day, position)`` (the bench uses plain positions): both order notes by when
they were written, so "newest" is the larger place.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from agent_memory.search.diversity import diversified
from agent_memory.search.near_duplicates import Cosine, collapse, text_key

# Candidates each path gathers before this step, whatever ``k``: enough that a near-copy or a second
# wording dropped from the answer leaves another note to take its slot.
CANDIDATE_WINDOW = 20
# A candidate that asks a question keeps this share of its score: on two real conversations, 0.8 lifted
# recall@10 0.701 -> 0.714 and @1 0.373 -> 0.380; 0.7 gave 0.712 and 0.85 0.710. The dev set's notes ask
# nothing, so it did not move (docs/recall-quality.md).
DEFAULT_QUESTION_WEIGHT = 0.8

Place = TypeVar("Place", bound=Hashable)


def _newer(first: Any, second: Any) -> bool:
    return bool(first > second)


def asking_weighted(
    ranked: Sequence[tuple[Place, float]], texts: dict[Place, str], *, weight: float
) -> list[tuple[Place, float]]:
    """``ranked`` with the score of each note asking a question (its text holds a ``?``) times ``weight``,
    best first, ties in the order given."""
    if weight == 1.0:
        return list(ranked)
    weighted = [(place, score * weight if "?" in texts[place] else score) for place, score in ranked]
    return sorted(weighted, key=lambda pair: -pair[1])


def answer_slots(
    ranked: Sequence[tuple[Place, float]],
    texts: dict[Place, str],
    *,
    k: int,
    diversity_weight: float,
    question_weight: float = DEFAULT_QUESTION_WEIGHT,
    cosine: Cosine | None = None,
    newer: Callable[[Place, Place], bool] = _newer,
) -> list[tuple[Place, float]]:
    """The ``k`` candidates to answer, best first, with their scores (see the module docstring)."""
    ranked = asking_weighted(ranked, texts, weight=question_weight)
    keys = {place: text_key(texts[place]) for place, _ in ranked}
    kept = collapse(ranked, keys, newer=newer, cosine=cosine)
    return diversified(kept, keys, k=k, weight=diversity_weight)
