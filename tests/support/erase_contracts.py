"""The behaviours people's control relies on from its partition and its left-behind records (``people.ports``
``ScopePartition``, ``LeftBehind``, and the give-backs of ``Counters``), written once and checked against both the
DynamoDB stores (tests/integration/test_erase_store_contracts.py, on moto) and the in-memory fakes
(tests/unit/test_fake_erase_store_contracts.py), so the erase's tests on the fakes mean what they say.

Each contract takes ``make``: the stores under test (``EraseStores``) on one fresh table. Notes and versions are
written through the note and document ports; the records no port writes (idempotency, injection, extraction and
flush records, an erase record another call holds) are seeded (``tests/support/seeds.py``). Observations go
through the ports: ``items.page`` and ``items.keys``, parsed with the real stores' parsers.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

import pytest

from agent_memory.basics.errors import StorageUnavailable
from agent_memory.domain.document import Author
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import NOTE_PREFIX, day_sk, note_sk, version_sk
from tests.support.scopes import PERSONAL, TEAM, stored, stored_document
from tests.support.seeds import Seed


class EraseStores(NamedTuple):
    """The stores under test, on one table."""

    items: Any  # ScopePartition
    stale: Any  # LeftBehind
    notes: Any  # writes notes (``append``); its ``usage`` is the Counters port
    documents: Any
    seed: Seed
    link: Callable[[Scope, str, str], None]  # link(scope, old, new): ``new`` supersedes ``old`` (a fold's links)


MakeEraseStores = Callable[[], EraseStores]
AT = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)
DAY = "2026-12-03"
NOW = 1_796_000_000
ORIGIN = Origin("u-1", "t-1")


def _note(stores: EraseStores, text: str, *, scope: Scope = PERSONAL, user: str = "u-1") -> Any:
    origin = Origin(user, "t-1")
    return stores.notes.append(scope, created=AT, text=stored(text), source="remember", origin=origin)


def _version(stores: EraseStores, content: str, expected: int, scope: Scope = PERSONAL) -> Any:
    by = Author(user_id="u-1", thread_id="t-1")
    at = f"2026-12-03T09:0{expected}:00.000Z"
    return stores.documents.save(
        scope, stored_document(content), expected_version=expected, updated_at=at, reason="tool", by=by
    )


def _first_page(stores: EraseStores, scope: Scope = PERSONAL) -> list[Any]:
    """The first page ``keys`` reads: it reads from the start again after each, so it never ends until the caller
    deletes what it read."""
    page: list[Any] = next(iter(stores.items.keys(scope)), [])
    return page


def _sort_keys(stores: EraseStores, scope: Scope = PERSONAL) -> list[str]:
    return [row.sk for row in _first_page(stores, scope)]


def a_page_reads_a_range_in_key_order_and_says_where_to_go_on(make: MakeEraseStores) -> None:
    stores = make()
    for text in ("one", "two", "three"):
        _note(stores, text)
    _note(stores, "elsewhere", scope=TEAM)

    first, last = stores.items.notes_page(PERSONAL, after=None, limit=2)
    rest, end = stores.items.notes_page(PERSONAL, after=last, limit=2)

    assert [note.text for note in first] == ["one", "two"] and last == note_sk(DAY, 2)
    assert [note.text for note in rest] == ["three"] and end is None
    assert first[0].origin == Origin("u-1", "t-1")


def a_page_of_versions_parses_as_the_versions_saved(make: MakeEraseStores) -> None:
    stores = make()
    _version(stores, "# Memory v1", 0)
    _version(stores, "# Memory v2", 1)

    versions, last = stores.items.versions_page(PERSONAL, after=None, limit=40)

    assert [(doc.version, doc.content, reason) for doc, reason, _ in versions] == [
        (1, "# Memory v1", "tool"),
        (2, "# Memory v2", "tool"),
    ]
    assert versions[0][2] == Author(user_id="u-1", thread_id="t-1") and last is None


def the_keys_are_every_item_of_the_scope_but_its_erase_records(make: MakeEraseStores) -> None:
    stores = make()
    _note(stores, "a note")
    _version(stores, "# Memory", 0)
    stores.items.begin_erase(PERSONAL, "all", "2026-12-03T10:00:00.000Z")
    _note(stores, "a team note", scope=TEAM)

    keys = _sort_keys(stores)

    assert "erase#all" not in keys and not any(sk.startswith("erase#") for sk in keys)
    assert {"doc", version_sk(1), f"{NOTE_PREFIX}{DAY}#000000001", day_sk(DAY), "usage"} <= set(keys)
    lengths = {row.sk: row.chars for row in _first_page(stores)}
    assert lengths[note_sk(DAY, 1)] == len("a note") and lengths["doc"] == 0  # a note's length; no other item's


def the_keys_of_an_author_are_their_notes_only(make: MakeEraseStores) -> None:
    stores = make()
    for user in ("u-1", "u-2", "u-1"):
        _note(stores, f"by {user}", scope=TEAM, user=user)

    pages = list(stores.items.keys(TEAM, prefix=NOTE_PREFIX, author="u-1"))

    assert [row.chars for page in pages for row in page] == [len("by u-1"), len("by u-1")]
    assert [row.sk for page in pages for row in page] == [
        f"{NOTE_PREFIX}{DAY}#000000001",
        f"{NOTE_PREFIX}{DAY}#000000003",
    ]


def a_page_that_ends_at_its_limit_says_where_to_go_on_and_the_next_is_empty(make: MakeEraseStores) -> None:
    stores = make()
    for text in ("one", "two"):
        _note(stores, text)

    rows, last = stores.items.notes_page(PERSONAL, after=None, limit=2)
    rest, end = stores.items.notes_page(PERSONAL, after=last, limit=2) if last else ([], None)

    assert len(rows) == 2 and rest == [] and end is None


def a_note_is_read_whole_with_the_notes_that_superseded_it(make: MakeEraseStores) -> None:
    stores = make()
    old, newer, newest = (_note(stores, text) for text in ("likes tea", "likes green tea", "likes matcha"))
    stores.link(PERSONAL, old.id, newest.id)
    stores.link(PERSONAL, old.id, newer.id)

    found = stores.notes.get_many(PERSONAL, [(DAY, 1), (DAY, 2)])

    assert [(keyed.pk, keyed.note.id, keyed.note.superseded_by) for keyed in found] == [
        (PERSONAL.key, old.id, (newer.id, newest.id)),
        (PERSONAL.key, newer.id, None),
    ]


def an_unlinked_page_takes_its_notes_out_of_the_notes_they_superseded(make: MakeEraseStores) -> None:
    stores = make()
    old, other, new = (_note(stores, text, scope=TEAM) for text in ("old", "other", "new"))
    stores.link(TEAM, old.id, new.id)
    stores.link(TEAM, other.id, new.id)
    stores.link(TEAM, other.id, old.id)

    (page,) = list(stores.items.keys(TEAM, prefix=NOTE_PREFIX, author="u-1"))
    newest = [row for row in page if row.sk.endswith("000000003")]
    stores.items.unlink(TEAM, newest)

    notes, _ = stores.items.notes_page(TEAM, after=None, limit=10)
    assert {note.id: note.superseded_by for note in notes} == {old.id: None, other.id: (old.id,), new.id: None}
    assert newest[0].supersedes == tuple(sorted([old.id, other.id]))


def an_erased_page_is_counted_once_on_the_record_and_gone(make: MakeEraseStores) -> None:
    stores = make()
    notes = [_note(stores, text) for text in ("one", "two")]
    sort_keys = [f"{NOTE_PREFIX}{DAY}#{note.position:09d}" for note in notes]

    assert stores.items.begin_erase(PERSONAL, "all", "2026-12-03T10:00:00.000Z") == {}
    page_id = stores.items.erase_page(PERSONAL, "all", sort_keys, {"notes": 2, "other": 0})
    resumed = stores.items.begin_erase(PERSONAL, "all", "2026-12-03T10:05:00.000Z")
    stores.items.erase_page(PERSONAL, "all", [day_sk(DAY)], {"other": 1})
    again = stores.items.begin_erase(PERSONAL, "all", "2026-12-03T10:06:00.000Z")

    assert isinstance(page_id, str) and page_id
    assert resumed == {"notes": 2} and again == {"notes": 2, "other": 1}
    assert not any(sk.startswith((NOTE_PREFIX, "day#")) for sk in _sort_keys(stores))
    stores.items.end_erase(PERSONAL, "all")
    assert stores.items.begin_erase(PERSONAL, "all", "2026-12-03T10:07:00.000Z") == {}  # a new erase


def a_page_before_the_erase_began_is_refused(make: MakeEraseStores) -> None:
    stores = make()
    _note(stores, "kept")

    with pytest.raises(StorageUnavailable):
        stores.items.erase_page(PERSONAL, "all", [f"{NOTE_PREFIX}{DAY}#000000001"], {"notes": 1})

    assert f"{NOTE_PREFIX}{DAY}#000000001" in _sort_keys(stores)


def a_page_held_by_another_running_erase_is_neither_counted_nor_deleted(make: MakeEraseStores) -> None:
    stores = make()
    _note(stores, "kept")
    note = f"{NOTE_PREFIX}{DAY}#000000001"
    stores.seed(PERSONAL, "erase#all", {"started_at": "2026-12-03T10:00:00.000Z", "page": [], "page_id": "other"})

    with pytest.raises(StorageUnavailable):
        stores.items.erase_page(PERSONAL, "all", [note], {"notes": 1})

    assert note in _sort_keys(stores)


def a_page_counted_by_an_interrupted_call_is_deleted_by_the_next_without_counting_it_again(
    make: MakeEraseStores,
) -> None:
    stores = make()
    _note(stores, "counted, not yet deleted")
    note = f"{NOTE_PREFIX}{DAY}#000000001"
    record = {"started_at": "2026-12-03T10:00:00.000Z", "page": [note], "page_id": "died", "notes": 1}
    stores.seed(PERSONAL, "erase#all", record)

    counts = stores.items.begin_erase(PERSONAL, "all", "2026-12-03T10:05:00.000Z")

    assert counts == {"notes": 1} and note not in _sort_keys(stores)
    stores.items.erase_page(PERSONAL, "all", ["usage"], {"other": 1})  # the page was let go: the next one counts
    assert stores.items.begin_erase(PERSONAL, "all", "2026-12-03T10:06:00.000Z") == {"notes": 1, "other": 1}


def a_give_back_under_one_page_id_applies_once(make: MakeEraseStores) -> None:
    stores = make()
    for user in ("u-1", "u-2", "u-1"):
        _note(stores, "abcd", scope=TEAM, user=user)
    usage = stores.notes.usage

    for _ in range(2):  # sent again, as after a lost answer
        usage.give_back(TEAM, 8, once="page-1")
        usage.give_back_notes(TEAM, DAY, 2, {"u-1": 2}, once="page-1")

    assert (usage.chars(TEAM), usage.notes_on(TEAM, DAY)) == (4, 1)
    usage.give_back(TEAM, 4, once="page-2")
    usage.give_back_notes(TEAM, DAY, 1, {"u-2": 1}, once="page-2")
    assert (usage.chars(TEAM), usage.notes_on(TEAM, DAY)) == (0, 0)


def the_days_notes_are_given_back_only_on_a_day_that_counts_them(make: MakeEraseStores) -> None:
    stores = make()
    stores.seed(PERSONAL, day_sk("2026-11-01"), {"next_position": 3})  # a day item from before ``live``

    stores.notes.usage.give_back_notes(PERSONAL, "2026-11-01", 2)

    assert stores.notes.usage.notes_on(PERSONAL, "2026-11-01") == 3


def _left_behind(stores: EraseStores) -> None:
    """What two members' notes left in the team: u-1's ``2026-12-03.1``, u-2's ``2026-12-03.2``."""
    mine, theirs = f"{DAY}.1", f"{DAY}.2"
    answer = {"note": {"id": mine, "origin": {"user_id": "u-1", "thread_id": "t-1"}}}
    stores.seed(TEAM, "idem#remember#u-1#key-1", {"answer": json.dumps(answer)})
    other = {"note": {"id": theirs, "origin": {"user_id": "u-2", "thread_id": "t-2"}}}
    stores.seed(TEAM, "idem#remember#u-2#key-2", {"answer": json.dumps(other)})
    stores.seed(TEAM, "flush#t-1#cmp-1", {"status": "written", "note_id": mine})
    stores.seed(TEAM, "extract#t-1#ex-1", {"note_ids": [mine, theirs]})
    stores.seed(TEAM, "extract#t-1#ex-2", {"note_ids": [mine]})
    turn = {"thread_id": "t-1", "document_version": 0, "expires_at": NOW + 3600, "at": "2026-12-03T10:00:00.000Z"}
    stores.seed(TEAM, "inj#2026-12-03T10:00:00.000Z#a", {**turn, "user_id": "u-1", "note_ids": [mine]})
    stores.seed(TEAM, "inj#2026-12-03T10:00:01.000Z#b", {**turn, "user_id": "u-2", "note_ids": [mine, theirs]})


