"""A note's DynamoDB item and back, and the rows the readers of notes get: the one place that knows a
note's attributes (docs/storage.md)."""

from __future__ import annotations

from typing import Any, NamedTuple

from botocore.exceptions import ClientError

from agent_memory.basics.errors import StorageUnavailable
from agent_memory.domain.notes import Note, Origin, parse_note_id
from agent_memory.domain.provenance import in_note_order
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, cancellation_codes, condition_failed
from agent_memory.storage.keys import note_sk, parse_note_sk, vector_sk

# A superseded note's string set of the notes that superseded it, and a superseding note's set of the notes it
# superseded (so that its delete takes its id out of theirs, ``superseded_links``).
SUPERSEDED_BY, SUPERSEDES = "superseded_by", "supersedes"


def note_item(scope: Scope, note: Note) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": {"S": scope.key},
        "sk": {"S": note_sk(note.day, note.position)},
        "day": {"S": note.day},
        "position": {"N": str(note.position)},
        "text": {"S": note.text},
        "created_at": {"S": note.created_at},
        "source": {"S": note.source},
        "origin_user_id": {"S": note.origin.user_id},
        "origin_thread_id": {"S": note.origin.thread_id},
        "consolidated": {"BOOL": note.consolidated},
    }
    if note.origin.compaction_id is not None:
        item["origin_compaction_id"] = {"S": note.origin.compaction_id}
    if note.origin.messages is not None:
        item["origin_messages"] = {"L": [{"N": str(index)} for index in note.origin.messages]}
    return item


def superseded_items(table: str, scope: Scope, superseded: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The transaction items of a fold's supersession (``domain.provenance.Followed.superseded``): each superseded
    note gains the ids of the notes that superseded it, and each of those the ids it superseded (one item per
    note: a transaction names an item once). A set's ``ADD`` applies once however often it is sent; a note that is
    gone fails its item's condition (nothing is made)."""
    links: dict[str, dict[str, set[str]]] = {}
    for old, by in superseded.items():
        links.setdefault(old, {}).setdefault(SUPERSEDED_BY, set()).update(by)
        for new in by:
            links.setdefault(new, {}).setdefault(SUPERSEDES, set()).add(old)
    return [_link(table, scope, ident, sets) for ident, sets in links.items()]


def unlinked_items(table: str, scope: Scope, gone: str, superseded: list[str]) -> list[dict[str, Any]]:
    """The transaction items taking the id of ``gone`` (a note being deleted) out of the ``superseded_by`` of each
    note it ``superseded``: a note whose last superseding note goes is current again (the attribute leaves with
    its set's last id). A note that is gone fails its item's condition."""
    return [_link(table, scope, old, {SUPERSEDED_BY: {gone}}, action="DELETE") for old in superseded]


def _link(table: str, scope: Scope, ident: str, sets: dict[str, set[str]], *, action: str = "ADD") -> dict[str, Any]:
    day, position = parse_note_id(ident) or ("", 0)
    names = sorted(sets)
    return {
        "Update": {
            "TableName": table,
            "Key": {"pk": {"S": scope.key}, "sk": {"S": note_sk(day, position)}},
            "UpdateExpression": f"{action} " + ", ".join(f"#{name} :{name}" for name in names),
            "ConditionExpression": "attribute_exists(sk)",
            "ExpressionAttributeNames": {f"#{name}": name for name in names},
            "ExpressionAttributeValues": {f":{name}": {"SS": sorted(sets[name])} for name in names},
        }
    }


# The attribute the table's vector index reads (``storage.vector_index``): a list of numbers.
INDEXED_VECTOR = "embedding"


def vector_item(scope: Scope, day: str, position: int, numbers: list[int]) -> dict[str, Any]:
    """A note's vector as the table's vector index reads it: an item of its own beside the note (``vec#<day>#<pos>``),
    so that the note item, which recall's newest-notes Query reads and is billed for whole, does not grow by the
    list (about 3 KB at 1,024 numbers)."""
    return {
        "pk": {"S": scope.key},
        "sk": {"S": vector_sk(day, position)},
        INDEXED_VECTOR: {"L": [{"N": str(number)} for number in numbers]},
    }


def note_from_item(item: dict[str, Any]) -> Note:
    compaction, messages = item.get("origin_compaction_id"), item.get("origin_messages")
    return Note(
        day=item["day"]["S"],
        position=int(item["position"]["N"]),
        text=item["text"]["S"],
        created_at=item["created_at"]["S"],
        source=item["source"]["S"],
        origin=Origin(
            user_id=item["origin_user_id"]["S"],
            thread_id=item["origin_thread_id"]["S"],
            compaction_id=compaction["S"] if compaction else None,
            messages=tuple(int(index["N"]) for index in messages["L"]) if messages else None,
        ),
        consolidated=item["consolidated"]["BOOL"],
        superseded_by=tuple(in_note_order(item[SUPERSEDED_BY]["SS"])) if SUPERSEDED_BY in item else None,
    )


class KeyedNote(NamedTuple):
    """A note with the partition key it was stored under, so that a reader can check the scope again."""

    pk: str
    note: Note


class NoteText(NamedTuple):
    """What ranking needs of a note: where it is stored (scope and place), its text, its stored vector
    (``search.vectors``; None when not asked for, or the note has none) and the conversation that wrote
    it (``origin.thread_id``; None when not asked for)."""

    pk: str
    day: str
    position: int
    text: str
    vector: bytes | None = None
    thread_id: str | None = None

    @staticmethod
    def projection(*, vectors: bool, threads: bool) -> str:
        """The attributes a ``NoteText`` is read from (``#text`` names ``text``, a reserved word)."""
        return "pk, sk, #text" + (", vec" if vectors else "") + (", origin_thread_id" if threads else "")

    @staticmethod
    def of(item: dict[str, Any]) -> NoteText:
        """A ``NoteText`` from an item read with ``projection``."""
        day, position = parse_note_sk(item["sk"]["S"])
        vector, thread = item.get("vec", {}).get("B"), item.get("origin_thread_id", {}).get("S")
        return NoteText(item["pk"]["S"], day, position, item["text"]["S"], vector, thread)


def position_taken(error: ClientError) -> bool:
    """The note's own conditional put failed: a note already holds this position."""
    if condition_failed(error):
        return True
    codes = cancellation_codes(error)
    return bool(codes) and codes[0] == "ConditionalCheckFailed"


def holder_write_id(error: ClientError) -> str | None:
    """The ``write_id`` of the note that holds the position, as the failed condition returned it."""
    if condition_failed(error):
        item = error.response.get("Item") or {}
    else:
        reasons = error.response.get("CancellationReasons") or [{}]
        item = reasons[0].get("Item") or {}
    write_id: str | None = item.get("write_id", {}).get("S")
    return write_id


def write_id_at(client: DynamoDB, table: str, scope: Scope, note: Note) -> str | None:
    """The ``write_id`` of the note at ``note``'s position (``""`` when none is there), read consistently, after a
    write whose every answer was lost; None when this read fails too (the write's outcome stays unknown)."""
    key = {"pk": {"S": scope.key}, "sk": {"S": note_sk(note.day, note.position)}}
    try:
        item = client.get_item(TableName=table, Key=key, ConsistentRead=True, ProjectionExpression="write_id")
    except StorageUnavailable:
        return None
    write_id: str = item.get("Item", {}).get("write_id", {}).get("S", "")
    return write_id
