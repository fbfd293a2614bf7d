"""The recall-quality bench's ablation: recall's own ranking with each mechanism added in turn, and the sweeps.

Run by ``bench.recall_quality`` (``python -m bench.recall_quality``): on the dev set's questions, over
each scope's rows as the table's Query reads them (newest first, with their days and int8 vectors),
``recall.ranking.rank_rows`` answers 10 notes on the table's two paths (``keyword``: no vectors;
``hybrid``: with them, the fusion the index's path uses too), first as today's recall ranked them (the
first k of BM25 or of the fusion), then with one note per fact, time, feedback and neighbours added in
turn; then each new setting is swept with the others at their defaults. Reported as recall@1/5/10 over
all questions and per kind. Diversity (off by default: it cost real conversations, ``bench.recall_knobs``)
comes last; neighbours are also measured on the same set with each several-note fact told in one
conversation (``one_sitting``), with the reads the index's path would add for them.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from typing import Any

K_VALUES = (1, 5, 10)
PATHS = ("keyword", "hybrid")  # the table's path without and with vectors (the index fuses like "hybrid")
Recall = dict[str, dict[int, float]]  # kind ("all" too) -> k -> recall
# Today's recall for a question on a path (the reference the ablation starts from).
Before = Callable[[dict[str, Any], str], list[int]]


def _ablation_steps() -> list[tuple[str, Any]]:
    """Today's recall, then each mechanism added in turn (``recall.ranking.Tuning``), the last being the defaults."""
    from agent_memory.recall.ranking import Tuning

    return [
        ("before: today's recall (first k of BM25 / of the fusion)", None),
        ("+ one note per fact (near-duplicates)", Tuning(expansion_terms=0, date_boost=0.0, neighbours=0)),
        ("+ time in the question", Tuning(expansion_terms=0, neighbours=0)),
        ("+ relevance feedback", Tuning(neighbours=0)),
        ("+ neighbours, 1 each side: all, the defaults", Tuning()),
        ("+ diversity (MMR) at 0.4 (not a default)", Tuning(diversity_weight=0.4)),
    ]


def pipeline(item: dict[str, Any], tuning: Any, path: str, before: Before | None, tag: int) -> list[int]:
    """The notes (oldest-first places) that ``recall.ranking.rank_rows`` answers, k = 10, on one path;
    ``before`` (today's recall) when there is no tuning."""
    from agent_memory.recall.ranking import rank_rows
    from agent_memory.search.vectors import QueryVector

    if tuning is None:
        assert before is not None  # the reference row: today's recall
        return before(item, path)
    hybrid = path == "hybrid"
    rows = item["rows"]
    order, _ = rank_rows(
        item["question"].text, rows, vector=QueryVector(item["vector"]) if hybrid else None,
        tag=tag if hybrid else None, today=item["today"], k=10, tuning=tuning,
    )  # fmt: skip
    return [rows[n].position for n, _ in order]


def recall_at(ranked: list[int], evidence: list[int], k: int) -> float:
    """The share of the evidence in the first ``k``."""
    return len(set(ranked[:k]) & set(evidence)) / len(evidence)


def _score(items: list[dict[str, Any]], ranked_of: Callable[[dict[str, Any]], list[int]]) -> Recall:
    sums: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, int] = defaultdict(int)
    for item in items:
        question, ranked = item["question"], ranked_of(item)
        for kind in ("all", question.kind):
            counts[kind] += 1
            for k in K_VALUES:
                sums[kind][k] += recall_at(ranked, question.evidence, k)
    return {kind: {k: sums[kind][k] / counts[kind] for k in K_VALUES} for kind in sums}


