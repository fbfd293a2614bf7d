"""The index path scores the node's BM25 candidates again with the scope's own statistics (a fake index
answering the node's order and the scope's counts), and another scope's hits never weigh on it."""

from __future__ import annotations

import pytest

from agent_memory import bootstrap
from agent_memory.providers.notes_index import IndexHit
from agent_memory.search.bm25 import Collection
from tests.support.fake_index import FakeNotesIndex
from tests.support.scopes import private

QUERY = "does Maya have a kitten?"
# In the scope, the name is in nearly every note and the kitten in one: the node's shard counted otherwise.
SCOPE_COUNTS = Collection(documents=300, holding={"maya": 290, "kitten": 1})


@pytest.fixture
def index():
    fake = FakeNotesIndex()
    bootstrap.provide(notes_index=fake)
    return fake


def _remember(call, text, context=None):
    return call("remember", {"context": context or private(), "arguments": {"text": text}}).body["note"]


def _hit(note, score, scope="user#u-1"):
    return IndexHit(scope, note["day"], note["position"], score, note["text"])


def _recall(call, index, hits):
    """Recall over the node's ``hits`` (its first pass and its pass with the feedback terms alike)."""
    index.hits = index.expanded_hits = hits
    answer = call("recall", {"context": private(), "arguments": {"query": QUERY, "k": 5}})
    assert answer.status == 200
    return [(note["text"], note["score"]) for note in answer.body["notes"]]


def test_the_scopes_statistics_decide_the_order_not_the_nodes(call, index):
    hiking = _remember(call, "Maya went hiking with Maya's sister")
    kitten = _remember(call, "The kitten is called Miso")
    index.collection = SCOPE_COUNTS

    # the node's order: the name rare in its shard
    assert [text for text, _ in _recall(call, index, [_hit(hiking, 5.0), _hit(kitten, 1.0)])] == [
        kitten["text"],
        hiking["text"],
    ]


def test_without_the_scopes_statistics_the_nodes_order_stands_counted(call, index, capsys, monkeypatch):
    monkeypatch.setenv("MEMORY_RECALL_NEIGHBOURS", "0")  # the node's own scores, without the hit's neighbours
    bootstrap.reset()
    hiking = _remember(call, "Maya went hiking with Maya's sister")
    kitten = _remember(call, "The kitten is called Miso")
    hits = [_hit(hiking, 5.0), _hit(kitten, 1.0)]  # collection None: the node's count failed

    assert _recall(call, index, hits) == [(hiking["text"], 5.0), (kitten["text"], 1.0)]
    assert '"RecallRescoreSkipped":[1.0]' in capsys.readouterr().out


def test_another_scopes_hit_never_weighs_on_the_scores_nor_appears(call, index, capsys):
    hiking = _remember(call, "Maya went hiking with Maya's sister")
    kitten = _remember(call, "The kitten is called Miso")
    # The other scope's note sits at the same day and position as ours, with the query's words many times.
    foreign = _remember(call, "Maya's kitten, Maya's kitten, kitten kitten kitten kitten", private("u-2"))
    assert (foreign["day"], foreign["position"]) == (hiking["day"], hiking["position"])
    index.collection = SCOPE_COUNTS
    alone = _recall(call, index, [_hit(hiking, 5.0), _hit(kitten, 1.0)])
    capsys.readouterr()

    with_foreign = _recall(call, index, [_hit(foreign, 50.0, scope="user#u-2"), _hit(hiking, 5.0), _hit(kitten, 1.0)])

    assert with_foreign == alone  # same notes, same scores: its text reached no length nor count
    assert foreign["text"] not in {text for text, _ in with_foreign}
    assert '"RecallForeignHitsDropped":[2.0]' in capsys.readouterr().out  # in the first pass and the feedback's
