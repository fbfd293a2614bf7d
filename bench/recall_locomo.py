"""Recall on two real conversations: LoCoMo's 49 and 50, read as the held-out measurement reads the other eight.

    PYTHONPATH=layers/shared .venv/bin/python -m bench.recall_locomo   # ``make bench`` runs it too

The data (LoCoMo, Maharana et al. 2024: two long two-person conversations, 1,077 turns, 308 questions
with evidence) is read from ``../shared/datasets/locomo-dev`` beside the repository, or from the folder
``MEMORY_LOCOMO_DIR`` names; it is never copied into the repository. Without it the bench prints one line
saying so and measures nothing.

**How a conversation is read** (the held-out measurement's own reading, so that the figures compare):

- every turn of every ``session_N``, in session order, is one note written with ``remember`` into one
  personal scope per conversation, with the text ``[<session_N_date_time>] <speaker>: <text>`` (and
  `` (shares <blip_caption>)`` when the turn shares a picture). The notes are written in one run, so they
  all carry that run's day; one conversation (thread) writes them all here (which thread the held-out
  measurement writes with is not stated; one per session would only part the sessions' edges);
- every question of category 1 to 4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5 has no
  evidence) whose evidence names turns of the conversation is asked with ``recall(k=20)``;
- the score is evidence recall@k: the share of a question's (distinct, known) evidence turns among the
  first k notes answered, averaged over questions, overall and per category, for k = 1, 5, 10, 20.

**What answers**: recall's own ranking of the table's hybrid path (``recall.ranking.rank_rows``, the
defaults unless a row says otherwise) over the scope's rows as the Query reads them (newest first, int8
vectors of all-MiniLM-L6-v2, ``local:minilm``). In the same run, the three references over the same
notes: Okapi BM25 (k1 1.2, b 0.75, lower-cased ``\\w+`` tokens, no stop words, no stemming), cosine over
the MiniLM vectors (float, as the model answers), and their reciprocal rank fusion (constant 60, the
first 100 of each). Each text is embedded once per run, and every ranking measured reuses the vectors.

**The ablation** (``python -m bench.recall_knobs``): every ranking setting moved alone from the defaults,
on these two conversations and on the synthetic dev set side by side.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from bench.runner import ROOT

FOLDER_ENV = "MEMORY_LOCOMO_DIR"
DEFAULT_FOLDER = ROOT.parent / "shared" / "datasets" / "locomo-dev"
CONVERSATIONS = ("49", "50")
K_VALUES = (1, 5, 10, 20)
ASKED_K = 20  # recall(k=20), as the held-out measurement asks
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
RRF_DEPTH = 100  # the reference fusion's candidates from each half
MODEL = "local:minilm"
DAY = "2026-12-05"  # the run's day: every note is written on it (the session's date is in the text)
Recall = dict[str, dict[int, float]]  # category ("all" too) -> k -> recall


@dataclass(frozen=True)
class Question:
    text: str
    category: str
    evidence: tuple[int, ...]  # the evidence turns' write positions (0: the conversation's first turn)


@dataclass
class Conversation:
    name: str
    notes: list[str]  # in write order
    questions: list[Question]
    vectors: list[list[float]] = field(default_factory=list)  # the notes', float, as the model answers
    query_vectors: list[list[float]] = field(default_factory=list)  # the questions', in order


def folder() -> Path:
    """Where the two conversations are read from (``MEMORY_LOCOMO_DIR``, else beside the repository)."""
    named = os.environ.get(FOLDER_ENV)
    return Path(named) if named else DEFAULT_FOLDER


def _sessions(data: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The sessions in their order (``session_1``, ``session_2``, ... ``session_10``), with their date and time."""
    numbered = sorted(int(key.split("_")[1]) for key in data if re.fullmatch(r"session_\d+", key))
    return [(data[f"session_{n}_date_time"], data[f"session_{n}"]) for n in numbered]


