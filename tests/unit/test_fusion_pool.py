"""``recall.ranking.FUSION_POOL``: on the table's path each half gives the fusion more candidates than the
answer's window, so a note both halves rank just past it still gets its fused worth."""

from __future__ import annotations

from datetime import date

from agent_memory.recall.ranking import FUSION_POOL, Tuning, rank_rows
from agent_memory.recall.selection import CANDIDATE_WINDOW
from agent_memory.search.vectors import QueryVector, encode, model_tag
from agent_memory.storage.note_items import NoteText

TAG = model_tag("openai:fake-embeddings", 3)
QUERY_VECTOR = [1.0, 0.0, 0.0]


def _row(position, text, vector):
    return NoteText("user#u-1", "2026-12-04", position, text, encode(vector, tag=TAG), "t-1")


def test_a_note_both_halves_rank_just_past_the_window_is_fused_first():
    ahead = CANDIDATE_WINDOW + 5  # notes each half puts before it
    keyword_only = [_row(n, f"tea {n}", [0.0, 1.0, 0.0]) for n in range(ahead)]  # BM25's best, unlike the query
    cosine_only = [_row(100 + n, f"coffee {n}", QUERY_VECTOR) for n in range(ahead)]  # the query's own direction
    both = _row(200, "tea 200", [1.0, 0.1, 0.0])  # as good a BM25 match (ranked after its ties), nearly as near
    rows = [*keyword_only, *cosine_only, both]

    order, mode = rank_rows(
        "tea", rows, vector=QueryVector(QUERY_VECTOR), tag=TAG, today=date(2026, 12, 4), k=5,
        tuning=Tuning(diversity_weight=1.0, expansion_terms=0, date_boost=0.0, neighbours=0),
    )  # fmt: skip

    assert ahead < FUSION_POOL
    assert mode == "hybrid"
    assert rows[order[0][0]] == both  # 0.8 * 1 + 0.2 * 0.99, against 0.8 for BM25's others and 0.2 for cosine's
