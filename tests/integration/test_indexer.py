"""The stream indexer's handler on events/stream_batch.json, against a fake index that can refuse writes."""

from __future__ import annotations

import copy
import time

import pytest

from agent_memory import bootstrap
from agent_memory.basics.errors import EmbeddingUnavailable
from agent_memory.recall import indexer
from local.template import load_handler
from tests.support.events import load_event
from tests.support.fake_embeddings import FakeEmbeddingModel, fake_vector
from tests.support.fake_index import FakeNotesIndex


@pytest.fixture
def index(monkeypatch):
    fake = FakeNotesIndex()
    bootstrap.provide(notes_index=fake)
    return fake


def _run(event, lambda_context):
    return load_handler("IndexerFunction")(event, lambda_context)


def test_inserts_are_written_the_flag_updated_in_place_removals_deleted_other_items_skipped(index, lambda_context):
    index.documents["user#u-1|2026-11-30.3"] = {"scope": "user#u-1", "note_id": "2026-11-30.3"}
    index.documents["ws#w-1|2026-11-25.2"] = {"scope": "ws#w-1", "note_id": "2026-11-25.2", "consolidated": False}

    answer = _run(load_event("stream_batch"), lambda_context)

    assert answer == {"batchItemFailures": []}
    assert index.documents == {
        "user#u-1|2026-12-03.1": {
            "scope": "user#u-1",
            "note_id": "2026-12-03.1",
            "text": "Prefers green tea over coffee in the morning",
            "consolidated": False,
            "embedding": None,  # no embedding model configured
        },
        "ws#w-1|2026-11-25.2": {
            "scope": "ws#w-1",
            "note_id": "2026-11-25.2",
            "text": "The team deploys the billing service every Tuesday",
            "consolidated": True,
        },
    }
    assert index.ensured == 1  # once per sandbox, before the first write


@pytest.fixture
def embedder(monkeypatch):
    fake = FakeEmbeddingModel()
    bootstrap.provide(embedding_model=fake)
    return fake


def test_a_new_note_is_written_with_its_vector_and_the_flag_change_embeds_nothing(index, embedder, lambda_context):
    index.documents["ws#w-1|2026-11-25.2"] = {"scope": "ws#w-1", "embedding": [0.5], "consolidated": False}

    assert _run(load_event("stream_batch"), lambda_context) == {"batchItemFailures": []}

    text = "Prefers green tea over coffee in the morning"
    assert index.documents["user#u-1|2026-12-03.1"]["embedding"] == fake_vector(text)
    assert embedder.calls == [[text]]  # the MODIFY (consolidated flag) kept its vector: no second call
    assert index.documents["ws#w-1|2026-11-25.2"]["embedding"] == [0.5]
    assert index.documents["ws#w-1|2026-11-25.2"]["consolidated"] is True


def test_a_flag_change_for_a_note_the_index_lacks_creates_it_without_a_vector_and_counts_it(
    index, embedder, lambda_context, capsys
):
    event = load_event("stream_batch")
    event["Records"] = [r for r in event["Records"] if r["eventName"] == "MODIFY"]

    assert _run(event, lambda_context) == {"batchItemFailures": []}

    written = index.documents["ws#w-1|2026-11-25.2"]
    assert written["consolidated"] is True and "embedding" not in written
    assert embedder.calls == []
    assert '"Name":"IndexerVectorMissing"' in capsys.readouterr().out  # the drift check reports it, reindex fills it


def test_a_batch_is_one_embedding_call_and_one_bulk_request_in_stream_order(index, embedder, lambda_context):
    event = load_event("stream_batch")
    insert = next(r for r in event["Records"] if r["eventName"] == "INSERT" and "note#" in str(r["dynamodb"]["Keys"]))
    second = copy.deepcopy(insert)
    second["dynamodb"]["Keys"]["sk"]["S"] = second["dynamodb"]["NewImage"]["sk"]["S"] = "note#2026-12-03#000000002"
    second["dynamodb"]["NewImage"]["text"]["S"] = "Walks the dog at seven"
    second["dynamodb"]["SequenceNumber"] = "998"
    event["Records"].append(second)

    assert _run(event, lambda_context) == {"batchItemFailures": []}

    assert embedder.calls == [["Prefers green tea over coffee in the morning", "Walks the dog at seven"]]
    [bulk] = index.bulks
    assert [type(action).__name__ for action in bulk] == ["Upsert", "UpdateKeepingVector", "Remove", "Upsert"]