def measure_ablation(
    items: list[dict[str, Any]], log: Callable[[str], None], *, before: Before, tag: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each mechanism added in turn, on both paths; then each new setting swept with the others at their defaults.

    ``items``: per question, its ``question``, its scope's ``rows`` (newest first), ``vector`` and ``today``."""
    from dataclasses import replace

    from agent_memory.recall.ranking import Tuning

    ablation: dict[str, dict[str, Recall]] = {}
    for path in PATHS:
        ablation[path] = {}
        for label, tuning in _ablation_steps():
            log(f"recall quality: {path} path, {label}")
            ablation[path][label] = _score(
                items, functools.partial(pipeline, tuning=tuning, path=path, before=before, tag=tag)
            )
    sweeps: dict[str, tuple[float, ...]] = {
        "diversity_weight": (0.3, 0.4, 0.5, 0.6, 0.7, 1.0),
        "date_boost": (0.0, 0.5, 1.0, 2.0),
        "expansion_terms": (0, 3, 5, 10),
        "neighbours": (0, 1, 2, 3),
    }
    tuned: dict[str, dict[str, dict[float, Recall]]] = {}
    for setting, values in sweeps.items():
        tuned[setting] = {path: {} for path in PATHS}
        for path in PATHS:
            for value in values:
                log(f"recall quality: {path} path, {setting} = {value}")
                tuning = replace(Tuning(), **{setting: type(getattr(Tuning(), setting))(value)})
                tuned[setting][path][value] = _score(
                    items, functools.partial(pipeline, tuning=tuning, path=path, before=before, tag=tag)
                )
    return ablation, tuned


def neighbours_report(one_sitting: dict[str, Any]) -> list[str]:
    """The neighbours sweep on the one-sitting dev set, and what the index's path would read for it."""
    if not one_sitting:
        return []
    lines = [
        "",
        "MEMORY_RECALL_NEIGHBOURS on the dev set with each several-note fact told in one conversation: recall@1 / @5"
        " / @10, all questions (and the kind it is for):",
        "",
        "| value | keyword | hybrid | keyword, multi | hybrid, multi |",
        "|---|---|---|---|---|",
    ]
    sweep = one_sitting["sweep"]
    for value in sweep["hybrid"]:
        cells = [_triple(sweep[path][value]["all"]) for path in PATHS]
        cells += [f"{sweep[path][value]['multi'][1]:.2f} / {sweep[path][value]['multi'][10]:.2f}" for path in PATHS]
        lines.append(f"| {value} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Reads the index's path adds per recall with neighbours: {one_sitting['queries']:.2f} Queries reading"
        f" {one_sitting['rows']:.1f} note rows in all (the table's path reads none: its rows carry their thread).",
    ]
    return lines


def _triple(recall: dict[int, float]) -> str:
    return f"{recall[1]:.3f} / {recall[5]:.3f} / {recall[10]:.3f}"


SETTINGS = {
    "diversity_weight": "MEMORY_RECALL_DIVERSITY_WEIGHT",
    "date_boost": "MEMORY_RECALL_DATE_BOOST",
    "expansion_terms": "MEMORY_RECALL_EXPANSION_TERMS",
    "neighbours": "MEMORY_RECALL_NEIGHBOURS",
}


def measure_neighbours(items: list[dict[str, Any]], log: Callable[[str], None], *, tag: int) -> dict[str, Any]:
    """``MEMORY_RECALL_NEIGHBOURS`` swept on both paths (the others at their defaults) over ``items`` (the
    one-sitting set), and the table rows the index's path would read for them per recall (its strong hits
    taken as the answer's first ``STRONG_HITS``: one Query each, the hit's day within ``SPAN``)."""
    from agent_memory.recall.neighbours import SPAN, STRONG_HITS
    from agent_memory.recall.ranking import Tuning

    swept: dict[str, dict[float, Recall]] = {path: {} for path in PATHS}
    for path in PATHS:
        for count in (0, 1, 2, 3):
            log(f"recall quality: one sitting, {path} path, neighbours = {count}")
            tuning = Tuning(neighbours=count)
            swept[path][count] = _score(
                items, functools.partial(pipeline, tuning=tuning, path=path, before=None, tag=tag)
            )
    queries = rows = 0
    for item in items:
        placed = {row.position: row for row in item["rows"]}
        for position in pipeline(item, Tuning(neighbours=1), "hybrid", None, tag)[:STRONG_HITS]:
            day = placed[position].day
            queries += 1
            rows += sum(
                1 for near in range(position - SPAN, position + SPAN + 1) if near in placed and placed[near].day == day
            )
    return {"sweep": swept, "queries": queries / len(items), "rows": rows / len(items)}


def kinds_table(
    title: str, columns: tuple[str, str], rows: list[tuple[str, str, Recall]], kinds: list[str]
) -> list[str]:
    """A table under ``title``: two label columns, recall@1 / @5 / @10 over all questions, then @1 / @10 per kind."""
    lines = ["", title, "", f"| {columns[0]} | {columns[1]} | all | " + " | ".join(kinds) + " |"]
    lines.append("|---|---|---|" + "---|" * len(kinds))
    for first, second, row in rows:
        cells = [f"{row[kind][1]:.2f} / {row[kind][10]:.2f}" for kind in kinds]
        lines.append(f"| {first} | {second} | {_triple(row['all'])} | " + " | ".join(cells) + " |")
    return lines


def ablation_report(
    ablation: dict[str, dict[str, Recall]], tuning: dict[str, dict[str, dict[float, Recall]]]
) -> list[str]:
    """The ablation table (each mechanism added in turn, per path and question kind) and the settings' sweeps."""
    if not ablation:
        return []
    kinds = sorted(k for k in ablation["keyword"][next(iter(ablation["keyword"]))] if k != "all")
    lines = kinds_table(
        "Ablation (the table's path; the index fuses as `hybrid` does): recall@1 / @5 / @10, all questions, then"
        " recall@1 / @10 per kind:",
        ("path", "step"),
        [(path, label, row) for path, steps in ablation.items() for label, row in steps.items()],
        kinds,
    )
    for setting, paths in tuning.items():
        lines += [
            "",
            f"{SETTINGS[setting]} sweep (the others at their defaults): recall@1 / @5 / @10, all questions"
            " (and the kind it is for):",
            "",
            "| value | keyword | hybrid | hybrid, multi | hybrid, dated |",
            "|---|---|---|---|---|",
        ]
        for value in paths["hybrid"]:
            cells = []
            for path in PATHS:
                cells.append(_triple(paths[path][value]["all"]))
            for kind in ("multi", "dated"):
                one = paths["hybrid"][value][kind]
                cells.append(f"{one[1]:.2f} / {one[10]:.2f}")
            lines.append(f"| {value} | " + " | ".join(cells) + " |")
    return lines
