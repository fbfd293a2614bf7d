"""The reranking port's Bedrock provider against botocore's Stubber, the stage's checks, and the settings.

The Stubber holds boto3's own model of ``bedrock-agent-runtime``: a request of another shape than
Rerank's fails the test, and so does an answer that Bedrock could not send.
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from agent_memory.basics.settings import Settings, SettingsError, get_settings, require_valid_settings
from agent_memory.providers.rerank import (
    BedrockReranker,
    RerankStage,
    RerankUnavailable,
    ranking,
    rerank_model_from_settings,
    rerank_stage,
)
from tests.support.fake_reranker import FakeReranker

ARN = "arn:aws:bedrock:eu-central-1::foundation-model/amazon.rerank-v1:0"


@pytest.fixture
def bedrock() -> Any:
    client = boto3.client("bedrock-agent-runtime", region_name="eu-central-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _request(query: str, texts: list[str]) -> dict[str, Any]:
    return {
        "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
        "sources": [
            {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}}} for t in texts
        ],
        "rerankingConfiguration": {
            "type": "BEDROCK_RERANKING_MODEL",
            "bedrockRerankingConfiguration": {"numberOfResults": len(texts), "modelConfiguration": {"modelArn": ARN}},
        },
    }


def test_bedrock_rerank_sends_inline_texts_and_reads_places_and_relevance(bedrock):
    client, stubber = bedrock
    texts = ["likes tea", "grows tea", "drives a car"]
    answer = {"results": [{"index": 1, "relevanceScore": 0.91}, {"index": 0, "relevanceScore": 0.4}]}
    stubber.add_response("rerank", answer, _request("who grows tea?", texts))

    assert BedrockReranker(client, "amazon.rerank-v1:0").rerank("who grows tea?", texts) == [(1, 0.91), (0, 0.4)]


@pytest.mark.parametrize("code", ["ThrottlingException", "AccessDeniedException", "ValidationException"])
def test_bedrock_refusals_are_rerank_unavailable(bedrock, code):
    client, stubber = bedrock
    stubber.add_client_error("rerank", service_error_code=code, http_status_code=429)

    with pytest.raises(RerankUnavailable, match=code):
        BedrockReranker(client, "amazon.rerank-v1:0").rerank("q", ["a", "b"])


def test_an_answer_out_of_range_makes_the_stage_keep_the_order(bedrock):
    client, stubber = bedrock
    answer = {"results": [{"index": 5, "relevanceScore": 0.9}, {"index": 0, "relevanceScore": 0.1}]}
    stubber.add_response("rerank", answer)
    stage = RerankStage(BedrockReranker(client, "amazon.rerank-v1:0"), timeout_s=2.0)

    assert stage.reorder("q", ["a", "b"], 2) is None


def test_ranking_sorts_by_relevance_and_keeps_the_models_order_on_ties():
    assert ranking([(2, 0.5), (0, 0.9), (1, 0.5)], 3, k=3) == [(0, 0.9), (2, 0.5), (1, 0.5)]
    assert ranking([(2, 0.5), (0, 0.9), (1, 0.5)], 3, k=1) == [(0, 0.9)]


@pytest.mark.parametrize(
    "answer",
    [None, "[]", [(0, 0.9), (0, 0.8)], [(-1, 0.9), (0, 0.8)], [(True, 0.9), (0, 0.8)], [(0, "high"), (1, 0.8)],
     [(0, float("inf")), (1, 0.8)], [(0, 0.9)], [(0, 0.9, 1), (1, 0.8)]],
)  # fmt: skip
def test_ranking_refuses_what_is_not_a_ranking_of_the_texts(answer):
    with pytest.raises(RerankUnavailable):
        ranking(answer, 3, k=2)


def test_one_candidate_or_none_is_no_call():
    fake = FakeReranker()
    stage = RerankStage(fake)

    assert stage.reorder("q", ["only"], 5) is None and stage.reorder("q", [], 5) is None
    assert fake.calls == []


def test_the_window_is_the_candidates_or_k():
    stage = RerankStage(FakeReranker(), candidates=20)

    assert (stage.window(8), stage.window(25)) == (20, 25)


def test_unset_builds_nothing_and_set_builds_the_bedrock_stage(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    assert rerank_model_from_settings(Settings()) is None
    assert rerank_stage(None, Settings()) is None

    settings = Settings(rerank_model="bedrock:amazon.rerank-v1:0", rerank_timeout_s=0.5, rerank_candidates=30)
    stage = rerank_stage(rerank_model_from_settings(settings), settings)

    assert stage is not None and (stage.candidates, stage.timeout_s) == (30, 0.5)
    assert isinstance(stage.reranker, BedrockReranker) and stage.reranker._model_arn == ARN


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("MEMORY_RERANK_MODEL", "amazon.rerank-v1:0"),
        ("MEMORY_RERANK_MODEL", "openai:rerank"),
        ("MEMORY_RERANK_MODEL", "bedrock:"),
        ("MEMORY_RERANK_TIMEOUT_S", "0"),
        ("MEMORY_RERANK_CANDIDATES", "500"),
    ],
)
def test_a_bad_rerank_setting_is_refused_in_one_line(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    get_settings.cache_clear()

    with pytest.raises(SettingsError) as refused:
        require_valid_settings()
    get_settings.cache_clear()

    message = str(refused.value)
    assert message.startswith(f"{variable}={value} is refused: ") and "\n" not in message


def test_a_blank_rerank_model_is_unset():
    assert Settings.model_validate({"rerank_model": "  "}).rerank_model is None
    assert Settings.model_validate({"rerank_model": " bedrock:cohere.rerank-v3-5:0 "}).rerank_model == (
        "bedrock:cohere.rerank-v3-5:0"
    )
