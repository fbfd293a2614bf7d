"""search.near_duplicates and search.diversity: which notes are one fact, and MMR's choice of the answer's slots."""

from __future__ import annotations

import pytest

from agent_memory.recall.selection import answer_slots
from agent_memory.search.diversity import diversified, term_similarity
from agent_memory.search.near_duplicates import NEAR_DUPLICATE_COSINE, collapse, same_fact, text_key


def test_the_same_terms_in_any_order_and_case_are_one_fact():
    assert text_key("Prefers the metric units.") == text_key("metric units, prefers")
    assert same_fact(text_key("Prefers metric units"), text_key("prefers METRIC unit"), None)


@pytest.mark.parametrize(
    ("older", "newer", "cosine", "same"),
    [
        ("Plays squash every Monday evening", "Plays squash on Monday evenings", 0.937, True),  # words left out
        ("The meeting moved to Monday", "The meeting moved to Tuesday", 0.966, False),  # a word changed
        ("Prefers metric units", "Prefers metric units and ISO dates", 0.743, False),  # a new fact added
        ("Plays squash every Monday evening", "Plays squash on Monday evenings", None, False),  # no vectors
        ("", "", None, False),  # nothing to compare
    ],
)
def test_a_close_cosine_counts_only_when_no_term_changed(older, newer, cosine, same):
    assert same_fact(text_key(older), text_key(newer), cosine) is same


def test_the_threshold_is_inclusive():
    first, second = text_key("tea at home"), text_key("tea at home daily")
    assert same_fact(first, second, NEAR_DUPLICATE_COSINE)
    assert not same_fact(first, second, NEAR_DUPLICATE_COSINE - 0.001)


def test_a_group_keeps_its_newest_note_at_the_best_place_any_member_had():
    texts = {1: "likes tea", 2: "Buys tea in Porto", 3: "Likes the tea."}
    keys = {place: text_key(text) for place, text in texts.items()}

    kept = collapse([(1, 0.9), (2, 0.8), (3, 0.7)], keys, newer=lambda a, b: a > b)

    assert kept == [(3, 0.9), (2, 0.8)]


def test_mmr_drops_a_near_copy_in_favour_of_a_second_fact():
    """Given a fact, a longer wording of it (not near-identical: it adds words), and a second fact ranked
    below both, MMR answers the fact and the second one; without diversity, the two wordings."""
    texts = {
        "a": "Prefers metric units for distances",
        "a2": "Prefers metric units for distances and weights",
        "b": "Writes dates in ISO format",
    }
    ranked = [("a", 1.0), ("a2", 0.95), ("b", 0.6)]
    features = {key: text_key(text) for key, text in texts.items()}

    assert [item for item, _ in diversified(ranked, features, k=2, weight=0.7)] == ["a", "b"]
    assert [item for item, _ in diversified(ranked, features, k=2, weight=1.0)] == ["a", "a2"]


def test_scores_never_rise_down_the_list_and_the_first_keeps_its_own():
    features = {n: text_key(text) for n, text in enumerate(["tea green", "tea black", "coffee", "tea green cup"])}
    picked = diversified([(0, 4.0), (1, 3.5), (2, 1.0), (3, 0.9)], features, k=4, weight=0.5)

    scores = [score for _, score in picked]
    assert picked[0] == (0, 4.0)
    assert scores == sorted(scores, reverse=True) and min(scores) >= 0


def test_without_similar_notes_the_order_and_scores_are_unchanged():
    features = {n: text_key(text) for n, text in enumerate(["tea", "coffee", "juice"])}
    ranked = [(0, 3.0), (1, 2.0), (2, 1.0)]

    assert diversified(ranked, features, k=3, weight=0.6) == ranked


def test_term_similarity_is_the_cosine_of_the_term_sets():
    assert term_similarity(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(0.5)
    assert term_similarity(frozenset(), frozenset({"a"})) == 0.0


def test_the_answer_slots_collapse_then_diversify_to_k():
    texts = {1: "Likes green tea", 2: "likes GREEN tea", 3: "Likes green tea a lot", 4: "Lives in Porto"}

    slots = answer_slots([(1, 1.0), (2, 0.99), (3, 0.98), (4, 0.7)], texts, k=2, diversity_weight=0.7)

    assert [place for place, _ in slots] == [2, 4]  # 2 stands for 1; 3 is too like it; Porto is a second fact
