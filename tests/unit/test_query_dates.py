"""search.dates: the days a question names, resolved against the question's day (always in the past)."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.search.dates import Days, named_days

FRIDAY = date(2026, 12, 4)
ARABIC_ZEROS = "\u0660" * 4


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


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("in January 0000", "2026-01-01", "2026-01-31"),  # a year no calendar holds is words: the latest January
        ("since may 0000", "2026-05-01", "2026-05-31"),
        ("on 3 May 0000", "2026-05-03", "2026-05-03"),
        ("May 3rd, 0000", "2026-05-03", "2026-05-03"),
        (f"in June {ARABIC_ZEROS}", "2026-06-01", "2026-06-30"),  # Arabic-Indic digits are no year
    ],
)
def test_a_year_out_of_range_or_not_in_ascii_digits_is_words(query, first, last):
    assert named_days(query, FRIDAY) == Days(first, last)


@pytest.mark.parametrize(
    "query", ["\u0663 days ago", "2026-\u0661\u0661-03", "on \u0663 May", "\uff19 weeks ago", "0000-01-01"]
)
def test_digits_other_than_ascii_and_the_year_0_name_no_day(query):
    assert named_days(query, FRIDAY) is None


_DATE_WORDS = ["in", "since", "on", "of", "may", "January", "3rd", "days", "weeks", "months", "ago", "last", ","]
_NUMBERS = ["0", "0000", "9999", "999", "31", ARABIC_ZEROS, "\u0661\u0662", "\uff12\uff10\uff12\uff16", "0000-00-00"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_DATE_WORDS + _NUMBERS), max_size=6), st.dates() | st.sampled_from([date(1, 1, 1)]))
def test_no_query_makes_the_dates_fail(words, today):
    """Whatever the words and the question's day (year 1 to 9999), the dates answer days or None, never raise."""
    named = named_days(" ".join(words), today)
    assert named is None or named.first <= named.last <= today.isoformat()
