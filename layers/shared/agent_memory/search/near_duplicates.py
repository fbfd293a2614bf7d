"""Near-identical notes: which notes say the same thing, so that recall and the context block spend one slot on them.

Notes are append-only (a model that repeats itself writes the fact again), so a scope can hold "Prefers
metric units" three times. Two notes are **near-identical** when

- they hold the same terms after cleaning (``search.analysis``: lower-cased, stop words dropped, stemmed,
  in any order): "Prefers metric units." and "prefers the metric units" are one fact; or
- both have vectors of the same model, their cosine is at least ``NEAR_DUPLICATE_COSINE`` (0.9), **and**
  one's terms are all among the other's (nothing was changed, only words added or left out).

Why both conditions for the second rule, measured with all-MiniLM-L6-v2 (the project's local model): a
rewording of one fact scores 0.93 to 0.98 ("Her sister Noor is a paramedic." / "Sister Noor works as a
paramedic."; "Plays squash every Monday evening" / "on Monday evenings"), but so does a *different* fact
that changes one word ("The billing meeting moved to Monday." / "... to Tuesday.": 0.966; a red and a
silver Skoda: 0.873). The cosine alone would hide a changed fact behind its older version; the term
containment stops that, and the cosine stops a short note from swallowing every longer one that holds
its words ("Prefers metric units" / "Prefers metric units and ISO dates": 0.743, two facts kept).
Below the threshold, the answer's diversity (``search.diversity``) still spreads the slots over
different facts without hiding any note.

Of a group, the **newest** stands for the others (the latest wording of a fact is the one a person last
confirmed); it takes the best place any member of the group had.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from agent_memory.search.analysis import terms

NEAR_DUPLICATE_COSINE = 0.9

Item = TypeVar("Item", bound=Hashable)
# The cosine of two items' vectors, or None when either has none (then only the terms decide).
Cosine = Callable[[Any, Any], "float | None"]


def text_key(text: str) -> frozenset[str]:
    """What "the same text after cleaning" compares: the text's distinct terms (``search.analysis``)."""
    return frozenset(terms(text))


def same_fact(first: frozenset[str], second: frozenset[str], similarity: float | None) -> bool:
    """The rule above, given two texts' keys (``text_key``) and their vectors' cosine (None: no vectors)."""
    if not first or not second:
        return False
    if first == second:
        return True
    contained = first <= second or second <= first
    return contained and similarity is not None and similarity >= NEAR_DUPLICATE_COSINE


def near_identical(first: Item, second: Item, keys: dict[Item, frozenset[str]], cosine: Cosine | None) -> bool:
    """``same_fact`` for two items, their cosine asked of ``cosine`` only when the terms alone do not decide."""
    one, other = keys[first], keys[second]
    if not one or not other or one == other or not (one <= other or other <= one):
        return bool(one) and one == other
    return same_fact(one, other, cosine(first, second) if cosine is not None else None)


def collapse(
    ranked: Sequence[tuple[Item, float]],
    keys: dict[Item, frozenset[str]],
    *,
    newer: Callable[[Item, Item], bool],
    cosine: Cosine | None = None,
) -> list[tuple[Item, float]]:
    """One entry per group of near-identical items, best first: the group's newest item at the best place
    and score any member had. ``keys``: each item's ``text_key``; ``newer(a, b)``: a was written after b."""
    kept: list[tuple[Item, float]] = []
    for item, score in ranked:
        for place, (standing, best) in enumerate(kept):
            if near_identical(item, standing, keys, cosine):
                if newer(item, standing):
                    kept[place] = (item, best)
                break
        else:
            kept.append((item, score))
    return kept


def newest_of_each(
    items_newest_first: Sequence[Item], texts: dict[Item, str], cosine: Cosine | None = None
) -> list[Item]:
    """The items that stand for their group (the first, newest, of each), in the order given."""
    keys = {item: text_key(texts[item]) for item in items_newest_first}
    kept: list[Item] = []
    for item in items_newest_first:
        if not any(near_identical(item, standing, keys, cosine) for standing in kept):
            kept.append(item)
    return kept


def similar_to(
    text: str, candidates: Sequence[tuple[Item, str]], *, cosines: dict[Item, float] | None = None
) -> list[Item]:
    """The candidates near-identical to ``text``: same terms, or (``cosines``: each candidate's cosine with
    the text's vector, where both have one) the cosine rule of the module docstring."""
    key = text_key(text)
    return [item for item, other in candidates if same_fact(key, text_key(other), (cosines or {}).get(item))]
