"""A note's append, item by item (``storage.note_append``), and the settling of one whose every answer was lost
(``storage.lost_note_writes.lost_note_items``): keys, conditions and attributes, with no AWS."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from agent_memory.basics.errors import StorageQuotaExceeded
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import unconsolidated_shard
from agent_memory.storage.lost_note_writes import lost_note_items
from agent_memory.storage.note_append import (
    NOT_ABANDONED,
    append_items,
    chars_counted,
    indexed_vector_put,
    marker_item,
    marker_moved_back,
    marker_refused,
    note_put,
    place_abandoned,
    position_take,
)
from agent_memory.storage.usage_store import CharsChange, Quota, chars_change_item

TABLE = "MemoryTable"
PERSONAL = Scope("personal", "u-1")
NOTE = Note(
    day="2026-12-03",
    position=7,
    text="likes green tea",
    created_at="2026-12-03T10:00:00Z",
    source="tool",
    origin=Origin("u-1", "t-1"),
)
QUOTA = Quota(notes_per_day=500, chars=1000, notes_per_member_day=50)
NOTE_KEY = {"pk": {"S": "user#u-1"}, "sk": {"S": "note#2026-12-03#000000007"}}


def _cancelled(*reasons: dict[str, object]) -> ClientError:
    return ClientError(
        {"Error": {"Code": "TransactionCanceledException"}, "CancellationReasons": list(reasons)},
        "TransactWriteItems",
    )


def test_the_position_take_adds_one_to_the_day_and_records_its_take():
    request = position_take(TABLE, PERSONAL, "2026-12-03", "w.0", member=None, quota=None)

    assert request["Key"] == {"pk": {"S": "user#u-1"}, "sk": {"S": "day#2026-12-03"}}
    assert request["UpdateExpression"] == (
        "ADD next_position :one SET live = if_not_exists(live, :zero) + :one, last_take = :take"
    )
    assert request["ConditionExpression"] == "(attribute_not_exists(last_take) OR last_take <> :take)"
    assert request["ExpressionAttributeValues"] == {":one": {"N": "1"}, ":zero": {"N": "0"}, ":take": {"S": "w.0"}}
    assert (request["ReturnValues"], request["ReturnValuesOnConditionCheckFailure"]) == ("UPDATED_NEW", "ALL_OLD")
    assert "ExpressionAttributeNames" not in request


def test_the_position_take_of_a_team_member_holds_the_day_s_quota_and_the_member_s_share():
    request = position_take(TABLE, Scope("team", "w-1"), "2026-12-03", "w.1", member="u-2", quota=QUOTA)

    assert request["UpdateExpression"].startswith("ADD next_position :one, #member :one SET")
    assert request["ExpressionAttributeNames"] == {"#member": "by#u-2"}
    condition = request["ConditionExpression"]
    assert condition.startswith("(attribute_not_exists(last_take) OR last_take <> :take) AND ")
    assert "live < :quota" in condition and "next_position < :quota" in condition
    assert condition.endswith(" AND (attribute_not_exists(#member) OR #member < :share)")
    assert request["ExpressionAttributeValues"][":quota"] == {"N": "500"}
    assert request["ExpressionAttributeValues"][":share"] == {"N": "50"}


def test_a_personal_take_holds_the_day_s_quota_and_no_member_share():
    request = position_take(TABLE, PERSONAL, "2026-12-03", "w.0", member=None, quota=QUOTA)

    assert ":share" not in request["ExpressionAttributeValues"]
    assert "#member" not in request["ConditionExpression"]


def test_the_note_is_put_at_a_free_place_with_its_write_id_and_vector():
    put = note_put(TABLE, PERSONAL, NOTE, write_id="w", vector=b"\x01\x02")["Put"]

    assert put["TableName"] == TABLE
    assert {key: put["Item"][key] for key in ("pk", "sk")} == NOTE_KEY
    assert put["Item"]["text"] == {"S": "likes green tea"}
    assert put["Item"]["write_id"] == {"S": "w"}
    assert put["Item"]["vec"] == {"B": b"\x01\x02"}
    assert put["ConditionExpression"] == "attribute_not_exists(sk)"
    assert put["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"  # the holder's write_id tells a retry from a clash


def test_a_note_without_a_vector_has_no_vec():
    assert "vec" not in note_put(TABLE, PERSONAL, NOTE, write_id="w", vector=None)["Put"]["Item"]


def test_the_characters_counter_grows_within_the_quota_and_not_on_an_abandoned_place():
    chars = chars_change_item(TABLE, PERSONAL, CharsChange(len(NOTE.text), QUOTA))
    update = chars_counted(chars, NOTE)["Update"]

    assert update["Key"] == {"pk": {"S": "user#u-1"}, "sk": {"S": "usage"}}
    assert update["UpdateExpression"] == "ADD chars :n"
    assert update["ConditionExpression"] == f"(attribute_not_exists(chars) OR chars <= :max) AND {NOT_ABANDONED}"
    assert update["ExpressionAttributeValues"] == {
        ":n": {"N": "15"},
        ":max": {"N": "985"},
        ":place": {"S": "note#2026-12-03#000000007"},
    }
    assert update["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"  # the abandoned places tell it from the quota


def test_without_a_quota_the_counter_holds_only_the_place():
    update = chars_counted(chars_change_item(TABLE, PERSONAL, CharsChange(15, None)), NOTE)["Update"]

    assert update["ConditionExpression"] == NOT_ABANDONED


def test_the_indexed_vector_is_an_item_of_its_own_beside_the_note():
    put = indexed_vector_put(TABLE, PERSONAL, "2026-12-03", 7, [1, -2, 3])["Put"]

    assert put["Item"] == {
        "pk": {"S": "user#u-1"},
        "sk": {"S": "vec#2026-12-03#000000007"},
        "embedding": {"L": [{"N": "1"}, {"N": "-2"}, {"N": "3"}]},
    }
    assert "ConditionExpression" not in put  # it replaces a stale one


def test_the_transaction_s_items_are_the_note_the_counter_the_caller_s_item_then_the_vector():
    chars = chars_change_item(TABLE, PERSONAL, CharsChange(15, QUOTA))
    claim = {"Update": {"TableName": TABLE, "Key": {"pk": {"S": "user#u-1"}, "sk": {"S": "flush#t-1#c-1"}}}}

    items = append_items(
        TABLE, PERSONAL, NOTE, write_id="w", vector=b"\x01", numbers=[1], chars=chars, completing=claim
    )

    assert [next(iter(item)) for item in items] == ["Put", "Update", "Update", "Put"]
    assert items[0] == note_put(TABLE, PERSONAL, NOTE, write_id="w", vector=b"\x01")
    assert items[1] == chars_counted(chars, NOTE)  # second: ``place_abandoned`` reads its refusal there
    assert items[2] is claim
    assert items[3] == indexed_vector_put(TABLE, PERSONAL, NOTE.day, NOTE.position, [1])


def test_a_plain_note_s_transaction_is_the_note_and_the_counter():
    items = append_items(
        TABLE,
        PERSONAL,
        NOTE,
        write_id="w",
        vector=None,
        numbers=None,
        chars=chars_change_item(TABLE, PERSONAL, CharsChange(15, None)),
        completing=None,
    )

    assert [item[next(iter(item))]["Key" if "Update" in item else "Item"]["sk"]["S"] for item in items] == [
        "note#2026-12-03#000000007",
        "usage",
    ]


def test_the_due_marker_counts_the_note_unless_the_note_is_older_than_it():
    update = marker_item(TABLE, PERSONAL, created_at=NOTE.created_at, day=NOTE.day)["Update"]

    assert update["Key"] == {"pk": {"S": "user#u-1"}, "sk": {"S": "consolidation#due"}}
    assert update["UpdateExpression"] == (
        "SET uc_pk = :shard, uc_sk = if_not_exists(uc_sk, :uc_sk), oldest = if_not_exists(oldest, :at),"
        " floor = if_not_exists(floor, :day) ADD writes :one, notes :one"
    )
    assert update["ConditionExpression"] == (
        "(attribute_not_exists(oldest) OR oldest <= :at) AND (attribute_not_exists(floor) OR floor <= :day)"
    )
    assert update["ExpressionAttributeValues"] == {
        ":uc_sk": {"S": "due#2026-12-03T10:00:00Z#user#u-1"},
        ":at": {"S": "2026-12-03T10:00:00Z"},
        ":day": {"S": "2026-12-03"},
        ":shard": {"S": unconsolidated_shard("user#u-1")},
        ":one": {"N": "1"},
    }
    assert update["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"  # what ``marker_moved_back`` starts from


def test_an_older_note_moves_the_marker_back_on_condition_it_is_exactly_as_seen():
    seen = {"oldest": {"S": "2026-12-04T08:00:00Z"}, "floor": {"S": "2026-12-01"}, "writes": {"N": "9"}}

    update = marker_moved_back(TABLE, PERSONAL, created_at=NOTE.created_at, day=NOTE.day, seen=seen)["Update"]

    assert update["UpdateExpression"] == (
        "SET uc_pk = :shard, uc_sk = :uc_sk, oldest = :at, floor = :day ADD writes :one, notes :one"
    )
    assert update["ConditionExpression"] == "oldest = :seen_oldest AND floor = :seen_floor AND writes = :seen_writes"
    values = update["ExpressionAttributeValues"]
    assert values[":at"] == {"S": "2026-12-03T10:00:00Z"}  # the note's: older than the marker's
    assert values[":day"] == {"S": "2026-12-01"}  # the marker's floor: older than the note's day
    assert values[":uc_sk"] == {"S": "due#2026-12-03T10:00:00Z#user#u-1"}
    assert (values[":seen_oldest"], values[":seen_floor"], values[":seen_writes"]) == tuple(seen.values())


def test_a_marker_seen_without_attributes_is_moved_on_condition_they_are_still_absent():
    update = marker_moved_back(TABLE, PERSONAL, created_at=NOTE.created_at, day=NOTE.day, seen={})["Update"]

    assert update["ConditionExpression"] == (
        "attribute_not_exists(oldest) AND attribute_not_exists(floor) AND attribute_not_exists(writes)"
    )


def test_only_a_refusal_of_the_marker_alone_is_read_as_the_marker_seen():
    marker = {"oldest": {"S": "2026-12-04T08:00:00Z"}}
    none, failed = {"Code": "None"}, {"Code": "ConditionalCheckFailed"}

    assert marker_refused(_cancelled(none, none, {**failed, "Item": marker})) == marker
    assert marker_refused(_cancelled(failed, none, {**failed, "Item": marker})) is None  # the note's place too
    assert marker_refused(_cancelled(none, {"Code": "TransactionConflict"}, none)) is None
    assert marker_refused(ClientError({"Error": {"Code": "ValidationException"}}, "TransactWriteItems")) is None


def test_an_abandoned_place_is_told_from_the_quota_by_the_usage_item_returned():
    abandoned = {"abandoned": {"SS": ["note#2026-12-03#000000007"]}}
    usage_refused = {"Code": "ConditionalCheckFailed", "Item": abandoned}

    assert place_abandoned(_cancelled({"Code": "None"}, usage_refused), NOTE)
    assert not place_abandoned(_cancelled({"Code": "None"}, {"Code": "ConditionalCheckFailed", "Item": {}}), NOTE)
    assert not place_abandoned(_cancelled({"Code": "None"}), NOTE)


def test_a_change_larger_than_the_whole_quota_is_refused_before_any_request():
    with pytest.raises(StorageQuotaExceeded):
        chars_change_item(TABLE, PERSONAL, CharsChange(1001, QUOTA))


def test_a_change_that_shrinks_or_is_not_held_has_no_condition():
    assert "ConditionExpression" not in chars_change_item(TABLE, PERSONAL, CharsChange(-40, QUOTA))["Update"]
    assert "ConditionExpression" not in chars_change_item(TABLE, PERSONAL, CharsChange(5000, None))["Update"]


def test_the_settling_checks_the_place_abandons_it_and_gives_the_day_back_once():
    check, abandon, give_back = lost_note_items(TABLE, Scope("team", "w-1"), NOTE, member="u-2")

    assert check["ConditionCheck"]["Key"] == {"pk": {"S": "ws#w-1"}, "sk": {"S": "note#2026-12-03#000000007"}}
    assert check["ConditionCheck"]["ConditionExpression"] == "attribute_not_exists(sk)"
    assert check["ConditionCheck"]["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    assert abandon["Update"]["Key"]["sk"] == {"S": "usage"}
    assert abandon["Update"]["UpdateExpression"] == "ADD abandoned :places"
    assert abandon["Update"]["ConditionExpression"] == NOT_ABANDONED
    assert abandon["Update"]["ExpressionAttributeValues"][":places"] == {"SS": ["note#2026-12-03#000000007"]}
    day = give_back["Update"]
    assert day["Key"]["sk"] == {"S": "day#2026-12-03"}
    assert day["UpdateExpression"] == "ADD live :minus, #member :minus SET given_back = :once"
    assert day["ExpressionAttributeNames"] == {"#member": "by#u-2"}
    assert day["ConditionExpression"] == (
        "attribute_exists(live) AND next_position >= :position"
        " AND (attribute_not_exists(given_back) OR given_back <> :once)"
    )
    assert day["ExpressionAttributeValues"][":once"] == {"S": "delete#note#2026-12-03#000000007"}  # the delete's key
    assert day["ExpressionAttributeValues"][":position"] == {"N": "7"}
