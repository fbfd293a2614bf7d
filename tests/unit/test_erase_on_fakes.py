"""People's control (docs/api.md §6) on the in-memory fakes (tests/support/fake_erase.py and fake_stores.py): the
erase of a scope and a member's erase of their notes, with their receipts, wherever a call stops or loses an
answer, and never a byte of another scope; export pages and usage. The stores' own behaviours are the contract
tests' (tests/support/erase_contracts.py); these are the use case's, each in milliseconds."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.basics.errors import InvalidInput, StorageUnavailable
from agent_memory.domain.commands import FlushCommand
from agent_memory.domain.document import Author
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.memory.flush import FlushService
from agent_memory.people.control import EXPORT_FORMAT, People
from agent_memory.providers.notes_index import document_id
from agent_memory.storage.keys import DOC_HEAD, DUE_SK, NOTE_PREFIX, VERSION_PREFIX
from agent_memory.storage.usage_store import Quota, version_change
from tests.support.fake_erase import FakeScopeItems, FakeStaleRecords
from tests.support.fake_flush import FakeFlushNoteStore, FakeFlushStore
from tests.support.fake_index import FakeNotesIndex
from tests.support.fake_stores import FakeDocumentStore, FakeWorld
from tests.support.fakes import FakeChatModel
from tests.support.scopes import PERSONAL, TEAM, stored, stored_document
from tests.support.seeds import world_seed

DAY = "2026-12-03"  # MEMORY_NOW's day
AT = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)
OTHER = Scope("personal", "u-2")
ZERO = {"notes": 0, "versions": 0, "other": 0}


@dataclass
class Control:
    """One world, people's control on its fakes, and a fake notes index."""

    world: FakeWorld = field(default_factory=FakeWorld)
    index: FakeNotesIndex = field(default_factory=FakeNotesIndex)
    quota: Quota = field(default_factory=lambda: Quota(notes_per_day=100, chars=100_000, notes_per_member_day=50))

    def __post_init__(self) -> None:
        self.notes = FakeFlushNoteStore(self.world, self.quota)
        self.documents = FakeDocumentStore(self.world)
        self.items = FakeScopeItems(self.world)
        self.people = People(
            self.items,
            self.documents,
            self.notes,
            self.notes.usage,
            FakeStaleRecords(self.world),
            index=self.index,
            quota=self.quota,
        )
        self.seed = world_seed(self.world)

    def note(self, text: str, scope: Scope = PERSONAL, user: str = "u-1", thread: str = "t-1") -> str:
        origin = Origin(user, thread)
        note = self.notes.append(scope, created=AT, text=stored(text), source="remember", origin=origin)
        self.index.documents[document_id(scope.key, note.id)] = {"scope": scope.key, "note_id": note.id}
        return note.id

    def version(self, content: str, scope: Scope = PERSONAL) -> None:
        current = self.documents.current(scope).version
        by = Author(user_id="u-1", thread_id="t-1")
        at = f"2026-12-03T09:00:0{current}.000Z"
        self.documents.save(
            scope,
            stored_document(content),
            expected_version=current,
            updated_at=at,
            reason="tool",
            by=by,
            usage=version_change(len(content), self.notes.usage.quota, reason="tool"),
        )

    def fill(self, scope: Scope = PERSONAL, notes: int = 3, versions: int = 2) -> None:
        for number in range(notes):
            self.note(f"fact {number}", scope)
        for number in range(versions):
            self.version(f"# Memory v{number + 1}", scope)

    def partition(self, scope: Scope = PERSONAL) -> list[str]:
        return [item["sk"] for item in self.world.between(scope.key, "", "\uffff")]

    def snapshot(self, scope: Scope) -> list[dict[str, Any]]:
        return self.world.between(scope.key, "", "\uffff")

    def erasable(self, scope: Scope = PERSONAL) -> dict[str, int]:
        """What an erase of the scope counts, by kind: every item but the document's head."""
        counts = dict(ZERO)
        for sk in self.partition(scope):
            if sk != DOC_HEAD:
                kind = (
                    "notes" if sk.startswith(NOTE_PREFIX) else "versions" if sk.startswith(VERSION_PREFIX) else "other"
                )
                counts[kind] += 1
        return counts

    def erase(self, scope: Scope = PERSONAL) -> dict[str, int]:
        return self.people.erase(scope).erased.model_dump()

    def erase_mine(self, user: str = "u-1") -> dict[str, int]:
        return self.people.erase_authored(TEAM, user).erased.model_dump()

    def texts(self, scope: Scope) -> list[str]:
        return [note.text for note in self.notes.every_note(scope)]


