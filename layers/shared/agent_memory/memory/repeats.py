"""What ``remember`` tells a model that repeats itself: the scope's recent notes that say nearly the same (``similar``).

Notes stay append-only, so a repeated fact is written again; the answer's ``similar`` lists the ids of
the scope's ``SIMILAR_WINDOW`` newest notes that are near-identical to it (``search.near_duplicates``:
the same terms after cleaning, or, where the table holds vectors, a cosine of at least 0.9 with no term
changed), so that the model can see it repeated itself. Recall and the context block already show one note
per group (the newest), so the repeat costs no slot.

The context block shows one line per group too (``one_per_fact``): the newest note of each, by the same
terms (the block's notes are read whole, without vectors, so there the terms alone decide).

The check reads after the write, never before: a read that fails cannot stop the note, and the answer
then says ``similar: []`` (logged). Its cost is one Query of at most 50 items, projected to keys, text and
vector (about 20 to 45 KB: 3 to 6 read units, eventually consistent).
"""

from __future__ import annotations

from agent_memory.basics.errors import StorageUnavailable
from agent_memory.basics.observability import logger
from agent_memory.domain.notes import Note, note_id
from agent_memory.domain.scope import Scope
from agent_memory.search.near_duplicates import newest_of_each, similar_to
from agent_memory.search.vectors import QueryVector, decode
from agent_memory.storage.note_store import NoteStore

SIMILAR_WINDOW = 50


def similar_notes(notes: NoteStore, scope: Scope, note: Note, vector: bytes | None, *, tag: int | None) -> list[str]:
    """The ids of the scope's recent notes near-identical to ``note`` (written with ``vector``), newest first."""
    try:
        rows = notes.newest_texts(scope, limit=SIMILAR_WINDOW + 1, vectors=tag is not None and vector is not None)
    except StorageUnavailable:
        logger.warning("the recent notes could not be read; remember answers without similar notes")
        return []
    others = [(note_id(row.day, row.position), row) for row in rows if row.pk == scope.key]
    others = [(ident, row) for ident, row in others if ident != note.id][:SIMILAR_WINDOW]
    cosines: dict[str, float] = {}
    mine = decode(vector, tag=tag) if vector is not None and tag is not None else None
    if mine is not None and tag is not None:
        query = QueryVector(mine[0].tolist())
        for ident, row in others:
            stored = decode(row.vector, tag=tag) if row.vector is not None else None
            if stored is not None:
                cosines[ident] = query.cosine(stored)
    return similar_to(note.text, [(ident, row.text) for ident, row in others], cosines=cosines)


def one_per_fact(notes_newest_first: list[Note]) -> list[Note]:
    """The notes that stand for their group of near-identical notes (the newest of each), newest first."""
    return newest_of_each(notes_newest_first, {note: note.text for note in notes_newest_first})
