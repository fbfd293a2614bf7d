"""Recall's default ranking keeps what real conversations need: similar turns that all answer stay in
relevance order (no diversity by default), and the best hit's next turn in its conversation joins the
answer (one neighbour each side by default). docs/recall-quality.md has the figures that chose them."""

from __future__ import annotations

from datetime import date

from agent_memory.recall.ranking import Tuning, rank_rows
from agent_memory.storage.note_items import NoteText

DAY = "2026-12-04"


def _answered(query: str, *texts: str, k: int) -> list[str]:
    """Recall's default ranking of the texts (written in that order, by one conversation, on one day)."""
    rows = [NoteText("user#u-1", DAY, n, text, None, "t-1") for n, text in reversed(list(enumerate(texts, 1)))]
    order, _ = rank_rows(query, rows, vector=None, tag=None, today=date.fromisoformat(DAY), k=k, tuning=Tuning())
    return [rows[n].text for n, _ in order]


def test_similar_turns_that_all_answer_keep_their_relevance_order():
    prius = [
        "Evan: my old Prius broke down on the road trip to the Rockies",
        "Evan: the new Prius broke down too, on the road trip to Jasper",
        "Evan: a Prius again broke down on the road, what a trip",
    ]

    answered = _answered("Which Prius broke down on the road trip?", *prius, "Sam: I painted a sunset by the road", k=4)

    assert sorted(answered[:3]) == sorted(prius)  # diversity at 0.4 put the sunset second
    assert answered[3] == "Sam: I painted a sunset by the road"


def test_the_best_hits_next_turn_joins_the_answer():
    question, reply = (
        "Dave: what made you start working on cars?",
        "Calvin: ever since I was ten, machines fascinated me",
    )

    answered = _answered("Why did Calvin start working on cars?", question, reply, "Sam: thanks, Calvin", k=2)

    assert answered == [question, reply]  # without neighbours, the shorter note holding "Calvin" came second