@pytest.fixture
def control() -> Control:
    return Control()


# --- the erase of a scope --------------------------------------------------------------------------------------


def test_an_erase_leaves_nothing_and_a_repeat_answers_zero(control: Control) -> None:
    control.fill()
    expected = control.erasable()

    receipt = control.people.erase(PERSONAL)
    again = control.erase()

    assert receipt.erased.model_dump() == expected
    assert (expected["notes"], expected["versions"]) == (3, 2) and expected["other"] >= 3  # day, usage, due marker
    assert control.partition() == [] and control.index.note_ids(PERSONAL.key) == set()
    assert again == ZERO
    assert control.documents.current(PERSONAL).version == 0
    assert receipt.finished_at.startswith("2026-12-03T")


def test_an_erase_of_one_scope_leaves_every_other_scope_as_it_was(control: Control) -> None:
    control.fill()
    control.fill(OTHER)
    control.fill(TEAM)
    others = {scope: control.snapshot(scope) for scope in (OTHER, TEAM)}
    indexed = {scope: control.index.note_ids(scope.key) for scope in (OTHER, TEAM)}

    control.erase()

    assert control.partition() == []
    assert {scope: control.snapshot(scope) for scope in (OTHER, TEAM)} == others
    assert {scope: control.index.note_ids(scope.key) for scope in (OTHER, TEAM)} == indexed


def test_the_receipt_counts_the_records_beside_the_notes_as_other(control: Control) -> None:
    control.fill(notes=1, versions=0)
    control.seed(PERSONAL, "flush#t-1#cmp-1", {"status": "written", "note_id": f"{DAY}.1"})
    control.seed(PERSONAL, "idem#remember#u-1#key-1", {"answer": "{}"})
    control.seed(PERSONAL, "inj#2026-12-03T10:00:00.000Z#a", {"user_id": "u-1", "note_ids": [f"{DAY}.1"]})
    expected = control.erasable()

    assert control.erase() == expected and expected["other"] >= 5
    assert control.partition() == []


def test_an_erase_of_an_empty_memory_answers_zero(control: Control) -> None:
    assert control.erase() == ZERO
    assert control.partition() == []


def test_the_head_goes_first_so_every_reader_sees_version_0_even_if_the_erase_stops(control: Control) -> None:
    control.fill()
    control.world.faults.fail("scope_items.erase_page")

    with pytest.raises(StorageUnavailable):
        control.erase()

    assert control.documents.current(PERSONAL).version == 0
    assert control.world.item((PERSONAL.key, DUE_SK))["erasing"] is True  # folds refused until it is called again


def _stop_the_page_deletes(control: Control) -> None:
    """The deletes of the first page fail (the head's went before)."""
    control.world.faults.before("scope_items.erase_page", lambda: control.world.faults.fail("scope_items.delete"))


STOPS = {
    "delete-head": lambda control: control.world.faults.fail("scope_items.delete"),
    "count": lambda control: control.world.faults.fail("scope_items.erase_page"),
    "delete-page": _stop_the_page_deletes,
    "release": lambda control: control.world.faults.fail("scope_items.release"),
    "end": lambda control: control.world.faults.fail("scope_items.end_erase"),
    "mark": lambda control: control.world.faults.fail("markers.erasing"),
    "record": lambda control: control.world.faults.fail("scope_items.begin_erase"),
    "read": lambda control: control.world.faults.fail("scope_items.keys"),
}


@pytest.mark.parametrize("step", sorted(STOPS))
def test_an_erase_stopped_at_any_step_is_finished_by_the_next_call_counting_each_item_once(
    control: Control, step: str
) -> None:
    control.fill(notes=5)
    expected = control.erasable()
    STOPS[step](control)

    with pytest.raises(StorageUnavailable):
        control.erase()
    second = control.erase()

    assert control.partition() == [] and control.index.note_ids(PERSONAL.key) == set()
    assert expected["notes"] == 5
    assert second == expected  # the receipt covers both calls, each item once


