"""Query expansion without a model: pseudo-relevance feedback on the BM25 half (RM3-style), the same on both paths.

A question often names one side of a fact that memory holds in two notes: "how is the vegetable garden
going?" finds "Started a vegetable garden at the allotment", but not "Tomatoes at the allotment got
blight", which shares no word with the question. Relevance feedback takes the words the best hits share
and asks again with them:

1. the first BM25 pass ranks the candidates as before;
2. from its ``EXPANSION_DOCS`` (3) best texts, each new term is weighed as RM3's relevance model does,
   ``sum over those texts of p(text) * tf / length``, where ``p(text)`` is the text's share of their BM25
   scores, times ``log(1 + N / df)`` over the collection (a word most notes hold, such as the person's
   name, is no evidence); a word no other note holds is left out (it would find nothing new). The
   collection is every note the table's path read; the index's path knows no collection in hand (a
   term's document frequency would be one more request), so there the words weigh by RM3's first
   factor alone;
3. the ``MEMORY_RECALL_EXPANSION_TERMS`` best (default in docs/recall-quality.md; 0 turns it off) join the
   query, weighted ``EXPANSION_WEIGHT`` times their share of the best one (the question's own terms weigh
   1), and BM25 ranks again: in process on the table's path, one more ``_search`` on the index.

4. the first ranking's best note stays first (``anchored``, applied by recall after the fusion, so the
   cosine half cannot undo it): feedback finds notes *related to* the best hit, it must not displace it.
   Measured on the dev set's hybrid path with 5 terms, the second pass unanchored moved recall@1 from
   0.486 to 0.380 (the feedback texts, holding every feedback word, overtook the first hit); anchored on
   the BM25 half only, to 0.417; anchored after the fusion, 0.478, with recall@10 still lifted.

Bounded in terms (at most 10), in texts (3) and in time: the table's second pass re-scores the rows it
already read (no read), the index's is one request of the same size as the first.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence, Set
from typing import TypeVar

EXPANSION_DOCS = 3
EXPANSION_WEIGHT = 0.4
MAX_EXPANSION_TERMS = 10
DEFAULT_EXPANSION_TERMS = 3
# Below the first pass's best, a second-pass score is at most this share of it (see ``anchored``).
_BELOW_FIRST = 0.999

Item = TypeVar("Item", bound=Hashable)


def expansion_terms(
    query_terms: Sequence[str],
    best: Sequence[tuple[Sequence[str], float]],
    collection: Sequence[Set[str]] | None,
    *,
    count: int,
) -> dict[str, float]:
    """Up to ``count`` new terms with their weights (``EXPANSION_WEIGHT`` for the strongest), from the first
    pass's ``best`` (a text's terms, its BM25 score), best first, and the ``collection``'s term sets (None:
    not known, then neither the idf nor the "held elsewhere" rule applies)."""
    top = [(bag, score) for bag, score in best[:EXPANSION_DOCS] if score > 0]
    count = min(count, MAX_EXPANSION_TERMS)
    if not top or count <= 0:
        return {}
    feedback: Counter[str] = Counter()
    for bag, _ in top:
        feedback.update(set(bag))
    held: Counter[str] = Counter()
    for text_terms in collection if collection is not None else ():
        held.update(text_terms)
    size = len(collection) if collection is not None else 0
    total = sum(score for _, score in top)
    weights: defaultdict[str, float] = defaultdict(float)
    asked = set(query_terms)
    for bag, score in top:
        length = len(bag) or 1
        for term, tf in Counter(bag).items():
            if term in asked or term.isdigit() or (size and held[term] <= feedback[term]):
                continue  # asked already, a number, or in no other text: it would find nothing new
            rarity = math.log(1 + size / held[term]) if size else 1.0
            weights[term] += (score / total) * (tf / length) * rarity
    chosen = sorted(weights.items(), key=lambda pair: -pair[1])[:count]
    if not chosen:
        return {}
    strongest = chosen[0][1]
    return {term: EXPANSION_WEIGHT * weight / strongest for term, weight in chosen}


def anchored(best: tuple[Item, float], second: Sequence[tuple[Item, float]]) -> list[tuple[Item, float]]:
    """The second pass's ranking with the first pass's ``best`` first at its own score, every other item's
    score held just below it; best first, ties in the second pass's order."""
    first, score = best
    others = [(item, min(value, score * _BELOW_FIRST)) for item, value in second if item != first]
    return [best, *sorted(others, key=lambda pair: -pair[1])]