def read_conversation(name: str, data: dict[str, Any]) -> Conversation:
    """One conversation as notes and questions (the module docstring's reading). ``data``: the published
    sample (its ``conversation`` and ``qa``), or the two already merged at the top level."""
    turns = data.get("conversation", data)
    notes: list[str] = []
    placed: dict[str, int] = {}
    for when, session in _sessions(turns):
        for turn in session:
            shares = f" (shares {turn['blip_caption']})" if turn.get("blip_caption") else ""
            placed[turn["dia_id"]] = len(notes)
            notes.append(f"[{when}] {turn['speaker']}: {turn['text']}{shares}")
    questions = []
    for qa in data["qa"]:
        known = tuple(dict.fromkeys(placed[e] for e in qa.get("evidence", ()) if e in placed))
        if qa.get("category") in CATEGORIES and known:
            questions.append(Question(qa["question"], CATEGORIES[qa["category"]], known))
    return Conversation(name, notes, questions)


def load(where: Path | None = None) -> list[Conversation] | None:
    """The two conversations, or None when either file is missing."""
    where = where or folder()
    paths = [where / f"{name}.json" for name in CONVERSATIONS]
    if not all(path.is_file() for path in paths):
        return None
    return [
        read_conversation(name, json.loads(path.read_text())) for name, path in zip(CONVERSATIONS, paths, strict=True)
    ]


def recall_at(ranked: Sequence[int], evidence: Sequence[int], k: int) -> float:
    """The share of the evidence in the first ``k``."""
    return len(set(ranked[:k]) & set(evidence)) / len(evidence)


def score(items: list[tuple[Question, list[int]]]) -> Recall:
    """Evidence recall@k over (question, positions answered) pairs, overall and per category."""
    sums: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, int] = defaultdict(int)
    for question, ranked in items:
        for category in ("all", question.category):
            counts[category] += 1
            for k in K_VALUES:
                sums[category][k] += recall_at(ranked, question.evidence, k)
    return {category: {k: sums[category][k] / counts[category] for k in K_VALUES} for category in sums}


def embed(conversations: list[Conversation], log: Callable[[str], None]) -> tuple[str, float]:
    """Every note and question embedded once (the model's name, the seconds it took)."""
    from bench.recall_quality import _cached, _embedder

    name, embedder, _ = _embedder()
    started = time.perf_counter()
    for conversation in conversations:
        log(f"recall locomo: embedding the {len(conversation.notes)} turns of conversation {conversation.name}")
        conversation.vectors = _cached(conversation.notes, embedder)
        conversation.query_vectors = _cached([q.text for q in conversation.questions], embedder)
    return name, time.perf_counter() - started


@dataclass
class Scoped:
    """One conversation as recall reads it: its rows newest first, and the question vectors."""

    conversation: Conversation
    rows: list[Any]  # storage.note_items.NoteText, newest first

    def answered(self, question: int, tuning: Any, *, tag: int) -> list[int]:
        """The write positions recall answers (``rank_rows``, k = 20) for the question, with ``tuning``."""
        from agent_memory.recall.ranking import rank_rows
        from agent_memory.search.vectors import QueryVector

        asked = self.conversation.questions[question]
        order, _ = rank_rows(
            asked.text, self.rows, vector=QueryVector(self.conversation.query_vectors[question]), tag=tag,
            today=date.fromisoformat(DAY), k=ASKED_K, tuning=tuning,
        )  # fmt: skip
        return [self.rows[n].position for n, _ in order]


def scoped(conversations: list[Conversation], *, tag: int) -> list[Scoped]:
    """Each conversation's rows as the table's Query reads them: newest first, one day, one thread, int8 vectors."""
    from agent_memory.search.vectors import encode
    from agent_memory.storage.note_items import NoteText

    out = []
    for conversation in conversations:
        key, thread = f"user#locomo-{conversation.name}", f"locomo-{conversation.name}"
        rows = [
            NoteText(key, DAY, n, text, encode(conversation.vectors[n], tag=tag), thread)
            for n, text in reversed(list(enumerate(conversation.notes)))
        ]
        out.append(Scoped(conversation, rows))
    return out


def recall_with(sets: list[Scoped], tuning: Any, *, tag: int) -> Recall:
    """Recall's ranking with ``tuning`` over every question of both conversations."""
    return score([
        (question, one.answered(n, tuning, tag=tag))
        for one in sets for n, question in enumerate(one.conversation.questions)
    ])  # fmt: skip


