"""Recall through the index (a fake that misbehaves on purpose), with the notes read from the table (moto)."""

from __future__ import annotations

import pytest
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import ConnectionTimeout

from agent_memory import bootstrap
from agent_memory.basics.errors import EmbeddingUnavailable
from agent_memory.providers.notes_index import IndexHit
from agent_memory.recall.index_path import RESCORE_POOL
from tests.support.fake_embeddings import FakeEmbeddingModel
from tests.support.fake_index import FakeNotesIndex
from tests.support.scopes import private


@pytest.fixture
def index(monkeypatch):
    fake = FakeNotesIndex()
    bootstrap.provide(notes_index=fake)
    return fake


def _remember(call, text, context=None):
    return call("remember", {"context": context or private(), "arguments": {"text": text}}).body["note"]


def _recall(call, query, k=8, context=None):
    return call("recall", {"context": context or private(), "arguments": {"query": query, "k": k}})


def test_the_index_ranks_and_the_table_gives_the_notes(call, index):
    first = _remember(call, "likes tea")
    second = _remember(call, "likes green tea")
    index.hits = [IndexHit("user#u-1", "2026-12-03", 2, 3.5), IndexHit("user#u-1", "2026-12-03", 1, 1.25)]

    answer = _recall(call, "tea", k=5)

    assert answer.status == 200
    assert answer.body == {"notes": [{**second, "score": 3.5}, {**first, "score": 1.25}], "mode": "keyword"}
    assert index.searches == [("user#u-1", "tea", RESCORE_POOL)]  # BM25's pool, whatever k


def test_a_foreign_hit_from_the_index_is_filtered_out(call, index):
    mine = _remember(call, "secret tea")
    _remember(call, "secret tea", private("u-2"))
    index.hits = [IndexHit("user#u-2", "2026-12-03", 1, 9.0), IndexHit("user#u-1", "2026-12-03", 1, 1.0)]

    notes = _recall(call, "secret").body["notes"]

    assert [n["id"] for n in notes] == [mine["id"]]
    assert notes[0]["origin"]["user_id"] == "u-1"


def test_a_hit_claiming_the_scope_but_stored_elsewhere_never_leaks(call, index):
    """Even a hit that says it is ours is read from our partition only: the other scope's note is not there."""
    _remember(call, "other's note", private("u-2"))
    index.hits = [IndexHit("user#u-1", "2026-12-03", 1, 9.0)]

    assert _recall(call, "note").body["notes"] == []


def test_a_note_deleted_before_the_indexer_ran_is_not_returned(call, aws, index):
    _remember(call, "likes tea")
    aws.delete_item(TableName="MemoryTable", Key={"pk": {"S": "user#u-1"}, "sk": {"S": "note#2026-12-03#000000001"}})
    index.hits = [IndexHit("user#u-1", "2026-12-03", 1, 2.0)]

    assert _recall(call, "tea").body["notes"] == []


@pytest.mark.parametrize(
    "failure",
    [
        ConnectionTimeout("TIMEOUT", "read timed out", None),
        OpenSearchConnectionError("N/A", "connection refused", None),
        RuntimeError("anything else"),
    ],
)
def test_an_index_that_times_out_or_is_down_gives_the_dynamodb_fallback(call, index, failure):
    _remember(call, "likes tea")
    index.failure = failure

    answer = _recall(call, "tea")

    assert answer.status == 200
    assert answer.body["mode"] == "keyword"
    assert [n["text"] for n in answer.body["notes"]] == ["likes tea"]


def test_without_an_endpoint_there_is_no_index(monkeypatch):
    monkeypatch.delenv("OPENSEARCH_ENDPOINT", raising=False)
    assert bootstrap.services().notes_index is None
    monkeypatch.setenv("OPENSEARCH_ENDPOINT", " ")
    bootstrap.reset()
    assert bootstrap.services().notes_index is None


