"""A stream MODIFY costs an embedding only when the note's text changed (docs/api.md §6 issue 15's "Also"):
the consolidated flag is updated in place with its vector kept, and a change to nothing the index holds
(the note's vector written into the table, its write id) is not sent to the index at all."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_memory import bootstrap
from local.template import load_handler
from tests.support.events import load_event
from tests.support.fake_embeddings import FakeEmbeddingModel
from tests.support.fake_index import FakeNotesIndex

KEY = "ws#w-1|2026-11-25.2"


@pytest.fixture
def index(monkeypatch):
    fake = FakeNotesIndex()
    fake.documents[KEY] = {"scope": "ws#w-1", "note_id": "2026-11-25.2", "embedding": [0.5], "consolidated": False}
    bootstrap.provide(notes_index=fake)
    return fake


@pytest.fixture
def embedder(monkeypatch):
    fake = FakeEmbeddingModel()
    bootstrap.provide(embedding_model=fake)
    return fake


def _modify(change: dict[str, Any]) -> dict[str, Any]:
    """The sample batch's note MODIFY, its new image being the old one with ``change`` applied."""
    event = load_event("stream_batch")
    record = next(r for r in event["Records"] if r["eventName"] == "MODIFY" and "note#" in str(r["dynamodb"]["Keys"]))
    record["dynamodb"]["NewImage"] = copy.deepcopy(record["dynamodb"]["OldImage"]) | change
    event["Records"] = [record]
    return event


def test_a_vector_written_into_the_table_sends_nothing_to_the_index_and_embeds_nothing(index, embedder, lambda_context):
    event = _modify({"vec": {"B": b"\x01\x02"}, "write_id": {"S": "w-1"}})

    assert load_handler("IndexerFunction")(event, lambda_context) == {"batchItemFailures": []}

    assert index.bulks == []
    assert embedder.calls == []
    assert index.documents[KEY]["embedding"] == [0.5]


def test_the_consolidated_flag_is_updated_in_place_without_an_embedding(index, embedder, lambda_context):
    event = _modify({"consolidated": {"BOOL": True}})

    assert load_handler("IndexerFunction")(event, lambda_context) == {"batchItemFailures": []}

    [[action]] = index.bulks
    assert type(action).__name__ == "UpdateKeepingVector"
    assert embedder.calls == []
    assert (index.documents[KEY]["consolidated"], index.documents[KEY]["embedding"]) == (True, [0.5])


def test_a_changed_text_is_embedded_again(index, embedder, lambda_context):
    event = _modify({"text": {"S": "The team deploys the billing service every Thursday"}})

    assert load_handler("IndexerFunction")(event, lambda_context) == {"batchItemFailures": []}

    assert embedder.calls == [["The team deploys the billing service every Thursday"]]
    assert index.documents[KEY]["embedding"] != [0.5]
