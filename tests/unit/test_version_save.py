"""A version's save, item by item (``storage.version_save``), and the characters counter's change a document write
takes (``usage_store.version_change``): keys, conditions and attributes, with no AWS."""

from __future__ import annotations

import json

from agent_memory.domain.document import Author, Document
from agent_memory.domain.fold import DueNote, Fold
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import unconsolidated_shard
from agent_memory.storage.usage_store import Quota, chars_change_item, version_change
from agent_memory.storage.version_save import (
    LINE_NOTES,
    erase_mark_check,
    head_at,
    head_put,
    pending_marks_put,
    pruned,
    save_items,
    unchanged_items,
    version_attributes,
    version_put,
)

TABLE = "MemoryTable"
PERSONAL = Scope("personal", "u-1")
DOCUMENT = Document(content="- likes tea", version=8, updated_at="2026-12-03T10:00:00.000Z")
NOTES = [
    DueNote("user#u-1", "note#2026-12-01#000000002", "2026-12-01", 2, "likes tea", "2026-12-01T09:00:00Z"),
    DueNote("user#u-1", "note#2026-12-02#000000001", "2026-12-02", 1, "tea, green", "2026-12-02T09:00:00Z"),
]
FOLD = Fold(NOTES, run_id="run-1", token="tok-1", erase_mark="mark-1", edits=[{"op": "add", "text": "- likes tea"}])
QUOTA = Quota(notes_per_day=500, chars=1000)


def _attributes() -> dict:
    return version_attributes(
        PERSONAL, DOCUMENT, reason="tool", by=Author(user_id="u-1", thread_id="t-1"), write_id="w"
    )


def test_the_version_and_the_head_hold_the_same_attributes():
    assert _attributes() == {
        "pk": {"S": "user#u-1"},
        "content": {"S": "- likes tea"},
        "chars": {"N": "11"},
        "version": {"N": "8"},
        "updated_at": {"S": "2026-12-03T10:00:00.000Z"},
        "reason": {"S": "tool"},
        "write_id": {"S": "w"},
        "by_user_id": {"S": "u-1"},
        "by_thread_id": {"S": "t-1"},  # by_run_id is not set: not stored
    }


