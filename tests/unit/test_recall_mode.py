"""Which path answers ``recall`` and how it degrades (docs/api.md §3), without DynamoDB or OpenSearch running.

The notes index and the embedding model are the named fakes; the table's answers come from botocore's
Stubber, built by the store's own item writer, so only the recall logic is under test here.
"""

from __future__ import annotations

from typing import Any

from botocore.stub import Stubber

from agent_memory.basics.errors import EmbeddingUnavailable
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.providers.notes_index import IndexHit
from agent_memory.recall.index_path import RESCORE_POOL
from agent_memory.recall.service import RecallService
from agent_memory.storage.keys import note_sk
from agent_memory.storage.note_items import note_item
from agent_memory.storage.note_store import NoteStore
from tests.support.fake_embeddings import FakeEmbeddingModel
from tests.support.fake_index import FakeNotesIndex

TABLE = "MemoryTable"
SCOPE = Scope("personal", "u-1")
OTHER = Scope("personal", "u-2")


def note(position: int, text: str) -> Note:
    return Note("2026-12-03", position, text, "2026-12-03T10:00:00.000Z", "remember", Origin("u-1", "t-1"))


NOTES = {1: note(1, "Prefers metric units"), 2: note(2, "Has a kitten called Miso"), 3: note(3, "Lives in Lisbon")}


def hit(position: int, score: float = 1.0, scope: Scope = SCOPE) -> IndexHit:
    return IndexHit(scope.key, "2026-12-03", position, score)


def answers_batch_get(stubber: Stubber, positions: list[int], scope: Scope = SCOPE) -> None:
    items = [note_item(scope, NOTES[position]) for position in positions]
    stubber.add_response("batch_get_item", {"Responses": {TABLE: items}}, None)


def recall(client: Any, query: str = "feline", **parts: Any) -> Any:
    return RecallService(NoteStore(client, TABLE), **parts).recall(SCOPE, query, k=5)


def test_both_halves_finding_notes_is_hybrid_fused_by_rank(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    answers_batch_get(stubber, [2, 1, 3])
    index = FakeNotesIndex(hits=[hit(2), hit(1)], semantic_hits=[hit(2), hit(3)])

    result = recall(client, index=index, embedder=FakeEmbeddingModel())

    assert result.mode == "hybrid"
    assert result.notes[0].position == 2  # first in both rankings
    assert {scored.position for scored in result.notes} == {1, 2, 3}
    assert index.vector_searches and not index.searches


def test_only_the_knn_half_finding_notes_is_semantic(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    answers_batch_get(stubber, [2])

    result = recall(client, index=FakeNotesIndex(hits=[], semantic_hits=[hit(2)]), embedder=FakeEmbeddingModel())

    assert (result.mode, [scored.position for scored in result.notes]) == ("semantic", [2])


def test_only_the_bm25_half_finding_notes_is_keyword(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    answers_batch_get(stubber, [1])

    result = recall(client, index=FakeNotesIndex(hits=[hit(1)], semantic_hits=[]), embedder=FakeEmbeddingModel())

    assert result.mode == "keyword"


def test_without_an_embedding_model_the_index_answers_with_bm25_alone(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    answers_batch_get(stubber, [1, 3])
    index = FakeNotesIndex(hits=[hit(1, 2.5), hit(3, 1.5)])

    result = recall(client, index=index)

    assert result.mode == "keyword"
    assert [(scored.position, scored.score) for scored in result.notes] == [(1, 2.5), (3, 1.5)]
    assert index.searches == [(SCOPE.key, "feline", RESCORE_POOL)] and not index.vector_searches  # BM25's pool


def test_a_query_that_cannot_be_embedded_falls_back_to_bm25_in_the_index(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    answers_batch_get(stubber, [1])
    index = FakeNotesIndex(hits=[hit(1)], semantic_hits=[hit(2)])
    embedder = FakeEmbeddingModel(failure=EmbeddingUnavailable("the embedding model timed out"))

    result = recall(client, index=index, embedder=embedder)

    assert result.mode == "keyword"
    assert index.searches and not index.vector_searches


def test_a_failing_index_degrades_to_the_tables_keyword_path(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    rows = [
        {"pk": {"S": SCOPE.key}, "sk": {"S": note_sk(n.day, n.position)}, "text": {"S": n.text}} for n in NOTES.values()
    ]
    stubber.add_response("query", {"Items": rows, "Count": 3, "ScannedCount": 3}, None)
    answers_batch_get(stubber, [1])

    result = recall(client, "metric units", index=FakeNotesIndex(failure=TimeoutError("the index is slow")))

    assert result.mode == "keyword"
    assert [scored.text for scored in result.notes] == ["Prefers metric units"]


def test_a_hit_of_another_scope_is_dropped_before_anything_is_read(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    answers_batch_get(stubber, [1])

    result = recall(client, index=FakeNotesIndex(hits=[hit(9, scope=OTHER), hit(1)]))

    assert [scored.position for scored in result.notes] == [1]


def test_a_note_stored_under_another_scope_is_never_returned(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    answers_batch_get(stubber, [1], scope=OTHER)  # the table answers with another scope's item

    result = recall(client, index=FakeNotesIndex(hits=[hit(1)]))

    assert result.notes == []
