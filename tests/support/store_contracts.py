"""The behaviours the memory service's ports promise (``memory.ports``), written once and checked against both the
DynamoDB stores (tests/integration/test_store_contracts.py, on moto) and the in-memory fakes
(tests/unit/test_fake_store_contracts.py), so the fakes the use case's tests run on cannot drift from the table.

Each contract is a function taking ``make``: a factory of the stores under test (``Stores``: ``dynamodb_stores`` or
``fake_stores_under_test``) for a quota and a vector function, all on one fresh table, with the same faults on
both. Observations go through what both offer (``usage.chars``, ``usage.notes_on``, ``documents.version``), never
through a store's items.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

import pytest
from botocore.exceptions import ClientError

from agent_memory.basics.errors import NotesQuotaExceeded, StorageQuotaExceeded, StorageUnavailable, VersionConflict
from agent_memory.domain.document import EMPTY_DOCUMENT, Author
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.note_store import NoteStore
from agent_memory.storage.usage_store import CharsChange, Quota
from tests.support.fake_stores import SENDS, fake_stores
from tests.support.scopes import PERSONAL, TEAM, stored, stored_document


class Stores(NamedTuple):
    """The stores under test, on one table: the notes, the document and the characters counter; and the faults a
    contract sets on a call (``"notes.append"``, ``"notes.take_position"``, ``"documents.save"``): ``fail(call,
    times)``, nothing applied; ``lose(call, times)``, applied and its answer lost, ``times`` sends in a row (the
    request is sent again ``SENDS`` times in all, as botocore does)."""

    notes: Any
    documents: Any
    usage: Any
    fail: Callable[[str, int], None]
    lose: Callable[[str, int], None]


MakeStores = Callable[..., Stores]  # make(quota=None, vectors=None) -> Stores


class FaultyClient:
    """A real DynamoDB client with the contracts' faults, per operation: the next calls that fail before anything
    applies (``failing``: InternalServerError, as after botocore's retries), and the next sends whose answer is lost
    (``losing``: applied, then sent again, ``SENDS`` sends in all; all lost, InternalServerError)."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.failing: Counter[str] = Counter()
        self.losing: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._real, name)

        def faulty(**request: Any) -> Any:
            if self.failing[name] > 0:
                self.failing[name] -= 1
                raise _unavailable(name)
            for _ in range(SENDS):
                answer = method(**request)  # a resend refused by its own condition raises here, as it would
                if self.losing[name] <= 0:
                    return answer
                self.losing[name] -= 1
            raise _unavailable(name)

        return faulty if callable(method) else method


def _unavailable(operation: str) -> ClientError:
    return ClientError({"Error": {"Code": "InternalServerError", "Message": "a fault of the test"}}, operation)


def dynamodb_stores(client: Any, quota: Quota | None = None, vectors: Any = None) -> Stores:
    """The DynamoDB stores on ``client``'s table, each on its own faulty client (what the faults' names map to)."""
    notes_client, documents_client = FaultyClient(client), FaultyClient(client)
    notes = NoteStore(notes_client, "MemoryTable", quota, vectors=vectors)
    calls = {
        "notes.append": (notes_client, "transact_write_items"),
        "notes.take_position": (notes_client, "update_item"),
        "documents.save": (documents_client, "transact_write_items"),
    }

    def fail(call: str, times: int) -> None:
        faulty, operation = calls[call]
        faulty.failing[operation] += times

    def lose(call: str, times: int) -> None:
        faulty, operation = calls[call]
        faulty.losing[operation] += times

    return Stores(notes, DocumentStore(documents_client, "MemoryTable"), notes.usage, fail, lose)


def fake_stores_under_test(quota: Quota | None = None, vectors: Any = None) -> Stores:
    """The in-memory stores on a new world, their faults the world's."""
    stores = fake_stores(quota, vectors=vectors)
    faults = stores.world.faults
    return Stores(stores.notes, stores.documents, stores.usage, faults.fail, faults.lose_answers)


