"""The index's requests for time in the question and for relevance feedback, on a real node (search.notes_index)."""

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


def test_within_days_answers_only_the_notes_of_those_days_word_matches_first(notes_index):
    notes_index.put_many(
        SCOPE,
        [
            _note("2026-11-24", 1, "Had ramen for lunch at the office"),
            _note("2026-12-01", 1, "Met Noor at the climbing gym"),
            _note("2026-12-01", 2, "Had falafel for lunch at the office"),
            _note("2026-12-03", 1, "Had sushi for lunch at the office"),
        ],
    )
    notes_index.put_many("user#u-2", [_note("2026-12-01", 1, "Had lunch with another scope")])
    notes_index.refresh()

    hits = notes_index.within_days(SCOPE, "lunch", Days("2026-12-01", "2026-12-01"), size=10)

    assert [(hit.day, hit.position) for hit in hits] == [("2026-12-01", 2), ("2026-12-01", 1)]
    assert {hit.scope for hit in hits} == {SCOPE}


def test_the_expanded_query_finds_a_note_that_shares_only_the_feedback_terms(notes_index):
    notes_index.put_many(
        SCOPE,
        [
            _note("2026-12-01", 1, "Started a vegetable garden at the allotment on Elm Road"),
            _note("2026-12-01", 2, "Tomatoes at the allotment got blight in August"),
            _note("2026-12-01", 3, "Talked with Sam about the budget"),
        ],
    )
    notes_index.refresh()
    query = "how is the vegetable garden going?"
    first = notes_index.keyword(SCOPE, query, k=10)
    assert [hit.position for hit in first] == [1]

    extra = expansion_terms(query_terms(query), [(words(hit.text), hit.score) for hit in first], None, count=5)
    second = notes_index.keyword(SCOPE, query, k=10, expansion=extra)

    assert [hit.position for hit in second][:2] == [1, 2]
