"""Recall through the table's vector index (docs/recall-and-index.md "The table's vector index"): an embedding
model and no notes index, through ToolsFunction on the tests' moto, which serves ``SearchVectors``
(local/moto_vectors.py). The embedding model is the named fake (``kitten`` and ``cats`` are near, and share no
word)."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.search.vectors import index_components, model_tag
from agent_memory.storage.keys import note_sk, vector_sk
from agent_memory.storage.vector_index import VECTOR_INDEX, NoteVectorIndex
from local.backfill_vectors import backfill_vectors
from local.template import table_definitions
from tests.support.fake_embeddings import FakeEmbeddingModel, fake_vector
from tests.support.iam import refused_calls
from tests.support.scopes import PERSONAL, private
from tests.support.vector_notes import MODEL, note_items, write_all

TABLE = "MemoryTable"
DIMENSIONS = 1024  # the settings' default, the table's index's locally
SMALL = 48  # the 10,000-note scope's vectors (moto keeps each number as an object): more concepts share each one
CATS = "Adopted two cats last spring"
PARAPHRASE = "has she got a kitten?"
FILLERS = [f"Reviewed the {topic} plan with {who}" for topic in ("budget", "hiring", "roadmap", "launch", "audit")
           for who in ("Ana", "Bo", "Chen", "Dee", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jo")]  # fmt: skip


def _recall(call: Any, query: str, k: int = 8, context: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = call("recall", {"context": context or private(), "arguments": {"query": query, "k": k}})
    assert answer.status == 200
    body: dict[str, Any] = answer.body
    return body


def _remember(call: Any, text: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = call("remember", {"context": context or private(), "arguments": {"text": text}})
    assert answer.status == 201
    note: dict[str, Any] = answer.body["note"]
    return note


def _recall_with(**changes: Any) -> None:
    """The built recall service with ``changes`` (a smaller keyword bound, no vector index, another index)."""
    bootstrap.provide(recall_service=replace(bootstrap.services().recall_service, **changes))


def _ids(answer: dict[str, Any]) -> list[str]:
    return [note["id"] for note in answer["notes"]]


def _index_of(dimensions: int) -> list[dict[str, Any]]:
    """The template's vector index at ``dimensions``, as an UpdateTable creates it."""
    [index] = table_definitions()[TABLE]["VectorIndexes"]
    return [{"Create": {**index, "Dimensions": dimensions}}]


@pytest.fixture
def small_vectors(aws, monkeypatch) -> FakeEmbeddingModel:
    """The table's vector index and the embedding model at ``SMALL`` dimensions (the index made again by
    UpdateTable)."""
    aws.update_table(TableName=TABLE, VectorIndexUpdates=[{"Delete": {"IndexName": VECTOR_INDEX}}])
    aws.update_table(TableName=TABLE, VectorIndexUpdates=_index_of(SMALL))
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", MODEL)
    monkeypatch.setenv("MEMORY_EMBEDDING_DIMENSIONS", str(SMALL))
    bootstrap.reset()
    fake = FakeEmbeddingModel(dimensions=SMALL)
    bootstrap.provide(embedding_model=fake)
    return fake


@pytest.mark.long
def test_a_note_older_than_the_newest_2000_of_10000_is_found_by_a_paraphrase_only_through_the_index(
    call, aws, small_vectors
):
    texts = [FILLERS[n % len(FILLERS)] for n in range(10_000)]
    texts[5_000] = CATS  # 250 days before the newest note: far past the newest 2,000
    write_all(aws, TABLE, note_items(PERSONAL, texts, newest=date(2026, 12, 3), dimensions=SMALL))
    cats = "2026-03-28.20"  # place 5,000 at 20 a day back from 2026-12-03

    through_index = _recall(call, PARAPHRASE)
    found = {note["id"]: note["text"] for note in through_index["notes"]}
    assert found.get(cats) == CATS and through_index["mode"] == "hybrid"

    _recall_with(vector_index=None)
    table_only = _recall(call, PARAPHRASE)
    assert cats not in _ids(table_only) and table_only["mode"] == "hybrid"


def test_each_note_is_written_with_its_indexed_vector_beside_it(call, aws, embedder):
    note = _remember(call, "owns a cat")
    pk = {"pk": {"S": "user#u-1"}}
    item = aws.get_item(TableName=TABLE, Key={**pk, "sk": {"S": note_sk(note["day"], note["position"])}})["Item"]
    vector = aws.get_item(TableName=TABLE, Key={**pk, "sk": {"S": vector_sk(note["day"], note["position"])}})["Item"]

    numbers = [int(number["N"]) for number in vector["embedding"]["L"]]

    assert numbers == index_components(item["vec"]["B"], tag=model_tag(MODEL, DIMENSIONS), dimensions=DIMENSIONS)
    assert len(numbers) == DIMENSIONS and max(abs(n) for n in numbers) == 127
    assert "embedding" not in item  # the note item, which recall's Query reads whole, does not grow
    [index] = aws.describe_table(TableName=TABLE)["Table"]["VectorIndexes"]
    assert (index["IndexName"], index["ItemCount"]) == (VECTOR_INDEX, 1)