def _named(stores: EraseStores, prefix: str) -> dict[str, list[str]]:
    rows, _ = stores.items.page(TEAM, low=prefix, high=prefix + "~", after=None, limit=100)
    return {row["sk"]["S"]: [one["S"] for one in row["note_ids"]["L"]] for row in rows}


def what_a_members_notes_left_goes_or_loses_their_ids(make: MakeEraseStores) -> None:
    stores = make()
    _left_behind(stores)

    stale = stores.stale.trim_and_list(TEAM, {f"{DAY}.1"}, author="u-1")

    assert sorted(stale.gone) == [
        "extract#t-1#ex-2",
        "flush#t-1#cmp-1",
        "idem#remember#u-1#key-1",
        "inj#2026-12-03T10:00:00.000Z#a",
    ]
    assert stale.trimmed == 1  # u-2's turn lost the id
    assert _named(stores, "extract#") == {"extract#t-1#ex-1": [f"{DAY}.2"], "extract#t-1#ex-2": [f"{DAY}.1"]}
    assert _named(stores, "inj#")["inj#2026-12-03T10:00:01.000Z#b"] == [f"{DAY}.2"]


def voiding_a_deleted_note_removes_what_it_left_and_trims_the_lists_that_name_it(make: MakeEraseStores) -> None:
    stores = make()
    _left_behind(stores)

    stores.stale.void(TEAM, {f"{DAY}.2"})

    assert _named(stores, "extract#") == {"extract#t-1#ex-1": [f"{DAY}.1"], "extract#t-1#ex-2": [f"{DAY}.1"]}
    assert _named(stores, "inj#")["inj#2026-12-03T10:00:01.000Z#b"] == [f"{DAY}.1"]
    rows, _ = stores.items.page(TEAM, low="idem#", high="idem#~", after=None, limit=10)
    assert [row["sk"]["S"] for row in rows] == ["idem#remember#u-1#key-1"]  # u-2's record of the note is gone
    stores.stale.void(TEAM, {f"{DAY}.1"})
    assert _named(stores, "extract#") == {}  # a claim that names no note left is gone; a turn's record stays, trimmed
    assert _named(stores, "inj#") == {"inj#2026-12-03T10:00:00.000Z#a": [], "inj#2026-12-03T10:00:01.000Z#b": []}