def references(conversations: list[Conversation]) -> dict[str, Recall]:
    """The three references (module docstring), over the same notes and vectors."""
    import numpy as np

    from agent_memory.search.bm25 import rank_terms
    from agent_memory.search.fusion import reciprocal_rank_fusion

    def tokens(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    answered: dict[str, list[tuple[Question, list[int]]]] = {"bm25": [], "cosine": [], "rrf": []}
    for conversation in conversations:
        bags = [tokens(text) for text in conversation.notes]
        notes = np.asarray(conversation.vectors, dtype=np.float32)
        notes /= np.linalg.norm(notes, axis=1, keepdims=True)
        for question, vector in zip(conversation.questions, conversation.query_vectors, strict=True):
            keyword = [r.index for r in rank_terms(list(dict.fromkeys(tokens(question.text))), bags)]
            asked = np.asarray(vector, dtype=np.float32)
            cosine = [int(n) for n in np.argsort(-(notes @ (asked / np.linalg.norm(asked))), kind="stable")]
            fused = [n for n, _ in reciprocal_rank_fusion(keyword[:RRF_DEPTH], cosine[:RRF_DEPTH])]
            for name, ranked in (("bm25", keyword), ("cosine", cosine), ("rrf", fused)):
                answered[name].append((question, ranked))
    return {name: score(items) for name, items in answered.items()}


@dataclass
class LocomoResult:
    embedder: str
    notes: int
    questions: int
    embed_s: float
    recall: dict[str, Recall]  # "recall" (the defaults) and the references
    sets: list[Scoped] = field(default_factory=list)  # for the ablation (bench.recall_knobs)


def measure(log: Callable[[str], None]) -> LocomoResult | None:
    """Recall at its defaults and the three references on the two conversations; None without the data."""
    from agent_memory.recall.ranking import Tuning
    from agent_memory.search.vectors import model_tag

    conversations = load()
    if conversations is None:
        return None
    name, embed_s = embed(conversations, log)
    tag = model_tag(MODEL, 1024)
    sets = scoped(conversations, tag=tag)
    log("recall locomo: recall at its defaults, and the references")
    recall = {"recall": recall_with(sets, Tuning(), tag=tag), **references(conversations)}
    notes = sum(len(c.notes) for c in conversations)
    questions = sum(len(c.questions) for c in conversations)
    return LocomoResult(name, notes, questions, embed_s, recall, sets)


LABELS = {
    "recall": "**recall, hybrid without OpenSearch (the defaults)**",
    "bm25": "reference: Okapi BM25",
    "cosine": "reference: cosine (MiniLM)",
    "rrf": "reference: RRF of the two",
}


def recall_table(recall: dict[str, Recall]) -> list[str]:
    """recall@1/5/10/20 over all questions, then @10 per category, one row per ranking."""
    categories = list(CATEGORIES.values())
    lines = [
        "| ranking | @1 | @5 | @10 | @20 | " + " | ".join(f"{c} @10" for c in categories) + " |",
        "|---|---|---|---|---|" + "---|" * len(categories),
    ]
    for mode, row in recall.items():
        cells = [f"{row['all'][k]:.3f}" for k in K_VALUES] + [f"{row[c][10]:.3f}" for c in categories]
        lines.append(f"| {LABELS.get(mode, mode)} | " + " | ".join(cells) + " |")
    return lines


def report(result: LocomoResult | None) -> list[str]:
    if result is None:
        return [f"LoCoMo dev conversations not found in {folder()} (set {FOLDER_ENV}): this section is skipped."]
    counts: dict[str, int] = defaultdict(int)
    for one in result.sets:
        for question in one.conversation.questions:
            counts[question.category] += 1
    per = ", ".join(f"{counts[c]} {c}" for c in CATEGORIES.values())
    lines = [
        f"LoCoMo conversations {' and '.join(CONVERSATIONS)} (the two development conversations; the other eight"
        f" are held out): {result.notes:,} turns as notes, {result.questions} questions ({per}), asked with"
        f" k = {ASKED_K}; vectors: {result.embedder}, embedded once in {result.embed_s:.0f} s.",
        "",
        *recall_table(result.recall),
        "",
        "Per category, recall@1 / @5 / @10 / @20:",
        "",
        "| ranking | " + " | ".join(CATEGORIES.values()) + " |",
        "|---|" + "---|" * len(CATEGORIES),
    ]
    for mode, row in result.recall.items():
        cells = [" / ".join(f"{row[c][k]:.2f}" for k in K_VALUES) for c in CATEGORIES.values()]
        lines.append(f"| {LABELS.get(mode, mode)} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    from bench.runner import configure

    configure()
    del argv
    print("\n".join(report(measure(log))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