def test_an_erase_whose_index_is_down_stops_and_the_next_call_finishes(control: Control) -> None:
    control.fill()
    expected = control.erasable()
    control.index.down = ConnectionError("the index is down")

    with pytest.raises(StorageUnavailable, match="could not be cleared"):
        control.erase()
    control.index.down = None
    second = control.erase()

    assert second == expected and control.index.note_ids(PERSONAL.key) == set()


def test_an_erase_whose_index_keeps_a_note_says_so_and_keeps_its_record(control: Control) -> None:
    kept = control.note("refused by the index")
    control.index.failing_writes.add(kept)

    with pytest.raises(StorageUnavailable, match="still holds 1 notes"):
        control.erase()

    assert control.partition() == ["erase#all"]  # the table is erased; the record says the erase is unfinished
    control.index.failing_writes.clear()
    assert control.erase() == {"notes": 1, "versions": 0, "other": 3}


def test_an_erase_without_an_index_erases_the_table(control: Control) -> None:
    control.fill()
    expected = control.erasable()
    control.people.index = None

    assert control.erase() == expected and control.partition() == []


@pytest.mark.parametrize(
    "call",
    [
        "scope_items.begin_erase",
        "markers.erasing",
        "scope_items.erase_page",
        "scope_items.delete",
        "scope_items.release",
    ],
)
def test_an_erase_whose_writes_lost_their_first_answer_counts_each_item_once(control: Control, call: str) -> None:
    control.fill(notes=5)
    expected = control.erasable()
    control.world.faults.lose_answers(call, times=2)

    try:
        first = control.erase()
    except StorageUnavailable:  # a write whose answer was lost and not sent again: the next call finishes
        first = control.erase()

    assert first == expected and control.partition() == []


def test_an_erase_whose_last_write_applied_and_lost_its_answer_is_answered_zero_by_the_next_call(
    control: Control,
) -> None:
    """The record's removal applied: everything was erased, and a repeat answers zero counts."""
    control.fill(notes=5)
    control.world.faults.lose_answers("scope_items.end_erase", times=3)  # every send's answer

    with pytest.raises(StorageUnavailable):
        control.erase()

    assert control.erase() == ZERO and control.partition() == []


def test_a_page_held_by_another_running_erase_is_neither_counted_nor_deleted_here(control: Control) -> None:
    """Two erases of one memory at once: this one's page meets the other's and stops (call again), rather than
    count items the other has counted already."""
    control.fill(notes=2, versions=0)
    record = {"started_at": "2026-12-03T10:00:00.000Z", "page": [], "page_id": "the-other-call"}
    control.world.faults.before("scope_items.erase_page", lambda: control.seed(PERSONAL, "erase#all", record))

    with pytest.raises(StorageUnavailable, match="another erase"):
        control.erase()

    held = control.world.item((PERSONAL.key, "erase#all"))
    assert held["page_id"] == "the-other-call" and "notes" not in held
    assert len([sk for sk in control.partition() if sk.startswith(NOTE_PREFIX)]) == 2


def test_a_note_written_while_the_erase_runs_is_erased_too(control: Control) -> None:
    control.fill(notes=2, versions=0)
    control.world.faults.before("scope_items.erase_page", lambda: control.note("written meanwhile"))

    receipt = control.erase()

    assert control.partition() == [] and receipt["notes"] == 3


# --- a member's erase of their notes ---------------------------------------------------------------------------


def _team(control: Control, *users: str) -> list[str]:
    return [control.note(f"noted by {user}", TEAM, user, f"t-{user}") for user in users]


def test_a_member_erases_only_the_notes_they_authored(control: Control) -> None:
    ids = _team(control, "u-1", "u-2", "u-1")

    receipt = control.erase_mine()

    assert receipt == {"notes": 2, "versions": 0, "other": 0}
    assert control.texts(TEAM) == ["noted by u-2"]
    assert control.index.note_ids(TEAM.key) == {ids[1]}


