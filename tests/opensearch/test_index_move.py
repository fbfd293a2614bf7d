"""Moving the notes alias from an old version (v1: the standard analyzer) to the current one, on a real node.

A v1 index is built here as older deployments have it: the same fields, ``text`` under OpenSearch's
standard analyzer (no stemming, so "cat" does not find "cats"). ``make reindex MOVE_ALIAS=1`` copies it
into the current version, ``notes-v3`` (text analysed anew, vectors kept, routing by scope) and moves the alias.
"""

from __future__ import annotations

import copy
import time

import pytest

from agent_memory.providers.index_move import copy_documents, move_alias
from agent_memory.providers.notes_index import INDEX_VERSION, MAPPING, NotesIndex, document_id
from local import reindex

VECTOR = [0.0] * 1023 + [1.0]


def _document(scope: str, position: int, text: str, *, vector: list[float] | None = None) -> dict[str, object]:
    body: dict[str, object] = {
        "scope": scope,
        "note_id": f"2026-12-01.{position}",
        "day": "2026-12-01",
        "position": position,
        "text": text,
        "consolidated": False,
        "created_at": "2026-12-01T10:00:00Z",
    }
    if vector is not None:
        body["embedding"] = vector
    return body


def _put(client, index: str, documents: list[dict[str, object]]) -> None:
    lines: list[dict[str, object]] = []
    for document in documents:
        target = {"_index": index, "_id": document_id(str(document["scope"]), str(document["note_id"]))}
        lines += [{"index": {**target, "routing": document["scope"]}}, document]
    assert not opensearch_errors(client.bulk(body=lines, refresh=True))


def opensearch_errors(answer: dict) -> list[object]:
    return [item for item in answer["items"] if next(iter(item.values())).get("error")]


@pytest.fixture
def old_alias(opensearch_client):
    """An alias naming a v1 index (standard analyzer) that holds three notes of two scopes, one with a vector."""
    alias = f"notes-move-{time.monotonic_ns()}"
    mapping = copy.deepcopy(MAPPING)
    mapping["properties"]["text"] = {"type": "text"}  # v1: the standard analyzer
    settings = {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0}}
    opensearch_client.indices.create(index=f"{alias}-v1", body={"settings": settings, "mappings": mapping})
    opensearch_client.indices.put_alias(index=f"{alias}-v1", name=alias)
    _put(
        opensearch_client,
        f"{alias}-v1",
        [
            _document("user#u-1", 1, "Adopted two cats from the shelter", vector=VECTOR),
            _document("user#u-1", 2, "Drives a blue sedan"),
            _document("ws#w-1", 1, "The team ships on Fridays"),
        ],
    )
    yield alias
    opensearch_client.indices.delete(index=f"{alias}-v*")


def test_the_alias_moves_to_the_current_version_with_every_document(opensearch_client, old_alias):
    index = NotesIndex(opensearch_client, alias=old_alias)
    assert index.keyword("user#u-1", "cat", k=5).hits == []  # v1 does not stem

    moved = move_alias(opensearch_client, alias=old_alias)

    current = f"{old_alias}-v{INDEX_VERSION}"
    assert (moved.previous, moved.current, moved.copied, moved.caught_up) == (f"{old_alias}-v1", current, 3, 0)
    assert list(opensearch_client.indices.get_alias(name=old_alias)) == [current]
    [hit] = index.keyword("user#u-1", "cat", k=5).hits  # the text analysed anew: "cats" is "cat"
    assert (hit.scope, hit.position) == ("user#u-1", 1)
    assert index.note_ids("ws#w-1") == {"2026-12-01.1"}  # routed by scope: found with the scope's routing
    stored = opensearch_client.get(index=current, id=document_id("user#u-1", "2026-12-01.1"), routing="user#u-1")
    assert stored["_source"]["embedding"] == VECTOR  # the vector kept, not embedded again
    index.ensure()  # the live mapping is the current one


def test_moving_again_changes_nothing(opensearch_client, old_alias):
    move_alias(opensearch_client, alias=old_alias)

    again = move_alias(opensearch_client, alias=old_alias)

    assert (again.previous, again.copied, again.caught_up) == (again.current, 0, 0)


def test_the_catch_up_adds_what_the_new_index_lacks_and_never_overwrites(opensearch_client, old_alias):
    new = f"{old_alias}-v{INDEX_VERSION}"
    move_alias(opensearch_client, alias=old_alias)
    _put(opensearch_client, f"{old_alias}-v1", [_document("user#u-1", 3, "Written to v1 during the copy")])
    _put(opensearch_client, new, [_document("user#u-1", 2, "Drives a red sedan now")])  # newer, through the alias

    added = copy_documents(opensearch_client, f"{old_alias}-v1", new, overwrite=False)

    assert added == 1
    index = NotesIndex(opensearch_client, alias=old_alias)
    assert index.note_ids("user#u-1") == {"2026-12-01.1", "2026-12-01.2", "2026-12-01.3"}
    [hit] = index.keyword("user#u-1", "red", k=5).hits
    assert hit.position == 2


def test_make_reindex_move_alias(opensearch_client, old_alias, capsys):
    code = reindex.main(["--move-alias"], index=NotesIndex(opensearch_client, alias=old_alias))

    assert code == 0
    assert capsys.readouterr().out.split("\t")[:3] == [
        old_alias,
        f"{old_alias}-v1 -> {old_alias}-v{INDEX_VERSION}",
        "copied=3",
    ]