def test_the_version_is_put_once_under_its_number():
    put = version_put(TABLE, _attributes(), folded=None, edits=None, line_notes=[[]])["Put"]

    assert put["Item"]["sk"] == {"S": "doc#v#0000000008"}
    assert put["ConditionExpression"] == "attribute_not_exists(sk)"
    assert put["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"  # its write_id tells this save's own retry
    assert not {"folded_note_ids", "edits", LINE_NOTES} & set(put["Item"])  # nothing folded, no line on a note


def test_a_fold_s_version_lists_its_notes_its_edits_and_the_notes_under_its_lines():
    put = version_put(TABLE, _attributes(), folded=FOLD.note_ids, edits=FOLD.edits, line_notes=[["2026-12-01.2"]])[
        "Put"
    ]

    assert put["Item"]["folded_note_ids"] == {"L": [{"S": "2026-12-01.2"}, {"S": "2026-12-02.1"}]}
    assert json.loads(put["Item"]["edits"]["S"]) == FOLD.edits
    assert json.loads(put["Item"][LINE_NOTES]["S"]) == [["2026-12-01.2"]]


def test_the_head_moves_only_from_the_version_read():
    put = head_put(TABLE, _attributes(), expected_version=7)["Put"]

    assert put["Item"]["sk"] == {"S": "doc"}
    assert put["Item"]["content"] == {"S": "- likes tea"}
    assert put["ConditionExpression"] == "version = :expected"
    assert put["ExpressionAttributeValues"] == {":expected": {"N": "7"}}
    assert head_at(0) == {"ConditionExpression": "attribute_not_exists(sk)"}  # the first version: no head yet


def test_a_fold_s_pending_marks_name_its_notes_its_worker_and_its_run_once():
    put = pending_marks_put(TABLE, PERSONAL, FOLD)["Put"]

    assert put["Item"] == {
        "pk": {"S": "user#u-1"},
        "sk": {"S": "consolidation#pending"},
        "note_sks": {"L": [{"S": "note#2026-12-01#000000002"}, {"S": "note#2026-12-02#000000001"}]},
        "run_id": {"S": "run-1"},
        "token": {"S": "tok-1"},
        "uc_pk": {"S": unconsolidated_shard("user#u-1")},
        "uc_sk": {"S": "#pending#user#u-1"},
    }
    assert put["ConditionExpression"] == "attribute_not_exists(sk)"
    assert put["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"


def test_a_fold_checks_the_erase_mark_its_claim_read_and_that_no_erase_runs():
    check = erase_mark_check(TABLE, PERSONAL, "mark-1")["ConditionCheck"]

    assert check["Key"] == {"pk": {"S": "user#u-1"}, "sk": {"S": "consolidation#due"}}
    assert check["ConditionExpression"] == "fence = :mark AND attribute_not_exists(erasing)"
    assert check["ExpressionAttributeValues"] == {":mark": {"S": "mark-1"}}


def test_the_version_leaving_the_history_is_deleted_unconditionally():
    delete = pruned(TABLE, PERSONAL, 3)["Delete"]

    assert delete == {"TableName": TABLE, "Key": {"pk": {"S": "user#u-1"}, "sk": {"S": "doc#v#0000000003"}}}


def test_a_fold_s_save_lays_out_version_head_marks_counter_check_prune_and_says_where_each_is():
    version = version_put(TABLE, _attributes(), folded=FOLD.note_ids, edits=FOLD.edits, line_notes=[[]])
    head = head_put(TABLE, _attributes(), expected_version=7)
    chars = chars_change_item(TABLE, PERSONAL, version_change(11, QUOTA, reason="consolidation"))

    layout = save_items(TABLE, PERSONAL, version=version, head=head, fold=FOLD, chars=chars, prune=3)

    assert layout.items == [
        version,
        head,
        pending_marks_put(TABLE, PERSONAL, FOLD),
        chars,
        erase_mark_check(TABLE, PERSONAL, "mark-1"),
        pruned(TABLE, PERSONAL, 3),
    ]
    assert (layout.counter, layout.fenced, layout.linked) == (3, 4, 6)
    assert layout.counter_refused(["None", "None", "None", "ConditionalCheckFailed", "None", "None"])
    assert not layout.counter_refused(["None", "None", "None", "None", "ConditionalCheckFailed", "None"])


def test_a_hand_edit_s_save_is_version_head_and_counter():
    version = version_put(TABLE, _attributes(), folded=None, edits=None, line_notes=[[]])
    head = head_put(TABLE, _attributes(), expected_version=7)
    chars = chars_change_item(TABLE, PERSONAL, version_change(11, QUOTA, reason="tool"))

    layout = save_items(TABLE, PERSONAL, version=version, head=head, fold=None, chars=chars, prune=None)

    assert layout.items == [version, head, chars]
    assert (layout.counter, layout.fenced, layout.linked) == (2, 3, 3)


def test_a_restore_s_save_moves_no_counter():
    version = version_put(TABLE, _attributes(), folded=None, edits=None, line_notes=[[]])
    head = head_put(TABLE, _attributes(), expected_version=7)

    layout = save_items(TABLE, PERSONAL, version=version, head=head, fold=None, chars=None, prune=None)

    assert layout.items == [version, head]
    assert layout.counter is None and not layout.counter_refused(["None", "ConditionalCheckFailed"])


def test_a_document_write_is_held_to_the_quota_but_a_consolidation_is_not():
    held = chars_change_item(TABLE, PERSONAL, version_change(50, QUOTA, reason="tool"))["Update"]
    folded = chars_change_item(TABLE, PERSONAL, version_change(5000, QUOTA, reason="consolidation"))["Update"]

    assert held["Key"] == {"pk": {"S": "user#u-1"}, "sk": {"S": "usage"}}
    assert held["ConditionExpression"] == "attribute_not_exists(chars) OR chars <= :max"
    assert held["ExpressionAttributeValues"] == {":n": {"N": "50"}, ":max": {"N": "950"}}
    assert "ConditionExpression" not in folded and folded["ExpressionAttributeValues"] == {":n": {"N": "5000"}}


def test_a_fold_that_changes_nothing_writes_its_marks_on_the_head_and_the_erase_mark_it_read():
    marks, head, mark = unchanged_items(TABLE, PERSONAL, 7, FOLD)

    assert marks == pending_marks_put(TABLE, PERSONAL, FOLD)
    assert head["ConditionCheck"] == {
        "TableName": TABLE,
        "Key": {"pk": {"S": "user#u-1"}, "sk": {"S": "doc"}},
        "ConditionExpression": "version = :expected",
        "ExpressionAttributeValues": {":expected": {"N": "7"}},
    }
    assert mark == erase_mark_check(TABLE, PERSONAL, "mark-1")
