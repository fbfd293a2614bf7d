"""Time in the question and relevance feedback, on both paths: the table's (moto, no index) and the index's
(the fake index of tests/, its answers chosen by each test; tests/opensearch runs the real requests)."""

from __future__ import annotations

import pytest

from agent_memory import bootstrap
from agent_memory.providers.notes_index import IndexHit
from agent_memory.search.dates import Days
from tests.support.fake_index import FakeNotesIndex
from tests.support.scopes import private

FRIDAY = "2026-12-04T18:00:00Z"


def _remember_on(call, monkeypatch, instant, text):
    monkeypatch.setenv("MEMORY_NOW", instant)
    bootstrap.reset()
    answer = call("remember", {"context": private(), "arguments": {"text": text}})
    assert answer.status == 201
    return answer.body["note"]


def _recall_on(call, monkeypatch, instant, query, k=3):
    monkeypatch.setenv("MEMORY_NOW", instant)
    bootstrap.reset()
    answer = call("recall", {"context": private(), "arguments": {"query": query, "k": k}})
    assert answer.status == 200
    return answer.body["notes"]


@pytest.fixture
def lunches(call, monkeypatch):
    """Three lunches in the same words on three days; the question's time is a Friday."""
    return {
        day: _remember_on(call, monkeypatch, f"{day}T12:30:00Z", f"Had {food} for lunch at the office")
        for day, food in (("2026-11-24", "ramen"), ("2026-12-01", "falafel"), ("2026-12-03", "sushi"))
    }


def test_the_table_path_ranks_the_lunch_of_the_day_the_question_names_first(call, monkeypatch, lunches):
    tuesday = _recall_on(call, monkeypatch, FRIDAY, "What did I have for lunch last Tuesday?")
    plain = _recall_on(call, monkeypatch, FRIDAY, "What did I have for lunch?")

    assert tuesday[0]["id"] == lunches["2026-12-01"]["id"]
    assert plain[0]["id"] == lunches["2026-12-03"]["id"]  # the same words without a day: the newest first


def test_the_same_words_resolve_against_the_questions_own_time(call, monkeypatch, lunches):
    a_week_later = _recall_on(call, monkeypatch, "2026-12-01T18:00:00Z", "lunch last Tuesday?")

    assert a_week_later[0]["id"] == lunches["2026-11-24"]["id"]  # asked on Tuesday 1 December


def test_keyword_mode_answers_only_notes_holding_a_word_of_the_question_whatever_its_day(call, monkeypatch):
    """Without vectors the answer is the notes holding a word of the query: a named day reorders them only."""
    _remember_on(call, monkeypatch, "2026-12-03T09:00:00Z", "Met Noor at the climbing gym")

    assert _recall_on(call, monkeypatch, FRIDAY, "What happened yesterday?") == []


def _garden(call, monkeypatch):
    garden = _remember_on(call, monkeypatch, FRIDAY, "Started a vegetable garden at the allotment on Elm Road")
    blight = _remember_on(call, monkeypatch, FRIDAY, "Tomatoes at the allotment got blight in August")
    for filler in ("Talked with Sam about the budget", "Had ramen for lunch", "Reviewed the billing pull request"):
        _remember_on(call, monkeypatch, FRIDAY, filler)
    return garden, blight


def test_keyword_mode_does_not_answer_a_note_found_by_expansion_alone(call, monkeypatch):
    """The index path below finds the blight through the garden's words; keyword mode answers the notes holding
    a word of the question only (hybrid's table path ranks every note with a vector anyway)."""
    garden, _ = _garden(call, monkeypatch)

    notes = _recall_on(call, monkeypatch, FRIDAY, "how is the vegetable garden going?")

    assert [note["id"] for note in notes] == [garden["id"]]


@pytest.fixture
def index():
    fake = FakeNotesIndex()
    bootstrap.provide(notes_index=fake)
    return fake


def _hit(note, score=1.0):
    return IndexHit("user#u-1", note["day"], note["position"], score, note["text"])


def test_the_index_path_asks_for_the_named_days_and_boosts_their_notes(call, monkeypatch, lunches, index):
    index.hits = [_hit(lunches[day], 2.0) for day in ("2026-12-03", "2026-12-01", "2026-11-24")]
    index.expanded_hits = index.hits  # the feedback's words are every lunch's: the same three
    index.dated_hits = [_hit(note) for note in lunches.values()]
    bootstrap.provide(notes_index=index)

    notes = _recall_on(call, monkeypatch, FRIDAY, "What did I have for lunch last Tuesday?")

    assert index.day_searches == [Days("2026-12-01", "2026-12-01")]
    assert notes[0]["id"] == lunches["2026-12-01"]["id"]


def test_the_index_path_asks_again_with_the_feedback_terms(call, monkeypatch, index, embedder):
    garden = _remember_on(call, monkeypatch, FRIDAY, "Started a vegetable garden at the allotment on Elm Road")
    blight = _remember_on(call, monkeypatch, FRIDAY, "Tomatoes at the allotment got blight in August")
    index.hits = [_hit(garden, 3.0)]  # the first pass: the question's words
    index.semantic_hits = [_hit(garden, 0.9)]
    index.expanded_hits = [_hit(garden, 3.2), _hit(blight, 0.6)]  # the second, as the node would answer it
    bootstrap.provide(notes_index=index)

    notes = _recall_on(call, monkeypatch, FRIDAY, "how is the vegetable garden going?")

    [asked] = index.expansions
    assert "allot" in asked and not {"veget", "garden"} & set(asked)  # stems: new words only
    assert [note["id"] for note in notes] == [garden["id"], blight["id"]]
