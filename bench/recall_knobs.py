"""Every ranking setting moved alone from the defaults, on the synthetic dev set and on two real conversations.

    PYTHONPATH=layers/shared .venv/bin/python -m bench.recall_knobs   # ``make bench`` runs it too

Each row is recall's own ranking of the table's hybrid path (``recall.ranking.rank_rows``) with one
setting moved from the defaults, measured on both sets in the same run with the same vectors
(all-MiniLM-L6-v2, int8 as stored): the dev set (``bench.recall_devset``, 528 questions, k = 10 as its
bench asks) and LoCoMo's two development conversations (``bench.recall_locomo``, 308 questions, k = 20
as the held-out measurement asks). The first rows are the defaults and the defaults before they were
chosen on both sets. Rows that move a constant rather than a setting patch it for the row
(``bench.ranking_variants``).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace

from bench.ranking_variants import EARLIER, Row, constants
from bench.recall_locomo import CATEGORIES, MODEL, LocomoResult, recall_with
from bench.recall_locomo import measure as measure_locomo
from bench.recall_locomo import report as report_locomo


def rows() -> list[Row]:
    return [
        Row("**the defaults**", {}),
        EARLIER,
        Row("keyword weight 0.7", {"keyword_weight": 0.7}),
        Row("keyword weight 0.9", {"keyword_weight": 0.9}),
        Row("diversity 0.4", {"diversity_weight": 0.4}),
        Row("diversity 0.8", {"diversity_weight": 0.8}),
        Row("feedback terms 0", {"expansion_terms": 0}),
        Row("feedback terms 5", {"expansion_terms": 5}),
        Row("date boost 0", {"date_boost": 0.0}),
        Row("near-duplicates each kept", {}, collapse=False),
        Row("neighbours 0", {"neighbours": 0}),
        Row("neighbours 2", {"neighbours": 2}),
        Row("pool 20", {}, pool=20),
        Row("pool 100", {}, pool=100),
        Row("question weight 1 (off)", {"question_weight": 1.0}),
        Row("question weight 0.6", {"question_weight": 0.6}),
        Row("session window off", {}, window=0.0),
        Row("session window 0.3", {}, window=0.3),
    ]


@dataclass
class KnobResult:
    dev: dict[str, dict[str, dict[int, float]]]  # row label -> kind ("all" too) -> k -> recall
    locomo: dict[str, dict[str, dict[int, float]]]  # row label -> category ("all" too) -> k -> recall
    bm25: dict[str, dict[int, float]]  # LoCoMo's BM25 reference, per category


def measure(locomo: LocomoResult, log: Callable[[str], None]) -> KnobResult:
    from agent_memory.recall.ranking import Tuning
    from agent_memory.search.vectors import model_tag
    from bench.recall_ablation import _score, pipeline
    from bench.recall_devset import generate
    from bench.recall_quality import _embedder, _rankings

    tag = model_tag(MODEL, 1024)
    _, embedder, _ = _embedder()
    dev_items, _, _, _ = _rankings(generate(), embedder, log)
    result = KnobResult({}, {}, locomo.recall["bm25"])
    for row in rows():
        tuning = replace(Tuning(), **row.changes)
        log(f"recall knobs: {row.label}")
        with constants(row):
            result.dev[row.label] = _score(
                dev_items, functools.partial(pipeline, tuning=tuning, path="hybrid", before=None, tag=tag)
            )
            result.locomo[row.label] = recall_with(locomo.sets, tuning, tag=tag)
    return result


def report(result: KnobResult) -> list[str]:
    categories = list(CATEGORIES.values())
    lines = [
        "Each ranking setting moved alone from the defaults (the table's hybrid path): the dev set's recall@1 / @5"
        " / @10 and its several-note questions @10; LoCoMo's two conversations' recall@1 / @5 / @10 / @20,"
        " multi-hop @10, and the category furthest below (or least above) the BM25 reference @10.",
        "",
        "| setting | dev @1 / @5 / @10 | dev multi @10 | LoCoMo @1 / @5 / @10 / @20 | LoCoMo multi-hop @10 |"
        " LoCoMo worst category against BM25 @10 |",
        "|---|---|---|---|---|---|",
    ]
    for label, dev in result.dev.items():
        real = result.locomo[label]
        margin, worst = min((real[c][10] - result.bm25[c][10], c) for c in categories)
        lines.append(
            f"| {label} | {dev['all'][1]:.3f} / {dev['all'][5]:.3f} / {dev['all'][10]:.3f} | {dev['multi'][10]:.2f} | "
            + " / ".join(f"{real['all'][k]:.3f}" for k in (1, 5, 10, 20))
            + f" | {real['multi-hop'][10]:.3f} | {worst} {margin:+.3f} |"
        )
    return lines


def main() -> int:
    """The two conversations' figures, then the ablation (skipped, with one line, without them)."""

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    from bench.runner import configure

    configure()
    locomo = measure_locomo(log)
    print("\n".join(report_locomo(locomo)), flush=True)
    if locomo is not None:
        print("\n".join(["", *report(measure(locomo, log))]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
