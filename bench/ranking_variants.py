"""Ranking variants: recall's ranking with some settings and constants moved from the defaults.

``bench.recall_knobs`` measures each variant's quality on both sets; ``bench.recall_latency`` times recall with
``EARLIER`` beside the present defaults. A variant changes ``recall.ranking.Tuning`` fields, and, for the
steps that are constants rather than settings, patches them for the ``with`` block of ``constants``: one note
per group of near-identical notes (``recall.selection``), the pool each half gives the fusion
(``recall.ranking.FUSION_POOL``), and the session window's share (``recall.neighbours.windowed``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

from agent_memory.recall.neighbours import windowed


@dataclass(frozen=True)
class Row:
    label: str
    changes: dict[str, Any]  # ``recall.ranking.Tuning`` fields moved from the defaults
    pool: int | None = None  # ``recall.ranking.FUSION_POOL`` for the row (None: as it is)
    collapse: bool = True  # False: near-identical notes each keep their slot
    window: float | None = None  # ``recall.neighbours.windowed``'s share for the row (None: as it is)


# The defaults before they were chosen on both sets; ``bench.recall_latency`` times recall with them too.
EARLIER = Row(
    "before (diversity 0.4, no neighbours, pool 20, questions weighed as any note, no session window)",
    {"diversity_weight": 0.4, "neighbours": 0, "question_weight": 1.0},
    pool=20,
    window=0.0,
)


@contextlib.contextmanager
def constants(row: Row) -> Iterator[None]:
    """The row's constants in place for the ``with`` block."""
    with contextlib.ExitStack() as stack:
        if row.pool is not None:
            stack.enter_context(mock.patch("agent_memory.recall.ranking.FUSION_POOL", row.pool))
        if not row.collapse:
            stack.enter_context(mock.patch("agent_memory.recall.selection.collapse", _kept))
        if row.window is not None:
            shared = functools.partial(windowed, share=row.window)
            stack.enter_context(mock.patch("agent_memory.recall.ranking.windowed", shared))
        yield


def _kept(ranked: Any, keys: Any, **_: Any) -> list[Any]:
    return list(ranked)
