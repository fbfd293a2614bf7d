"""A fake notes index that can misbehave on purpose: leak another scope's hits, time out, be down, or refuse
the writes of chosen notes (to show the stream indexer's partial batch failures).

The real index is tested on a real OpenSearch node (``tests/opensearch``); this fake is for the faults a
real node will not produce on demand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agent_memory.domain.notes import Note
from agent_memory.providers.index_queries import Candidates
from agent_memory.providers.notes_index import (
    BulkOutcome,
    IndexAction,
    IndexHit,
    Remove,
    UpdateKeepingVector,
    Upsert,
    document_id,
)
from agent_memory.search.bm25 import Collection
from agent_memory.search.dates import Days


def _fields(scope_key: str, note: Note) -> dict[str, object]:
    return {"scope": scope_key, "note_id": note.id, "text": note.text, "consolidated": note.consolidated}


@dataclass
class FakeNotesIndex:
    hits: list[IndexHit] = field(default_factory=list)  # the BM25 ranking it answers
    semantic_hits: list[IndexHit] = field(default_factory=list)  # the kNN ranking it answers
    failure: Exception | None = None
    searches: list[tuple[str, str, int]] = field(default_factory=list)
    vector_searches: list[tuple[str, str, int]] = field(default_factory=list)
    documents: dict[str, dict[str, object]] = field(default_factory=dict)
    failing_writes: set[str] = field(default_factory=set)  # note ids whose bulk actions it refuses
    down: Exception | None = None  # raised by every bulk request
    bulks: list[list[IndexAction]] = field(default_factory=list)
    ensured: int = 0
    expanded_hits: list[IndexHit] = field(default_factory=list)  # the BM25 ranking of an expanded query
    expansions: list[dict[str, float]] = field(default_factory=list)
    dated_hits: list[IndexHit] = field(default_factory=list)  # the notes ``within_days`` filters by day
    day_searches: list[Days] = field(default_factory=list)
    # The scope's statistics it answers with a keyword search (None: as a node whose count failed, so that
    # recall keeps the order of ``hits``).
    collection: Collection | None = None

    def ensure(self) -> None:
        self.ensured += 1

    def check_mapping(self) -> bool:
        return True

    def bulk(self, actions: Sequence[IndexAction]) -> list[BulkOutcome]:
        """As the real one: in order, one outcome each; ``failing_writes`` refuses those notes, ``down`` all."""
        self.bulks.append(list(actions))
        if self.down is not None:
            raise self.down
        outcomes = []
        for action in actions:
            key = document_id(action.scope_key, action.note_id)
            if action.note_id in self.failing_writes:
                outcomes.append(BulkOutcome(f"{key}: refused on purpose", created=False))
                continue
            existed = key in self.documents
            match action:
                case Upsert(scope_key, note, embedding):
                    self.documents[key] = {**_fields(scope_key, note), "embedding": embedding}
                case UpdateKeepingVector(scope_key, note):
                    self.documents[key] = {**self.documents.get(key, {}), **_fields(scope_key, note)}
                case Remove():
                    self.documents.pop(key, None)
            outcomes.append(BulkOutcome(None, created=not existed and not isinstance(action, Remove)))
        return outcomes

    def keyword(
        self, scope_key: str, query: str, *, k: int, expansion: Mapping[str, float] | None = None
    ) -> Candidates:
        """``hits``; with expansion terms, ``expanded_hits`` (as the second pass), recorded in ``expansions``;
        with ``collection`` as the scope's statistics."""
        if expansion:
            self.expansions.append(dict(expansion))
            return Candidates(self.expanded_hits[:k], self.collection)
        self.searches.append((scope_key, query, k))
        if self.failure is not None:
            raise self.failure
        return Candidates(self.hits[:k], self.collection)

    def within_days(self, scope_key: str, query: str, days: Days, *, size: int) -> list[IndexHit]:
        """``dated_hits`` written on ``days``, as the real one filters them; the days asked are recorded."""
        self.day_searches.append(days)
        return [hit for hit in self.dated_hits if days.holds(hit.day)][:size]

    def hybrid(
        self, scope_key: str, query: str, vector: list[float], *, size: int, keyword_size: int | None = None
    ) -> tuple[Candidates, list[IndexHit]]:
        self.vector_searches.append((scope_key, query, size))
        if self.failure is not None:
            raise self.failure
        return Candidates(self.hits[: keyword_size or size], self.collection), self.semantic_hits[:size]

    def note_ids(self, scope_key: str) -> set[str]:
        return {str(doc["note_id"]) for doc in self.documents.values() if doc.get("scope") == scope_key}

    def refresh(self) -> None:
        pass

    def count(self, scope_key: str) -> int:
        return len(self.note_ids(scope_key))