def a_resumed_members_erase_still_finds_their_records_by_author(make: MakeEraseStores) -> None:
    stores = make()
    _left_behind(stores)

    stale = stores.stale.trim_and_list(TEAM, set(), author="u-1")  # the notes are gone: their ids unknown

    assert sorted(stale.gone) == ["idem#remember#u-1#key-1", "inj#2026-12-03T10:00:00.000Z#a"]
    assert stale.trimmed == 0


def nothing_named_and_no_author_reads_nothing(make: MakeEraseStores) -> None:
    stores = make()
    _left_behind(stores)

    assert stores.stale.trim_and_list(TEAM, set()) == stores.stale.trim_and_list(TEAM, set(), author=None)
    assert stores.stale.trim_and_list(TEAM, set()).gone == []


def the_turns_are_listed_newest_first_by_thread_and_unexpired(make: MakeEraseStores) -> None:
    stores = make()
    for n, (thread, expires) in enumerate([("t-1", NOW + 60), ("t-2", NOW + 60), ("t-1", NOW - 1), ("t-1", NOW + 60)]):
        at = f"2026-12-03T10:00:0{n}.000Z"
        record = {"at": at, "thread_id": thread, "document_version": n, "note_ids": [f"{DAY}.{n}"]}
        stores.seed(TEAM, f"inj#{at}#{n}", {**record, "expires_at": expires})

    every = stores.items.injections(TEAM, thread_id=None, limit=10, cursor=None, now_epoch=NOW)
    first = stores.items.injections(TEAM, thread_id="t-1", limit=1, cursor=None, now_epoch=NOW)
    rest = stores.items.injections(TEAM, thread_id="t-1", limit=1, cursor=first.next_cursor, now_epoch=NOW)

    assert [turn.document_version for turn in every.injections] == [3, 1, 0]
    assert every.next_cursor is None
    assert [turn.document_version for turn in first.injections] == [3] and first.next_cursor is not None
    assert [turn.document_version for turn in rest.injections] == [0] and rest.injections[0].note_ids == [f"{DAY}.0"]


