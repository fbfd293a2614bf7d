"""Recall (docs/api.md §3 ``recall``, ``recall.service``) on the in-memory note store (tests/support/fake_stores.py)
with the named fakes of the notes index and the embedding model: the table's keyword and hybrid paths, the index's
path and its fallback, the notes of another scope set aside, superseded notes after current ones, a strong hit's
neighbours, and a read that fails. The store's own reads are the contract tests' (tests/support/store_contracts.py);
these are the use case's, in milliseconds."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.basics.errors import StorageUnavailable
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.providers.notes_index import IndexHit
from agent_memory.recall.ranking import Tuning
from agent_memory.recall.service import RecallService
from agent_memory.search.vectors import encode, model_tag
from agent_memory.storage.note_items import KeyedNote, NoteText
from tests.support.fake_embeddings import FakeEmbeddingModel, fake_vector
from tests.support.fake_index import FakeNotesIndex
from tests.support.fake_stores import FakeNoteStore, FakeWorld
from tests.support.scopes import PERSONAL, TEAM, stored
from tests.support.seeds import world_link

DAY = "2026-12-03"  # MEMORY_NOW's day
TAG = model_tag("openai:fake-embeddings", 1024)


def _vector(text: str) -> bytes:
    return encode(fake_vector(text), tag=TAG)


@dataclass
class Recall:
    """One world and recall's note store on it (its notes with their stored vectors, as the table keeps them)."""

    world: FakeWorld = field(default_factory=FakeWorld)

    def __post_init__(self) -> None:
        self.notes = FakeNoteStore(self.world, vectors=_vector)

    def write(self, text: str, *, scope: Scope = PERSONAL, thread: str = "t-1", hour: int = 9) -> str:
        created = datetime(2026, 12, 3, hour, tzinfo=UTC)
        origin = Origin("u-1", thread)
        return self.notes.append(scope, created=created, text=stored(text), source="remember", origin=origin).id

    def recall(self, query: str, *, k: int = 5, notes: Any = None, **parts: Any) -> Any:
        parts.setdefault("tuning", Tuning(neighbours=0))
        return RecallService(notes or self.notes, **parts).recall(PERSONAL, query, k=k)


@pytest.fixture
def recall() -> Recall:
    return Recall()


def _texts(answer: Any) -> list[str]:
    return [scored.text for scored in answer.notes]


