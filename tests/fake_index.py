"""A fake notes index that can misbehave on purpose: leak another scope's hits, time out, be down, or fail
the writes of chosen notes (to show the stream indexer's partial batch failures).

The real index is tested on a real OpenSearch node (``tests/opensearch``); this fake is for the faults a
real node will not produce on demand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_memory.notes import Note
from agent_memory.search.notes_index import IndexHit, document_id


@dataclass
class FakeNotesIndex:
    hits: list[IndexHit] = field(default_factory=list)  # the BM25 ranking it answers
    semantic_hits: list[IndexHit] = field(default_factory=list)  # the kNN ranking it answers
    failure: Exception | None = None
    searches: list[tuple[str, str, int]] = field(default_factory=list)
    vector_searches: list[tuple[str, str, int]] = field(default_factory=list)
    documents: dict[str, dict[str, object]] = field(default_factory=dict)
    failing_writes: set[str] = field(default_factory=set)  # note ids whose put or delete raises
    ensured: int = 0

    def ensure(self) -> None:
        self.ensured += 1

    def put(self, scope_key: str, note: Note, *, embedding: list[float] | None = None) -> None:
        self._maybe_fail(note.id)
        self.documents[document_id(scope_key, note.id)] = {
            "scope": scope_key,
            "note_id": note.id,
            "text": note.text,
            "consolidated": note.consolidated,
            "embedding": embedding,
        }

    def update_keeping_vector(self, scope_key: str, note: Note) -> bool:
        self._maybe_fail(note.id)
        document = self.documents.get(document_id(scope_key, note.id))
        if document is None:
            return False
        document.update(text=note.text, consolidated=note.consolidated)
        return True

    def delete(self, scope_key: str, note_id: str) -> None:
        self._maybe_fail(note_id)
        self.documents.pop(document_id(scope_key, note_id), None)

    def _maybe_fail(self, note_id: str) -> None:
        if note_id in self.failing_writes:
            raise ConnectionError(f"the index refused note {note_id}")

    def keyword(self, scope_key: str, query: str, *, k: int) -> list[IndexHit]:
        self.searches.append((scope_key, query, k))
        if self.failure is not None:
            raise self.failure
        return self.hits[:k]

    def hybrid(self, scope_key: str, query: str, vector: list[float], *, size: int) -> tuple[list[IndexHit], ...]:
        self.vector_searches.append((scope_key, query, size))
        if self.failure is not None:
            raise self.failure
        return self.hits[:size], self.semantic_hits[:size]
