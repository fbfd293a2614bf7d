"""Reciprocal rank fusion: ranks alone decide, an item in both rankings beats one in either."""

from __future__ import annotations

import pytest

from agent_memory.search.fusion import RANK_CONSTANT, reciprocal_rank_fusion


def test_an_item_ranked_by_both_halves_comes_first():
    fused = reciprocal_rank_fusion(["a", "b", "c"], ["d", "c"])

    assert [item for item, _ in fused] == ["c", "a", "d", "b"]
    assert dict(fused)["c"] == pytest.approx(1 / (RANK_CONSTANT + 3) + 1 / (RANK_CONSTANT + 2))


def test_equal_scores_keep_the_order_of_first_appearance():
    assert [item for item, _ in reciprocal_rank_fusion(["a", "b"], ["c", "d"])] == ["a", "c", "b", "d"]


def test_nothing_to_fuse_is_nothing():
    assert reciprocal_rank_fusion([], []) == []
    assert reciprocal_rank_fusion() == []
