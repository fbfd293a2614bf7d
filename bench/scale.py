"""Figures that grow with the data: the nightly consolidation, "Load older" and recall's keyword fallback.

Each lives in its own module; ``bench.run`` hands ``measure_all`` a ``Toolkit`` (a fresh counted moto, the
note texts, its logger) and merges the results into docs/benchmarks.json. Each figure runs on a moto of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.consolidation import ConsolidationResult, consolidation_report, measure_consolidation
from bench.keyword_recall import RecallResult, measure_recall, recall_report
from bench.load_older import LoadOlderResult, load_older_report, measure_load_older
from bench.runner import Options, Toolkit

__all__ = ["Options", "ScaleResults", "Toolkit", "measure_all", "report"]


@dataclass(frozen=True)
class ScaleResults:
    consolidation: ConsolidationResult
    load_older: LoadOlderResult
    recall: dict[str, RecallResult]

    def as_json(self) -> dict[str, dict[str, Any]]:
        return {
            "consolidation_50_groups_2s_model"
            if self.consolidation.scopes == 50 and self.consolidation.model_s == 2.0
            else f"consolidation_{self.consolidation.scopes}_groups_{self.consolidation.model_s:g}s_model": (
                self.consolidation.as_json()
            ),
            "load_older_90_days": self.load_older.as_json(),
            **{name: result.as_json() for name, result in self.recall.items()},
        }


def measure_all(toolkit: Toolkit, options: Options) -> ScaleResults:
    return ScaleResults(
        consolidation=measure_consolidation(toolkit, options),
        load_older=measure_load_older(toolkit, options),
        recall=measure_recall(toolkit, options),
    )


def report(results: ScaleResults) -> str:
    return "\n".join(
        [
            *consolidation_report(results.consolidation),
            "",
            *load_older_report(results.load_older),
            "",
            *recall_report(results.recall),
        ]
    )