def test_an_index_that_is_down_fails_every_note_record_for_a_retry(index, lambda_context):
    index.down = ConnectionError("connection refused")
    event = load_event("stream_batch")

    answer = _run(event, lambda_context)

    notes = [r["dynamodb"]["SequenceNumber"] for r in event["Records"] if "note#" in str(r["dynamodb"]["Keys"])]
    assert answer == {"batchItemFailures": [{"itemIdentifier": sequence} for sequence in notes]}


def test_an_embedding_failure_writes_the_note_without_its_vector(index, embedder, lambda_context, capsys):
    """Degrade, don't block the shard: BM25 finds the note at once; the drift check reports the missing vector."""
    embedder.failure = EmbeddingUnavailable("the embedding model failed: ReadTimeout")

    assert _run(load_event("stream_batch"), lambda_context) == {"batchItemFailures": []}

    assert index.documents["user#u-1|2026-12-03.1"]["embedding"] is None
    assert index.documents["user#u-1|2026-12-03.1"]["text"] == "Prefers green tea over coffee in the morning"
    assert '"Name":"IndexerEmbeddingFailed"' in capsys.readouterr().out


def test_removing_a_note_the_index_never_had_is_fine(index, lambda_context):
    event = load_event("stream_batch")
    event["Records"] = [r for r in event["Records"] if r["eventName"] == "REMOVE"]

    assert _run(event, lambda_context) == {"batchItemFailures": []}
    assert _run(event, lambda_context) == {"batchItemFailures": []}  # a record delivered twice


def test_a_failing_record_is_reported_and_the_others_are_applied(index, lambda_context):
    index.failing_writes = {"2026-11-25.2"}
    event = load_event("stream_batch")

    answer = _run(event, lambda_context)

    [failed] = [r for r in event["Records"] if r["dynamodb"]["Keys"]["sk"]["S"] == "note#2026-11-25#000000002"]
    assert answer == {"batchItemFailures": [{"itemIdentifier": failed["dynamodb"]["SequenceNumber"]}]}
    assert set(index.documents) == {"user#u-1|2026-12-03.1"}


def test_a_record_without_a_note_image_is_reported_not_swallowed(index, lambda_context):
    event = load_event("stream_batch")
    broken = copy.deepcopy(next(r for r in event["Records"] if r["eventName"] == "INSERT" and "note#" in str(r)))
    del broken["dynamodb"]["NewImage"]["text"]
    broken["dynamodb"]["SequenceNumber"] = "999"
    event["Records"].append(broken)

    answer = _run(event, lambda_context)

    assert answer == {"batchItemFailures": [{"itemIdentifier": "999"}]}


def test_without_an_endpoint_the_invocation_fails_and_is_retried(lambda_context):
    """The function fails: Lambda retries (and bisects) the batch."""
    with pytest.raises(RuntimeError, match="OPENSEARCH_ENDPOINT"):
        _run(load_event("stream_batch"), lambda_context)


def test_the_stream_batch_event_is_realistic():
    records = load_event("stream_batch")["Records"]
    assert {r["eventSource"] for r in records} == {"aws:dynamodb"}
    assert {r["eventName"] for r in records} == {"INSERT", "MODIFY", "REMOVE"}
    assert any(not r["dynamodb"]["Keys"]["sk"]["S"].startswith("note#") for r in records)
    assert all(r["dynamodb"]["StreamViewType"] == "NEW_AND_OLD_IMAGES" for r in records)


class _SlowEmbeddings(FakeEmbeddingModel):
    def embed(self, texts):
        time.sleep(1.0)
        return super().embed(texts)


def test_a_model_slower_than_the_time_left_degrades_instead_of_timing_the_function_out(
    index, monkeypatch, lambda_context, capsys
):
    """29 s left, 28.8 s kept for the bulk: the embeddings get 0.2 s, the batch is written without them."""
    bootstrap.provide(embedding_model=_SlowEmbeddings())
    monkeypatch.setattr(indexer, "BULK_RESERVE_S", 28.8)
    started = time.monotonic()

    assert _run(load_event("stream_batch"), lambda_context) == {"batchItemFailures": []}

    assert time.monotonic() - started < 0.9
    assert index.documents["user#u-1|2026-12-03.1"]["embedding"] is None
    assert '"Name":"IndexerEmbeddingFailed"' in capsys.readouterr().out
