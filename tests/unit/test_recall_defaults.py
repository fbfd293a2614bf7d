"""Recall's default ranking keeps what real conversations need: similar turns that all answer stay in
relevance order (no diversity by default), and the best hit's next turn in its conversation joins the
answer (one neighbour each side by default), and a turn that asks a question weighs less than one that
states. docs/recall-quality.md has the figures that chose them."""

from __future__ import annotations

from datetime import date

from agent_memory.recall.ranking import Tuning, rank_rows
from agent_memory.recall.selection import asking_weighted
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


def test_the_turn_that_states_comes_before_the_turn_that_asks():
    states = "Evan: the road trip was so relaxing, a cozy cabin by the mountains"
    asks = "Sam: your road trip to Jasper looks amazing! Was it relaxing?"
    others = ("Sam: I painted a sunset last week", "Evan: the kids loved the lake")

    answered = _answered("What did Evan find relaxing about his road trip to Jasper?", states, asks, *others, k=2)

    assert answered == [states, asks]  # without the question weight, the question (it names Jasper) came first


def test_a_note_asking_a_question_keeps_its_share_of_the_score():
    texts = {1: "Was it relaxing?", 2: "It was relaxing", 3: "Cabin by the lake"}

    assert asking_weighted([(1, 1.0), (2, 0.9), (3, 0.5)], texts, weight=0.8) == [(2, 0.9), (1, 0.8), (3, 0.5)]
    assert asking_weighted([(1, 1.0), (2, 0.9)], texts, weight=1.0) == [(1, 1.0), (2, 0.9)]
