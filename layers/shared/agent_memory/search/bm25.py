"""Okapi BM25 over a handful of notes, in Python: the ranking of recall's keyword fallback (docs/api.md §3).

Why a small BM25 here rather than SQLite FTS5's ``bm25()``:

- **One tokenizer for matching and scoring.** The contract says which notes qualify (those holding any
  of the query's words, case-insensitive); with FTS5 the match would be FTS5's ``unicode61`` tokenizer
  and its query language, which gives meaning to ``AND``, ``NEAR``, ``*``, quotes and column filters in
  model-written text. Every query would need escaping, and a slip there is a 500 or a wrong answer.
  Here a term is what ``search.analysis`` makes of a word (lower-cased, stop words dropped, stemmed),
  for the notes and the query alike, exactly as the notes index's analyzer does, and there is no query
  language to escape.
- **No dependence on how the runtime's SQLite was compiled.** FTS5 is a compile-time option; the stdlib
  ``sqlite3`` of a Lambda runtime is not ours to choose.
- **It is cheap at the sizes the fallback reads** (at most ``recall.KEYWORD_MAX_NOTES`` notes): building
  an in-memory FTS5 table costs an insert per note before the first score, while this is one pass of a
  regex and a dict over the texts. `make bench` has the figures.

The scoring is Lucene's BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5) / (n + 0.5))), the
similarity OpenSearch uses for ``text`` fields, so the fallback ranks like the index does. Its idf is
always positive, so every matching note has a score above zero and more matched words never lower it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent_memory.search.analysis import terms

K1 = 1.2
B = 0.75
# A query is a model's few words. Past this many distinct ones, the rarest among the notes are kept (the
# ones that decide a ranking), never the first ones: a long query ending with its one distinctive word finds it.
MAX_QUERY_TERMS = 1024


def words(text: str) -> list[str]:
    """The terms of a text (``search.analysis``): the unit of matching and of scoring."""
    return terms(text)


def query_terms(query: str, texts: Sequence[str] = ()) -> list[str]:
    """The query's distinct words, in order (a repeated word counts once); over ``MAX_QUERY_TERMS``, those
    that the fewest of ``texts`` hold (ties: the first ones)."""
    distinct = list(dict.fromkeys(words(query)))
    if len(distinct) <= MAX_QUERY_TERMS:
        return distinct
    held: Counter[str] = Counter()
    for text in texts:
        held.update(set(words(text)))
    rarest = sorted(range(len(distinct)), key=lambda place: (held[distinct[place]], place))[:MAX_QUERY_TERMS]
    keep = {distinct[place] for place in rarest}
    return [term for term in distinct if term in keep]


@dataclass(frozen=True, slots=True)
class Ranked:
    """A document's place in ``texts`` and its score."""

    index: int
    score: float


def rank(query: str, texts: Sequence[str], *, expansion: Mapping[str, float] | None = None) -> list[Ranked]:
    """The texts holding at least one of the query's words, best first.

    Ties keep the order of ``texts``: the caller passes them newest first, so of two equally good
    notes the newer one comes first. ``expansion``: more terms (``search.expansion``) with their weights
    (a query term weighs 1); a text holding only those matches too.
    """
    return rank_terms(query_terms(query, texts), [words(text) for text in texts], expansion=expansion)


@dataclass(frozen=True, slots=True)
class Collection:
    """BM25's statistics of the collection a ranking stands for, when ``bags`` are only part of it (the
    notes index's candidates): how many documents it holds, and how many of them hold each term."""

    documents: int
    holding: Mapping[str, int]


def rank_terms(
    terms: Sequence[str],
    bags: Sequence[Sequence[str]],
    *,
    expansion: Mapping[str, float] | None = None,
    collection: Collection | None = None,
) -> list[Ranked]:
    """``rank`` over texts already analysed (``words`` of each): a caller ranking twice analyses once.

    ``collection``: the idf is the collection's (a term it does not count is taken as held by no other
    document); None: ``bags`` are the collection. The average length is always the bags' (measured on the
    dev set, the index's 50 candidates' mean length ranks as the scope's: docs/recall-quality.md)."""
    weight = dict.fromkeys(terms, 1.0) | {term: w for term, w in (expansion or {}).items() if term not in terms}
    if not weight or not bags:
        return []
    counted: list[Counter[str]] = []
    lengths: list[int] = []
    frequency: Counter[str] = Counter()
    for tokens in bags:
        bag = Counter(token for token in tokens if token in weight)
        counted.append(bag)
        lengths.append(len(tokens))
        frequency.update(bag.keys())
    count = len(bags)
    if collection is not None:
        frequency = Counter({term: max(held, collection.holding.get(term, 0)) for term, held in frequency.items()})
        count = max(count, collection.documents)
    average = sum(lengths) / len(bags) or 1.0
    idf = {term: math.log(1 + (count - frequency[term] + 0.5) / (frequency[term] + 0.5)) for term in weight}
    ranked = []
    for index, bag in enumerate(counted):
        if not bag:
            continue
        norm = K1 * (1 - B + B * lengths[index] / average)
        score = sum(weight[term] * idf[term] * tf * (K1 + 1) / (tf + norm) for term, tf in bag.items())
        ranked.append(Ranked(index, score))
    ranked.sort(key=lambda r: -r.score)
    return ranked