MORNING = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
DAY = "2026-12-03"
ORIGIN = Origin("u-1", "t-1")
BY = Author(user_id="u-1", thread_id="t-1")


def parameters(method: Callable[..., Any]) -> dict[str, tuple[object, bool]]:
    """A call's parameters but ``self``, each with its kind and whether it has a default: what a port's call, its
    DynamoDB store's and its fake's must agree on (mypy checks the real store where bootstrap hands it over, not the
    fake)."""
    given = list(inspect.signature(method).parameters.values())[1:]
    return {p.name: (p.kind, p.default is not inspect.Parameter.empty) for p in given}


def _append(stores: Stores, text: str, *, scope: Scope = PERSONAL, at: datetime = MORNING, **kwargs: Any) -> Any:
    origin = kwargs.pop("origin", ORIGIN)
    vector = stores.notes.vector_of(text)
    return stores.notes.append(scope, created=at, text=stored(text), source="remember", origin=origin, vector=vector)


def _save(stores: Stores, content: str, expected: int, *, scope: Scope = PERSONAL, **kwargs: Any) -> Any:
    usage = kwargs.pop("usage", CharsChange(len(content), stores.usage.quota))
    return stores.documents.save(
        scope,
        stored_document(content),
        expected_version=expected,
        updated_at=kwargs.pop("updated_at", "2026-12-03T09:00:00.000Z"),
        reason=kwargs.pop("reason", "tool"),
        by=BY,
        usage=usage,
        **kwargs,
    )


def notes_take_the_days_positions_in_order(make: MakeStores) -> None:
    stores = make()
    first, second = _append(stores, "one"), _append(stores, "two")
    team = _append(stores, "team one", scope=TEAM)
    later = _append(stores, "next day", at=datetime(2026, 12, 4, 0, 0, tzinfo=UTC))

    assert [(n.id, n.position) for n in (first, second, team, later)] == [
        ("2026-12-03.1", 1),
        ("2026-12-03.2", 2),
        ("2026-12-03.1", 1),
        ("2026-12-04.1", 1),
    ]


def a_note_answers_what_it_stored(make: MakeStores) -> None:
    note = _append(make(), "Prefers metric units", at=datetime(2026, 12, 3, 10, 15, 0, 123456, tzinfo=UTC))

    assert (note.text, note.day, note.created_at, note.source, note.origin, note.consolidated) == (
        "Prefers metric units",
        DAY,
        "2026-12-03T10:15:00.123Z",
        "remember",
        ORIGIN,
        False,
    )


def a_note_counts_its_characters_and_its_day(make: MakeStores) -> None:
    stores = make()
    _append(stores, "abcd")
    _append(stores, "efghij")

    assert stores.usage.chars(PERSONAL) == 10
    assert stores.usage.notes_on(PERSONAL, DAY) == 2
    assert stores.usage.chars(TEAM) == 0


def a_note_over_the_characters_quota_is_refused_and_counts_nothing(make: MakeStores) -> None:
    stores = make(quota=Quota(notes_per_day=10, chars=10))
    _append(stores, "12345678")

    with pytest.raises(StorageQuotaExceeded):
        _append(stores, "abc")

    assert stores.usage.chars(PERSONAL) == 8
    assert stores.usage.notes_on(PERSONAL, DAY) == 1
    assert [row.text for row in stores.notes.newest_texts(PERSONAL, limit=10)] == ["12345678"]
    assert _append(stores, "ab").position == 2  # the refused note's position was given back


def a_note_longer_than_the_whole_quota_is_refused_before_any_write(make: MakeStores) -> None:
    stores = make(quota=Quota(notes_per_day=10, chars=5))

    with pytest.raises(StorageQuotaExceeded):
        _append(stores, "abcdefgh")

    assert stores.usage.notes_on(PERSONAL, DAY) == 0


