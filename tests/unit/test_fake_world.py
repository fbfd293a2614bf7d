"""The in-memory world the fake stores share (tests/support/fake_stores.py): transactions all or nothing, request
tokens, and faults per call, as the stores' contracts and the use cases' tests rely on them; and the note store's
extension point for a write completing a note."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.basics.errors import StorageUnavailable
from agent_memory.domain.notes import Origin
from tests.support.fake_stores import SENDS, AnswerLost, Cancelled, FakeWorld, Write, fake_stores
from tests.support.scopes import PERSONAL, stored

A, B = ("p", "a"), ("p", "b")
ORIGIN = Origin("u-1", "t-1", compaction_id="c-1")


def put(key, value, *, unless_there: bool = False) -> Write:
    """A put of ``{"value": value}``; with ``unless_there``, on condition no item is there."""

    def change(item):
        return {"value": value}

    return Write(key, change, lambda item: item is None) if unless_there else Write(key, change)


def test_a_transaction_whose_condition_fails_applies_nothing_and_names_the_write():
    world = FakeWorld()
    world.transact("t", [put(B, "old")])

    with pytest.raises(Cancelled) as refused:
        world.transact("t", [put(A, "new"), put(B, "new", unless_there=True)])

    assert (refused.value.index, refused.value.item) == (1, {"value": "old"})
    assert (world.item(A), world.item(B)) == (None, {"value": "old"})


def test_a_transaction_applies_every_write_together():
    world = FakeWorld()

    world.transact("t", [put(A, 1), put(B, 2), Write(A, lambda item: {"value": item["value"] + 10})])

    assert (world.item(A), world.item(B)) == ({"value": 11}, {"value": 2})


def test_a_write_answering_none_deletes_the_item():
    world = FakeWorld()
    world.transact("t", [put(A, 1)])

    world.transact("t", [Write(A, lambda item: None)])

    assert world.item(A) is None and world.between("p", "", "\uffff") == []


def test_a_transaction_sent_again_under_its_token_answers_as_done_and_changes_nothing():
    world = FakeWorld()
    world.transact("t", [put(A, 1, unless_there=True)], token="k")

    world.transact("t", [put(A, 1, unless_there=True)], token="k")

    with pytest.raises(Cancelled):
        world.transact("t", [put(A, 1, unless_there=True)], token="another")


def test_items_are_copied_in_and_out():
    world = FakeWorld()
    world.transact("t", [put(A, 1)])

    world.item(A)["value"] = 99
    world.between("p", "", "\uffff")[0]["value"] = 99

    assert world.item(A) == {"value": 1}


def test_between_reads_a_range_of_one_partition_in_order():
    world = FakeWorld()
    world.transact("t", [put(("p", key), key) for key in ("c", "a", "b", "d")] + [put(("q", "b"), "other")])

    assert [item["sk"] for item in world.between("p", "b", "c")] == ["b", "c"]
    assert [item["sk"] for item in world.between("p", "a", "z", newest_first=True)] == ["d", "c", "b", "a"]


def test_a_failure_fires_before_anything_applies_and_is_used_up():
    world = FakeWorld()
    world.faults.fail("t")

    with pytest.raises(StorageUnavailable):
        world.transact("t", [put(A, 1)])

    assert world.item(A) is None
    world.transact("t", [put(A, 1)])
    assert world.item(A) == {"value": 1}


def test_a_lost_answer_applies_the_write_then_raises():
    world = FakeWorld()
    world.faults.lose_answers("t")

    with pytest.raises(AnswerLost):
        world.transact("t", [put(A, 1)])

    assert world.item(A) == {"value": 1}


def test_send_tries_again_under_its_token_while_answers_are_lost():
    world = FakeWorld()
    world.faults.lose_answers("t", times=SENDS - 1)

    world.send("t", [Write(A, lambda item: {"n": (item or {"n": 0})["n"] + 1})], token="k")

    assert world.item(A) == {"n": 1}  # applied once, answered on the last send
    assert world.faults.seen == ["t"] * SENDS


def test_send_gives_up_after_its_sends():
    world = FakeWorld()
    world.faults.lose_answers("t", times=SENDS)

    with pytest.raises(AnswerLost):
        world.send("t", [put(A, 1)], token="k")

    assert world.item(A) == {"value": 1}


def test_hooks_run_one_a_call_in_order_and_their_own_calls_fire_none():
    world = FakeWorld()
    ran = []
    world.faults.before("t", lambda: (ran.append("first"), world.transact("t", [put(B, "hook")])))
    world.faults.before("t", lambda: ran.append("second"))

    world.transact("t", [put(A, 1)])
    assert ran == ["first"] and world.item(B) == {"value": "hook"}
    world.transact("t", [put(A, 2)])
    assert ran == ["first", "second"]


def test_faults_are_per_call_name():
    world = FakeWorld()
    world.faults.fail("other")

    world.transact("t", [put(A, 1)])
    assert world.read("r", lambda: world.item(A)) == {"value": 1}
    with pytest.raises(StorageUnavailable):
        world.read("other", lambda: None)


def test_a_note_completing_another_write_lands_with_it_or_not_at_all():
    """``FakeNoteStore.append``'s ``completing`` (the flush's claim, for its fake): one more write of the note's own
    transaction; refused, nothing is written and the day's position is given back."""
    stores = fake_stores()
    claim = ("user#u-1", "flush#t-1#c-1")
    stores.world.transact("test.claim", [Write(claim, lambda item: {"state": "claimed", "token": "k"})])

    def completion(token):
        return lambda note: Write(
            claim, lambda item: {**item, "state": "written", "note_id": note.id}, lambda item: item["token"] == token
        )

    with pytest.raises(Cancelled):
        append(stores, "refused", completing=completion("stale"))
    note = append(stores, "written", completing=completion("k"))

    assert [n.text for n in stores.notes.every_note(PERSONAL)] == ["written"]
    assert note.position == 1
    assert stores.world.item(claim) == {"state": "written", "token": "k", "note_id": note.id}


def append(stores, text, **kwargs):
    created = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
    return stores.notes.append(PERSONAL, created=created, text=stored(text), source="flush", origin=ORIGIN, **kwargs)
