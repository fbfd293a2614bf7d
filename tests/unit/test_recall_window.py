"""``recall.neighbours.windowed``: a candidate gains from the candidates its conversation wrote around it about
the same thing, and from no other."""

from __future__ import annotations

from datetime import date

from agent_memory.recall.neighbours import WINDOW_SHARE, WINDOW_SPAN, windowed
from agent_memory.recall.ranking import Tuning, rank_rows, stored_cosine
from agent_memory.search.vectors import QueryVector, encode, model_tag
from agent_memory.storage.note_items import NoteText

DAY = "2026-12-04"
TAG = model_tag("openai:fake-embeddings", 3)
NEAR, APART = [1.0, 0.2, 0.0], [0.0, 0.0, 1.0]  # cosine 1 with each other's kind, 0 across


def _row(position, vector, thread="t-1", day=DAY, text="filler"):
    return NoteText("user#u-1", day, position, text, encode(vector, tag=TAG) if vector else None, thread)


def test_a_candidate_gains_a_share_of_the_best_near_candidate_of_its_window_alone():
    rows = [
        _row(10, NEAR),  # 0: the strong hit
        _row(10 + WINDOW_SPAN, NEAR),  # 1: its window, the same thing: gains
        _row(11, APART),  # 2: its window, another thing: nothing
        _row(12, NEAR, thread="t-2"),  # 3: another conversation: nothing
        _row(11, NEAR, day="2026-12-05"),  # 4: another day: nothing
        _row(11 + WINDOW_SPAN, NEAR),  # 5: past the window (and lending 1 its own 0.1 is less than the hit's)
        _row(9, None),  # 6: no vector: nothing
    ]
    ranked = [(0, 1.0), (1, 0.2), (2, 0.3), (3, 0.25), (4, 0.15), (5, 0.1), (6, 0.05)]

    lifted = dict(windowed(ranked, dict(enumerate(rows)), stored_cosine(rows, TAG)))

    assert lifted[1] == 0.2 + WINDOW_SHARE * 1.0
    assert lifted[0] == 1.0 + WINDOW_SHARE * 0.2  # the hit gains from its best near candidate too
    assert {place: lifted[place] for place in (2, 3, 4, 6)} == {2: 0.3, 3: 0.25, 4: 0.15, 6: 0.05}
    assert lifted[5] == 0.1 + WINDOW_SHARE * 0.2  # 0 is out of its reach, 1 (within it) is not


def test_no_share_changes_nothing():
    rows = [_row(1, NEAR), _row(2, NEAR)]

    assert windowed([(0, 1.0), (1, 0.5)], dict(enumerate(rows)), stored_cosine(rows, TAG), share=0) == [
        (0, 1.0),
        (1, 0.5),
    ]


def test_the_turn_after_a_hit_about_the_same_thing_outranks_a_lone_turn_as_good_as_it():
    rows = [  # newest first, as the table's Query reads them
        _row(30, NEAR, thread="t-2", text="Pepper had a long walk"),  # as good alone, another conversation
        _row(21, NEAR, text="Pepper had a sore hip"),  # the hit's next turn, about the same thing
        _row(20, NEAR, text="Adopted a greyhound called Pepper"),  # the best hit
    ]

    order, mode = rank_rows(
        "greyhound Pepper", rows, vector=QueryVector(NEAR), tag=TAG, today=date.fromisoformat(DAY), k=3,
        tuning=Tuning(expansion_terms=0, neighbours=0, date_boost=0.0),
    )  # fmt: skip

    assert mode == "hybrid"
    assert [n for n, _ in order] == [2, 1, 0]
