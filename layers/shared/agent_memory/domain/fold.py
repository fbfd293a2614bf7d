"""A consolidation's fold: the due notes of one group, and what a new version records of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_memory.domain.notes import note_id


@dataclass(frozen=True, slots=True)
class DueNote:
    scope_key: str
    sk: str
    day: str
    position: int
    text: str
    created_at: str

    @property
    def id(self) -> str:
        return note_id(self.day, self.position)


@dataclass(frozen=True, slots=True)
class Fold:
    """The notes a consolidation folds into a new version: listed on the version, and recorded as pending
    marks (``run_id``, the worker's ``token``) in the version's own transaction, on condition the scope's erase
    ``fence`` is still the one the worker's claim read (no note of the group deleted or erased meanwhile).
    ``edits``: the cited edits that made the version (``domain.edits``), None for a whole-document rewrite."""

    notes: list[DueNote]
    run_id: str
    token: str
    fence: str
    edits: list[dict[str, Any]] | None = None

    @property
    def note_ids(self) -> list[str]:
        return [note.id for note in self.notes]
