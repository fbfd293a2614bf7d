"""Recall's optional reranking stage (providers.rerank) through ToolsFunction on moto, on both paths.

``MEMORY_RERANK_MODEL`` is set as in AWS and the stage is built from the settings as in AWS; only the
model behind the port is the named fake (tests.support.fake_reranker), since no reranker runs here. The Bedrock
provider's own request and answers are checked in tests/unit/test_rerank.py; here it runs once on its client, with
botocore's Stubber answering, so that its call is held to the function's grants in template.yaml.
"""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import ANY, Stubber

from agent_memory import bootstrap
from agent_memory.providers.notes_index import IndexHit
from agent_memory.providers.rerank import BedrockReranker, RerankUnavailable
from agent_memory.recall.index_path import RESCORE_POOL
from tests.support.fake_embeddings import FakeEmbeddingModel
from tests.support.fake_index import FakeNotesIndex
from tests.support.fake_reranker import FakeReranker
from tests.support.scopes import private

TEXTS = ("likes green tea", "likes black tea in the morning", "tea with milk, never sugar", "grows tea in the garden")


@pytest.fixture
def reranker(monkeypatch):
    """The fake reranking model, the graph's ``rerank_model``, behind the real stage (its budget from the settings)."""
    fake = FakeReranker()
    monkeypatch.setenv("MEMORY_RERANK_MODEL", "bedrock:amazon.rerank-v1:0")
    monkeypatch.setenv("MEMORY_RERANK_TIMEOUT_S", "0.3")
    bootstrap.reset()
    bootstrap.provide(rerank_model=fake)
    return fake


def _remember_all(call):
    notes = []
    for text in TEXTS:
        answer = call("remember", {"context": private(), "arguments": {"text": text}})
        assert answer.status == 201
        notes.append(answer.body["note"])
    return notes


def _recall(call, query="tea", k=2):
    answer = call("recall", {"context": private(), "arguments": {"query": query, "k": k}})
    assert answer.status == 200
    return answer.body


