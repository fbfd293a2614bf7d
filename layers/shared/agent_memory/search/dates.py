"""Time in a question: the days a recall query names ("last Tuesday", "in May", "two weeks ago", "on 3 November").

Memory is asked about the past, so every expression resolves against the question's time (the moment
``recall`` is called, UTC) to days at or before it:

| the query says | the days |
|---|---|
| ``today``, ``yesterday``, ``the day before yesterday`` | that day |
| ``N days ago`` (a number or a word: ``two``, ``a couple of``, ``a few`` = 3) | that day, with a day either side |
| ``N weeks ago``, ``a week ago`` | the seven days around that day |
| ``N months ago`` | the calendar month that far back |
| ``last week``, ``this week`` | Monday to Sunday of the week before; Monday of this week to today |
| ``last month``, ``this month`` | the calendar month before; the first of this month to today |
| ``last Tuesday``, ``on Tuesday``, ``past Tuesday`` | the latest Tuesday before today (``on Tuesdays``: none) |
| ``3 November``, ``November 3rd``, ``3 Nov 2025``, ``2025-11-03`` | that day (no year: the latest not after today) |
| ``in May``, ``in May 2025`` | that calendar month (without a year: the latest May that has begun) |

The first expression found wins (a question names one time). Recall then boosts the notes *written* on
those days (``recall.dated``), on both paths; the words of the question still rank within them.

A query is untrusted text, so reading it never fails: only ASCII digits are digits (``\\d`` would take
Arabic-Indic digits, which ``int`` reads: four zeros of them were the year 0), and a year no calendar
holds (``0000``) is words, as if the expression named no year (``in January 0000`` is the latest January).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import MINYEAR, date, timedelta

_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): n for n, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "couple of": 2, "few": 3,
}  # fmt: skip
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = "(" + "|".join(_WEEKDAYS) + ")"
_COUNT = r"([0-9]{1,3}|" + "|".join(sorted((re.escape(word) for word in _NUMBERS), key=len, reverse=True)) + ")"
_YEAR = r"(?:,?\s+([0-9]{4}))?"
_ORDINAL = r"([0-9]{1,2})(?:st|nd|rd|th)?"

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b([0-9]{4})-([0-9]{2})-([0-9]{2})\b")),
    ("day_month", re.compile(rf"\b{_ORDINAL}(?:\s+of)?\s+{_MONTH}{_YEAR}\b")),
    ("month_day", re.compile(rf"\b{_MONTH}\s+{_ORDINAL}\b{_YEAR}")),
    ("ago", re.compile(rf"\b{_COUNT}\s+(day|week|month)s?\s+(?:ago|back|before)\b")),
    ("yesterday", re.compile(r"\b(the day before yesterday|yesterday|today|tonight|this morning)\b")),
    ("week", re.compile(r"\b(last|this|past|previous)\s+week\b")),
    ("month", re.compile(r"\b(last|this|past|previous)\s+month\b")),
    ("weekday", re.compile(rf"\b(?:last|on|this past|past)\s+{_WEEKDAY}\b")),
    ("in_month", re.compile(rf"\b(?:in|during|of|since)\s+(?:early\s+|late\s+|mid\s+|mid-)?{_MONTH}{_YEAR}\b")),
]


@dataclass(frozen=True, slots=True)
class Days:
    """A range of days, both ends included (ISO ``YYYY-MM-DD`` strings compare like the days they name)."""

    first: str
    last: str

    def holds(self, day: str) -> bool:
        return self.first <= day <= self.last


def _days(first: date, last: date, today: date) -> Days | None:
    last = min(last, today)
    return Days(first.isoformat(), last.isoformat()) if first <= last else None


def _month(year: int, month: int, today: date) -> Days | None:
    return _days(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]), today)


def _months_back(today: date, count: int) -> tuple[int, int]:
    index = today.year * 12 + today.month - 1 - count
    return index // 12, index % 12 + 1


def _year(digits: str | None) -> int | None:
    """The year four ASCII digits name, or None: absent, or out of the calendar's range (``0000``), which is words."""
    return int(digits) if digits and int(digits) >= MINYEAR else None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def _named_day(day: int, month: int, year: int | None, today: date) -> Days | None:
    try:
        if year is not None:
            named = date(year, month, day)
        else:
            named = date(today.year, month, day)
            if named > today:
                named = date(today.year - 1, month, day)
    except ValueError:  # 31 February: not a day
        return None
    return _days(named, named, today)


def _resolve(kind: str, found: tuple[str, ...], today: date) -> Days | None:
    if kind == "iso":
        try:
            named = date(int(found[0]), int(found[1]), int(found[2]))
        except ValueError:
            return None
        return _days(named, named, today)
    if kind == "day_month":
        return _named_day(int(found[0]), _MONTHS[found[1]], _year(found[2]), today)
    if kind == "month_day":
        return _named_day(int(found[1]), _MONTHS[found[0]], _year(found[2]), today)
    if kind == "ago":
        count, unit = _count(found[0]), found[1]
        if unit == "day":
            center = today - timedelta(days=count)
            return _days(center - timedelta(days=1), center + timedelta(days=1), today)
        if unit == "week":
            center = today - timedelta(weeks=count)
            return _days(center - timedelta(days=3), center + timedelta(days=3), today)
        return _month(*_months_back(today, count), today)
    if kind == "yesterday":
        back = {"the day before yesterday": 2, "yesterday": 1}.get(found[0], 0)
        named = today - timedelta(days=back)
        return _days(named, named, today)
    if kind == "week":
        monday = today - timedelta(days=today.weekday())
        if found[0] == "this":
            return _days(monday, today, today)
        return _days(monday - timedelta(days=7), monday - timedelta(days=1), today)
    if kind == "month":
        if found[0] == "this":
            return _days(today.replace(day=1), today, today)
        return _month(*_months_back(today, 1), today)
    if kind == "weekday":
        back = (today.weekday() - _WEEKDAYS[found[0]]) % 7 or 7
        named = today - timedelta(days=back)
        return _days(named, named, today)
    month, year = _MONTHS[found[0]], _year(found[1])
    if year is None:
        year = today.year if month <= today.month else today.year - 1
    return _month(year, month, today)


def named_days(query: str, today: date) -> Days | None:
    """The days the query names, resolved against ``today`` (the question's day, UTC), or None."""
    text = query.lower()
    earliest: tuple[int, str, tuple[str, ...]] | None = None
    for kind, pattern in _PATTERNS:
        match = pattern.search(text)
        if match and (earliest is None or match.start() < earliest[0]):
            earliest = (match.start(), kind, match.groups())
    if earliest is None:
        return None
    try:
        return _resolve(earliest[1], earliest[2], today)
    except (ValueError, OverflowError):  # days before the calendar's first (``999 months ago`` in the year 1)
        return None
