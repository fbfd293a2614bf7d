"""Context around a hit (``recall.neighbours``, ``MEMORY_RECALL_NEIGHBOURS``) on both paths: the table's (moto,
with the named fake embedding model: hybrid) and the index's (the fake index of tests/, its hits chosen by
each test; the neighbours are read from the table)."""

from __future__ import annotations

import pytest

from agent_memory import bootstrap
from agent_memory.providers.notes_index import IndexHit
from agent_memory.storage.note_items import NoteText
from agent_memory.storage.note_store import NoteStore
from tests.support.fake_index import FakeNotesIndex
from tests.support.scopes import private

NOW = "2026-12-04T18:00:00Z"
QUERY = "How is Pepper the greyhound?"


def _remember(call, text, thread="t-1", user="u-1"):
    answer = call("remember", {"context": private(user=user, thread=thread), "arguments": {"text": text}})
    assert answer.status == 201
    return answer.body["note"]


def _recall(call, monkeypatch, neighbours, k=2):
    monkeypatch.setenv("MEMORY_RECALL_NEIGHBOURS", str(neighbours))
    bootstrap.reset()
    answer = call("recall", {"context": private(), "arguments": {"query": QUERY, "k": k}})
    assert answer.status == 200
    return [note["id"] for note in answer.body["notes"]]


@pytest.fixture
def conversation(call, monkeypatch):
    """Thread t-1 tells of the greyhound, then (after another conversation's note) of its hip; another
    thread names a greyhound too, and another person's t-1 writes at the same places in their own scope."""
    monkeypatch.setenv("MEMORY_NOW", NOW)
    bootstrap.reset()
    notes = {
        "hit": _remember(call, "Adopted a greyhound called Pepper from the shelter"),
        "between": _remember(call, "Drinks espresso after lunch", thread="t-2"),
        "after": _remember(call, "Booked a check of her sore hip for Friday"),
        "other": _remember(call, "Noor walks her greyhound along the canal", thread="t-3"),
    }
    _remember(call, "Sold the flat in Porto last spring", user="u-2")  # same day and thread id, another scope
    notes["foreign"] = _remember(call, "Pepper the greyhound is the neighbour's dog", user="u-2")
    return notes


def test_the_table_path_answers_the_hits_next_note_in_its_conversation_only_with_the_setting(
    call, monkeypatch, embedder, conversation
):
    without = _recall(call, monkeypatch, 0)
    near = _recall(call, monkeypatch, 1)

    assert without[0] == conversation["hit"]["id"] and conversation["after"]["id"] not in without
    assert near == [conversation["hit"]["id"], conversation["after"]["id"]]


def _hit(note, score=1.0, scope_key="user#u-1"):
    return IndexHit(scope_key, note["day"], note["position"], score, note["text"])


@pytest.fixture
def index(conversation, embedder):
    """The index's first hit is the greyhound note; the node's kNN half finds it too (hybrid)."""
    fake = FakeNotesIndex()
    fake.hits = [_hit(conversation["hit"], 3.0), _hit(conversation["other"], 1.5)]
    fake.semantic_hits = [_hit(conversation["hit"], 0.9)]
    fake.expanded_hits = fake.hits  # the feedback's second pass finds the same two
    bootstrap.provide(notes_index=fake)
    return fake


def _recall_indexed(call, monkeypatch, index, neighbours, k=3):
    monkeypatch.setenv("MEMORY_RECALL_NEIGHBOURS", str(neighbours))
    bootstrap.reset()
    bootstrap.provide(notes_index=index)
    answer = call("recall", {"context": private(), "arguments": {"query": QUERY, "k": k}})
    assert answer.status == 200
    return answer.body


def _ids(answer):
    return [note["id"] for note in answer["notes"]]


class NeighbourNotes(NoteStore):
    """A fake of recall's note store (``Services.recall_notes``) that keeps each read of a hit's neighbours
    (``reads``), adds ``leaked`` rows to what it answers, or fails with ``failure``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reads, self.leaked, self.failure = [], [], None

    def around(self, scope, day, position, *, span):
        self.reads.append((scope.key, day, position))
        if self.failure is not None:
            raise self.failure
        return [*super().around(scope, day, position, span=span), *self.leaked]


def _neighbours(aws):
    """Recall's notes are a ``NeighbourNotes`` from now on (the graph's part, kept across ``bootstrap.reset``)."""
    notes = NeighbourNotes(aws, "MemoryTable")
    bootstrap.provide(recall_notes=notes)
    return notes


def test_the_index_path_reads_the_hits_neighbours_from_the_table(call, aws, monkeypatch, conversation, index):
    reads = _neighbours(aws).reads
    hit, after, other = conversation["hit"], conversation["after"], conversation["other"]

    assert _ids(_recall_indexed(call, monkeypatch, index, 0)) == [hit["id"], other["id"]]
    assert reads == []
    # the next note in the day is another thread's ("between"): the hit's own next note is the neighbour
    assert _ids(_recall_indexed(call, monkeypatch, index, 1)) == [hit["id"], after["id"], other["id"]]
    assert reads == [("user#u-1", hit["day"], hit["position"])]  # one Query, around the best hit


def test_the_index_path_drops_a_row_of_another_scope_the_read_would_give(
    call, aws, monkeypatch, capsys, conversation, index
):
    foreign, hit = conversation["foreign"], conversation["hit"]
    leaked = NoteText("user#u-2", hit["day"], hit["position"] + 1, foreign["text"], None, "t-1")
    _neighbours(aws).leaked.append(leaked)

    answered = _ids(_recall_indexed(call, monkeypatch, index, 3, k=20))

    assert conversation["after"]["id"] in answered
    assert foreign["id"] not in answered and conversation["between"]["id"] not in answered
    assert '"RecallForeignHitsDropped":[1.0]' in capsys.readouterr().out  # counted, as every foreign row is


def test_a_failed_neighbour_read_drops_the_neighbours_never_the_answer(
    call, aws, monkeypatch, capsys, conversation, index
):
    _neighbours(aws).failure = TimeoutError("the table did not answer")

    answer = _recall_indexed(call, monkeypatch, index, 1)

    assert answer["mode"] == "hybrid"
    assert _ids(answer) == [conversation["hit"]["id"], conversation["other"]["id"]]
    assert '"RecallNeighboursFailed":[1.0]' in capsys.readouterr().out