def the_days_notes_quota_refuses_the_next_note_until_midnight(make: MakeStores) -> None:
    stores = make(quota=Quota(notes_per_day=2, chars=10_000))
    _append(stores, "one")
    _append(stores, "two")

    with pytest.raises(NotesQuotaExceeded) as refused:
        _append(stores, "three")

    assert refused.value.retry_after == 15 * 3600  # from 09:00 UTC
    assert "notes for today in this team" not in refused.value.message
    assert [row.text for row in stores.notes.newest_texts(PERSONAL, limit=10)] == ["two", "one"]
    assert _append(stores, "tomorrow", at=datetime(2026, 12, 4, 9, 0, tzinfo=UTC)).position == 1


def a_team_members_share_of_the_day_is_their_own(make: MakeStores) -> None:
    stores = make(quota=Quota(notes_per_day=10, chars=10_000, notes_per_member_day=1))
    _append(stores, "mine", scope=TEAM, origin=Origin("u-1", "t-1"))

    with pytest.raises(NotesQuotaExceeded) as refused:
        _append(stores, "mine again", scope=TEAM, origin=Origin("u-1", "t-2"))

    assert "your 1 notes for today in this team" in refused.value.message
    assert _append(stores, "theirs", scope=TEAM, origin=Origin("u-2", "t-3")).position == 2


def newest_texts_are_the_newest_first_within_the_limit(make: MakeStores) -> None:
    stores = make()
    for text in ("one", "two", "three"):
        _append(stores, text)
    _append(stores, "yesterday's", at=datetime(2026, 12, 2, 23, 0, tzinfo=UTC))
    _append(stores, "other scope", scope=TEAM)

    rows = stores.notes.newest_texts(PERSONAL, limit=3)

    assert [(row.pk, row.day, row.position, row.text) for row in rows] == [
        ("user#u-1", DAY, 3, "three"),
        ("user#u-1", DAY, 2, "two"),
        ("user#u-1", DAY, 1, "one"),
    ]
    assert len(stores.notes.newest_texts(PERSONAL, limit=10)) == 4


def newest_texts_carry_vectors_only_when_asked(make: MakeStores) -> None:
    stores = make(vectors=lambda text: text.encode()[:4])
    _append(stores, "vectored")

    assert stores.notes.vector_of("abcdef") == b"abcd"
    assert [row.vector for row in stores.notes.newest_texts(PERSONAL, limit=5, vectors=True)] == [b"vect"]
    assert [row.vector for row in stores.notes.newest_texts(PERSONAL, limit=5)] == [None]


def without_vectors_a_note_has_none(make: MakeStores) -> None:
    stores = make()
    _append(stores, "plain")

    assert stores.notes.vector_of("plain") is None
    assert [row.vector for row in stores.notes.newest_texts(PERSONAL, limit=5, vectors=True)] == [None]


def newest_first_reads_the_days_asked_newest_first(make: MakeStores) -> None:
    stores = make()
    _append(stores, "two days ago", at=datetime(2026, 12, 1, 12, 0, tzinfo=UTC))
    _append(stores, "yesterday", at=datetime(2026, 12, 2, 12, 0, tzinfo=UTC))
    _append(stores, "today one")
    _append(stores, "today two")
    _append(stores, "the team's", scope=TEAM)

    notes = stores.notes.newest_first(PERSONAL, first_day="2026-12-02", last_day=DAY, limit=200)

    assert [note.text for note in notes] == ["today two", "today one", "yesterday"]
    assert [n.text for n in stores.notes.newest_first(PERSONAL, first_day="2026-12-02", last_day=DAY, limit=2)] == [
        "today two",
        "today one",
    ]


def a_scope_without_a_document_is_at_version_0(make: MakeStores) -> None:
    stores = make()

    assert stores.documents.current(PERSONAL) == EMPTY_DOCUMENT
    assert stores.documents.current(PERSONAL, consistent=True) == EMPTY_DOCUMENT
    assert stores.documents.version_chars(PERSONAL, 1) == 0


