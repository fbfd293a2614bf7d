"""The vector fill (docs/storage.md "Write protocols"): a note's stored vector, and its indexed vector where the
table has a vector index, written in one ``TransactWriteItems`` on condition that the note is there, each item built
by a pure function (``vector_fill_items``). ``NoteStore.set_vector`` sends them; without a vector index the note's
update goes alone (one ``UpdateItem``)."""

from __future__ import annotations

from typing import Any

from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import note_sk
from agent_memory.storage.note_append import indexed_vector_put


def vector_fill_items(
    table: str, scope: Scope, day: str, position: int, vector: bytes, numbers: list[int] | None
) -> list[dict[str, Any]]:
    """The note's ``vec`` set, on condition the note exists (a note deleted meanwhile refuses the whole: no vector is
    left without its note); then its indexed vector (``note_append.indexed_vector_put``) when ``numbers`` (the
    vector as the table's vector index reads it) are given."""
    update = {
        "TableName": table,
        "Key": {"pk": {"S": scope.key}, "sk": {"S": note_sk(day, position)}},
        "UpdateExpression": "SET vec = :vec",
        "ConditionExpression": "attribute_exists(sk)",
        "ExpressionAttributeValues": {":vec": {"B": vector}},
    }
    return [
        {"Update": update},
        *([indexed_vector_put(table, scope, day, position, numbers)] if numbers is not None else []),
    ]