def test_a_deleted_note_takes_its_indexed_vector_with_it(call, aws, embedder):
    note = _remember(call, "owns a cat")

    assert bootstrap.services().notes.delete(PERSONAL, note["day"], note["position"])

    key = {"pk": {"S": "user#u-1"}, "sk": {"S": vector_sk(note["day"], note["position"])}}
    assert "Item" not in aws.get_item(TableName=TABLE, Key=key)


class _DyingOnDeleteItem:
    """A DynamoDB client (test fake) whose ``DeleteItem`` never answers: the function dies there."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def delete_item(self, **_: Any) -> Any:
        raise RuntimeError("the function died here")


def test_a_delete_that_dies_after_its_note_went_leaves_no_indexed_vector(call, aws, embedder):
    """The vector leaves in the note's own transaction: a delete dying after it leaves no vector of a note that is
    gone (a repeat finds no note and deletes nothing, so a vector left then would stay for good)."""
    note = _remember(call, "owns a cat")
    bootstrap.provide(dynamodb=_DyingOnDeleteItem(bootstrap.services().dynamodb))

    with contextlib.suppress(RuntimeError):
        bootstrap.services().notes.delete(PERSONAL, note["day"], note["position"])

    keys = [note_sk(note["day"], note["position"]), vector_sk(note["day"], note["position"])]
    assert [
        aws.get_item(TableName=TABLE, Key={"pk": {"S": "user#u-1"}, "sk": {"S": sk}}).get("Item") for sk in keys
    ] == [
        None,
        None,
    ]


class _DeletingBeforeEachVectorPut:
    """A DynamoDB client (test fake) on which a note's delete lands just before each put of its indexed vector."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def put_item(self, **request: Any) -> Any:
        item = request["Item"]
        if item["sk"]["S"].startswith("vec#"):
            note = {"pk": item["pk"], "sk": {"S": "note#" + item["sk"]["S"].removeprefix("vec#")}}
            self._real.delete_item(TableName=request["TableName"], Key=note)
        return self._real.put_item(**request)


def test_the_vector_fill_never_leaves_a_vector_whose_note_went_meanwhile(call, aws, embedder):
    note = _remember(call, "owns a cat")
    key = {"pk": {"S": "user#u-1"}, "sk": {"S": note_sk(note["day"], note["position"])}}
    vec = aws.get_item(TableName=TABLE, Key=key)["Item"]["vec"]["B"]
    bootstrap.provide(dynamodb=_DeletingBeforeEachVectorPut(bootstrap.services().dynamodb))

    bootstrap.services().notes.set_vector(PERSONAL, note["day"], note["position"], vec)

    items = aws.query(
        TableName=TABLE, KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": "user#u-1"}}
    )["Items"]
    vectors = {item["sk"]["S"].removeprefix("vec#") for item in items if item["sk"]["S"].startswith("vec#")}
    notes = {item["sk"]["S"].removeprefix("note#") for item in items if item["sk"]["S"].startswith("note#")}
    assert vectors <= notes


def test_an_authors_erase_takes_their_notes_indexed_vectors_with_them(call, aws, embedder):
    team = {"user_id": "u-1", "thread_id": "t-9", "visibility": "shared", "workspace_id": "w-3"}
    mine = _remember(call, "owns a cat", team)
    theirs = _remember(call, "owns a dog", {**team, "user_id": "u-2"})

    bootstrap.services().people.erase_authored(Scope("team", "w-3"), "u-1")

    def indexed(note: dict[str, Any]) -> bool:
        key = {"pk": {"S": "ws#w-3"}, "sk": {"S": vector_sk(note["day"], note["position"])}}
        return "Item" in aws.get_item(TableName=TABLE, Key=key)

    assert (indexed(mine), indexed(theirs)) == (False, True)


