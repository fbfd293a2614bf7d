"""Recall quality through the table's vector index against the table's path, on both recall dev sets.

    PYTHONPATH=layers/shared .venv/bin/python -m bench.vector_quality   # CPU heavy: MiniLM embeds every note

The sets: the project's synthetic dev set (``bench.recall_devset``, 12 scopes of about 280 notes) and the two
LoCoMo conversations (``bench.recall_locomo``, about 540 turns each; skipped without them), each note with its
int8 vector of all-MiniLM-L6-v2 as the table stores it, ranked by recall's own steps (``recall.ranking.rank_rows``,
the defaults) as the two paths hand them rows:

- ``table``: the scope's newest ``bound`` notes (the Query's rows);
- ``index``: the same rows, and the 50 notes nearest the query among the older ones (what ``SearchVectors``
  answers beyond them: the exact cosine of the same int8 components, as the local stack's search scores them),
  appended newest first, as ``recall.service`` joins them.

At the service's bound (2,000) every scope of both sets fits in its newest notes, so the two paths rank the same
rows: the index adds nothing and takes nothing. With the bound at 200 each scope stands for one that outgrew it
(the note a question needs is often older than the newest 200): the difference is what the index brings.
Evidence recall@k (k = 1, 5, 10, 20) over every question, as ``bench.recall_locomo`` scores it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

BOUNDS = (2000, 200)
NEAREST = 50  # recall's TopK: ``recall.ranking.FUSION_POOL``


def with_index(rows: Sequence[Any], query: Any, *, bound: int, tag: int) -> list[Any]:
    """The rows the index path ranks: the newest ``bound``, and the nearest older ones, newest first."""
    from agent_memory.recall.ranking import cosine_ranking

    newest, older = list(rows[:bound]), list(rows[bound:])
    nearest = cosine_ranking(query, older, tag=tag, size=NEAREST)
    return newest + [older[n] for n in sorted(n for n, _ in nearest)]  # rows are newest first already


def answered(question: str, vector: list[float], rows: Sequence[Any], *, today: date, tag: int, k: int) -> list[int]:
    """The write positions recall's ranking answers over ``rows`` (``NoteText.position``)."""
    from agent_memory.recall.ranking import Tuning, rank_rows
    from agent_memory.search.vectors import QueryVector

    order, _ = rank_rows(question, rows, vector=QueryVector(vector), tag=tag, today=today, k=k, tuning=Tuning())
    return [rows[n].position for n, _ in order]


def both_paths(
    asked: list[tuple[Any, str, list[float], Sequence[Any], date]], *, tag: int, k: int
) -> dict[str, dict[str, dict[int, float]]]:
    """Per bound and path, evidence recall@k over ``asked`` (question, text, vector, rows newest first, today)."""
    from agent_memory.search.vectors import QueryVector
    from bench.recall_locomo import K_VALUES, recall_at

    def score(pairs: list[tuple[Any, list[int]]]) -> dict[str, dict[int, float]]:
        """Evidence recall@k over every question (both sets' questions carry their ``evidence``)."""
        return {"all": {k: sum(recall_at(r, q.evidence, k) for q, r in pairs) / len(pairs) for k in K_VALUES}}

    out = {}
    for bound in BOUNDS:
        for path in ("table", "index"):
            pairs = []
            for question, text, vector, rows, today in asked:
                ranked = (
                    with_index(rows, QueryVector(vector), bound=bound, tag=tag) if path == "index" else rows[:bound]
                )
                pairs.append((question, answered(text, vector, ranked, today=today, tag=tag, k=k)))
            out[f"{path}, newest {bound:,}"] = score(pairs)
    return out


def measure(log: Callable[[str], None]) -> dict[str, dict[str, dict[str, dict[int, float]]]]:
    from agent_memory.search.vectors import model_tag
    from bench import recall_locomo
    from bench.recall_devset import generate
    from bench.recall_quality import MODEL, _embedder, _rankings

    results = {}
    devset = generate()
    _, embedder, _ = _embedder()
    items, _, _, _ = _rankings(devset, embedder, log)
    tag = model_tag(MODEL, 1024)
    asked = [(item["question"], item["question"].text, item["vector"], item["rows"], item["today"]) for item in items]
    log("vector quality: the dev set, both paths at both bounds")
    results["dev set"] = both_paths(asked, tag=tag, k=20)
    conversations = recall_locomo.load()
    if conversations is not None:
        recall_locomo.embed(conversations, log)
        tag = model_tag(recall_locomo.MODEL, 1024)
        asked = []
        for one in recall_locomo.scoped(conversations, tag=tag):
            for n, question in enumerate(one.conversation.questions):
                vector = one.conversation.query_vectors[n]
                asked.append((question, question.text, vector, one.rows, date.fromisoformat(recall_locomo.DAY)))
        log("vector quality: LoCoMo, both paths at both bounds")
        results["LoCoMo 49 + 50"] = both_paths(asked, tag=tag, k=recall_locomo.ASKED_K)
    return results


def report(results: dict[str, dict[str, dict[str, dict[int, float]]]]) -> list[str]:
    from bench.recall_locomo import K_VALUES

    lines = ["Evidence recall@k (all questions), the table's path against the table's vector index:", ""]
    for name, paths in results.items():
        lines += [f"{name}:", "| path | " + " | ".join(f"@{k}" for k in K_VALUES) + " |", "|---" * 5 + "|"]
        for path, recall in paths.items():
            lines.append(f"| {path} | " + " | ".join(f"{recall['all'][k]:.3f}" for k in K_VALUES) + " |")
        for bound in (f"{b:,}" for b in (2000, 200)):
            table, index = paths[f"table, newest {bound}"]["all"], paths[f"index, newest {bound}"]["all"]
            worse = [k for k in K_VALUES if index[k] < table[k] - 1e-9]
            verdict = "at least as good at every k" if not worse else f"WORSE at k = {worse}"
            lines.append(f"newest {bound}: the index path is {verdict}")
        lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    from bench.runner import log, main_alone

    return main_alone("vector_quality", __doc__ or "", {}, lambda _: report(measure(log)), argv)


if __name__ == "__main__":
    sys.exit(main())
