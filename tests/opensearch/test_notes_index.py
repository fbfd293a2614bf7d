"""The notes index on a real OpenSearch node: mapping, alias, scope filter and routing, deletes, the flag."""

from __future__ import annotations

import pytest

from agent_memory import bootstrap
from agent_memory.domain.notes import Note, Origin
from agent_memory.providers.notes_index import (
    MAPPING,
    BulkOutcome,
    IndexMappingMismatch,
    NotesIndex,
    Remove,
    UpdateKeepingVector,
    document_id,
)
from tests.support.fake_embeddings import FakeEmbeddingModel, fake_vector
from tests.support.scopes import private, shared

pytestmark = pytest.mark.slow


def _note(position, text, *, consolidated=False):
    return Note(
        "2026-12-03", position, text, "2026-12-03T10:15:00.000Z", "remember", Origin("u-1", "t-1"), consolidated
    )


def test_ensure_creates_a_versioned_index_behind_the_alias_with_the_mapping(notes_index, opensearch_client):
    alias = notes_index._alias
    [(name, _)] = opensearch_client.indices.get_alias(name=alias).items()
    assert name == f"{alias}-v3" == notes_index.name
    live = opensearch_client.indices.get_mapping(index=alias)[name]["mappings"]
    assert live["properties"]["text"]["analyzer"] == "memory_english"
    assert live["properties"]["embedding"]["method"]["engine"] == "lucene"
    assert live["properties"]["embedding"]["method"]["space_type"] == "cosinesimil"
    assert {field: spec["type"] for field, spec in live["properties"].items()} == {
        field: spec["type"] for field, spec in MAPPING["properties"].items()
    }
    notes_index.ensure()  # idempotent


def test_a_drifted_mapping_is_refused(opensearch_client):
    opensearch_client.indices.create(index="drifted-v1", body={"mappings": {"properties": {"scope": {"type": "text"}}}})
    opensearch_client.indices.put_alias(index="drifted-v1", name="drifted")
    try:
        with pytest.raises(IndexMappingMismatch):
            NotesIndex(opensearch_client, alias="drifted").ensure()
    finally:
        opensearch_client.indices.delete(index="drifted-v1")


def test_bm25_within_the_scope_only_best_first(notes_index):
    notes_index.put_many("user#u-1", [_note(1, "the team deploys the billing service every tuesday")])
    notes_index.put_many("user#u-1", [_note(2, "the team deploys the kubernetes cluster every friday")])
    notes_index.put_many("user#u-1", [_note(3, "the team likes pizza")])
    notes_index.put_many("user#u-2", [_note(1, "kubernetes cluster kubernetes cluster")])
    notes_index.put_many("ws#w-a", [_note(1, "kubernetes cluster")])
    notes_index.refresh()

    hits = notes_index.keyword("user#u-1", "Kubernetes cluster deploys", k=8).hits

    assert [(h.scope, h.position) for h in hits] == [("user#u-1", 2), ("user#u-1", 1)]
    assert hits[0].score > hits[1].score > 0
    assert [h.scope for h in notes_index.keyword("ws#w-a", "kubernetes", k=8).hits] == ["ws#w-a"]
    assert notes_index.count("user#u-1") == 3


def test_documents_are_routed_by_scope(notes_index, opensearch_client):
    notes_index.put_many("ws#w-a", [_note(1, "routed")])
    document = opensearch_client.get(
        index=notes_index._alias, id=document_id("ws#w-a", "2026-12-03.1"), routing="ws#w-a"
    )
    assert document["_routing"] == "ws#w-a"


def test_a_deleted_note_is_gone_and_deleting_twice_is_fine(notes_index):
    notes_index.put_many("user#u-1", [_note(1, "likes tea")])
    notes_index.refresh()
    notes_index.delete("user#u-1", "2026-12-03.1")
    notes_index.delete("user#u-1", "2026-12-03.1")
    notes_index.refresh()

    assert notes_index.keyword("user#u-1", "tea", k=8).hits == []


def test_the_consolidated_flag_reaches_the_index(notes_index, opensearch_client):
    notes_index.put_many("user#u-1", [_note(1, "likes tea")])
    notes_index.put_many("user#u-1", [_note(1, "likes tea", consolidated=True)])
    document = opensearch_client.get(
        index=notes_index._alias, id=document_id("user#u-1", "2026-12-03.1"), routing="user#u-1"
    )
    assert document["_source"]["consolidated"] is True


def test_recall_through_the_real_node_with_the_scope_check(call, notes_index, monkeypatch):
    bootstrap.provide(notes_index=notes_index)
    for context, text in [(private(), "deploys the kubernetes cluster"), (shared("w-a"), "kubernetes secrets")]:
        note = call("remember", {"context": context, "arguments": {"text": text}}).body["note"]
        scope_key = "user#u-1" if context["visibility"] == "private" else "ws#w-a"
        notes_index.put_many(scope_key, [_note(note["position"], text)])
    notes_index.refresh()

    answer = call("recall", {"context": private(), "arguments": {"query": "kubernetes"}})

    assert answer.status == 200
    assert [n["text"] for n in answer.body["notes"]] == ["deploys the kubernetes cluster"]
    assert answer.body["mode"] == "keyword"