def test_an_unreachable_endpoint_degrades_to_the_fallback(call, monkeypatch):
    """The real client against a closed port: the answer still comes, from the table."""
    monkeypatch.setenv("OPENSEARCH_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("MEMORY_OPENSEARCH_TIMEOUT_S", "0.5")
    bootstrap.reset()
    _remember(call, "likes tea")

    answer = _recall(call, "tea")

    assert answer.status == 200
    assert [n["text"] for n in answer.body["notes"]] == ["likes tea"]


@pytest.fixture
def embedder(monkeypatch):
    fake = FakeEmbeddingModel()
    bootstrap.provide(embedding_model=fake)
    return fake


def _hit(position, score=1.0, scope="user#u-1"):
    return IndexHit(scope, "2026-12-03", position, score)


def test_with_embeddings_both_rankings_are_fused_by_weighted_normalised_scores(call, index, embedder, monkeypatch):
    monkeypatch.setenv("MEMORY_RECALL_NEIGHBOURS", "0")  # the fused scores alone, without the hit's neighbours
    bootstrap.reset()
    first, second, third = (_remember(call, text) for text in ("tea at nine", "green tea", "a kitten named Tea"))
    index.hits = [_hit(2, 7.0), _hit(1, 3.0)]  # BM25
    index.semantic_hits = [_hit(3, 0.9), _hit(2, 0.8)]  # kNN

    answer = _recall(call, "tea", k=3)

    assert answer.body["mode"] == "hybrid"
    assert [n["id"] for n in answer.body["notes"]] == [second["id"], first["id"], third["id"]]
    # 0.8 * coverage * BM25 / max(BM25) + 0.2 * min-max(cosine): 0.8 * 1 + 0.2 * 0, 0.8 * 3 / 7 + 0, 0 + 0.2 * 1
    assert [n["score"] for n in answer.body["notes"]] == [0.8, round(0.8 * 3 / 7, 6), 0.2]
    assert embedder.calls == [["tea"]]
    assert index.vector_searches == [("user#u-1", "tea", 20)]  # each half ranks at least 20 candidates
    assert index.searches == []


def test_when_no_note_holds_the_words_the_answer_is_semantic(call, index, embedder):
    note = _remember(call, "owns two cats")
    index.semantic_hits = [_hit(1, 0.7)]

    answer = _recall(call, "feline")

    assert answer.body == {"notes": [{**note, "score": 0.2}], "mode": "semantic"}


def test_an_embedding_failure_gives_keyword_mode_not_an_error(call, index, embedder):
    note = _remember(call, "likes tea")
    embedder.failure = EmbeddingUnavailable("the embedding model failed: ReadTimeout")
    index.hits = [_hit(1, 2.5)]

    answer = _recall(call, "tea", k=4)

    assert answer.status == 200
    assert answer.body == {"notes": [{**note, "score": 2.5}], "mode": "keyword"}
    assert index.searches == [("user#u-1", "tea", RESCORE_POOL)] and index.vector_searches == []


def test_a_foreign_hit_in_the_semantic_half_is_filtered_out(call, index, embedder):
    mine = _remember(call, "my cat")
    _remember(call, "their cat", private("u-2"))
    index.semantic_hits = [_hit(1, 0.99, scope="user#u-2"), _hit(1, 0.5)]

    notes = _recall(call, "kitten").body["notes"]

    assert [(n["id"], n["origin"]["user_id"]) for n in notes] == [(mine["id"], "u-1")]


def test_the_fused_answer_holds_at_most_k_notes_each_half_ranking_twenty_candidates(call, index, embedder):
    for i in range(1, 6):
        _remember(call, f"tea note {i}")
    index.hits = [_hit(i, 10.0 - i) for i in range(1, 6)]
    index.semantic_hits = [_hit(i, 1.0 / i) for i in range(5, 0, -1)]

    assert len(_recall(call, "tea", k=2).body["notes"]) == 2
    _recall(call, "tea", k=20)
    assert index.vector_searches[-1] == ("user#u-1", "tea", 20)
    assert _recall(call, "tea", k=21).status == 422


def test_a_hybrid_search_that_fails_gives_the_dynamodb_fallback(call, index, embedder):
    _remember(call, "likes tea")
    index.failure = ConnectionTimeout("TIMEOUT", "read timed out", None)

    answer = _recall(call, "tea")

    assert answer.body["mode"] == "keyword"
    assert [n["text"] for n in answer.body["notes"]] == ["likes tea"]


def test_when_only_bm25_finds_notes_the_mode_says_keyword(call, index, embedder):
    """No note has a vector yet (the model was down when they were written): only the words matched."""
    note = _remember(call, "likes tea")
    index.hits = [_hit(1, 2.0)]

    answer = _recall(call, "tea").body

    assert answer == {"notes": [{**note, "score": 0.8}], "mode": "keyword"}
    index.hits = []
    assert _recall(call, "nothing matches").body == {"notes": [], "mode": "keyword"}  # neither half found one
