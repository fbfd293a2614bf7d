"""``recall.neighbours``: which notes count as a strong hit's neighbours, and what they are given."""

from __future__ import annotations

from datetime import date

from agent_memory.recall.neighbours import NEIGHBOUR_SHARE, neighboured
from agent_memory.recall.ranking import Tuning, rank_rows
from agent_memory.storage.note_items import NoteText

DAY = "2026-12-04"


def _row(position, thread, text="filler", day=DAY, pk="user#u-1"):
    return NoteText(pk, day, position, text, None, thread)


def test_the_nearest_notes_of_the_hits_thread_on_its_day_join_with_a_share_of_its_score():
    rows = {
        1: _row(1, "t-1"), 2: _row(2, "t-2"), 3: _row(3, "t-1"), 4: _row(4, "t-1"), 5: _row(5, "t-1"),
        6: _row(1, "t-1", day="2026-12-05"),
    }  # fmt: skip

    ranked = neighboured([(4, 2.0)], rows.items(), count=1)

    assert ranked == [(4, 2.0), (3, NEIGHBOUR_SHARE * 2.0), (5, NEIGHBOUR_SHARE * 2.0)]
    assert {place for place, _ in neighboured([(4, 2.0)], rows.items(), count=3)} == {1, 3, 4, 5}


def test_a_candidate_keeps_the_better_of_its_own_score_and_its_hits_share():
    rows = {1: _row(1, "t-1"), 2: _row(2, "t-1"), 3: _row(3, "t-1")}

    ranked = neighboured([(2, 1.0), (3, 0.9), (1, 0.1)], rows.items(), count=1)

    assert ranked == [(2, 1.0), (3, 0.9), (1, NEIGHBOUR_SHARE)]


def test_a_hit_without_a_known_thread_has_no_neighbours():
    rows = {1: _row(1, None), 2: _row(2, None)}

    assert neighboured([(1, 1.0)], rows.items(), count=2) == [(1, 1.0)]


def test_keyword_mode_still_answers_only_notes_holding_a_word_of_the_query():
    rows = [_row(2, "t-1", "Her sore hip needs a check"), _row(1, "t-1", "Adopted a greyhound called Pepper")]
    today = date.fromisoformat(DAY)

    order, mode = rank_rows("greyhound", rows, vector=None, tag=None, today=today, k=5, tuning=Tuning(neighbours=1))

    assert mode == "keyword" and order == [(1, order[0][1])]
