"""The dashboard's operations (docs/api.md §5, ``memory.management``) on the in-memory fakes: the document with its
limits, each line's notes, saves and restores through the tools' own validated write, the history in pages, notes by
day, a note's delete with what it left behind, and the runs. The stores' own behaviours are the contract tests'
(tests/support/store_contracts.py, erase_contracts.py, night_contracts.py); these are the use case's, in
milliseconds. Starting a run (one Lambda invoke) is tested against the template's grants in the moto tier."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import pytest

from agent_memory.basics.errors import InvalidInput, NotFound, StorageUnavailable, VersionConflict
from agent_memory.domain.document import HARD_LIMIT, SOFT_LIMIT, Author
from agent_memory.domain.fold import DueNote, Fold
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.memory.management import Management
from agent_memory.storage.keys import DUE_SK, note_sk
from tests.support.fake_erase import FakeStaleRecords
from tests.support.fake_night import FakeConsolidationStore
from tests.support.fake_stores import FakeStores, Write, fake_stores
from tests.support.scopes import PERSONAL, TEAM, stored, stored_document

DAY = "2026-12-03"  # MEMORY_NOW's day


@dataclass
class Dashboard:
    """One world, the management's fake stores on it, and the memory service its writes go through."""

    stores: FakeStores = field(default_factory=fake_stores)

    def __post_init__(self) -> None:
        world = self.stores.world
        self.runs = FakeConsolidationStore(world)
        self.stale = FakeStaleRecords(world)
        self.management = Management(
            self.stores.memory_service(),
            self.stores.documents,
            self.stores.notes,
            self.runs,
            lambda_client=None,
            consolidate_function="ConsolidateFunction",
            stale=self.stale,
        )

    def note(self, text: str, day: str = DAY, scope: Scope = PERSONAL) -> str:
        created = datetime.fromisoformat(f"{day}T09:00:00+00:00")
        origin = Origin("u-1", "t-1")
        return self.stores.notes.append(scope, created=created, text=stored(text), source="remember", origin=origin).id

    def save(self, content: str, expected: int, scope: Scope = PERSONAL) -> int:
        return self.management.save(scope, content, expected, "u-1").document.version

    def folded(self, content: str, expected: int, edits: list[dict[str, Any]], note_ids: list[str]) -> None:
        """A fold's version of ``content``, made by ``edits`` of the notes ``note_ids``, saved as the worker saves it
        (with its pending marks, on condition of the scope's erase mark)."""
        marked = Write((PERSONAL.key, DUE_SK), lambda item: {**(item or {}), "fence": "mark"})
        self.stores.world.transact("seed", [marked])
        places = [(day, int(position)) for day, position in (ident.split(".") for ident in note_ids)]
        notes = [DueNote(PERSONAL.key, note_sk(*place), *place, "", f"{place[0]}T09:00:00.000Z") for place in places]
        self.stores.documents.save(
            PERSONAL,
            stored_document(content),
            expected_version=expected,
            updated_at="2026-12-04T03:00:00.000Z",
            reason="consolidation",
            by=Author(run_id="r-1"),
            pending_marks=Fold(notes, "r-1", "w-1", "mark", edits=edits),
        )


@pytest.fixture
def dashboard() -> Dashboard:
    return Dashboard()


# --- the document ---------------------------------------------------------------------------------------------


def test_the_document_comes_with_its_limits(dashboard) -> None:
    empty = dashboard.management.document(PERSONAL)
    dashboard.save("# Memory\n- likes tea", 0)

    answer = dashboard.management.document(PERSONAL)

    assert (empty.document.version, empty.document.content) == (0, "")
    assert (answer.document.version, answer.document.content) == (1, "# Memory\n- likes tea")
    assert (answer.limits.soft, answer.limits.hard) == (SOFT_LIMIT, HARD_LIMIT)


def test_a_save_is_a_dashboard_version_and_a_stale_one_is_a_conflict(dashboard) -> None:
    dashboard.save("# Memory\n- likes tea", 0)

    with pytest.raises(VersionConflict):
        dashboard.save("# Memory\n- likes coffee", 0)

    ((document, reason, by),) = dashboard.stores.documents.kept(PERSONAL)
    assert (document.content, reason, by) == ("# Memory\n- likes tea", "dashboard", Author(user_id="u-1"))


