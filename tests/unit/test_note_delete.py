"""A note's delete and the vector fill, item by item (``storage.note_delete``, ``storage.vector_fill``): keys,
conditions and attributes, with no AWS."""

from __future__ import annotations

from agent_memory.domain.scope import Scope
from agent_memory.storage.due_markers import erase_mark_move
from agent_memory.storage.note_append import indexed_vector_put
from agent_memory.storage.note_delete import delete_items, indexed_vector_gone, links_unchanged, note_gone
from agent_memory.storage.vector_fill import vector_fill_items

TABLE = "MemoryTable"
PERSONAL = Scope("personal", "u-1")
NOTE_KEY = {"pk": {"S": "user#u-1"}, "sk": {"S": "note#2026-12-03#000000007"}}


def test_a_note_that_superseded_none_goes_on_condition_it_still_supersedes_none():
    delete = note_gone(TABLE, PERSONAL, "2026-12-03", 7, read=[])["Delete"]

    assert delete["Key"] == NOTE_KEY
    assert delete["ConditionExpression"] == "attribute_exists(sk) AND attribute_not_exists(#links)"
    assert delete["ExpressionAttributeNames"] == {"#links": "supersedes"}
    assert "ExpressionAttributeValues" not in delete
    assert delete["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"  # the note as it is now: its links since


def test_a_note_that_superseded_others_goes_on_condition_their_count_is_as_read():
    condition = links_unchanged(["2026-12-01.1", "2026-12-02.4"])

    assert condition["ConditionExpression"] == "attribute_exists(sk) AND size(#links) = :count"
    assert condition["ExpressionAttributeValues"] == {":count": {"N": "2"}}


def test_the_delete_takes_the_note_the_erase_mark_the_links_then_the_indexed_vector():
    mark = erase_mark_move(TABLE, PERSONAL)

    items = delete_items(
        TABLE, PERSONAL, "2026-12-03", 7, read=["2026-12-01.1"], links=["2026-12-01.1"], mark=mark, indexed=True
    )

    assert items[0] == note_gone(TABLE, PERSONAL, "2026-12-03", 7, read=["2026-12-01.1"])
    assert items[1] is mark
    unlink = items[2]["Update"]
    assert unlink["Key"] == {"pk": {"S": "user#u-1"}, "sk": {"S": "note#2026-12-01#000000001"}}
    assert unlink["UpdateExpression"] == "DELETE #superseded_by :superseded_by"
    assert unlink["ExpressionAttributeValues"] == {":superseded_by": {"SS": ["2026-12-03.7"]}}
    assert unlink["ConditionExpression"] == "attribute_exists(sk)"
    assert items[3] == indexed_vector_gone(TABLE, PERSONAL, "2026-12-03", 7)
    assert len(items) == 4


def test_the_erase_mark_moves_to_a_new_token_only_where_a_due_marker_is():
    update = erase_mark_move(TABLE, PERSONAL)["Update"]

    assert update["Key"] == {"pk": {"S": "user#u-1"}, "sk": {"S": "consolidation#due"}}
    assert update["UpdateExpression"] == "SET fence = :mark"
    assert update["ConditionExpression"] == "attribute_exists(sk)"
    assert (
        update["ExpressionAttributeValues"][":mark"]
        != erase_mark_move(TABLE, PERSONAL)["Update"]["ExpressionAttributeValues"][":mark"]
    )


def test_a_scope_without_a_marker_nor_a_vector_index_deletes_the_note_and_its_links_alone():
    items = delete_items(TABLE, PERSONAL, "2026-12-03", 7, read=[], links=[], mark=None, indexed=False)

    assert items == [note_gone(TABLE, PERSONAL, "2026-12-03", 7, read=[])]


def test_the_indexed_vector_goes_unconditionally():
    delete = indexed_vector_gone(TABLE, PERSONAL, "2026-12-03", 7)["Delete"]

    assert delete == {"TableName": TABLE, "Key": {"pk": {"S": "user#u-1"}, "sk": {"S": "vec#2026-12-03#000000007"}}}


def test_the_vector_fill_sets_the_note_s_vector_if_the_note_is_there_then_its_indexed_vector():
    update, indexed = vector_fill_items(TABLE, PERSONAL, "2026-12-03", 7, b"\x01\x02", [1, 2])

    assert update["Update"] == {
        "TableName": TABLE,
        "Key": NOTE_KEY,
        "UpdateExpression": "SET vec = :vec",
        "ConditionExpression": "attribute_exists(sk)",
        "ExpressionAttributeValues": {":vec": {"B": b"\x01\x02"}},
    }
    assert indexed == indexed_vector_put(TABLE, PERSONAL, "2026-12-03", 7, [1, 2])


def test_without_a_vector_index_the_fill_is_the_note_s_update_alone():
    assert [next(iter(item)) for item in vector_fill_items(TABLE, PERSONAL, "2026-12-03", 7, b"\x01", None)] == [
        "Update"
    ]