def a_save_is_the_next_version_and_the_head(make: MakeStores) -> None:
    stores = make()
    first = _save(stores, "# Memory\n- likes tea", 0)
    second = _save(stores, "# Memory\n- likes coffee", 1, updated_at="2026-12-03T10:00:00.000Z", reason="dashboard")

    assert (first.version, second.version) == (1, 2)
    assert stores.documents.current(PERSONAL, consistent=True) == second
    assert stores.documents.version_chars(PERSONAL, 1) == len("# Memory\n- likes tea")
    document, reason, by = stores.documents.version(PERSONAL, 2)
    assert (document, reason, by) == (second, "dashboard", BY)
    assert stores.documents.current(TEAM) == EMPTY_DOCUMENT


def a_save_moves_the_characters_counter_with_the_version(make: MakeStores) -> None:
    stores = make()
    _append(stores, "note")
    _save(stores, "twelve chars", 0)

    assert stores.usage.chars(PERSONAL) == 4 + 12


def a_stale_version_is_a_conflict_and_changes_nothing(make: MakeStores) -> None:
    stores = make()
    _save(stores, "v1", 0)

    for stale in (0, 2, 7):
        with pytest.raises(VersionConflict):
            _save(stores, "lost?", stale)

    assert stores.documents.current(PERSONAL, consistent=True).content == "v1"
    assert stores.documents.version(PERSONAL, 2) is None
    assert stores.usage.chars(PERSONAL) == 2


def a_save_over_the_quota_is_refused_and_changes_nothing(make: MakeStores) -> None:
    stores = make(quota=Quota(notes_per_day=10, chars=10))
    _save(stores, "123456", 0)

    with pytest.raises(StorageQuotaExceeded) as refused:
        _save(stores, "abcde", 1)

    assert refused.value.message.startswith("quota_exceeded: storing 5 more characters")

    assert stores.documents.current(PERSONAL, consistent=True).version == 1
    assert stores.documents.version(PERSONAL, 2) is None
    assert stores.usage.chars(PERSONAL) == 6


def a_change_over_the_whole_quota_is_refused_at_once(make: MakeStores) -> None:
    stores = make(quota=Quota(notes_per_day=10, chars=10))

    with pytest.raises(StorageQuotaExceeded) as refused:
        _save(stores, "12345678901", 0)

    assert "11 more characters" in refused.value.message
    assert stores.documents.current(PERSONAL, consistent=True).version == 0


def an_unenforced_change_saves_over_the_quota(make: MakeStores) -> None:
    stores = make(quota=Quota(notes_per_day=10, chars=10))
    _save(stores, "123456", 0)

    saved = _save(stores, "abcdef", 1, usage=CharsChange(6, None))

    assert saved.version == 2
    assert stores.usage.chars(PERSONAL) == 12


def a_shrinking_change_is_never_refused(make: MakeStores) -> None:
    stores = make(quota=Quota(notes_per_day=10, chars=10))
    _save(stores, "1234567890", 0)

    _save(stores, "1", 1, usage=CharsChange(-9, stores.usage.quota))

    assert stores.usage.chars(PERSONAL) == 1


def a_pruned_version_leaves_with_the_save(make: MakeStores) -> None:
    stores = make()
    _save(stores, "first", 0)
    _save(stores, "second", 1, updated_at="2026-12-03T09:01:00.000Z")

    _save(stores, "third", 2, prune=1, usage=CharsChange(5 - 5, stores.usage.quota))

    assert stores.documents.version(PERSONAL, 1) is None
    assert stores.documents.version_chars(PERSONAL, 1) == 0
    assert stores.documents.version_chars(PERSONAL, 2) == len("second")
    assert stores.usage.chars(PERSONAL) == 5 + 6