def test_empty_content_clears_the_document_as_a_new_version(dashboard) -> None:
    dashboard.save("# Memory\n- likes tea", 0)

    assert dashboard.save("", 1) == 2
    assert dashboard.management.document(PERSONAL).document.content == ""
    assert [document.content for document, _, _ in dashboard.stores.documents.kept(PERSONAL)] == [
        "# Memory\n- likes tea",
        "",
    ]  # nothing is lost: the history keeps the rest


def test_a_restore_saves_the_old_content_as_a_new_version_on_condition_of_the_head(dashboard) -> None:
    dashboard.save("# Memory\n- likes tea", 0)
    dashboard.save("# Memory\n- likes coffee", 1)

    with pytest.raises(VersionConflict):
        dashboard.management.restore(PERSONAL, 1, 1, "u-2")
    restored = dashboard.management.restore(PERSONAL, 1, 2, "u-2")

    assert (restored.document.version, restored.document.content) == (3, "# Memory\n- likes tea")
    assert dashboard.stores.documents.kept(PERSONAL)[-1][1:] == ("restore", Author(user_id="u-2"))
    with pytest.raises(NotFound):
        dashboard.management.restore(PERSONAL, 9, 3, "u-2")


# --- each line's notes -----------------------------------------------------------------------------------------


def test_each_line_shows_the_notes_its_fold_cited_and_a_line_by_hand_none(dashboard) -> None:
    tea, osaka = dashboard.note("likes tea"), dashboard.note("flies to Osaka")
    dashboard.save("# Memory\n- likes tea", 0)
    edit = {"op": "add", "after": "- likes tea", "text": "- flies to Osaka in March", "notes": [osaka, tea]}

    dashboard.folded("# Memory\n- likes tea\n- flies to Osaka in March", 1, [edit], [tea, osaka])
    answer = dashboard.management.provenance(PERSONAL)

    assert answer.version == 2
    assert [(line.line, line.notes) for line in answer.lines] == [
        ("# Memory", []),
        ("- likes tea", []),
        ("- flies to Osaka in March", [tea, osaka]),
    ]


def test_a_note_deleted_since_is_left_out_of_its_lines_notes(dashboard) -> None:
    tea, osaka = dashboard.note("likes tea"), dashboard.note("flies to Osaka")
    edit = {"op": "add", "after": None, "text": "- flies to Osaka, likes tea", "notes": [tea, osaka]}
    dashboard.folded("- flies to Osaka, likes tea", 0, [edit], [tea, osaka])

    dashboard.management.delete_note(PERSONAL, osaka)

    assert [line.notes for line in dashboard.management.provenance(PERSONAL).lines] == [[tea]]


def test_a_later_save_by_hand_keeps_the_notes_of_the_lines_it_leaves_unchanged(dashboard) -> None:
    tea = dashboard.note("likes tea")
    dashboard.folded("- likes tea", 0, [{"op": "add", "after": None, "text": "- likes tea", "notes": [tea]}], [tea])

    dashboard.save("# Memory\n- likes tea", 1)

    assert [line.notes for line in dashboard.management.provenance(PERSONAL).lines] == [[], [tea]]


# --- the history ----------------------------------------------------------------------------------------------


def test_the_history_is_newest_first_in_pages(dashboard) -> None:
    for n in range(5):
        dashboard.save(f"# Memory\n- fact {n}", n)

    first = dashboard.management.versions(PERSONAL, 2, None)
    second = dashboard.management.versions(PERSONAL, 2, first.next_cursor)
    last = dashboard.management.versions(PERSONAL, 2, second.next_cursor)

    assert [entry.version for entry in first.versions] == [5, 4] and first.next_cursor == "4"
    assert [entry.version for entry in second.versions] == [3, 2] and second.next_cursor == "2"
    assert ([entry.version for entry in last.versions], last.next_cursor) == ([1], None)
    assert (first.versions[0].reason, first.versions[0].chars) == ("dashboard", len("# Memory\n- fact 4"))


@pytest.mark.parametrize("cursor", ["0", "1", "-3", "abc", "²", "1" * 19])
def test_a_cursor_no_answer_gave_is_refused(dashboard, cursor) -> None:
    with pytest.raises(InvalidInput):
        dashboard.management.versions(PERSONAL, 2, cursor)


