"""search.expansion: the feedback terms the first pass's best texts lend to the second."""

from __future__ import annotations

from agent_memory.search.bm25 import query_terms, rank, words
from agent_memory.search.expansion import EXPANSION_WEIGHT, anchored, expansion_terms


def _first_pass(query):
    return [(words(NOTES[r.index]), r.score) for r in rank(query, NOTES)]


NOTES = [
    "Started a vegetable garden at the allotment on Elm Road",
    "Tomatoes at the allotment got blight in August",
    "Maya talked about the budget",
    "Maya had ramen for lunch",
]


def test_the_best_hits_words_join_the_query_weighted_below_its_own():
    terms = query_terms("how is the vegetable garden going?")
    extra = expansion_terms(terms, _first_pass("how is the vegetable garden going?"), _collection(), count=3)

    assert "allot" in extra and not set(extra) & set(terms)
    assert max(extra.values()) == EXPANSION_WEIGHT and len(extra) <= 3


def test_the_second_pass_finds_a_note_that_shares_no_word_with_the_question():
    query = "how is the vegetable garden going?"
    assert [r.index for r in rank(query, NOTES)] == [0]  # the question's words find one note
    extra = expansion_terms(query_terms(query), _first_pass(query), _collection(), count=5)
    second = [r.index for r in rank(query, NOTES, expansion=extra)]

    assert second[:2] == [0, 1]  # the blight note shares "allotment" with the first hit


def test_no_hit_or_no_terms_asked_means_no_expansion():
    assert expansion_terms(["garden"], [], _collection(), count=5) == {}
    assert expansion_terms(["garden"], [(words(NOTES[0]), 1.0)], _collection(), count=0) == {}


def test_a_word_no_other_note_holds_is_never_added():
    extra = expansion_terms(["garden"], [(words(NOTES[0]), 1.0)], _collection(), count=10)

    assert set(extra) == {"allot"}  # "started", "elm", "road" would find nothing new


def _collection():
    return [set(words(text)) for text in NOTES]


def test_the_second_pass_never_displaces_the_first_pass_best():
    second = [("feedback text", 5.0), ("best", 3.0), ("related", 1.0)]

    order = anchored(("best", 3.0), second)

    assert order[0] == ("best", 3.0)
    assert [item for item, _ in order] == ["best", "feedback text", "related"]
    assert all(score < 3.0 for _, score in order[1:])