def test_an_upgraded_table_gains_the_index_and_the_backfill_indexes_the_notes_written_before(call, aws, monkeypatch):
    aws.update_table(TableName=TABLE, VectorIndexUpdates=[{"Delete": {"IndexName": VECTOR_INDEX}}])  # as before
    before = note_items(PERSONAL, [CATS, *FILLERS], newest=date(2026, 11, 1))
    write_all(aws, TABLE, [item for item in before if item["sk"]["S"].startswith("note#")])  # no indexed vectors
    aws.update_table(TableName=TABLE, VectorIndexUpdates=_index_of(DIMENSIONS))  # what the stack update does
    index = NoteVectorIndex(aws, TABLE, dimensions=DIMENSIONS)
    assert index.nearest(PERSONAL, fake_vector(PARAPHRASE), k=5) == []

    written, skipped = backfill_vectors(aws, TABLE, tag=model_tag(MODEL, DIMENSIONS), dimensions=DIMENSIONS)

    assert (written, skipped) == (1 + len(FILLERS), 0)
    assert index.nearest(PERSONAL, fake_vector(PARAPHRASE), k=5)[0][1:] == ("2026-11-01", 20)
    assert backfill_vectors(aws, TABLE, tag=model_tag(MODEL, DIMENSIONS), dimensions=DIMENSIONS) == (written, 0)


def test_another_scopes_nearer_notes_in_the_same_table_never_come_back(call, aws, embedder):
    team = {"user_id": "u-1", "thread_id": "t-9", "visibility": "shared", "workspace_id": "w-3"}
    stranger = {"user_id": "u-2", "thread_id": "t-8", "visibility": "private"}
    for context in (team, stranger):
        for text in ("has a kitten", "a kitten named Miso", "kitten food on Fridays"):
            _remember(call, text, context)
    own = _remember(call, "adopted two cats")
    write_all(aws, TABLE, note_items(PERSONAL, FILLERS, newest=date(2026, 11, 1)))  # older than own
    _recall_with(keyword_max_notes=3)  # the newest three: the filler, never the cats

    answer = _recall(call, PARAPHRASE, k=20)
    searched = NoteVectorIndex(aws, TABLE, dimensions=DIMENSIONS).nearest(PERSONAL, fake_vector(PARAPHRASE), k=100)

    assert _ids(answer)[0] == own["id"]
    assert all(note["text"] not in {"has a kitten", "a kitten named Miso", "kitten food on Fridays"}
               for note in answer["notes"])  # fmt: skip
    assert {hit.pk for hit in searched} == {"user#u-1"} and len(searched) == 1 + len(FILLERS)


def test_a_note_the_index_does_not_hold_yet_is_ranked_from_the_newest_notes_own_vector(call, aws, embedder):
    write_all(aws, TABLE, note_items(PERSONAL, FILLERS, newest=date(2026, 11, 1)))
    fresh = _remember(call, "adopted two cats")
    key = {"pk": {"S": "user#u-1"}, "sk": {"S": vector_sk(fresh["day"], fresh["position"])}}
    aws.delete_item(TableName=TABLE, Key=key)  # as if the index had not taken it in yet

    answer = _recall(call, PARAPHRASE)

    assert NoteVectorIndex(aws, TABLE, dimensions=DIMENSIONS).nearest(PERSONAL, fake_vector(PARAPHRASE), k=100)
    assert answer["mode"] == "hybrid" and _ids(answer)[0] == fresh["id"]


def test_a_failed_search_degrades_to_the_newest_notes_and_is_counted(call, aws, embedder, caplog):
    old = _remember(call, "adopted two cats")
    write_all(aws, TABLE, note_items(PERSONAL, FILLERS[:3], newest=date(2026, 12, 3)))
    missing = NoteVectorIndex(aws, TABLE, dimensions=DIMENSIONS, index_name="NotThere")

    _recall_with(keyword_max_notes=3)
    through_index = _recall(call, PARAPHRASE)
    _recall_with(keyword_max_notes=3, vector_index=missing)
    degraded = _recall(call, PARAPHRASE)

    assert _ids(through_index)[0] == old["id"]
    assert degraded["mode"] == "hybrid" and old["id"] not in _ids(degraded) and degraded["notes"]
    assert "the vector index search failed" in caplog.text
    # the search failed as it would on AWS: the function may search NoteVectors only
    assert refused_calls == [
        "ToolsFunction is not allowed dynamodb:SearchVectors on arn:aws:dynamodb:eu-west-1:123456789012:table/"
        "MemoryTable/index/NotThere (template.yaml grants it no such statement)"
    ]
    refused_calls.clear()


def test_the_search_names_the_bound_scope_only(aws):
    scope = Scope("team", "w-3")
    sent: list[dict[str, Any]] = []

    class Recording:
        def search_vectors(self, **request: Any) -> dict[str, Any]:
            sent.append(request)
            return {"SearchResults": []}

    NoteVectorIndex(Recording(), TABLE, dimensions=3).nearest(scope, [0.1, 0.2, 0.3], k=500)

    [request] = sent
    assert request["SearchConditionExpression"] == "pk = :scope"
    assert request["ExpressionAttributeValues"] == {":scope": {"S": "ws#w-3"}}
    assert request["TopK"] == 100 and request["IndexName"] == VECTOR_INDEX
