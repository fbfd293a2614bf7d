"""The notes index on a real OpenSearch node: mapping, alias, scope filter and routing, deletes, the flag."""

from __future__ import annotations

from functools import cache

import pytest

from agent_memory import runtime
from agent_memory.notes import Note, Origin
from agent_memory.search.notes_index import MAPPING, IndexMappingMismatch, NotesIndex, document_id
from tests.conftest import private, shared

pytestmark = pytest.mark.slow


def _note(position, text, *, consolidated=False):
    return Note(
        "2026-12-03", position, text, "2026-12-03T10:15:00.000Z", "remember", Origin("u-1", "t-1"), consolidated
    )


def test_ensure_creates_a_versioned_index_behind_the_alias_with_the_mapping(notes_index, opensearch_client):
    alias = notes_index._alias
    [(name, _)] = opensearch_client.indices.get_alias(name=alias).items()
    assert name == f"{alias}-v1"
    live = opensearch_client.indices.get_mapping(index=alias)[name]["mappings"]
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
    notes_index.put("user#u-1", _note(1, "the team deploys the billing service every tuesday"))
    notes_index.put("user#u-1", _note(2, "the team deploys the kubernetes cluster every friday"))
    notes_index.put("user#u-1", _note(3, "the team likes pizza"))
    notes_index.put("user#u-2", _note(1, "kubernetes cluster kubernetes cluster"))
    notes_index.put("ws#w-a", _note(1, "kubernetes cluster"))
    notes_index.refresh()

    hits = notes_index.keyword("user#u-1", "Kubernetes cluster deploys", k=8)

    assert [(h.scope, h.position) for h in hits] == [("user#u-1", 2), ("user#u-1", 1)]
    assert hits[0].score > hits[1].score > 0
    assert [h.scope for h in notes_index.keyword("ws#w-a", "kubernetes", k=8)] == ["ws#w-a"]
    assert notes_index.count("user#u-1") == 3


def test_documents_are_routed_by_scope(notes_index, opensearch_client):
    notes_index.put("ws#w-a", _note(1, "routed"))
    document = opensearch_client.get(
        index=notes_index._alias, id=document_id("ws#w-a", "2026-12-03.1"), routing="ws#w-a"
    )
    assert document["_routing"] == "ws#w-a"


def test_a_deleted_note_is_gone_and_deleting_twice_is_fine(notes_index):
    notes_index.put("user#u-1", _note(1, "likes tea"))
    notes_index.refresh()
    notes_index.delete("user#u-1", "2026-12-03.1")
    notes_index.delete("user#u-1", "2026-12-03.1")
    notes_index.refresh()

    assert notes_index.keyword("user#u-1", "tea", k=8) == []


def test_the_consolidated_flag_reaches_the_index(notes_index, opensearch_client):
    notes_index.put("user#u-1", _note(1, "likes tea"))
    notes_index.put("user#u-1", _note(1, "likes tea", consolidated=True))
    document = opensearch_client.get(
        index=notes_index._alias, id=document_id("user#u-1", "2026-12-03.1"), routing="user#u-1"
    )
    assert document["_source"]["consolidated"] is True


def test_recall_through_the_real_node_with_the_scope_check(call, notes_index, monkeypatch):
    monkeypatch.setattr(runtime, "notes_index", cache(lambda: notes_index))
    for context, text in [(private(), "deploys the kubernetes cluster"), (shared("w-a"), "kubernetes secrets")]:
        note = call("remember", {"context": context, "arguments": {"text": text}}).body["note"]
        scope_key = "user#u-1" if context["visibility"] == "private" else "ws#w-a"
        notes_index.put(scope_key, _note(note["position"], text))
    notes_index.refresh()

    answer = call("recall", {"context": private(), "arguments": {"query": "kubernetes"}})

    assert answer.status == 200
    assert [n["text"] for n in answer.body["notes"]] == ["deploys the kubernetes cluster"]
    assert answer.body["mode"] == "keyword"
