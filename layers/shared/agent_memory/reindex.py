"""Reindex a scope from DynamoDB, and check the index for drift (counts per scope, table against index).

The table is the source of truth; the index is rebuilt from it, never the other way round.

- **Reindex** reads the scope's notes with one paged Query (never a Scan), writes them in bulk (upserts:
  the consolidated flag is the table's), then removes the documents of notes the table no longer holds
  (a removal the indexer missed). Before removing one, it reads the table again: a note written after the
  Query began is in the index but not in what was read, and must stay.
- **Check** compares the scope's note count in the table (a ``Select=COUNT`` Query) with the index's
  (after a refresh, so that recent writes count).

Scopes are named one by one: the table has no list of its scopes that a Query can read, and the only
way to enumerate its partitions is a Scan of the whole table, which this service never does.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory.notes import Note, parse_note_id
from agent_memory.scope import Scope
from agent_memory.search.notes_index import NotesIndex
from agent_memory.storage.note_store import NoteStore

BULK_SIZE = 500


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

    @property
    def drifted(self) -> bool:
        return self.in_table != self.in_index


class Reindexer:
    """The note store and the index are given, never created here."""

    def __init__(self, notes: NoteStore, index: NotesIndex, *, bulk_size: int = BULK_SIZE) -> None:
        self._notes = notes
        self._index = index
        self._bulk_size = bulk_size

    def reindex(self, scope: Scope) -> Reindexed:
        self._index.ensure()
        read: set[str] = set()
        batch: list[Note] = []
        for note in self._notes.every_note(scope):
            read.add(note.id)
            batch.append(note)
            if len(batch) == self._bulk_size:
                self._index.put_many(scope.key, batch)
                batch = []
        self._index.put_many(scope.key, batch)
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

    def check(self, scope: Scope) -> Drift:
        self._index.refresh()
        return Drift(scope.key, in_table=self._notes.count(scope), in_index=self._index.count(scope.key))
