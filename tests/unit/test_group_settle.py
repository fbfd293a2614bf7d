"""A group's settle, item by item (``storage.group_settle``): keys, conditions and attributes, with no AWS."""

from __future__ import annotations

from agent_memory.domain.scope import Scope
from agent_memory.storage.due_markers import Claim
from agent_memory.storage.group_settle import (
    marker_elsewhere,
    marker_failed,
    marker_settled,
    pending_cleared,
    run_counted,
    written_by,
)
from agent_memory.storage.keys import unconsolidated_shard

TABLE = "MemoryTable"
PERSONAL = Scope("personal", "u-1")
MARKER = {"pk": {"S": "user#u-1"}, "sk": {"S": "consolidation#due"}}
CLAIM = Claim(token="tok-1", floor="2026-12-01", writes=9, erase_mark="mark-1")
ONCE = "(attribute_not_exists(last_run) OR last_run <> :run)"


def test_a_settle_moves_the_marker_to_the_oldest_note_left_if_nothing_was_written_since_the_claim():
    update = marker_settled(
        TABLE, PERSONAL, CLAIM, "run-1", writes=9, oldest=("2026-12-02T09:00:00Z", "2026-12-02"), folded=3
    )["Update"]

    assert update["Key"] == MARKER
    assert update["UpdateExpression"] == (
        "SET last_run = :run, oldest = :at, floor = :day, uc_pk = :shard, uc_sk = :uc_sk"
        " REMOVE folding, folding_until, folding_run ADD notes :minus"
    )
    assert update["ConditionExpression"] == (
        f"folding = :token AND (attribute_not_exists(writes) OR writes = :writes) AND {ONCE}"
    )
    assert update["ExpressionAttributeValues"] == {
        ":token": {"S": "tok-1"},
        ":run": {"S": "run-1"},
        ":writes": {"N": "9"},
        ":at": {"S": "2026-12-02T09:00:00Z"},
        ":day": {"S": "2026-12-02"},
        ":shard": {"S": unconsolidated_shard("user#u-1")},
        ":uc_sk": {"S": "due#2026-12-02T09:00:00Z#user#u-1"},
        ":minus": {"N": "-3"},
    }


def test_a_settle_with_no_note_left_takes_the_marker_out_of_the_index():
    update = marker_settled(TABLE, PERSONAL, CLAIM, "run-1", writes=9, oldest=None, folded=3)["Update"]

    assert update["UpdateExpression"] == (
        "SET last_run = :run REMOVE folding, folding_until, folding_run, uc_pk, uc_sk, oldest, floor, notes"
    )
    assert set(update["ExpressionAttributeValues"]) == {":token", ":run", ":writes"}


def test_a_failed_group_leaves_the_marker_as_it_was_and_records_the_run_once():
    update = marker_failed(TABLE, PERSONAL, CLAIM, "run-1")["Update"]

    assert update["Key"] == MARKER
    assert update["UpdateExpression"] == "SET last_run = :run REMOVE folding, folding_until, folding_run"
    assert update["ConditionExpression"] == f"folding = :token AND {ONCE}"
    assert update["ExpressionAttributeValues"] == {":token": {"S": "tok-1"}, ":run": {"S": "run-1"}}


def test_a_group_held_elsewhere_is_counted_once_by_its_run():
    update = marker_elsewhere(TABLE, PERSONAL, "run-1")["Update"]

    assert update["Key"] == MARKER
    assert update["UpdateExpression"] == "SET elsewhere_run = :run"
    assert update["ConditionExpression"] == (
        "attribute_exists(sk) AND (attribute_not_exists(elsewhere_run) OR elsewhere_run <> :run)"
    )


def test_the_run_counts_a_group_its_tokens_and_how_it_was_folded():
    update = run_counted(TABLE, "run#2026-12-03#r", done=1, notes=3, remaining=2, tokens=(100, 20), fold="edits")[
        "Update"
    ]

    assert update["Key"] == {"pk": {"S": "consolidation"}, "sk": {"S": "run#2026-12-03#r"}}
    assert update["UpdateExpression"] == (
        "ADD groups_done :d, groups_failed :f, notes_consolidated :n, notes_remaining :r,"
        " tokens_input :ti, tokens_output :to, folds_edits :one"
    )
    assert update["ExpressionAttributeValues"] == {
        ":d": {"N": "1"},
        ":f": {"N": "0"},
        ":n": {"N": "3"},
        ":r": {"N": "2"},
        ":ti": {"N": "100"},
        ":to": {"N": "20"},
        ":one": {"N": "1"},
    }
    assert "ConditionExpression" not in update  # counted once by the marker's condition, in the same transaction


def test_a_failure_s_count_has_no_tokens_and_no_fold_when_there_were_none():
    update = run_counted(TABLE, "run#r", failed=1)["Update"]

    assert (
        update["UpdateExpression"] == "ADD groups_done :d, groups_failed :f, notes_consolidated :n, notes_remaining :r"
    )
    assert update["ExpressionAttributeValues"][":f"] == {"N": "1"}


def test_the_pending_record_goes_if_it_is_the_claim_s_own_or_is_gone():
    delete = pending_cleared(TABLE, PERSONAL, "tok-1")["Delete"]

    assert delete["Key"] == {"pk": {"S": "user#u-1"}, "sk": {"S": "consolidation#pending"}}
    assert delete["ConditionExpression"] == "attribute_not_exists(sk) OR #token = :token"
    assert delete["ExpressionAttributeNames"] == {"#token": "token"}  # a reserved word
    assert delete["ExpressionAttributeValues"] == {":token": {"S": "tok-1"}}
    assert written_by("tok-1")["ConditionExpression"] == "#token = :token"