class LeakingNotes(FakeNoteStore):
    """A note store that answers another scope's rows and notes too, as a store with a broken key condition would:
    recall must set them aside itself."""

    def __init__(self, world: FakeWorld, other: Scope) -> None:
        super().__init__(world, vectors=_vector)
        self.other = other

    def newest_texts(self, scope: Scope, *, limit: int, vectors: bool = False, threads: bool = False) -> list[NoteText]:
        mine = super().newest_texts(scope, limit=limit, vectors=vectors, threads=threads)
        return super().newest_texts(self.other, limit=limit, vectors=vectors, threads=threads) + mine

    def get_many(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[KeyedNote]:
        return super().get_many(self.other, wanted) + super().get_many(scope, wanted)


# --- the table's paths ------------------------------------------------------------------------------------------


def test_without_vectors_the_table_answers_by_keywords_best_first(recall) -> None:
    recall.write("Prefers metric units")
    recall.write("Has a kitten called Miso")
    recall.write("Measures everything in metric units, always metric")

    answer = recall.recall("metric units")

    assert answer.mode == "keyword"
    assert _texts(answer) == ["Prefers metric units", "Measures everything in metric units, always metric"]
    assert answer.notes[0].score > answer.notes[1].score  # BM25: the same terms in a shorter note weigh more


def test_with_the_tables_vectors_a_synonym_is_found_and_the_answer_is_hybrid(recall) -> None:
    recall.write("Prefers metric units")
    recall.write("Has a kitten called Miso")

    answer = recall.recall("feline pets", vector_tag=TAG, embedder=FakeEmbeddingModel())

    assert answer.mode in ("hybrid", "semantic")
    assert _texts(answer)[0] == "Has a kitten called Miso"


def test_a_query_that_cannot_be_embedded_is_answered_by_keywords(recall) -> None:
    from agent_memory.basics.errors import EmbeddingUnavailable

    recall.write("Prefers metric units")
    embedder = FakeEmbeddingModel(failure=EmbeddingUnavailable("the embedding model timed out"))

    answer = recall.recall("metric", vector_tag=TAG, embedder=embedder)

    assert (answer.mode, _texts(answer)) == ("keyword", ["Prefers metric units"])


def test_the_read_is_bounded_to_the_newest_notes(recall) -> None:
    recall.write("an old note about the marathon", hour=1)
    for hour in range(2, 5):
        recall.write(f"filler number {hour}", hour=hour)

    assert _texts(recall.recall("marathon", keyword_max_notes=3)) == []
    assert _texts(recall.recall("marathon", keyword_max_notes=4)) == ["an old note about the marathon"]


def test_nothing_matches_and_an_empty_scope_answer_empty_lists(recall) -> None:
    assert recall.recall("anything").notes == []
    recall.write("Prefers metric units")
    assert recall.recall("zebra").notes == []


# --- scopes -----------------------------------------------------------------------------------------------------


def test_another_scopes_notes_never_come_back(recall) -> None:
    recall.write("The team's metric units policy", scope=TEAM)
    recall.write("Prefers metric units")

    assert _texts(recall.recall("metric units policy")) == ["Prefers metric units"]


def test_rows_and_notes_of_another_scope_from_a_leaking_store_are_set_aside(recall) -> None:
    recall.write("The team's metric units policy", scope=TEAM)
    recall.write("Prefers metric units")
    leaking = LeakingNotes(recall.world, TEAM)

    answer = recall.recall("metric units policy", notes=leaking)

    assert _texts(answer) == ["Prefers metric units"]
    assert all(scored.id.startswith(DAY) for scored in answer.notes)


# --- superseded notes and neighbours ---------------------------------------------------------------------------


def test_a_superseded_note_comes_after_the_current_ones(recall) -> None:
    old = recall.write("Drinks coffee with milk every morning", hour=8)
    new = recall.write("Switched to black coffee", hour=9)
    world_link(recall.world)(PERSONAL, old, new)

    answer = recall.recall("coffee milk morning")

    assert _texts(answer) == ["Switched to black coffee", "Drinks coffee with milk every morning"]
    assert [scored.superseded_by for scored in answer.notes] == [None, [new]]


GREYHOUND = "Adopted a greyhound called Pepper from the shelter"
HIP = "Booked a check of her sore hip for Friday"
CANAL = "Noor walks her greyhound along the canal"


def _greyhound_index(neighbours: int) -> dict[str, Any]:
    """The index's parts for the greyhound's question: its BM25 half finds the hit and another thread's note, its
    kNN half the hit (hybrid: a neighbour then needs no word of the query)."""
    hits = [IndexHit(PERSONAL.key, DAY, 1, 3.0, GREYHOUND), IndexHit(PERSONAL.key, DAY, 4, 1.5, CANAL)]
    index = FakeNotesIndex(hits=hits, semantic_hits=hits[:1], expanded_hits=hits)
    return {"index": index, "embedder": FakeEmbeddingModel(), "tuning": Tuning(neighbours=neighbours)}


def test_a_strong_hits_next_note_in_its_conversation_joins_it_from_the_index_path(recall) -> None:
    """Thread t-1 tells of the greyhound, then (after another conversation's note) of its hip: with the setting,
    the hip note joins the greyhound's hit, read around it from the table; another thread's note never does."""
    hit = recall.write(GREYHOUND, hour=8)
    recall.write("Drinks espresso after lunch", thread="t-2", hour=9)
    after = recall.write(HIP, hour=10)
    other = recall.write(CANAL, thread="t-3", hour=11)

    without = recall.recall("How is Pepper the greyhound?", k=3, **_greyhound_index(0))
    assert "notes.around" not in recall.world.faults.seen
    near = recall.recall("How is Pepper the greyhound?", k=3, **_greyhound_index(1))

    assert [scored.id for scored in without.notes] == [hit, other]
    assert [scored.id for scored in near.notes] == [hit, after, other]


def test_a_failed_read_of_the_neighbours_drops_them_not_the_answer(recall) -> None:
    hit = recall.write(GREYHOUND, hour=8)
    recall.write("Drinks espresso after lunch", thread="t-2", hour=9)
    recall.write(HIP, hour=10)
    other = recall.write(CANAL, thread="t-3", hour=11)
    recall.world.faults.fail("notes.around")

    answer = recall.recall("How is Pepper the greyhound?", k=3, **_greyhound_index(1))

    assert [scored.id for scored in answer.notes] == [hit, other]


# --- the notes index ---------------------------------------------------------------------------------------------


def test_the_index_answers_and_the_notes_are_read_whole_from_the_table(recall) -> None:
    recall.write("Prefers metric units")
    recall.write("Has a kitten called Miso")
    index = FakeNotesIndex(hits=[IndexHit(PERSONAL.key, DAY, 2, 2.0), IndexHit(PERSONAL.key, DAY, 1, 1.0)])

    answer = recall.recall("kitten", index=index)

    assert (answer.mode, _texts(answer)) == ("keyword", ["Has a kitten called Miso", "Prefers metric units"])
    assert index.searches and "notes.newest_texts" not in recall.world.faults.seen


def test_an_index_hit_deleted_since_or_of_another_scope_is_left_out(recall) -> None:
    recall.write("Prefers metric units")
    hits = [IndexHit(PERSONAL.key, DAY, 7, 3.0), IndexHit(TEAM.key, DAY, 1, 2.0), IndexHit(PERSONAL.key, DAY, 1, 1.0)]

    answer = recall.recall("metric", index=FakeNotesIndex(hits=hits))

    assert _texts(answer) == ["Prefers metric units"]


def test_a_failing_index_degrades_to_the_tables_keyword_path(recall) -> None:
    recall.write("Prefers metric units")

    answer = recall.recall("metric units", index=FakeNotesIndex(failure=TimeoutError("the index is slow")))

    assert (answer.mode, _texts(answer)) == ("keyword", ["Prefers metric units"])


# --- failures -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call", ["notes.newest_texts", "notes.get_many"])
def test_a_read_that_fails_is_unavailable(recall, call) -> None:
    recall.write("Prefers metric units")
    recall.world.faults.fail(call)

    with pytest.raises(StorageUnavailable):
        recall.recall("metric")
