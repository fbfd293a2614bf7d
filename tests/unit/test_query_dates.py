"""search.dates: the days a question names, resolved against the question's day (always in the past)."""

from __future__ import annotations

from datetime import date

import pytest

from agent_memory.search.dates import Days, named_days

FRIDAY = date(2026, 12, 4)


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("What did she do last Tuesday?", "2026-12-01", "2026-12-01"),
        ("what happened on Friday", "2026-11-27", "2026-11-27"),  # today is Friday: the one before
        ("Anything yesterday?", "2026-12-03", "2026-12-03"),
        ("the day before yesterday", "2026-12-02", "2026-12-02"),
        ("What did he cook two weeks ago?", "2026-11-17", "2026-11-23"),
        ("a couple of days ago", "2026-12-01", "2026-12-03"),
        ("3 days ago", "2026-11-30", "2026-12-02"),
        ("three months ago", "2026-09-01", "2026-09-30"),
        ("last week", "2026-11-23", "2026-11-29"),
        ("this week", "2026-11-30", "2026-12-04"),
        ("last month", "2026-11-01", "2026-11-30"),
        ("What did we plan in May?", "2026-05-01", "2026-05-31"),
        ("in December", "2026-12-01", "2026-12-04"),  # never past the question's day
        ("in May 2025", "2025-05-01", "2025-05-31"),
        ("What is on 14 March?", "2026-03-14", "2026-03-14"),
        ("on the 3rd of May", "2026-05-03", "2026-05-03"),
        ("November 3rd, 2025", "2025-11-03", "2025-11-03"),
        ("on 20 December", "2025-12-20", "2025-12-20"),  # not yet this year: last year's
        ("2026-11-03", "2026-11-03", "2026-11-03"),
    ],
)
def test_an_expression_resolves_against_the_questions_day(query, first, last):
    assert named_days(query, FRIDAY) == Days(first, last)


@pytest.mark.parametrize(
    "query",
    ["Which sport does she play on Mondays?", "what may happen", "on 31 February", "tell me about Maya", "2026-13-01"],
)
def test_no_day_is_named(query):
    assert named_days(query, FRIDAY) is None


def test_the_first_expression_in_the_question_wins():
    assert named_days("yesterday or last week?", FRIDAY) == Days("2026-12-03", "2026-12-03")


def test_days_hold_their_ends():
    days = Days("2026-11-01", "2026-11-30")
    assert days.holds("2026-11-01") and days.holds("2026-11-30") and not days.holds("2026-12-01")
