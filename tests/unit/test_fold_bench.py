"""bench/fold_tokens.py measures the service's own fold: its figures follow from what the scripted model answers."""

from __future__ import annotations

from bench.fold_tokens import cost_per_user_month, measure


def test_the_bench_folds_each_way_and_edits_cost_a_fraction_of_the_rewrites_output():
    folds = {(f.chars, f.notes, f.mode): f for f in measure(scale=0.0)}

    assert len(folds) == 12
    edits, rewrite = folds[(10_000, 4, "edits")], folds[(10_000, 4, "rewrite")]
    assert edits.output_tokens <= rewrite.output_tokens / 5
    assert rewrite.output_tokens >= 10_000 // 4  # the whole document comes back
    assert cost_per_user_month(list(folds.values()), "edits") < cost_per_user_month(list(folds.values()), "rewrite")