def a_save_sent_again_finds_its_own_version(make: MakeStores) -> None:
    stores = make()
    first = _save(stores, "mine", 0, write_id="w-1")

    again = _save(stores, "mine", 0, write_id="w-1", updated_at="2026-12-03T09:00:05.000Z")

    assert again == first
    assert stores.documents.version(PERSONAL, 2) is None
    assert stores.usage.chars(PERSONAL) == 4


def another_write_on_the_same_version_is_a_conflict(make: MakeStores) -> None:
    stores = make()
    _save(stores, "mine", 0, write_id="w-1")

    with pytest.raises(VersionConflict):
        _save(stores, "theirs", 0, write_id="w-2")


def _note_lost(make: MakeStores, lost: int) -> None:
    stores = make()
    stores.lose("notes.append", lost)

    note = _append(stores, "once")

    assert (note.position, [row.text for row in stores.notes.newest_texts(PERSONAL, limit=5)]) == (1, ["once"])
    assert (stores.usage.chars(PERSONAL), stores.usage.notes_on(PERSONAL, DAY)) == (4, 1)
    assert _append(stores, "next").position == 2


def a_note_whose_answer_was_lost_is_written_and_counted_once(make: MakeStores) -> None:
    _note_lost(make, 1)  # the resend answers


def a_note_whose_every_answer_was_lost_is_settled_written_and_counted_once(make: MakeStores) -> None:
    _note_lost(make, SENDS)  # found at its place by the settling


def a_note_that_failed_is_not_written_and_gives_its_count_back(make: MakeStores) -> None:
    stores = make()
    stores.fail("notes.append", 1)

    with pytest.raises(StorageUnavailable):
        _append(stores, "never")

    assert stores.notes.newest_texts(PERSONAL, limit=5) == []
    assert (stores.usage.chars(PERSONAL), stores.usage.notes_on(PERSONAL, DAY)) == (0, 0)
    assert _append(stores, "next").position == 2  # its place abandoned: a gap, as after any failed write


def _position_lost(make: MakeStores, lost: int) -> None:
    stores = make()
    stores.lose("notes.take_position", lost)

    assert [_append(stores, text).position for text in ("first", "second")] == [1, 2]
    assert stores.usage.notes_on(PERSONAL, DAY) == 2


def a_position_whose_answer_was_lost_is_taken_once(make: MakeStores) -> None:
    _position_lost(make, 1)


def a_position_whose_every_answer_was_lost_is_read_back_and_taken_once(make: MakeStores) -> None:
    _position_lost(make, SENDS)


def a_save_whose_answer_was_lost_saves_one_version(make: MakeStores) -> None:
    stores = make()
    _save(stores, "v1", 0)
    stores.lose("documents.save", 1)

    saved = _save(stores, "v2", 1)

    assert saved.version == 2 and stores.documents.current(PERSONAL, consistent=True) == saved
    assert stores.usage.chars(PERSONAL) == 4


def a_save_whose_every_answer_was_lost_is_unavailable_and_present_once(make: MakeStores) -> None:
    stores = make()
    _save(stores, "v1", 0)
    stores.lose("documents.save", SENDS)

    with pytest.raises(StorageUnavailable):
        _save(stores, "v2", 1)

    assert stores.documents.current(PERSONAL, consistent=True).content == "v2"
    assert stores.documents.version(PERSONAL, 3) is None
    assert stores.usage.chars(PERSONAL) == 4


def a_save_that_failed_changes_nothing(make: MakeStores) -> None:
    stores = make()
    _save(stores, "v1", 0)
    stores.fail("documents.save", 1)

    with pytest.raises(StorageUnavailable):
        _save(stores, "v2", 1)

    assert stores.documents.current(PERSONAL, consistent=True).content == "v1"
    assert stores.usage.chars(PERSONAL) == 2
    assert _save(stores, "v2", 1).version == 2


