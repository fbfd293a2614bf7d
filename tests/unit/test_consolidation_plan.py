"""Consolidation's pure rules: one scope's group within the caps, in true-age order, and the run's "now"
(docs/api.md §4, §6 "Consolidation at any scale"). The order across scopes is the scope index's (integration)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.domain.fold import DueNote
from agent_memory.edges.events import scheduled_run
from agent_memory.storage.consolidation_store import group_within_caps
from tests.support.events import event_body


def due(position: int, text: str = "a fact", day: str = "2026-11-20", second: int | None = None) -> DueNote:
    instant = f"{day}T10:00:{position if second is None else second:02d}.000Z"
    return DueNote("user#a", f"note#{day}#{position:09d}", day, position, text, instant)


def positions(notes: list[DueNote]) -> list[int]:
    return [note.position for note in notes]


def test_a_group_takes_its_oldest_notes_up_to_max_notes_and_counts_the_rest() -> None:
    group = group_within_caps([due(position) for position in range(7, 0, -1)], 3, 20_000, remaining_after=4)

    assert positions(group.notes) == [1, 2, 3]
    assert group.remaining == 4 + 4


def test_notes_of_the_same_instant_go_by_position_as_a_number_not_as_text() -> None:
    notes = [due(10, second=0), due(2, second=0), due(1, second=0)]

    assert positions(group_within_caps(notes, 200, 20_000, remaining_after=0).notes) == [1, 2, 10]


def test_the_instant_comes_before_the_day_and_the_position() -> None:
    later = due(1, day="2026-11-20", second=30)
    earlier = due(5, day="2026-11-20", second=10)

    assert positions(group_within_caps([later, earlier], 200, 20_000, remaining_after=0).notes) == [5, 1]


def test_a_group_stops_before_the_note_that_would_pass_max_chars() -> None:
    notes = [due(1, "x" * 45), due(2, "y" * 45), due(3, "z" * 20)]

    group = group_within_caps(notes, 200, 100, remaining_after=0)

    assert positions(group.notes) == [1, 2]
    assert group.remaining == 1


def test_a_single_note_longer_than_max_chars_still_forms_a_group_so_it_never_blocks_its_scope() -> None:
    group = group_within_caps([due(1, "x" * 500), due(2)], 200, 100, remaining_after=0)

    assert positions(group.notes) == [1]


def test_nothing_read_is_an_empty_group() -> None:
    group = group_within_caps([], 200, 20_000, remaining_after=0)

    assert (group.notes, group.remaining) == ([], 0)


def scheduled(time: object = "2026-12-03T03:00:00Z", **fields: object) -> dict[str, object]:
    """events/scheduled.json, its ``time`` and any other field replaced."""
    return event_body("scheduled") | {"time": time, **fields}


def test_the_runs_now_is_the_scheduled_events_time_in_utc() -> None:
    assert scheduled_run(scheduled("2026-12-03T03:00:00Z")).now == datetime(2026, 12, 3, 3, 0, tzinfo=UTC)
    assert scheduled_run(scheduled("2026-12-03T04:00:00+01:00")).now == datetime(2026, 12, 3, 3, 0, tzinfo=UTC)


@pytest.mark.parametrize("time", [None, 1764730800, "2026-12-03T03:00:00", "tomorrow"])
def test_an_event_without_a_utc_time_is_refused(time: object) -> None:
    with pytest.raises(ValueError, match="time"):
        scheduled_run(scheduled(time))


@pytest.mark.parametrize("event", [None, [], {}, {"time": "2026-12-03T03:00:00Z"}])
def test_what_is_not_a_scheduled_event_is_refused(event: object) -> None:
    with pytest.raises(ValueError, match="not a scheduled event"):
        scheduled_run(event)


def test_a_bad_event_is_refused_naming_every_field_it_got_wrong_in_one_line() -> None:
    """Parsed by Powertools' EventBridge model: every fault at once, where a hand parse stopped at the first."""
    event = scheduled("2026-12-03T03:00:00", detail={"min_age_days": -1})
    del event["detail-type"]

    with pytest.raises(ValueError) as refused:
        scheduled_run(event)

    message = str(refused.value)
    assert "\n" not in message
    assert all(f"`{field}`" in message for field in ("time", "detail-type", "detail.min_age_days")), message


def test_a_run_started_by_hand_may_name_the_notes_minimum_age() -> None:
    assert scheduled_run(scheduled(detail={"min_age_days": 0})).min_age_days == 0
    assert scheduled_run(scheduled(detail={})).min_age_days is None
    assert scheduled_run(scheduled(detail={"requested_by": "ops@example.com"})).min_age_days is None


def test_a_run_started_by_hand_needs_no_account_region_or_rule() -> None:
    """The dashboard's run button invokes the function directly: only EventBridge fills these in."""
    event = {key: value for key, value in scheduled().items() if key not in ("account", "region", "resources")}

    assert scheduled_run(event).run_id == scheduled()["id"]


@pytest.mark.parametrize("min_age", [-1, 3651, "0", 1.5, True])
def test_a_minimum_age_that_is_not_a_whole_number_of_days_is_refused(min_age: object) -> None:
    with pytest.raises(ValueError, match="min_age_days"):
        scheduled_run(scheduled(detail={"min_age_days": min_age}))


def test_consolidation_moves_text_within_the_characters_quota_unconditionally() -> None:
    """Folding notes into the document is never refused by the characters quota (docs/people.md)."""
    from agent_memory.domain.scope import Scope
    from agent_memory.storage.usage_store import Quota, chars_change_item, version_change

    quota = Quota(notes_per_day=5, chars=100)
    scope = Scope("personal", "u-1")

    enforced = chars_change_item("MemoryTable", scope, version_change(50, quota, reason="tool"))["Update"]
    folded = chars_change_item("MemoryTable", scope, version_change(500, quota, reason="consolidation"))["Update"]

    assert "ConditionExpression" in enforced
    assert "ConditionExpression" not in folded