def a_loaded_note_is_at_its_own_place_once_and_the_day_goes_on_after_it(make: MakeEraseStores) -> None:
    stores = make()
    old = Note("2026-11-01", 4, stored("an old fact"), "2026-11-01T08:00:00.000Z", "remember", Origin("u-1", "t-1"))
    loaded = dataclasses.replace(old, consolidated=True)

    stores.notes.load(PERSONAL, loaded)
    stores.notes.load(PERSONAL, loaded)  # a resumed load

    assert stores.notes.get(PERSONAL, "2026-11-01", 4) == loaded
    assert stores.notes.usage.chars(PERSONAL) == len("an old fact")
    assert stores.notes.usage.notes_on(PERSONAL, "2026-11-01") == 4  # the day's counter, moved past it
    later = stores.notes.append(
        PERSONAL, created=datetime(2026, 11, 1, 9, tzinfo=UTC), text=stored("new"), source="remember", origin=ORIGIN
    )
    assert later.position == 5


CONTRACTS = [
    a_note_is_read_whole_with_the_notes_that_superseded_it,
    voiding_a_deleted_note_removes_what_it_left_and_trims_the_lists_that_name_it,
    a_page_that_ends_at_its_limit_says_where_to_go_on_and_the_next_is_empty,
    an_unlinked_page_takes_its_notes_out_of_the_notes_they_superseded,
    a_loaded_note_is_at_its_own_place_once_and_the_day_goes_on_after_it,
    a_page_reads_a_range_in_key_order_and_says_where_to_go_on,
    a_page_of_versions_parses_as_the_versions_saved,
    the_keys_are_every_item_of_the_scope_but_its_erase_records,
    the_keys_of_an_author_are_their_notes_only,
    an_erased_page_is_counted_once_on_the_record_and_gone,
    a_page_before_the_erase_began_is_refused,
    a_page_held_by_another_running_erase_is_neither_counted_nor_deleted,
    a_page_counted_by_an_interrupted_call_is_deleted_by_the_next_without_counting_it_again,
    a_give_back_under_one_page_id_applies_once,
    the_days_notes_are_given_back_only_on_a_day_that_counts_them,
    what_a_members_notes_left_goes_or_loses_their_ids,
    a_resumed_members_erase_still_finds_their_records_by_author,
    nothing_named_and_no_author_reads_nothing,
    the_turns_are_listed_newest_first_by_thread_and_unexpired,
]
