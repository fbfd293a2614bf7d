"""On a real node: BM25's statistics are the shard's, and recall's index path ranks with the scope's own
(``providers.index_queries``, ``recall.index_path``), which no other scope's notes enter."""

from __future__ import annotations

from datetime import date

import pytest

from agent_memory.domain.notes import Note, Origin
from agent_memory.recall.index_path import rank_index
from agent_memory.recall.ranking import Tuning
from agent_memory.search.bm25 import Collection
from tests.support.fake_embeddings import fake_vector

pytestmark = pytest.mark.slow
MINE, OTHER = "user#u-1", "user#u-2"
QUERY = "does Maya have a kitten?"
ERRANDS = ["went hiking", "bought bread", "fixed the bike", "called the bank", "painted the fence", "read a novel",
           "baked a cake", "planted tulips", "washed the car"]  # fmt: skip


def _notes(day, texts):
    return [Note(day, n, text, f"{day}T10:15:00.000Z", "remember", Origin("u", "t")) for n, text in enumerate(texts, 1)]


@pytest.fixture
def two_scopes(notes_index):
    """Mine: the name in nine notes of ten, the kitten in one. The other scope, on the same shard: 200 notes
    about kittens (another day, so that none of its places is one of mine). In the shard the name is rare and
    the kitten common; in my scope it is the other way round."""
    mine = [f"Maya {errand}" for errand in ERRANDS] + ["The kitten is called Miso"]
    other = [f"A kitten at the shelter, number {n}" for n in range(200)]
    notes = _notes("2026-12-03", mine)
    notes_index.put_many(MINE, notes, embeddings=[fake_vector(t) for t in mine])
    notes_index.put_many(OTHER, _notes("2026-11-01", other), embeddings=[fake_vector(t) for t in other])
    notes_index.refresh()
    return notes_index, notes


def test_the_node_ranks_with_the_shard_and_counts_the_scope_alone(two_scopes):
    index, _ = two_scopes

    found = index.keyword(MINE, QUERY, k=50)
    keyword, _ = index.hybrid(MINE, QUERY, fake_vector(QUERY), size=5, keyword_size=50)

    assert found.hits[0].text.startswith("Maya")  # the shard's idf: the name is rare there
    assert found.collection == keyword.collection == Collection(10, {"maya": 9, "kitten": 1})  # not the 200


@pytest.mark.parametrize("vector", [None, fake_vector(QUERY)], ids=["keyword", "hybrid"])
def test_recall_ranks_with_the_scopes_statistics_and_answers_only_its_notes(two_scopes, vector):
    index, notes = two_scopes

    ranking = rank_index(index, MINE, QUERY, vector=vector, today=date(2026, 12, 4), k=5, tuning=Tuning())

    assert ranking.slots[0][0] == ("2026-12-03", 10)  # the kitten note: the word rare in the scope
    assert {place for place, _ in ranking.slots} <= {(note.day, note.position) for note in notes}
    assert ranking.foreign == 0
