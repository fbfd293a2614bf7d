"""The index's requests for time in the question and for relevance feedback, on a real node (providers.notes_index)."""

from __future__ import annotations

import pytest

from agent_memory.domain.notes import Note, Origin
from agent_memory.search.bm25 import query_terms, words
from agent_memory.search.dates import Days
from agent_memory.search.expansion import expansion_terms

pytestmark = pytest.mark.slow
SCOPE = "user#u-1"


def _note(day, position, text):
    return Note(day, position, text, f"{day}T10:15:00.000Z", "remember", Origin("u-1", "t-1"))


def _put(notes_index, notes, scope=SCOPE):
    notes_index.put_many(scope, [_note(day, position, text) for day, position, text in notes])
    notes_index.refresh()


def test_within_days_answers_only_the_notes_of_those_days_word_matches_first(notes_index):
    _put(
        notes_index, [("2026-11-24", 1, "Had ramen for lunch at the office"), ("2026-12-01", 1, "Met Noor at the gym")]
    )
    _put(
        notes_index,
        [("2026-12-01", 2, "Had falafel for lunch at the office"), ("2026-12-03", 1, "Had sushi for lunch")],
    )
    _put(notes_index, [("2026-12-01", 1, "Had lunch with another scope")], scope="user#u-2")

    hits = notes_index.within_days(SCOPE, "lunch", Days("2026-12-01", "2026-12-01"), size=10)

    assert [(hit.day, hit.position) for hit in hits] == [("2026-12-01", 2), ("2026-12-01", 1)]
    assert {hit.scope for hit in hits} == {SCOPE}


def test_the_expanded_query_finds_a_note_that_shares_only_the_feedback_terms(notes_index):
    garden = ("2026-12-01", 1, "Started a vegetable garden at the allotment on Elm Road")
    blight = ("2026-12-01", 2, "Tomatoes at the allotment got blight in August")
    _put(notes_index, [garden, blight, ("2026-12-01", 3, "Talked with Sam about the budget")])
    query = "how is the vegetable garden going?"
    first = notes_index.keyword(SCOPE, query, k=10).hits
    assert [hit.position for hit in first] == [1]

    extra = expansion_terms(query_terms(query), [(words(hit.text), hit.score) for hit in first], None, count=5)
    second = notes_index.keyword(SCOPE, query, k=10, expansion=extra).hits

    assert [hit.position for hit in second][:2] == [1, 2]
