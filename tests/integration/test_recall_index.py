"""Recall through the index (a fake that misbehaves on purpose), with the notes read from the table (moto)."""

from __future__ import annotations

from functools import cache

import pytest
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import ConnectionTimeout

from agent_memory import runtime
from agent_memory.search.notes_index import IndexHit
from tests.conftest import private
from tests.fake_index import FakeNotesIndex


@pytest.fixture
def index(monkeypatch):
    fake = FakeNotesIndex()
    monkeypatch.setattr(runtime, "notes_index", cache(lambda: fake))
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
    assert index.searches == [("user#u-1", "tea", 5)]


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
    assert runtime.notes_index() is None
    monkeypatch.setenv("OPENSEARCH_ENDPOINT", " ")
    runtime.reset()
    assert runtime.notes_index() is None


def test_an_unreachable_endpoint_degrades_to_the_fallback(call, monkeypatch):
    """The real client against a closed port: the answer still comes, from the table."""
    monkeypatch.setenv("OPENSEARCH_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("MEMORY_OPENSEARCH_TIMEOUT_S", "0.5")
    runtime.reset()
    _remember(call, "likes tea")

    answer = _recall(call, "tea")

    assert answer.status == 200
    assert [n["text"] for n in answer.body["notes"]] == ["likes tea"]
