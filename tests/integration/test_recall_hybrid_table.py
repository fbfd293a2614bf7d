"""docs/api.md §6 "Recall without OpenSearch": an embedding model and no notes index, through ToolsFunction on moto.

Notes are written with their vector (``vec``, search.vectors) and recall fuses BM25 with cosine over the
scope's newest notes. The embedding model is the named fake (tests.support.fake_embeddings: ``kitten`` and
``feline`` are near ``cat``), served through the real port.
"""

from __future__ import annotations

from agent_memory import bootstrap
from agent_memory.basics.errors import EmbeddingUnavailable
from agent_memory.search.vectors import decode, model_tag
from agent_memory.storage.keys import note_sk
from local import reindex
from tests.support.fake_embeddings import FakeEmbeddingModel
from tests.support.scopes import private

MODEL = "openai:fake-embeddings"


def _remember(call, text, context=None):
    answer = call("remember", {"context": context or private(), "arguments": {"text": text}})
    assert answer.status == 201
    return answer.body["note"]


def _recall(call, query, k=8, context=None):
    answer = call("recall", {"context": context or private(), "arguments": {"query": query, "k": k}})
    assert answer.status == 200
    return answer.body


def _item(aws, note, scope_key="user#u-1"):
    key = {"pk": {"S": scope_key}, "sk": {"S": note_sk(note["day"], note["position"])}}
    return aws.get_item(TableName="MemoryTable", Key=key)["Item"]


def test_a_paraphrase_is_found_by_the_hybrid_path_and_missed_by_keyword(call, aws, monkeypatch, embedder):
    cats = _remember(call, "Adopted two cats from the shelter last spring")
    for text in ("Drives a blue sedan to work", "Drinks espresso after lunch", "The quarterly deadline is Friday"):
        _remember(call, text)

    hybrid = _recall(call, "does she have a kitten?")

    assert hybrid["mode"] == "hybrid"
    assert hybrid["notes"][0]["id"] == cats["id"]
    monkeypatch.delenv("MEMORY_EMBEDDING_MODEL")
    bootstrap.reset()
    assert _recall(call, "does she have a kitten?") == {"notes": [], "mode": "keyword"}


def test_each_note_is_written_with_its_int8_vector_of_the_configured_model(call, aws, embedder):
    note = _remember(call, "owns a cat")

    stored = decode(_item(aws, note)["vec"]["B"], tag=model_tag(MODEL, 1024))

    assert stored is not None
    components, norm = stored
    assert len(components) <= 1024 and max(abs(c) for c in components) == 127 and norm > 0
    assert embedder.calls == [["owns a cat"]]


def test_a_note_without_a_vector_is_still_found_by_bm25(call, aws, embedder):
    note = _remember(call, "likes green tea")
    aws.update_item(
        TableName="MemoryTable", Key={k: _item(aws, note)[k] for k in ("pk", "sk")}, UpdateExpression="REMOVE vec"
    )
    _remember(call, "has a kitten")

    answer = _recall(call, "tea")

    assert answer["mode"] == "hybrid"
    assert answer["notes"][0]["id"] == note["id"]


def test_a_vector_of_another_model_is_ignored_not_compared(call, aws, monkeypatch, embedder):
    _remember(call, "has a kitten")
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", "openai:another-model")
    bootstrap.reset()
    bootstrap.provide(embedding_model=embedder)

    answer = _recall(call, "feline")

    assert answer == {"notes": [], "mode": "hybrid"}


def test_a_note_written_while_the_model_fails_is_stored_without_a_vector(call, aws, embedder):
    embedder.failure = EmbeddingUnavailable("the embedding model failed: ReadTimeout")
    note = _remember(call, "likes green tea")

    assert "vec" not in _item(aws, note)
    embedder.failure = None
    assert [n["id"] for n in _recall(call, "tea")["notes"]] == [note["id"]]


def test_a_query_that_cannot_be_embedded_is_answered_by_keyword(call, embedder):
    note = _remember(call, "likes green tea")
    embedder.failure = EmbeddingUnavailable("the embedding model failed: ReadTimeout")

    answer = _recall(call, "tea")

    assert answer["mode"] == "keyword"
    assert [n["id"] for n in answer["notes"]] == [note["id"]]


def test_the_exact_words_keep_the_first_place(call, embedder):
    """BM25's strong first hit stays first although cosine prefers another note."""
    exact = _remember(call, "The wifi password of the cabin is on the fridge")
    for text in ("Has a cat", "Owns a kitten", "Feeds the felines at six"):
        _remember(call, text)

    notes = _recall(call, "cabin wifi password cat", k=4)["notes"]

    assert notes[0]["id"] == exact["id"]
    assert [n["score"] for n in notes] == sorted((n["score"] for n in notes), reverse=True)


def test_another_scopes_notes_never_come_back(call, embedder):
    _remember(call, "their kitten", private("u-2"))
    mine = _remember(call, "my cat")

    assert [n["id"] for n in _recall(call, "feline")["notes"]] == [mine["id"]]
    assert [n["text"] for n in _recall(call, "feline", context=private("u-2"))["notes"]] == ["their kitten"]


def test_notes_written_before_the_model_get_their_vectors_from_the_fill(call, aws, monkeypatch, capsys):
    monkeypatch.delenv("MEMORY_EMBEDDING_MODEL", raising=False)
    bootstrap.reset()
    old = _remember(call, "Adopted two cats last spring")
    _remember(call, "Drives a blue sedan")
    fake = FakeEmbeddingModel()
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", MODEL)
    bootstrap.reset()
    bootstrap.provide(embedding_model=fake)
    assert "vec" not in _item(aws, old)

    assert reindex.main(["--scope", "user#u-1", "--check"], embedder=fake) == 1
    assert reindex.main(["--scope", "user#u-1"], embedder=fake) == 0
    assert reindex.main(["--scope", "user#u-1", "--check"], embedder=fake) == 0

    out = [line for line in capsys.readouterr().out.splitlines() if line.startswith("user#")]
    assert out == [
        "user#u-1\tnotes=2\twithout_vector=2",
        "user#u-1\tnotes=2\twithout_vector=2\twritten=2",
        "user#u-1\tnotes=2\twithout_vector=0",
    ]
    assert _recall(call, "kitten")["notes"][0]["id"] == old["id"]
