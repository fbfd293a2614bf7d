"""The storage calls recall makes (``recall.service.RecallService``), and nothing more: the notes it ranks and the
notes it answers.

``bootstrap`` hands it ``storage.note_store.NoteStore`` (the graph's ``recall_notes``), which satisfies the port
structurally; recall's own tests hand it the in-memory note store of ``tests/support/fake_stores.py``, which the
same contract tests (``tests/support/store_contracts.py``) hold to DynamoDB. The notes index, the table's vector
index, the embedding and the reranking models are given beside it, each through its own port.
"""

from __future__ import annotations

from typing import Protocol

from agent_memory.domain.scope import Scope
from agent_memory.storage.note_items import KeyedNote, NoteText


class RecalledNotes(Protocol):
    """A scope's notes as recall reads them: the newest to rank, the ones around a strong hit, the ones the vector
    index found beyond the newest, and the best read whole."""

    def newest_texts(self, scope: Scope, *, limit: int, vectors: bool = False, threads: bool = False) -> list[NoteText]:
        """The scope's ``limit`` newest notes, newest first (``vectors``: with their stored vectors; ``threads``:
        with their conversation)."""
        ...

    def around(self, scope: Scope, day: str, position: int, *, span: int) -> list[NoteText]:
        """The notes of ``day`` within ``span`` positions of ``position`` (its own included), with their
        conversation, in place order."""
        ...

    def texts_of(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[NoteText]:
        """What ranking reads of these notes (text, vector, conversation), those that exist, in the order asked."""
        ...

    def get_many(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[KeyedNote]:
        """Whole notes at these places, those that exist, in the order asked (with the notes that superseded
        them)."""
        ...
