"""A note's delete (docs/storage.md "Write protocols"): the items of its one ``TransactWriteItems``, each built by a
pure function. ``NoteStore.delete`` reads the note, calls them and sends the transaction; ``delete_items`` lays the
items out in this order:

0. the note (``note_gone``), on condition it exists and its ``supersedes`` is still the set read
   (``links_unchanged``: a fold that linked it meanwhile refuses the delete, which is sent again with the set the
   refusal returned);
1. the scope's erase mark moved (``due_markers.erase_mark_move``), so a consolidation that read the note cannot save
   it after; absent when the scope has no due marker (no consolidation to refuse);
2. the notes it superseded lose its id (``note_items.unlinked_items``), one item each, each on condition the note
   exists (one gone is sent again without);
3. last, its indexed vector (``indexed_vector_gone``), unconditionally, when the table has a vector index: a delete
   that dies after the note went leaves no vector that no later call would find.

Its give-backs (the characters, the day's counts) follow, once, under the note's delete key
(``UsageStore.give_back_note``).
"""

from __future__ import annotations

from typing import Any

from agent_memory.domain.notes import note_id
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import note_sk, vector_sk
from agent_memory.storage.note_items import SUPERSEDES, unlinked_items


def links_unchanged(read: list[str]) -> dict[str, Any]:
    """The condition of a note's delete: the note exists and its ``supersedes`` is still the set read (a set only
    grows while the note lives, so its size tells); the note as it is now comes back when it fails."""
    names = {"#links": SUPERSEDES}
    if not read:
        condition, values = "attribute_exists(sk) AND attribute_not_exists(#links)", {}
    else:
        condition, values = "attribute_exists(sk) AND size(#links) = :count", {":count": {"N": str(len(read))}}
    return {
        "ConditionExpression": condition,
        "ExpressionAttributeNames": names,
        **({"ExpressionAttributeValues": values} if values else {}),
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }


def note_gone(table: str, scope: Scope, day: str, position: int, *, read: list[str]) -> dict[str, Any]:
    """The note's delete, on condition it is as read (``links_unchanged``)."""
    key = {"pk": {"S": scope.key}, "sk": {"S": note_sk(day, position)}}
    return {"Delete": {"TableName": table, "Key": key, **links_unchanged(read)}}


def indexed_vector_gone(table: str, scope: Scope, day: str, position: int) -> dict[str, Any]:
    """The note's indexed vector (``vec#``), deleted unconditionally."""
    return {"Delete": {"TableName": table, "Key": {"pk": {"S": scope.key}, "sk": {"S": vector_sk(day, position)}}}}


def delete_items(
    table: str,
    scope: Scope,
    day: str,
    position: int,
    *,
    read: list[str],
    links: list[str],
    mark: dict[str, Any] | None,
    indexed: bool,
) -> list[dict[str, Any]]:
    """The delete's items in their order (the module's list): ``read``, the note's ``supersedes`` as read; ``links``,
    the notes still to unlink (those found gone are left out); ``mark``, the erase mark's move, made once per delete
    (None: the scope has no due marker); ``indexed``, whether the table has a vector index."""
    return [
        note_gone(table, scope, day, position, read=read),
        *([mark] if mark is not None else []),
        *unlinked_items(table, scope, note_id(day, position), links),
        *([indexed_vector_gone(table, scope, day, position)] if indexed else []),
    ]
