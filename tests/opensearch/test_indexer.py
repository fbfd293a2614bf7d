"""The stream indexer on a real node: records read from the table's stream (moto) after real writes.

The records are read and delivered by ``local/stream_mapping.py``, ``make run``'s stand-in for the event
source mapping, exactly as Lambda's mapping shapes them.
"""

from __future__ import annotations

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.providers.notes_index import document_id
from agent_memory.storage.note_store import NoteStore
from local.stream_mapping import LocalStreamMapping
from local.template import load_handler
from tests.support.fake_embeddings import FakeEmbeddingModel, fake_vector
from tests.support.scopes import private, shared

pytestmark = pytest.mark.slow


@pytest.fixture
def index_stream(aws, notes_index, monkeypatch, lambda_context):
    """Run the indexer over what the table's stream carried since the last run; answers its partial response."""
    bootstrap.provide(notes_index=notes_index)
    answers: list[dict] = []

    def _invoke(event: dict) -> dict:
        answers.append(load_handler("IndexerFunction")(event, lambda_context))
        return answers[-1]

    mapping = LocalStreamMapping(None, _invoke)  # from the stream's end: before the test's first write

    def _run() -> dict:
        """Deliver what the stream carried since the last run; the partial responses of its batches, merged."""
        answers.clear()
        assert mapping.poll_once() > 0
        notes_index.refresh()
        return {"batchItemFailures": [failure for answer in answers for failure in answer["batchItemFailures"]]}

    return _run


def _remember(call, text, context=None):
    return call("remember", {"context": context or private(), "arguments": {"text": text}}).body["note"]


def _fold(aws, note):
    """What the nightly consolidation does to a folded note: the flag set, the sparse index keys removed."""
    aws.update_item(
        TableName="MemoryTable",
        Key={"pk": {"S": "user#u-1"}, "sk": {"S": f"note#{note['day']}#{note['position']:09d}"}},
        UpdateExpression="SET consolidated = :yes REMOVE uc_pk, uc_sk",
        ExpressionAttributeValues={":yes": {"BOOL": True}},
    )


def _recall(call, query, context=None):
    return call("recall", {"context": context or private(), "arguments": {"query": query}}).body["notes"]


def test_inserted_notes_reach_the_index_and_recall_finds_them_in_their_scope_only(call, index_stream, notes_index):
    _remember(call, "deploys the kubernetes cluster on fridays")
    _remember(call, "kubernetes secrets live in vault", shared("w-a"))
    call("update_memory", {"context": private(), "arguments": {"content": "# Memory\n- kubernetes"}})

    assert index_stream() == {"batchItemFailures": []}

    assert notes_index.count("user#u-1") == 1
    assert notes_index.count("ws#w-a") == 1
    assert [n["text"] for n in _recall(call, "kubernetes")] == ["deploys the kubernetes cluster on fridays"]


def test_a_removed_note_is_gone_from_the_index_and_from_recall(call, aws, index_stream, notes_index):
    note = _remember(call, "likes green tea")
    _remember(call, "likes black tea")
    index_stream()
    assert len(_recall(call, "tea")) == 2

    assert NoteStore(aws, "MemoryTable").delete(Scope("personal", "u-1"), note["day"], note["position"])
    assert index_stream() == {"batchItemFailures": []}

    assert [hit.position for hit in notes_index.keyword("user#u-1", "green tea", k=8).hits] == [2]
    assert [n["text"] for n in _recall(call, "green tea")] == ["likes black tea"]


def test_the_consolidated_flag_reaches_the_index(call, aws, index_stream, opensearch_client, notes_index):
    note = _remember(call, "likes green tea")
    index_stream()
    _fold(aws, note)

    assert index_stream() == {"batchItemFailures": []}

    stored = opensearch_client.get(
        index=notes_index._alias, id=document_id("user#u-1", note["id"]), routing="user#u-1"
    )["_source"]
    assert stored["consolidated"] is True
    assert "embedding" not in stored


def test_the_indexer_creates_the_index_behind_its_alias_before_the_first_write(
    call, aws, opensearch_client, monkeypatch, lambda_context
):
    from agent_memory.providers.notes_index import NotesIndex

    alias = "notes-indexer-ensures"
    bootstrap.provide(notes_index=NotesIndex(opensearch_client, alias=alias))
    answers: list[dict] = []
    mapping = LocalStreamMapping(
        None, lambda event: answers.append(load_handler("IndexerFunction")(event, lambda_context))
    )
    _remember(call, "likes tea")
    try:
        mapping.poll_once()
        assert answers == [{"batchItemFailures": []}]
        assert list(opensearch_client.indices.get_alias(name=alias)) == [f"{alias}-v3"]
    finally:
        opensearch_client.indices.delete(index=f"{alias}-v*")


def test_with_an_embedding_model_notes_get_vectors_and_recall_is_hybrid_through_the_stream(
    call, aws, index_stream, opensearch_client, notes_index, monkeypatch
):
    embedder = FakeEmbeddingModel()
    bootstrap.provide(embedding_model=embedder)
    kitten = _remember(call, "adopted a kitten")
    _remember(call, "deploys on fridays")
    assert index_stream() == {"batchItemFailures": []}
    # The consolidation flag flips: the document keeps its vector, and no text is embedded again.
    _fold(aws, kitten)
    assert index_stream() == {"batchItemFailures": []}

    answer = call("recall", {"context": private(), "arguments": {"query": "feline", "k": 1}}).body

    assert answer == {
        "notes": [{**kitten, "consolidated": True, "score": answer["notes"][0]["score"]}],
        "mode": "semantic",
    }
    assert embedder.calls == [["adopted a kitten", "deploys on fridays"], ["feline"]]  # one call per batch
    assert notes_index.count_without_vector("user#u-1") == 0


def test_one_notes_insert_flag_and_removal_in_one_batch_apply_in_stream_order(
    call, aws, index_stream, opensearch_client, notes_index, monkeypatch
):
    """One _bulk carries them; the node applies one document's actions in the order sent."""
    bootstrap.provide(embedding_model=FakeEmbeddingModel())
    kept = _remember(call, "adopted a kitten")
    gone = _remember(call, "deploys on fridays")
    _fold(aws, kept)
    _fold(aws, gone)
    assert NoteStore(aws, "MemoryTable").delete(Scope("personal", "u-1"), gone["day"], gone["position"])

    assert index_stream() == {"batchItemFailures": []}  # six records, one batch

    assert notes_index.note_ids("user#u-1") == {kept["id"]}
    stored = opensearch_client.get(
        index=notes_index._alias, id=document_id("user#u-1", kept["id"]), routing="user#u-1"
    )["_source"]
    assert stored["consolidated"] is True
    assert stored["embedding"] == pytest.approx(fake_vector("adopted a kitten"))  # the update kept the vector
