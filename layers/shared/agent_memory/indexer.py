"""The stream indexer: the table's stream (NEW_AND_OLD_IMAGES) carried into the notes index, one record at a time.

- **Notes only.** A record whose sort key begins with ``note#`` is a note; every other item of the table
  (``doc``, ``doc#v#…``, ``day#…``, ``flush#…``, ``consolidation#pending``, the ``consolidation`` run items)
  is skipped: it is not an error, and nothing reaches the index.
- **INSERT upserts** the note's document from the record's new image (read through the same
  ``note_from_item`` as every reader of the table), with the text's embedding when an embedding model is
  configured. **MODIFY** (the nightly run setting the consolidated flag; a note's text never changes)
  updates the document in place and keeps its vector, so no embedding is computed twice; if the
  document is missing (its insert never reached the index), the note is written whole instead.
  **REMOVE deletes** it; a document already gone is fine (a record can come twice).
- **An embedding failure degrades, it does not block the stream.** The note is written without its
  vector (BM25 finds it at once; kNN does not), counted as ``IndexerEmbeddingFailed``, and the drift
  check (``make reindex CHECK=1``) reports it until ``make reindex`` fills the vector in. Failing the
  record instead would hold every later note of the shard back from the index for as long as the model
  is down.
- **Idempotent, so retries are safe.** The document id derives from the table key. Lambda retries a
  batch from its first failed record, in order, so a later REMOVE is always replayed after an earlier
  upsert of the same note.
- **Partial failures.** The handler runs the records through Powertools' ``BatchProcessor``; a record that
  fails (the index down, a malformed image) is reported in ``batchItemFailures`` and the others are kept.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
    DynamoDBRecordEventName,
)

from agent_memory.errors import EmbeddingUnavailable
from agent_memory.models.embedding import EmbeddingModel
from agent_memory.notes import note_id
from agent_memory.observability import logger, metrics
from agent_memory.search.notes_index import NotesIndex
from agent_memory.storage.keys import NOTE_PREFIX, parse_note_sk
from agent_memory.storage.note_store import note_from_item


class MalformedStreamRecord(ValueError):
    """A stream record without the keys or the image the indexer needs (reported as a failed record)."""


class NotesIndexer:
    """Applies one stream record to the index; the index and the embedding model are given, never created here."""

    def __init__(self, index: NotesIndex, *, embedder: EmbeddingModel | None = None) -> None:
        self._index = index
        self._embedder = embedder

    def apply(self, record: DynamoDBRecord) -> str:
        """Apply the record; returns what was done (a metric): ``put``, ``update``, ``delete`` or ``skip``."""
        action = self._apply(record)
        if action != "skip":
            metrics.add_metric(name=f"IndexerNotes{action.title()}", unit="Count", value=1)
        return action

    def _apply(self, record: DynamoDBRecord) -> str:
        stream = record.dynamodb
        keys: dict[str, Any] = stream.raw_event.get("Keys", {}) if stream is not None else {}
        try:
            scope_key, sort_key = keys["pk"]["S"], keys["sk"]["S"]
        except KeyError:
            raise MalformedStreamRecord(f"stream record {record.event_id} has no pk/sk keys") from None
        if not sort_key.startswith(NOTE_PREFIX):
            return "skip"
        assert stream is not None  # keys were found in it
        if record.event_name is DynamoDBRecordEventName.REMOVE:
            day, position = parse_note_sk(sort_key)
            self._index.delete(scope_key, note_id(day, position))
            return "delete"
        image = stream.raw_event.get("NewImage")
        if not image:
            raise MalformedStreamRecord(f"stream record {record.event_id} ({record.event_name}) has no new image")
        try:
            note = note_from_item(image)
        except (KeyError, ValueError) as error:
            raise MalformedStreamRecord(f"stream record {record.event_id}: not a note image ({error!r})") from None
        old_text = (stream.raw_event.get("OldImage") or {}).get("text")
        if record.event_name is DynamoDBRecordEventName.MODIFY and old_text == image.get("text"):
            if self._index.update_keeping_vector(scope_key, note):
                return "update"
            logger.warning("a modified note was missing from the index; writing it whole", extra={"note_id": note.id})
        self._index.put(scope_key, note, embedding=self._vector(note.text))
        logger.debug("indexed a note", extra={"note_id": note.id, "event": record.raw_event.get("eventName")})
        return "put"

    def _vector(self, text: str) -> list[float] | None:
        if self._embedder is None:
            return None
        try:
            return self._embedder.embed([text])[0]
        except EmbeddingUnavailable as error:
            logger.warning("embedding a note failed; indexing it without its vector", extra={"why": error.message})
            metrics.add_metric(name="IndexerEmbeddingFailed", unit="Count", value=1)
            return None