# The dashboard's reads and deletes (``memory.ports.DocumentHistory`` and ``NotesByDay``).


def the_versions_are_listed_newest_first_a_page_at_a_time(make: MakeStores) -> None:
    stores = make()
    for n, content in enumerate(["# A", "# A\n- b", "# A\n- b\n- c"]):
        _save(stores, content, n, updated_at=f"2026-12-03T09:0{n}:00.000Z", reason="dashboard" if n else "tool")

    first = stores.documents.versions(PERSONAL, limit=2, below=None)
    rest = stores.documents.versions(PERSONAL, limit=2, below=2)

    assert [(meta.version, meta.chars, meta.updated_at, reason) for meta, reason, _ in first] == [
        (3, 11, "2026-12-03T09:02:00.000Z", "dashboard"),
        (2, 7, "2026-12-03T09:01:00.000Z", "dashboard"),
    ]
    assert [(meta.version, reason, by) for meta, reason, by in rest] == [(1, "tool", BY)]
    assert stores.documents.versions(TEAM, limit=2, below=None) == []


def a_version_is_read_with_the_edits_that_made_it(make: MakeStores) -> None:
    stores = make()
    _save(stores, "# Memory\n- likes tea", 0)

    (document, reason, by), edits = stores.documents.version_and_edits(PERSONAL, 1)

    assert (document.content, document.version, reason, by, edits) == ("# Memory\n- likes tea", 1, "tool", BY, None)
    assert stores.documents.version_and_edits(PERSONAL, 2) is None
    assert stores.documents.version_and_edits(TEAM, 1) is None


def a_document_by_hand_has_lines_resting_on_no_note(make: MakeStores) -> None:
    stores = make()
    assert stores.documents.provenance(PERSONAL) == (EMPTY_DOCUMENT, [])
    saved = _save(stores, "# Memory\n- likes tea", 0)

    assert stores.documents.provenance(PERSONAL) == (saved, [[], []])


def the_notes_are_listed_by_day_newest_first_before_a_day(make: MakeStores) -> None:
    stores = make()
    for day, texts in (("2026-11-30", ["one"]), ("2026-12-01", ["two", "three"]), ("2026-12-03", ["four"])):
        for text in texts:
            _append(stores, text, at=datetime.fromisoformat(f"{day}T09:00:00+00:00"))

    found, older = stores.notes.days_before(PERSONAL, before="2026-12-03", days=1)
    everything, none_older = stores.notes.days_before(PERSONAL, before="2026-12-04", days=5)

    assert ([(day, [note.text for note in notes]) for day, notes in found], older) == (
        [("2026-12-01", ["three", "two"])],
        True,
    )
    assert [day for day, _ in everything] == ["2026-12-03", "2026-12-01", "2026-11-30"] and none_older is False
    assert stores.notes.days_before(TEAM, before="2026-12-04", days=5) == ([], False)


def a_deleted_note_is_gone_and_gives_back_its_counts_once(make: MakeStores) -> None:
    stores = make()
    _append(stores, "first fact")
    _append(stores, "second fact")

    assert stores.notes.delete(PERSONAL, DAY, 1) is True
    assert stores.notes.delete(PERSONAL, DAY, 1) is False
    assert stores.notes.delete(TEAM, DAY, 2) is False

    assert [keyed.note.text for keyed in stores.notes.get_many(PERSONAL, [(DAY, 1), (DAY, 2)])] == ["second fact"]
    assert (stores.usage.chars(PERSONAL), stores.usage.notes_on(PERSONAL, DAY)) == (len("second fact"), 1)


# Recall's reads (``recall.ports.RecalledNotes``).


