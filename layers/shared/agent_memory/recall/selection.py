"""From recall's ranked candidates to the answer's slots: one note per group of near-identical notes, then diversity.

Both paths (the index and the table) rank a window of candidates (``CANDIDATE_WINDOW`` at least), fused or
BM25 alone; this step turns it into the ``k`` notes answered:

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

Place = TypeVar("Place", bound=Hashable)


def _newer(first: Any, second: Any) -> bool:
    return bool(first > second)


def answer_slots(
    ranked: Sequence[tuple[Place, float]],
    texts: dict[Place, str],
    *,
    k: int,
    diversity_weight: float,
    cosine: Cosine | None = None,
    newer: Callable[[Place, Place], bool] = _newer,
) -> list[tuple[Place, float]]:
    """The ``k`` candidates to answer, best first, with their scores (see the module docstring)."""
    keys = {place: text_key(texts[place]) for place, _ in ranked}
    kept = collapse(ranked, keys, newer=newer, cosine=cosine)
    return diversified(kept, keys, k=k, weight=diversity_weight)
