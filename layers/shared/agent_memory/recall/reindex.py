"""Reindex a scope from DynamoDB, and check the index for drift (counts per scope, table against index).

The table is the source of truth; the index is rebuilt from it, never the other way round.

- **Reindex** reads the scope's notes with one paged Query (never a Scan), writes them in bulk (upserts:
  the consolidated flag is the table's), then removes the documents of notes the table no longer holds
  (a removal the indexer missed). Before removing one, it reads the table again: a note written after the
  Query began is in the index but not in what was read, and must stay.
  With an embedding model, each bulk's texts are embedded first (one call per bulk for an
  OpenAI-compatible server): the reindex is also how vectors missed while the model was down are filled
  in. An embedding failure stops the reindex with its error; what was written before stays, and a rerun
  starts over (every write is an upsert).
- **Check** compares the scope's note count in the table (a ``Select=COUNT`` Query) with the index's
  (after a refresh, so that recent writes count) and, with an embedding model, counts the scope's
  documents without a vector.

Without a notes index, ``VectorFill`` is the same command's job for the vectors stored in the table.

Scopes are named one by one: the table has no list of its scopes that a Query can read, and the only
way to enumerate its partitions is a Scan of the whole table, which this service never does.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory.domain.notes import Note, parse_note_id
from agent_memory.domain.scope import Scope
from agent_memory.providers.embedding import EmbeddingModel
from agent_memory.providers.notes_index import NotesIndex
from agent_memory.search.vectors import decode, encode
from agent_memory.storage.note_items import NoteText
from agent_memory.storage.note_store import NoteStore

BULK_SIZE = 500
# With vectors, a note's JSON is about 22 kB (1,024 numbers at full precision): 100 of them keep a bulk
# near 2 MB, well under the 10 MiB request limit of the small instance types.
VECTOR_BULK_SIZE = 100
ALL_NOTES = 10**9  # the vector fill reads every note of the scope


@dataclass(frozen=True, slots=True)
class Reindexed:
    scope_key: str
    written: int
    removed: int


@dataclass(frozen=True, slots=True)
class Drift:
    scope_key: str
    in_table: int
    in_index: int
    without_vector: int | None = None  # None: no embedding model, so vectors are not expected

    @property
    def drifted(self) -> bool:
        return self.in_table != self.in_index or bool(self.without_vector)


class Reindexer:
    """The note store and the index are given, never created here."""

    def __init__(
        self,
        notes: NoteStore,
        index: NotesIndex,
        *,
        embedder: EmbeddingModel | None = None,
        bulk_size: int | None = None,
    ) -> None:
        self._notes = notes
        self._index = index
        self._embedder = embedder
        self._bulk_size = bulk_size or (BULK_SIZE if embedder is None else VECTOR_BULK_SIZE)

    def reindex(self, scope: Scope) -> Reindexed:
        self._index.ensure()
        read: set[str] = set()
        batch: list[Note] = []
        for note in self._notes.every_note(scope):
            read.add(note.id)
            batch.append(note)
            if len(batch) == self._bulk_size:
                self._write(scope, batch)
                batch = []
        self._write(scope, batch)
        self._index.refresh()
        removed = 0
        for note_id in sorted(self._index.note_ids(scope.key) - read):
            place = parse_note_id(note_id)
            if place is not None and self._notes.get(scope, *place) is not None:
                continue  # written after the Query began: the indexer has it right
            self._index.delete(scope.key, note_id)
            removed += 1
        if removed:
            self._index.refresh()
        return Reindexed(scope.key, written=len(read), removed=removed)

    def _write(self, scope: Scope, batch: list[Note]) -> None:
        if not batch:
            return
        vectors = self._embedder.embed([note.text for note in batch]) if self._embedder is not None else None
        self._index.put_many(scope.key, batch, embeddings=vectors)

    def check(self, scope: Scope) -> Drift:
        self._index.refresh()
        without = self._index.count_without_vector(scope.key) if self._embedder is not None else None
        return Drift(
            scope.key, in_table=self._notes.count(scope), in_index=self._index.count(scope.key), without_vector=without
        )


@dataclass(frozen=True, slots=True)
class VectorsFilled:
    scope_key: str
    notes: int
    without_vector: int  # before the fill (the check: now)
    written: int = 0


class VectorFill:
    """Without a notes index (docs/api.md §6), the table holds each note's vector: this writes the missing ones.

    A note lacks its vector when it was written before the embedding model was configured, while the
    model was down, or under another model or dimension (``search.vectors.model_tag``). One paged Query
    reads the scope's texts and vectors; the texts without a vector of this model are embedded a bulk at
    a time and written back one ``UpdateItem`` each (a note deleted meanwhile is skipped, not recreated).
    """

    def __init__(self, notes: NoteStore, embedder: EmbeddingModel, *, tag: int, bulk_size: int = VECTOR_BULK_SIZE):
        self._notes = notes
        self._embedder = embedder
        self._tag = tag
        self._bulk_size = bulk_size

    def _missing(self, scope: Scope) -> tuple[int, list[NoteText]]:
        rows = [row for row in self._notes.newest_texts(scope, limit=ALL_NOTES, vectors=True) if row.pk == scope.key]
        missing = [row for row in rows if row.vector is None or decode(row.vector, tag=self._tag) is None]
        return len(rows), missing

    def check(self, scope: Scope) -> VectorsFilled:
        total, missing = self._missing(scope)
        return VectorsFilled(scope.key, total, len(missing))

    def fill(self, scope: Scope) -> VectorsFilled:
        total, missing = self._missing(scope)
        written = 0
        for start in range(0, len(missing), self._bulk_size):
            batch = missing[start : start + self._bulk_size]
            vectors = self._embedder.embed([row.text for row in batch])
            for row, vector in zip(batch, vectors, strict=True):
                written += self._notes.set_vector(scope, row.day, row.position, encode(vector, tag=self._tag))
        return VectorsFilled(scope.key, total, len(missing), written)