def test_a_members_erase_gives_their_characters_and_day_counts_back(control: Control) -> None:
    _team(control, "u-1", "u-2", "u-1", "u-1")

    control.erase_mine()

    assert control.notes.usage.chars(TEAM) == len("noted by u-2")
    day = control.world.item((TEAM.key, f"day#{DAY}"))
    assert (day["live"], day["by#u-1"], day["by#u-2"]) == (1, 0, 1)
    assert control.people.usage(TEAM).notes_today == 1


def test_a_members_erase_whose_give_backs_lost_their_first_answers_gives_back_once(control: Control) -> None:
    _team(control, "u-1", "u-2", "u-1", "u-1")
    control.world.faults.lose_answers("usage.add", times=1)
    control.world.faults.lose_answers("usage.give_back_notes", times=1)

    control.erase_mine()

    day = control.world.item((TEAM.key, f"day#{DAY}"))
    assert control.notes.usage.chars(TEAM) == len("noted by u-2")
    assert (day["live"], day["by#u-1"], day["by#u-2"]) == (1, 0, 1)


def test_another_members_erase_and_another_workspace_are_untouched(control: Control) -> None:
    _team(control, "u-1", "u-2")
    elsewhere = Scope("team", "w-9")
    control.note("u-1 elsewhere", elsewhere, "u-1")
    control.fill(PERSONAL)
    before = {scope: control.snapshot(scope) for scope in (elsewhere, PERSONAL)}

    control.erase_mine()

    assert {scope: control.snapshot(scope) for scope in (elsewhere, PERSONAL)} == before
    assert control.texts(elsewhere) == ["u-1 elsewhere"]


def _left_behind(control: Control, mine: str, theirs: str) -> None:
    answer = {"note": {"id": mine, "origin": {"user_id": "u-1", "thread_id": "t-u-1"}}}
    control.seed(TEAM, "idem#remember#u-1#key-1", {"answer": json.dumps(answer)})
    control.seed(TEAM, "idem#remember#u-2#key-2", {"answer": json.dumps({"note": {"id": theirs}})})
    control.seed(TEAM, "flush#t-u-1#cmp-1", {"status": "written", "note_id": mine})
    now = int(time.time())
    turn = {"thread_id": "t-u-1", "document_version": 0, "expires_at": now + 3600}
    control.seed(TEAM, "inj#2026-12-03T10:00:00.000Z#a", {**turn, "at": "a", "user_id": "u-1", "note_ids": [mine]})
    control.seed(TEAM, "inj#2026-12-03T10:00:01.000Z#b", {**turn, "at": "b", "user_id": "u-1", "note_ids": []})
    control.seed(
        TEAM, "inj#2026-12-03T10:00:02.000Z#c", {**turn, "at": "c", "user_id": "u-2", "note_ids": [mine, theirs]}
    )


def test_the_receipt_counts_the_records_that_went_with_the_notes(control: Control) -> None:
    """u-1's keyed remember, their flush's claim and their two turns go with their note: 4 other items."""
    mine, theirs = _team(control, "u-1", "u-2")
    _left_behind(control, mine, theirs)

    receipt = control.erase_mine()
    again = control.erase_mine()

    assert receipt == {"notes": 1, "versions": 0, "other": 4}
    assert [sk for sk in control.partition(TEAM) if sk.startswith(("idem#", "flush#", "inj#"))] == [
        "idem#remember#u-2#key-2",
        "inj#2026-12-03T10:00:02.000Z#c",
    ]
    assert control.world.item((TEAM.key, "inj#2026-12-03T10:00:02.000Z#c"))["note_ids"] == [theirs]
    assert again == ZERO


def test_an_erase_that_died_after_its_notes_went_still_voids_their_records(control: Control) -> None:
    """The second call no longer knows the erased ids: the remember's record goes by its note's author, the
    member's turns by theirs; the receipt counts both calls once."""
    mine, theirs = _team(control, "u-1", "u-2")
    _left_behind(control, mine, theirs)
    control.world.faults.fail("stale.items")

    with pytest.raises(StorageUnavailable):
        control.erase_mine()
    second = control.erase_mine()

    assert second == {"notes": 1, "versions": 0, "other": 3}  # the flush claim, named by id only, stays
    assert [sk for sk in control.partition(TEAM) if sk.startswith(("idem#", "inj#"))] == [
        "idem#remember#u-2#key-2",
        "inj#2026-12-03T10:00:02.000Z#c",
    ]


