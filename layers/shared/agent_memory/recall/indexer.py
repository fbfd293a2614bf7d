"""The stream indexer: the table's stream (NEW_AND_OLD_IMAGES) carried into the notes index, a batch at a time.

- **Staged one by one, written together.** The handler runs each record through Powertools'
  ``BatchProcessor``, its adapter (``edges.events.note_change``, which reports a record it cannot read
  failed at once) and ``IndexBatch.add``, which stages what the change asks of the index. Then
  ``IndexBatch.write`` embeds the batch's new texts in one call and sends every staged action in one
  ``_bulk`` request: measured on one node, a bulk costs about a ninth of a request per note.
  Each action's outcome is mapped back to its record.
- **Notes only.** A record whose sort key begins with ``note#`` is a note; every other item of the table
  (``doc``, ``doc#v#…``, ``day#…``, ``flush#…``, ``consolidation#pending``, the ``consolidation`` run items)
  is skipped (the adapter gives None): it is not an error, and nothing reaches the index.
- **INSERT upserts** the note's document from the record's new image (read by the adapter through the
  same ``note_from_item`` as every reader of the table), with the text's embedding when an embedding model is
  configured. **MODIFY** (the nightly run setting the consolidated flag; a note's text never changes)
  updates the document in place and keeps its vector, so no embedding is computed twice; a document
  that was missing (its insert never reached the index) is created without a vector, and counted. A
  MODIFY that changes nothing the document holds (the note's vector written into the table, its write id)
  is skipped: no embedding and no index request. Only a changed text is embedded again.
  **REMOVE deletes** it; a document already gone is fine (a record can come twice).
- **An embedding failure degrades, it does not block the stream.** A model that fails, or that has not
  answered for the whole batch while the function's time runs down to ``BULK_RESERVE_S`` (Titan takes
  one text per call), leaves the notes written without their vectors (BM25 finds them at once; kNN does
  not), counted as ``IndexerEmbeddingFailed``, and the drift
  check (``make reindex CHECK=1``) reports them until ``make reindex`` fills the vectors in. Failing the
  records instead would hold every later note of the shard back from the index while the model is down.
- **Idempotent, so retries are safe.** The document id derives from the table key, and one note's actions
  are applied in the order of the stream. Lambda retries a batch from its first failed record, so a
  later REMOVE is always replayed after an earlier upsert of the same note.
- **Partial failures.** Records that could not be read, and those whose action the index refused (or all
  of them, when the index is down), are reported in ``batchItemFailures``; the others are kept.
"""

from __future__ import annotations

from collections import Counter

from agent_memory.basics.deadline import DeadlineExceeded, within
from agent_memory.basics.errors import EmbeddingUnavailable
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain.commands import NoteChange
from agent_memory.providers.embedding import EmbeddingModel
from agent_memory.providers.notes_index import IndexAction, NotesIndex, Remove, UpdateKeepingVector, Upsert

# Kept back from the function's remaining time for the bulk write after the embeddings: the index
# client's own bound (MEMORY_OPENSEARCH_TIMEOUT_S, 10 s in AWS) and a margin.
BULK_RESERVE_S = 15.0


# The attributes of a note's item that its index document holds (providers.notes_index._document), text apart.
class IndexBatch:
    """One invocation's records: staged by ``add``, then written by ``write``."""

    def __init__(self, index: NotesIndex, embedder: EmbeddingModel | None, *, embedding_budget_s: float) -> None:
        self._index = index
        self._embedder = embedder
        self._embedding_budget_s = embedding_budget_s
        self._staged: list[tuple[str, IndexAction]] = []  # (the record's sequence number, what it asks)

    def add(self, change: NoteChange | None) -> str:
        """Stage the change's action; returns it (``upsert``, ``update``, ``remove``), or ``skip`` for None
        (a record of another item than a note)."""
        if change is None:
            return "skip"
        if change.note is None:
            self._staged.append((change.sequence, Remove(change.scope_key, change.note_id)))
            return "remove"
        if change.unchanged:
            return "skip"  # only what the index does not hold changed (the table's vector, a write id)
        if change.same_text:
            self._staged.append((change.sequence, UpdateKeepingVector(change.scope_key, change.note)))
            return "update"
        self._staged.append((change.sequence, Upsert(change.scope_key, change.note)))
        return "upsert"

    def write(self) -> list[str]:
        """Embed the new notes' texts (one call), write every staged action (one ``_bulk``); returns the
        sequence numbers of the records whose action was not applied."""
        if not self._staged:
            return []
        actions = self._with_vectors([action for _, action in self._staged])
        try:
            outcomes = self._index.bulk(actions)
        except Exception:  # noqa: BLE001 - the index down, slow or refusing: every record is retried
            logger.warning("the notes index refused the batch; every record will be retried", exc_info=True)
            metrics.add_metric(name="IndexerWriteFailed", unit="Count", value=len(actions))
            return [sequence for sequence, _ in self._staged]
        failed = []
        counts: Counter[str] = Counter()
        for (sequence, action), outcome in zip(self._staged, outcomes, strict=True):
            if outcome.error is not None:
                logger.error("the notes index refused a note", extra={"why": outcome.error, "sequence": sequence})
                counts["IndexerWriteFailed"] += 1
                failed.append(sequence)
                continue
            counts[f"IndexerNotes{type(action).__name__}"] += 1
            if isinstance(action, UpdateKeepingVector) and outcome.created and self._embedder is not None:
                logger.warning("a modified note was missing from the index; written without its vector")
                counts["IndexerVectorMissing"] += 1
        for name, count in counts.items():  # one value per metric and batch, not one per note
            metrics.add_metric(name=name, unit="Count", value=count)
        return failed

    def _with_vectors(self, actions: list[IndexAction]) -> list[IndexAction]:
        new = [(n, action) for n, action in enumerate(actions) if isinstance(action, Upsert)]
        if self._embedder is None or not new:
            return actions
        texts = [action.note.text for _, action in new]
        embedder = self._embedder
        try:
            vectors = within(self._embedding_budget_s, lambda: embedder.embed(texts), name="indexer-embedding")
        except (EmbeddingUnavailable, DeadlineExceeded) as error:
            why = error.message if isinstance(error, EmbeddingUnavailable) else str(error)
            logger.warning("embedding notes failed; indexing them without vectors", extra={"why": why})
            metrics.add_metric(name="IndexerEmbeddingFailed", unit="Count", value=len(new))
            return actions
        with_vectors = list(actions)
        for (n, action), vector in zip(new, vectors, strict=True):
            with_vectors[n] = Upsert(action.scope_key, action.note, vector)
        return with_vectors


class NotesIndexer:
    """The index and the embedding model, given, never created here; a new ``IndexBatch`` per invocation."""

    def __init__(self, index: NotesIndex, *, embedder: EmbeddingModel | None = None) -> None:
        self._index = index
        self._embedder = embedder

    def batch(self, *, remaining_s: float) -> IndexBatch:
        """A new batch for one invocation with ``remaining_s`` left: its embeddings get all but ``BULK_RESERVE_S``."""
        return IndexBatch(self._index, self._embedder, embedding_budget_s=remaining_s - BULK_RESERVE_S)