def _metrics(captured: str) -> set[str]:
    """The metric names of the EMF records a handler printed."""
    names = set()
    for line in captured.splitlines():
        if line.startswith("{") and "_aws" in line:
            record = json.loads(line)
            names |= {m["Name"] for d in record["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
    return names


def test_the_table_path_answers_in_the_rerankers_order_with_its_scores(call, aws, reranker):
    notes = _remember_all(call)
    reranker.relevance = {"grows tea in the garden": 0.9, "tea with milk, never sugar": 0.4}

    answer = _recall(call, "tea", k=2)

    assert answer["mode"] == "keyword"
    assert [(n["id"], n["score"]) for n in answer["notes"]] == [(notes[3]["id"], 0.9), (notes[2]["id"], 0.4)]
    [(query, texts)] = reranker.calls
    assert query == "tea" and sorted(texts) == sorted(TEXTS)  # every candidate, not only the first k
    assert bootstrap.services().recall_service.reranker.timeout_s == 0.3  # the stage from the settings, around it


def test_the_hybrid_table_path_is_reranked_too(call, aws, reranker, monkeypatch):
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", "openai:fake-embeddings")
    bootstrap.reset()
    embedder = FakeEmbeddingModel()
    bootstrap.provide(embedding_model=embedder)
    notes = _remember_all(call)
    reranker.relevance = {"likes black tea in the morning": 0.7}

    answer = _recall(call, "tea", k=1)

    assert (answer["mode"], [n["id"] for n in answer["notes"]]) == ("hybrid", [notes[1]["id"]])


def test_the_index_path_gathers_the_candidates_and_answers_in_the_rerankers_order(call, aws, reranker, monkeypatch):
    index = FakeNotesIndex()
    bootstrap.provide(notes_index=index)
    notes = _remember_all(call)
    index.hits = [IndexHit("user#u-1", "2026-12-03", n["position"], 4.0 - i) for i, n in enumerate(notes)]
    reranker.relevance = {"tea with milk, never sugar": 0.8}

    answer = _recall(call, "tea", k=1)

    assert [n["id"] for n in answer["notes"]] == [notes[2]["id"]]
    assert index.searches == [("user#u-1", "tea", RESCORE_POOL)]  # BM25's pool, at least the reranker's window


@pytest.mark.parametrize(
    ("fault", "metric"),
    [
        ({"delay_s": 5.0}, "RerankTimedOut"),
        ({"failure": RerankUnavailable("the reranking model refused: ThrottlingException")}, "RerankFailed"),
        ({"failure": RuntimeError("boom")}, "RerankFailed"),
        ({"answer": [(0, 0.9), (0, 0.8)]}, "RerankFailed"),  # a place twice
        ({"answer": [(9, 0.9), (1, 0.8)]}, "RerankFailed"),  # a place out of range
        ({"answer": [(0, float("nan")), (1, 0.8)]}, "RerankFailed"),
        ({"answer": [(0, 0.9)]}, "RerankFailed"),  # fewer than k
        ({"answer": {"results": []}}, "RerankFailed"),
    ],
)
def test_a_failing_reranker_degrades_to_the_paths_own_order(call, aws, reranker, capsys, caplog, fault, metric):
    _remember_all(call)
    bootstrap.provide(rerank_model=None)
    plain = _recall(call, "green tea", k=2)  # without reranking
    bootstrap.provide(rerank_model=reranker)
    for name, value in fault.items():
        setattr(reranker, name, value)
    capsys.readouterr()
    caplog.clear()

    answer = _recall(call, "green tea", k=2)

    assert answer == plain  # the same notes, order and scores as without reranking
    assert reranker.calls  # it was asked
    assert metric in _metrics(capsys.readouterr().out)
    assert [r.message for r in caplog.records if r.message.startswith("reranking")] == [
        f"reranking {'timed out' if metric == 'RerankTimedOut' else 'failed'}; answering in recall's own order"
    ]


def test_the_bedrock_rerankers_call_is_one_the_tools_function_is_granted(call, aws, monkeypatch):
    """With the real Bedrock provider on its client (botocore's Stubber answering), the Rerank made in the handler
    is held to ToolsFunction's policies (tests/support/iam): bedrock:Rerank, and bedrock:InvokeModel on the model
    that MEMORY_RERANK_MODEL names."""
    monkeypatch.setenv("MEMORY_RERANK_MODEL", "bedrock:amazon.rerank-v1:0")
    monkeypatch.setenv("MEMORY_RERANK_TIMEOUT_S", "5")
    bootstrap.reset()
    client = boto3.client("bedrock-agent-runtime")  # the test session's: its calls are checked as the handler's
    bootstrap.provide(rerank_model=BedrockReranker(client, "amazon.rerank-v1:0"))
    _remember_all(call)
    ranked = [{"index": i, "relevanceScore": score} for i, score in enumerate((0.1, 0.2, 0.3, 0.9))]

    with Stubber(client) as stub:
        stub.add_response(
            "rerank", {"results": ranked}, {"queries": ANY, "sources": ANY, "rerankingConfiguration": ANY}
        )
        answer = _recall(call, "tea", k=2)
        stub.assert_no_pending_responses()

    assert [note["score"] for note in answer["notes"]] == [0.9, 0.3]  # the model's order: not degraded


def test_recall_does_not_wait_for_a_reranker_past_its_budget(call, aws, reranker):
    _remember_all(call)
    reranker.delay_s = 10.0  # far past the 0.3 s budget, whatever the machine's speed

    answer = _recall(call, "tea", k=2)

    assert len(answer["notes"]) == 2
    assert len(reranker.calls) == 1 and reranker.finished == 0  # answered while the model was still busy


def test_unset_means_no_reranker_and_no_call(call, aws, monkeypatch):
    monkeypatch.delenv("MEMORY_RERANK_MODEL", raising=False)
    bootstrap.reset()
    _remember_all(call)

    answer = _recall(call, "green tea", k=2)

    assert answer["notes"][0]["text"] == "likes green tea"
    assert bootstrap.services().rerank_model is None and bootstrap.services().recall_service.reranker is None


def test_a_failing_reranker_on_the_index_path_keeps_the_index_order(call, aws, reranker, monkeypatch):
    index = FakeNotesIndex()
    bootstrap.provide(notes_index=index)
    notes = _remember_all(call)
    index.hits = [IndexHit("user#u-1", "2026-12-03", n["position"], 4.0 - i) for i, n in enumerate(notes)]
    reranker.failure = RerankUnavailable("the reranking model refused: ServiceQuotaExceededException")

    answer = _recall(call, "tea", k=2)

    assert [(n["id"], n["score"]) for n in answer["notes"]] == [(notes[0]["id"], 4.0), (notes[1]["id"], 3.0)]
    assert reranker.calls
