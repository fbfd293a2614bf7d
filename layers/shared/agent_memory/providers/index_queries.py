"""The notes index's search bodies and how their answers are read (``providers.notes_index`` sends them).

Every body filters on the scope (``term`` on ``scope``), and every hit returns its stored ``scope`` so
that the caller can check it once more (fail closed).

**The scope's own BM25 statistics.** A node scores BM25 with the statistics of its shard (every scope
routed there), not the scope's: a person's name is rare in the shard and common in their own notes, so
the node ranks a note holding only the name above one holding the question's other words. The keyword
search therefore carries what recall needs to score its candidates again with the scope's statistics
(``search.bm25.Collection``), at no extra round trip:

- a ``filters`` aggregation counting, for each of the query's terms (``search.analysis``, as the node's
  analyzer makes them; expansion terms too), the matched notes that hold it. Every note of the scope
  holding a term of the query matches the query, so the count is the scope's document frequency, and
  the scope filter keeps any other scope's notes out of it;
- a second search in the same ``_msearch``, ``size`` 0, counting the scope's notes (``track_total_hits``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_memory.search.bm25 import Collection, query_terms
from agent_memory.search.dates import Days

HIT_FIELDS = ("scope", "day", "position", "text")
# The Lucene engine's HNSW search keeps ``k`` candidates as it walks the graph (its ef_search): asked for
# the 20 nearest alone, it missed some of the scope's true 20 and recall's hybrid answer varied from one
# build of the graph to the next (docs/recall-quality.md, "On a node"). It returns the best ``size`` of them.
KNN_CANDIDATES = 100
# Best score first, and of equal scores the newest note, as the table's path orders them: a scope holds
# the same filler many times, and without it the node keeps the oldest copies (its document order).
NEWEST_AMONG_EQUALS = ["_score", {"day": "desc"}, {"position": "desc"}]


@dataclass(frozen=True, slots=True)
class IndexHit:
    """A hit: the scope it was stored under (to check again), where the note is, and its score."""

    scope: str
    day: str
    position: int
    score: float
    text: str = ""  # the note's text, for the fusion's query coverage


@dataclass(frozen=True, slots=True)
class Candidates:
    """A keyword search's hits, best first by the node's BM25, and the scope's statistics for its terms
    (None: the count of the scope's notes failed or the aggregation is missing; the node's order stands)."""

    hits: list[IndexHit]
    collection: Collection | None = None


def in_scope(scope_key: str) -> dict[str, Any]:
    return {"term": {"scope": scope_key}}


def bm25(scope_key: str, query: str, size: int, expansion: Mapping[str, float] | None = None) -> dict[str, Any]:
    """BM25 on ``text``, any of the query's words; ``expansion``'s terms (already analysed: stems, so a
    ``term`` query, never analysed again) match too, each boosted by its weight. With the ``filters``
    aggregation of the module docstring over the query's and the expansion's terms."""
    expansion = expansion or {}
    words: list[dict[str, Any]] = [{"match": {"text": {"query": query, "operator": "or"}}}]
    words += [{"term": {"text": {"value": term, "boost": weight}}} for term, weight in expansion.items()]
    body: dict[str, Any] = {
        "size": size,
        "_source": list(HIT_FIELDS),
        "query": {"bool": {"filter": [in_scope(scope_key)], "should": words, "minimum_should_match": 1}},
        "sort": NEWEST_AMONG_EQUALS,
    }
    counted = dict.fromkeys([*query_terms(query), *expansion])
    if counted:
        buckets = {term: {"term": {"text": term}} for term in counted}
        body["aggs"] = {"holding": {"filters": {"filters": buckets}}}
    return body


def scope_size(scope_key: str) -> dict[str, Any]:
    """Counts the scope's notes: ``size`` 0, the filter alone (Lucene counts a term's postings)."""
    return {"size": 0, "track_total_hits": True, "query": {"bool": {"filter": [in_scope(scope_key)]}}}


def knn(scope_key: str, vector: list[float], size: int) -> dict[str, Any]:
    """The scope's ``size`` nearest neighbours of ``vector``, of the ``KNN_CANDIDATES`` the graph search keeps.
    The scope filter is the Lucene engine's efficient filter: applied while the graph is searched, so the
    scope's nearest come back even when the shard holds many scopes (a post-filter would return fewer)."""
    k = max(size, KNN_CANDIDATES)
    return {
        "size": size,
        "_source": list(HIT_FIELDS),
        "query": {"knn": {"embedding": {"vector": vector, "k": k, "filter": in_scope(scope_key)}}},
    }


def on_days(scope_key: str, query: str, days: Days, size: int) -> dict[str, Any]:
    """The scope's notes written on ``days``, those holding the query's words first (BM25), then the newest."""
    return {
        "size": size,
        "_source": list(HIT_FIELDS),
        "query": {
            "bool": {
                "filter": [in_scope(scope_key), {"range": {"day": {"gte": days.first, "lte": days.last}}}],
                "should": [{"match": {"text": {"query": query, "operator": "or"}}}],
            }
        },
        "sort": NEWEST_AMONG_EQUALS,
    }


def hits(answer: dict[str, Any]) -> list[IndexHit]:
    return [
        IndexHit(
            hit["_source"]["scope"],
            hit["_source"]["day"],
            int(hit["_source"]["position"]),
            hit["_score"],
            hit["_source"].get("text", ""),
        )
        for hit in answer["hits"]["hits"]
    ]


def candidates(keyword: dict[str, Any], size: dict[str, Any]) -> Candidates:
    """A keyword search's answer and the scope's count (``scope_size``), from one ``_msearch``."""
    buckets = keyword.get("aggregations", {}).get("holding", {}).get("buckets")
    if "error" in size or buckets is None:
        return Candidates(hits(keyword))
    holding = {term: int(bucket["doc_count"]) for term, bucket in buckets.items()}
    return Candidates(hits(keyword), Collection(int(size["hits"]["total"]["value"]), holding))