def test_one_version_as_it_was_with_its_fold_s_edits(dashboard) -> None:
    tea = dashboard.note("likes tea")
    dashboard.save("# Memory", 0)
    edit = {"op": "add", "after": "# Memory", "text": "- likes tea", "notes": [tea]}
    dashboard.folded("# Memory\n- likes tea", 1, [edit], [tea])

    by_hand = dashboard.management.version(PERSONAL, 1)
    fold = dashboard.management.version(PERSONAL, 2)

    assert (by_hand.document.content, by_hand.edits) == ("# Memory", None)
    assert fold.document.content == "# Memory\n- likes tea"
    assert [edit.model_dump() for edit in fold.edits or []] == [
        {"op": "add", "after": "# Memory", "text": "- likes tea", "notes": [tea]}
    ]
    with pytest.raises(NotFound):
        dashboard.management.version(PERSONAL, 3)


# --- notes by day -----------------------------------------------------------------------------------------------


def test_the_days_are_newest_first_skipping_empty_days_with_a_cursor_to_older(dashboard) -> None:
    for day, text in [("2026-11-20", "oldest"), ("2026-11-28", "older"), ("2026-12-01", "one"), ("2026-12-01", "two")]:
        dashboard.note(text, day)
    dashboard.note("today's")

    first = dashboard.management.notes_by_day(PERSONAL, None, 2)  # before tomorrow: today included
    older = dashboard.management.notes_by_day(PERSONAL, date.fromisoformat(first.next_before or ""), 2)

    assert [(day.day, [note.text for note in day.notes]) for day in first.days] == [
        (DAY, ["today's"]),
        ("2026-12-01", ["two", "one"]),
    ]
    assert first.next_before == "2026-12-01"
    assert [day.day for day in older.days] == ["2026-11-28", "2026-11-20"] and older.next_before is None


def test_another_scopes_notes_are_never_listed(dashboard) -> None:
    dashboard.note("a team fact", scope=TEAM)

    assert dashboard.management.notes_by_day(PERSONAL, None, 7).days == []


# --- a note's delete ------------------------------------------------------------------------------------------


def test_a_deleted_note_is_gone_with_what_it_left_behind(dashboard) -> None:
    first, second = dashboard.note("likes tea"), dashboard.note("flies to Osaka")
    answer = json.dumps({"note": {"id": first, "origin": {"user_id": "u-1", "thread_id": "t-1"}}})
    dashboard.stores.world.transact(
        "seed", [Write((PERSONAL.key, "idem#remember#u-1#k-1"), lambda _: {"answer": answer})]
    )
    dashboard.stores.world.transact("seed", [Write((PERSONAL.key, "flush#t-1#c-1"), lambda _: {"note_id": first})])

    dashboard.management.delete_note(PERSONAL, first)

    assert [note.id for note in dashboard.stores.notes.every_note(PERSONAL)] == [second]
    assert dashboard.stores.world.item((PERSONAL.key, "idem#remember#u-1#k-1")) is None
    assert dashboard.stores.world.item((PERSONAL.key, "flush#t-1#c-1")) is None
    assert dashboard.stores.usage.chars(PERSONAL) == len("flies to Osaka")
    assert dashboard.stores.usage.notes_on(PERSONAL, DAY) == 1


@pytest.mark.parametrize("note_id", [f"{DAY}.1", f"{DAY}.9", "not-an-id", "2026-13-01.1"])
def test_a_note_the_scope_does_not_hold_is_not_found_and_nothing_changes(dashboard, note_id) -> None:
    dashboard.note("a team fact", scope=TEAM)

    with pytest.raises(NotFound):
        dashboard.management.delete_note(PERSONAL, note_id)

    assert [note.text for note in dashboard.stores.notes.every_note(TEAM)] == ["a team fact"]


def test_a_note_deleted_twice_is_not_found_the_second_time(dashboard) -> None:
    ident = dashboard.note("likes tea")
    dashboard.management.delete_note(PERSONAL, ident)

    with pytest.raises(NotFound):
        dashboard.management.delete_note(PERSONAL, ident)


def test_a_delete_whose_leftovers_cannot_be_voided_still_deleted_the_note(dashboard) -> None:
    ident = dashboard.note("likes tea")
    dashboard.stores.world.faults.fail("stale.items")

    with pytest.raises(StorageUnavailable):
        dashboard.management.delete_note(PERSONAL, ident)

    assert dashboard.stores.notes.every_note(PERSONAL) == []


# --- the runs -------------------------------------------------------------------------------------------------


def test_the_runs_are_listed_newest_first_within_the_limit(dashboard) -> None:
    for n in range(3):
        dashboard.runs.save_run({"run_id": f"r{n}", "started_at": f"2026-12-0{n + 1}T03:00:00.000Z", "failures": []})

    answer = dashboard.management.runs(2)

    assert [(run.run_id, run.status) for run in answer.runs] == [("r2", "running"), ("r1", "running")]