def test_a_members_erase_voids_the_flush_claim_of_their_note_and_the_event_flushes_again(control: Control) -> None:
    model = FakeChatModel(reply=lambda system, prompt: "u-1's secret plan: leave in March")
    flush = FlushService(control.notes, FakeFlushStore(control.world), lambda: model, enabled=True)
    event = FlushCommand(TEAM, Origin("u-1", "t-u-1", "cmp-1"), (("user", "my plan for March"),))
    assert flush.flush(event)["status"] == "written"

    receipt = control.erase_mine()

    assert receipt == {"notes": 1, "versions": 0, "other": 1}  # the note and its claim
    assert not [sk for sk in control.partition(TEAM) if sk.startswith("flush#")]
    assert flush.flush(event)["status"] == "written"  # not "duplicate" of an erased note


def test_a_members_erase_stopped_at_its_end_answers_the_records_it_erased_on_the_next_call(control: Control) -> None:
    """What went with the notes is counted on the erase record as the notes are, so the call that finishes counts
    it though it finds nothing left to erase."""
    mine, theirs = _team(control, "u-1", "u-2")
    _left_behind(control, mine, theirs)
    control.world.faults.fail("scope_items.end_erase")

    with pytest.raises(StorageUnavailable):
        control.erase_mine()
    second = control.erase_mine()

    assert second == {"notes": 1, "versions": 0, "other": 4}


def test_a_members_erase_stopped_after_a_page_was_counted_finishes_counting_it_once(control: Control) -> None:
    _team(control, "u-1", "u-2", "u-1")
    control.world.faults.fail("scope_items.release")

    with pytest.raises(StorageUnavailable):
        control.erase_mine()
    second = control.erase_mine()

    assert second == {"notes": 2, "versions": 0, "other": 0}
    assert control.texts(TEAM) == ["noted by u-2"]


def test_a_members_erase_whose_index_is_down_still_erases_the_table(control: Control) -> None:
    """The index is best effort here: the stream indexer removes the notes too."""
    _team(control, "u-1", "u-2")
    control.index.down = ConnectionError("the index is down")

    assert control.erase_mine() == {"notes": 1, "versions": 0, "other": 0}
    assert control.texts(TEAM) == ["noted by u-2"]


def test_a_members_erase_moves_the_erase_mark_and_ends_erasing(control: Control) -> None:
    _team(control, "u-1", "u-2")
    before = control.world.item((TEAM.key, DUE_SK))

    control.erase_mine()

    after = control.world.item((TEAM.key, DUE_SK))
    assert after["fence"] != before.get("fence") and "erasing" not in after


def test_a_members_erase_that_stops_leaves_folds_refused_until_it_is_called_again(control: Control) -> None:
    _team(control, "u-1")
    control.world.faults.fail("stale.items")  # it dies after its notes went, before its end

    with pytest.raises(StorageUnavailable):
        control.erase_mine()
    assert control.world.item((TEAM.key, DUE_SK))["erasing"] is True
    control.erase_mine()

    assert "erasing" not in control.world.item((TEAM.key, DUE_SK))


def test_a_members_erase_unlinks_the_notes_their_notes_superseded(control: Control) -> None:
    old, new = _team(control, "u-2", "u-1")
    day, old_position = old.split(".")
    old_key, new_key = (TEAM.key, f"note#{day}#{int(old_position):09d}"), (TEAM.key, f"note#{day}#000000002")
    control.world.transact("test", [])
    from tests.support.fake_stores import Write

    control.world.transact(
        "test",
        [
            Write(old_key, lambda item: {**(item or {}), "superseded_by": {new}}),
            Write(new_key, lambda item: {**(item or {}), "supersedes": {old}}),
        ],
    )

    control.erase_mine()

    assert "superseded_by" not in control.world.item(old_key)
    assert control.texts(TEAM) == ["noted by u-2"]


# --- export, usage and turns -----------------------------------------------------------------------------------


