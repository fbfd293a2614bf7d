"""A fake notes index that can misbehave on purpose: leak another scope's hits, time out, or be down.

The real index is tested on a real OpenSearch node (``tests/opensearch``); this fake is for the faults a
real node will not produce on demand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_memory.search.notes_index import IndexHit


@dataclass
class FakeNotesIndex:
    hits: list[IndexHit] = field(default_factory=list)
    failure: Exception | None = None
    searches: list[tuple[str, str, int]] = field(default_factory=list)

    def keyword(self, scope_key: str, query: str, *, k: int) -> list[IndexHit]:
        self.searches.append((scope_key, query, k))
        if self.failure is not None:
            raise self.failure
        return self.hits[:k]