def the_notes_around_a_place_are_read_with_their_conversation(make: MakeStores) -> None:
    stores = make()
    for n in range(1, 7):
        _append(stores, f"fact {n}", origin=Origin("u-1", f"t-{n % 2}"))

    around = stores.notes.around(PERSONAL, DAY, 2, span=2)

    assert [(row.position, row.text, row.thread_id) for row in around] == [
        (1, "fact 1", "t-1"),
        (2, "fact 2", "t-0"),
        (3, "fact 3", "t-1"),
        (4, "fact 4", "t-0"),
    ]
    assert all(row.pk == PERSONAL.key and row.vector is None for row in around)
    assert stores.notes.around(TEAM, DAY, 2, span=2) == []


def the_texts_of_places_are_read_in_the_order_asked_with_vector_and_conversation(make: MakeStores) -> None:
    stores = make(vectors=lambda text: text.encode())
    for n in range(1, 4):
        _append(stores, f"fact {n}")

    rows = stores.notes.texts_of(PERSONAL, [(DAY, 3), (DAY, 9), (DAY, 1)])

    assert [(row.position, row.text, row.vector, row.thread_id) for row in rows] == [
        (3, "fact 3", b"fact 3", "t-1"),
        (1, "fact 1", b"fact 1", "t-1"),
    ]
    assert stores.notes.texts_of(PERSONAL, []) == []


def newest_texts_carry_their_conversation_only_when_asked(make: MakeStores) -> None:
    stores = make()
    _append(stores, "a fact")

    (plain,) = stores.notes.newest_texts(PERSONAL, limit=5)
    (threaded,) = stores.notes.newest_texts(PERSONAL, limit=5, threads=True)

    assert (plain.thread_id, threaded.thread_id) == (None, "t-1")


CONTRACTS: list[Callable[[MakeStores], None]] = [
    the_notes_around_a_place_are_read_with_their_conversation,
    the_texts_of_places_are_read_in_the_order_asked_with_vector_and_conversation,
    newest_texts_carry_their_conversation_only_when_asked,
    the_versions_are_listed_newest_first_a_page_at_a_time,
    a_version_is_read_with_the_edits_that_made_it,
    a_document_by_hand_has_lines_resting_on_no_note,
    the_notes_are_listed_by_day_newest_first_before_a_day,
    a_deleted_note_is_gone_and_gives_back_its_counts_once,
    notes_take_the_days_positions_in_order,
    a_note_answers_what_it_stored,
    a_note_counts_its_characters_and_its_day,
    a_note_over_the_characters_quota_is_refused_and_counts_nothing,
    a_note_longer_than_the_whole_quota_is_refused_before_any_write,
    the_days_notes_quota_refuses_the_next_note_until_midnight,
    a_team_members_share_of_the_day_is_their_own,
    newest_texts_are_the_newest_first_within_the_limit,
    newest_texts_carry_vectors_only_when_asked,
    without_vectors_a_note_has_none,
    newest_first_reads_the_days_asked_newest_first,
    a_scope_without_a_document_is_at_version_0,
    a_save_is_the_next_version_and_the_head,
    a_save_moves_the_characters_counter_with_the_version,
    a_stale_version_is_a_conflict_and_changes_nothing,
    a_save_over_the_quota_is_refused_and_changes_nothing,
    a_change_over_the_whole_quota_is_refused_at_once,
    an_unenforced_change_saves_over_the_quota,
    a_shrinking_change_is_never_refused,
    a_pruned_version_leaves_with_the_save,
    a_save_sent_again_finds_its_own_version,
    another_write_on_the_same_version_is_a_conflict,
    a_note_whose_answer_was_lost_is_written_and_counted_once,
    a_note_whose_every_answer_was_lost_is_settled_written_and_counted_once,
    a_note_that_failed_is_not_written_and_gives_its_count_back,
    a_position_whose_answer_was_lost_is_taken_once,
    a_position_whose_every_answer_was_lost_is_read_back_and_taken_once,
    a_save_whose_answer_was_lost_saves_one_version,
    a_save_whose_every_answer_was_lost_is_unavailable_and_present_once,
    a_save_that_failed_changes_nothing,
]