def test_an_export_holds_the_versions_then_the_notes_oldest_first(control: Control) -> None:
    control.fill(notes=3, versions=2)

    first = control.people.export(PERSONAL, None)
    second = control.people.export(PERSONAL, first.next_cursor)

    assert (first.format, first.scope, first.document.version) == (EXPORT_FORMAT, "personal", 2)
    assert [v.version for v in first.versions] == [1, 2] and first.notes == []
    assert first.versions[0].reason == "tool" and first.versions[0].by.user_id == "u-1"
    assert [n.text for n in second.notes] == ["fact 0", "fact 1", "fact 2"] and second.versions == []
    assert second.next_cursor is None and second.exported_at == first.exported_at


def test_an_export_of_one_scope_shows_nothing_of_another(control: Control) -> None:
    control.fill(OTHER)

    first = control.people.export(PERSONAL, None)
    second = control.people.export(PERSONAL, first.next_cursor)

    assert first.versions == [] and second.notes == [] and first.document.version == 0


def test_an_export_cursor_that_is_not_one_is_refused(control: Control) -> None:
    with pytest.raises(InvalidInput):
        control.people.export(PERSONAL, "not-a-cursor")
    assert control.world.faults.seen == []


def _export_all(control: Control, scope: Scope = PERSONAL) -> list[dict[str, Any]]:
    pages, cursor = [], None
    while True:
        page = control.people.export(scope, cursor).model_dump(mode="json")
        pages.append(page)
        if (cursor := page["next_cursor"]) is None:
            return pages


def test_export_then_erase_then_load_gives_the_same_content(control: Control) -> None:
    control.fill(notes=4, versions=2)
    before = _export_all(control)

    receipt = control.erase()
    control.people.load(PERSONAL, before)
    after = _export_all(control)

    assert (receipt["notes"], receipt["versions"]) == (4, 2)
    strip = lambda pages: [{k: v for k, v in page.items() if k not in ("exported_at", "next_cursor")} for page in pages]  # noqa: E731
    assert strip(after) == strip(before)
    assert control.people.usage(PERSONAL).chars == sum(len(f"fact {n}") for n in range(4)) + len("# Memory v1") + len(
        "# Memory v2"
    )  # every kept version counts, history included


def test_an_export_is_loaded_only_into_an_empty_memory(control: Control) -> None:
    control.fill(notes=1, versions=1)
    pages = _export_all(control)

    with pytest.raises(InvalidInput, match="empty memory"):
        control.people.load(PERSONAL, pages)

    assert len(control.notes.every_note(PERSONAL)) == 1


def test_a_loaded_export_stores_what_the_text_pipeline_makes_of_it(control: Control) -> None:
    secret = "ghp_" + "A1b2C3d4E5" * 3 + "Q7r8S9t0U1v2"
    by = {"user_id": "u-1", "thread_id": "t-1", "run_id": None}
    version = {"version": 1, "content": f"# Memory\n- deploy key {secret}", "updated_at": "2026-11-20T09:00:00.000Z"}
    page = {"format": EXPORT_FORMAT, "versions": [{**version, "reason": "tool", "by": by}], "notes": []}

    control.people.load(PERSONAL, [page])

    stored_content = control.documents.current(PERSONAL).content
    assert secret not in stored_content and control.people.usage(PERSONAL).chars == len(stored_content)


def test_usage_counts_the_days_notes_and_the_characters_against_the_quotas(control: Control) -> None:
    control.fill(notes=2, versions=1)

    usage = control.people.usage(PERSONAL)

    assert (usage.notes_today, usage.notes_per_day_quota) == (2, 100)
    assert (usage.chars, usage.chars_quota) == (len("fact 0fact 1") + len("# Memory v1"), 100_000)


def test_the_turns_are_listed_for_the_scope_only(control: Control) -> None:
    now = int(time.time())
    for scope, n in ((TEAM, 1), (OTHER, 2)):
        at = f"2026-12-03T10:00:0{n}.000Z"
        record = {"at": at, "thread_id": "t-1", "document_version": n, "note_ids": [], "expires_at": now + 60}
        control.seed(scope, f"inj#{at}#{n}", record)

    listed = control.people.injections(TEAM, thread_id=None, limit=10, cursor=None)

    assert [turn.document_version for turn in listed.injections] == [1]
