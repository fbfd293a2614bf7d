"""The notes index's keyword search asks the scope's own BM25 statistics, and reads them, or none."""

from __future__ import annotations

from agent_memory.providers.index_queries import KNN_CANDIDATES, Candidates, IndexHit, bm25, candidates, knn, scope_size
from agent_memory.search.bm25 import Collection

SCOPE = "user#u-1"


def _answer(buckets=None):
    hit = {"_source": {"scope": SCOPE, "day": "2026-12-03", "position": 1, "text": "Adopted a kitten"}, "_score": 2.0}
    answer = {"hits": {"hits": [hit]}}
    if buckets is not None:
        answer["aggregations"] = {"holding": {"buckets": {t: {"doc_count": n} for t, n in buckets.items()}}}
    return answer


def test_the_keyword_search_counts_each_term_of_the_query_and_the_expansion_within_the_scope():
    body = bm25(SCOPE, "Does Maya have the kittens?", 50, {"miso": 0.4})

    assert body["size"] == 50
    assert body["query"]["bool"]["filter"] == [{"term": {"scope": SCOPE}}]  # the counts are of matches in the scope
    assert body["aggs"] == {
        "holding": {
            "filters": {
                "filters": {
                    "maya": {"term": {"text": "maya"}},
                    "kitten": {"term": {"text": "kitten"}},  # the analysed term, as the index holds it
                    "miso": {"term": {"text": "miso"}},
                }
            }
        }
    }
    assert scope_size(SCOPE) == {
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"filter": [{"term": {"scope": SCOPE}}]}},
    }


def test_a_query_of_stop_words_alone_counts_nothing():
    assert "aggs" not in bm25(SCOPE, "what did she have?", 50)


def test_the_answer_gives_the_hits_and_the_scope_statistics():
    found = candidates(_answer({"kitten": 3}), {"hits": {"total": {"value": 293}}})

    assert found == Candidates(
        [IndexHit(SCOPE, "2026-12-03", 1, 2.0, "Adopted a kitten")], Collection(293, {"kitten": 3})
    )


def test_a_failed_count_or_a_missing_aggregation_leaves_the_statistics_out():
    failed_count = candidates(_answer({"kitten": 3}), {"error": {"type": "search_phase_execution_exception"}})
    no_aggregation = candidates(_answer(), {"hits": {"total": {"value": 293}}})

    assert failed_count.collection is None and no_aggregation.collection is None
    assert failed_count.hits == no_aggregation.hits != []


def test_the_knn_search_walks_more_candidates_than_it_returns_within_the_scope():
    body = knn(SCOPE, [0.1, 0.2], 20)

    assert body["size"] == 20
    assert body["query"]["knn"]["embedding"]["k"] == KNN_CANDIDATES > 20  # Lucene's ef_search is k
    assert body["query"]["knn"]["embedding"]["filter"] == {"term": {"scope": SCOPE}}
