"""Reciprocal rank fusion: ranks alone decide, an item in both rankings beats one in either."""

from __future__ import annotations

import pytest

from agent_memory.search.fusion import RANK_CONSTANT, query_coverage, reciprocal_rank_fusion, weighted_fusion


def test_an_item_ranked_by_both_halves_comes_first():
    fused = reciprocal_rank_fusion(["a", "b", "c"], ["d", "c"])

    assert [item for item, _ in fused] == ["c", "a", "d", "b"]
    assert dict(fused)["c"] == pytest.approx(1 / (RANK_CONSTANT + 3) + 1 / (RANK_CONSTANT + 2))


def test_equal_scores_keep_the_order_of_first_appearance():
    assert [item for item, _ in reciprocal_rank_fusion(["a", "b"], ["c", "d"])] == ["a", "c", "b", "d"]


def test_nothing_to_fuse_is_nothing():
    assert reciprocal_rank_fusion([], []) == []
    assert reciprocal_rank_fusion() == []


def test_weighted_fusion_normalises_each_half_and_weighs_them():
    fused = weighted_fusion([("a", 8.0), ("b", 4.0)], [("c", 0.9), ("b", 0.7), ("a", 0.5)], keyword_weight=0.6)

    assert fused == [("a", pytest.approx(0.6)), ("b", pytest.approx(0.6 * 0.5 + 0.4 * 0.5)), ("c", pytest.approx(0.4))]


def test_bm25s_clear_first_hit_stays_first_where_rrf_loses_it():
    keyword = [("exact", 12.0), ("second", 3.0)]
    semantic = [("other", 0.62), ("second", 0.61), ("near", 0.59), ("exact", 0.58)]

    assert weighted_fusion(keyword, semantic)[0][0] == "exact"
    assert reciprocal_rank_fusion([i for i, _ in keyword], [i for i, _ in semantic])[0][0] == "second"


def test_one_half_empty_or_equal_scores():
    assert [i for i, _ in weighted_fusion([], [("a", 0.3), ("b", 0.1)])] == ["a", "b"]
    assert weighted_fusion([("a", 2.0)], [], keyword_weight=0.6) == [("a", pytest.approx(0.6))]
    equal = weighted_fusion([], [("a", 0.5), ("b", 0.5)], keyword_weight=0.6)
    assert equal == [("a", pytest.approx(0.4)), ("b", pytest.approx(0.4))]
    assert weighted_fusion([], []) == []


def test_coverage_lets_a_note_only_cosine_finds_pass_notes_matching_one_word_of_the_query():
    """ "does Maya have any pets?": many notes hold "Maya" only; the kitten note holds no query word."""
    keyword = [(f"maya-{n}", 2.0) for n in range(12)]
    semantic = [("kitten", 0.7)] + [(f"maya-{n}", 0.2) for n in range(12)]
    coverage = {f"maya-{n}": 0.5 for n in range(12)}

    without = [item for item, _ in weighted_fusion(keyword, semantic, keyword_weight=0.6)]
    with_coverage = [item for item, _ in weighted_fusion(keyword, semantic, keyword_weight=0.6, coverage=coverage)]

    assert without.index("kitten") == 12
    assert with_coverage[0] == "kitten"
    assert query_coverage(["maya", "pet"], ["maya", "ask", "summari"]) == 0.5
    assert query_coverage([], ["anything"]) == 1.0