def _put_embedded(index, scope_key, position, text):
    index.put_many(scope_key, [_note(position, text)], embeddings=[fake_vector(text)])


def test_hybrid_returns_both_rankings_within_the_scope(notes_index):
    _put_embedded(notes_index, "user#u-1", 1, "my kitten sleeps all day")
    _put_embedded(notes_index, "user#u-1", 2, "the cat food is in the cupboard")
    _put_embedded(notes_index, "user#u-1", 3, "deploys on fridays")
    _put_embedded(notes_index, "user#u-2", 1, "cat cat cat kitten")  # nearer, and holding the word: another scope
    notes_index.refresh()

    keyword, semantic = notes_index.hybrid("user#u-1", "cat", fake_vector("cat"), size=2)

    assert [(h.scope, h.position) for h in keyword.hits] == [("user#u-1", 2)]
    assert [(h.scope, h.position) for h in semantic] == [("user#u-1", 2), ("user#u-1", 1)]  # kitten: same concept
    assert semantic[0].score >= semantic[1].score > 0


def test_the_knn_filter_finds_the_scopes_neighbours_among_many_nearer_foreign_ones(notes_index):
    """Efficient filtering: 50 nearer documents of another scope do not crowd the scope's own out of k."""
    for position in range(1, 51):
        _put_embedded(notes_index, "ws#w-b", position, "kitten kitten")
    _put_embedded(notes_index, "ws#w-a", 1, "a feline and a car")
    notes_index.refresh()

    _, semantic = notes_index.hybrid("ws#w-a", "kitten", fake_vector("kitten"), size=5)

    assert [(h.scope, h.position) for h in semantic] == [("ws#w-a", 1)]


def test_a_document_without_a_vector_is_found_by_bm25_and_counted(notes_index):
    notes_index.put_many("user#u-1", [_note(1, "likes tea")])  # written while the model was down
    _put_embedded(notes_index, "user#u-1", 2, "likes coffee")
    notes_index.refresh()

    keyword, semantic = notes_index.hybrid("user#u-1", "tea", fake_vector("tea"), size=5)

    assert [h.position for h in keyword.hits] == [1]
    assert [h.position for h in semantic] == [2]
    assert notes_index.count_without_vector("user#u-1") == 1


def test_updating_a_document_keeps_its_vector(notes_index, opensearch_client):
    _put_embedded(notes_index, "user#u-1", 1, "likes tea")

    outcomes = notes_index.bulk(
        [
            UpdateKeepingVector("user#u-1", _note(1, "likes tea", consolidated=True)),
            UpdateKeepingVector("user#u-1", _note(2, "never indexed")),
            Remove("user#u-1", "2026-12-03.9"),  # never there: fine
        ]
    )

    assert outcomes == [BulkOutcome(None, created=False), BulkOutcome(None, created=True), BulkOutcome(None, False)]

    source = opensearch_client.get(
        index=notes_index._alias, id=document_id("user#u-1", "2026-12-03.1"), routing="user#u-1"
    )["_source"]
    assert source["consolidated"] is True
    assert source["embedding"] == pytest.approx(fake_vector("likes tea"))


@pytest.fixture
def hybrid_recall(notes_index, monkeypatch):
    bootstrap.provide(notes_index=notes_index)
    bootstrap.provide(embedding_model=FakeEmbeddingModel())
    return notes_index


def _remember_indexed(call, index, context, text):
    note = call("remember", {"context": context, "arguments": {"text": text}}).body["note"]
    scope_key = "user#u-1" if context["visibility"] == "private" else f"ws#{context['workspace_id']}"
    _put_embedded(index, scope_key, note["position"], text)
    return note


def test_recall_in_hybrid_and_semantic_mode_on_the_real_node(call, hybrid_recall):
    kitten = _remember_indexed(call, hybrid_recall, private(), "adopted a kitten in march")
    food = _remember_indexed(call, hybrid_recall, private(), "buys cat food on saturdays")
    _remember_indexed(call, hybrid_recall, private(), "deploys on fridays")
    _remember_indexed(call, hybrid_recall, shared("w-a"), "the office cat is called Tom")
    hybrid_recall.refresh()

    hybrid = call("recall", {"context": private(), "arguments": {"query": "cat", "k": 2}}).body
    semantic = call("recall", {"context": private(), "arguments": {"query": "feline", "k": 1}}).body

    assert hybrid["mode"] == "hybrid"
    assert [n["id"] for n in hybrid["notes"]] == [food["id"], kitten["id"]]  # both halves, then kNN alone
    assert semantic["mode"] == "semantic"  # no note holds "feline"
    assert [n["id"] for n in semantic["notes"]] in ([kitten["id"]], [food["id"]])
    assert all(n["origin"]["user_id"] == "u-1" for n in hybrid["notes"] + semantic["notes"])
