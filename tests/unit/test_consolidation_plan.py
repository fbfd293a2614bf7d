"""Consolidation's pure rules: planning the night's groups within the caps, and the run's "now" (docs/api.md §4)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.consolidation import Caps, plan_groups, run_time
from agent_memory.scope import Scope
from agent_memory.storage.consolidation_store import DueNote

CAPS = Caps(min_age_days=7, max_groups=50, max_notes=200, max_chars=20_000)


def due(scope_key: str, position: int, text: str = "a fact", day: str = "2026-11-20") -> DueNote:
    return DueNote(scope_key, f"note#{day}#{position}", day, position, text, f"{day}T10:00:{position:02d}.000Z")


def test_groups_follow_their_oldest_due_note_and_keep_each_scopes_notes_in_order() -> None:
    notes = [due("user#a", 1), due("ws#w", 1), due("user#a", 2), due("user#b", 1), due("ws#w", 2)]

    plan = plan_groups(notes, CAPS)

    assert [group.scope for group in plan.groups] == [
        Scope("personal", "a"),
        Scope("team", "w"),
        Scope("personal", "b"),
    ]
    assert [[note.position for note in group.notes] for group in plan.groups] == [[1, 2], [1, 2], [1]]
    assert plan.notes_due == 5


def test_at_most_max_groups_groups_and_the_rest_waits_but_counts_as_due() -> None:
    notes = [due(f"user#u{index}", 1) for index in range(5)]

    plan = plan_groups(notes, Caps(7, max_groups=2, max_notes=200, max_chars=20_000))

    assert [group.scope.owner_id for group in plan.groups] == ["u0", "u1"]
    assert plan.notes_due == 5


def test_a_group_takes_its_oldest_notes_up_to_max_notes() -> None:
    notes = [due("user#a", position) for position in range(1, 8)]

    (group,) = plan_groups(notes, Caps(7, max_groups=50, max_notes=3, max_chars=20_000)).groups

    assert [note.position for note in group.notes] == [1, 2, 3]


def test_a_group_stops_before_the_note_that_would_pass_max_chars() -> None:
    notes = [due("user#a", 1, "x" * 45), due("user#a", 2, "y" * 45), due("user#a", 3, "z" * 20)]

    (group,) = plan_groups(notes, Caps(7, max_groups=50, max_notes=200, max_chars=100)).groups

    assert [note.position for note in group.notes] == [1, 2]


def test_a_single_note_longer_than_max_chars_still_forms_a_group_so_it_never_blocks_its_scope() -> None:
    (group,) = plan_groups([due("user#a", 1, "x" * 500), due("user#a", 2)], Caps(7, 50, 200, max_chars=100)).groups

    assert [note.position for note in group.notes] == [1]


def test_nothing_due_plans_nothing() -> None:
    plan = plan_groups([], CAPS)

    assert (plan.groups, plan.notes_due) == ([], 0)


def test_the_runs_now_is_the_scheduled_events_time_in_utc() -> None:
    assert run_time({"time": "2026-12-03T03:00:00Z"}) == datetime(2026, 12, 3, 3, 0, tzinfo=UTC)
    assert run_time({"time": "2026-12-03T04:00:00+01:00"}) == datetime(2026, 12, 3, 3, 0, tzinfo=UTC)


@pytest.mark.parametrize("event", [None, [], {}, {"time": 1764730800}, {"time": "2026-12-03T03:00:00"}])
def test_an_event_without_a_utc_time_is_refused(event: object) -> None:
    with pytest.raises(ValueError, match="time"):
        run_time(event)
