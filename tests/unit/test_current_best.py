"""recall/service.current_best: the answer is widened until its current notes are the best current ones, within the
candidates the paths rank anyway, and never asked again when nothing it gathered is superseded."""

from __future__ import annotations

from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.shapes import RecalledAnswer, ScoredNoteAnswer
from agent_memory.recall.service import current_best


def ranked(superseded: set[int], count: int) -> list[ScoredNoteAnswer]:
    """``count`` notes best first (position n scored 100 - n), those in ``superseded`` superseded."""
    notes = []
    for n in range(1, count + 1):
        note = Note(
            day="2026-12-01",
            position=n,
            text=f"note {n}",
            created_at="2026-12-01T10:00:00.000Z",
            source="remember",
            origin=Origin("u-1", "t-1"),
            superseded_by=("2026-12-02.1",) if n in superseded else None,
        )
        notes.append(ScoredNoteAnswer.scored(note, 100.0 - n))
    return notes


def gatherer(superseded: set[int], available: int, asked: list[int]):
    def gather(wanted: int) -> RecalledAnswer:
        asked.append(wanted)
        return RecalledAnswer(notes=ranked(superseded, min(wanted, available)), mode="keyword")

    return gather


def positions(result: RecalledAnswer) -> list[int]:
    return [note.position for note in result.notes]


def test_nothing_superseded_is_gathered_once():
    asked: list[int] = []

    assert positions(current_best(gatherer(set(), 30, asked), 3, bound=20)) == [1, 2, 3]
    assert asked == [3]


def test_superseded_notes_widen_the_pool_by_as_many_as_are_missing():
    asked: list[int] = []

    result = current_best(gatherer({1, 3, 5}, 30, asked), 3, bound=20)

    assert positions(result) == [2, 4, 6]
    assert asked == [3, 5, 6]


def test_the_pool_stops_at_its_bound_and_superseded_notes_fill_the_rest_last():
    asked: list[int] = []

    result = current_best(gatherer({1, 2, 3, 4}, 30, asked), 3, bound=5)

    assert positions(result) == [5, 1, 2]
    assert asked == [3, 5]
    assert [note.score for note in result.notes] == [95.0, 95.0, 95.0]  # lowered to the lowest current score


def test_a_pool_with_no_more_to_give_is_not_asked_again():
    asked: list[int] = []

    assert positions(current_best(gatherer({1}, 2, asked), 3, bound=20)) == [2, 1]
    assert asked == [3]
