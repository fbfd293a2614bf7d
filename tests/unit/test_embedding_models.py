"""The embedding port's two real providers, against a loopback OpenAI-compatible server and botocore's Stubber."""

from __future__ import annotations

import contextvars
import io
import json
import threading
import time

import boto3
import pytest
from botocore.config import Config
from botocore.response import StreamingBody
from botocore.stub import Stubber

from agent_memory.basics.errors import EmbeddingUnavailable
from agent_memory.basics.settings import Settings
from agent_memory.providers import embedding
from agent_memory.providers.embedding import (
    EMBEDDING_DIMENSION,
    BedrockEmbeddingModel,
    OpenAIEmbeddingModel,
    embedding_model_from_settings,
)
from tests.support.openai_loopback import OpenAICompatible

A = [0.5] * EMBEDDING_DIMENSION
B = [-0.25] * EMBEDDING_DIMENSION
_CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("caller", default=None)


def _openai(base_url, timeout_s=2.0):
    model = embedding_model_from_settings(
        Settings(embedding_model="openai:embed-test", openai_base_url=base_url, openai_api_key="sk-local"),
        timeout_s=timeout_s,
    )
    assert isinstance(model, OpenAIEmbeddingModel)
    return model


def test_openai_compatible_embeds_many_texts_in_one_call_in_order(openai_server):
    OpenAICompatible.reply = {"data": [{"index": 1, "embedding": B}, {"index": 0, "embedding": A}]}

    vectors = _openai(openai_server).embed(["first", "second"])

    assert vectors == [A, B]  # put back in the order asked, whatever order the server answered in
    [(path, auth, body)] = OpenAICompatible.seen
    assert (path, auth) == ("/v1/embeddings", "Bearer sk-local")
    assert body == {"model": "embed-test", "input": ["first", "second"], "dimensions": EMBEDDING_DIMENSION}


@pytest.mark.parametrize(
    ("status", "reply"),
    [
        (500, {"error": "boom"}),
        (429, {"error": "slow down"}),
        (200, {"unexpected": True}),
        (200, {"data": [{"index": 0, "embedding": A}]}),  # one vector for two texts
        (200, {"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": A}]}),  # wrong dimension
        (200, {"data": [{"index": 0, "embedding": ["x"] * 1024}, {"index": 1, "embedding": A}]}),
        (200, {"data": [{"index": 0, "embedding": [0.0] * 1024}, {"index": 1, "embedding": A}]}),  # no direction
    ],
)
def test_openai_compatible_failures_are_embedding_unavailable(openai_server, status, reply):
    OpenAICompatible.status, OpenAICompatible.reply = status, reply

    with pytest.raises(EmbeddingUnavailable):
        _openai(openai_server).embed(["first", "second"])


def test_openai_compatible_times_out(openai_server):
    OpenAICompatible.delay_s = 1.0
    started = time.monotonic()

    with pytest.raises(EmbeddingUnavailable):
        _openai(openai_server, timeout_s=0.2).embed(["slow"])
    assert time.monotonic() - started < 0.9


def test_nothing_to_embed_is_no_call(openai_server):
    assert _openai(openai_server).embed([]) == []
    assert OpenAICompatible.seen == []


def _bedrock():
    client = boto3.client("bedrock-runtime", region_name="eu-west-1", config=Config(retries={"max_attempts": 1}))
    return client, BedrockEmbeddingModel(client, "amazon.titan-embed-text-v2:0")


def _titan_answer(vector):
    payload = json.dumps({"embedding": vector, "inputTextTokenCount": 3}).encode()
    return {"body": StreamingBody(io.BytesIO(payload), len(payload)), "contentType": "application/json"}


def _titan_request(text):
    return {
        "modelId": "amazon.titan-embed-text-v2:0",
        "contentType": "application/json",
        "accept": "application/json",
        "body": json.dumps({"inputText": text, "dimensions": EMBEDDING_DIMENSION, "normalize": True}),
    }


def test_bedrock_titan_v2_one_invoke_per_text(monkeypatch):
    monkeypatch.setattr(embedding, "BEDROCK_CONCURRENCY", 1)  # the Stubber answers in order: one call at a time
    client, model = _bedrock()
    with Stubber(client) as stub:
        stub.add_response("invoke_model", _titan_answer(A), _titan_request("first"))
        stub.add_response("invoke_model", _titan_answer(B), _titan_request("second"))

        assert model.embed(["first", "second"]) == [A, B]
        stub.assert_no_pending_responses()


class _SlowTitan:
    """A Bedrock runtime client that answers each text's length as its vector, slowly, and counts overlaps."""

    def __init__(self):
        self.running = self.most = 0
        self.lock = threading.Lock()
        self.callers: list[str | None] = []

    def invoke_model(self, **request):
        self.callers.append(_CALLER.get())
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.05)
        with self.lock:
            self.running -= 1
        text = json.loads(request["body"])["inputText"]
        return _titan_answer([float(len(text))] * EMBEDDING_DIMENSION)


def test_bedrock_embeds_a_list_several_calls_at_a_time_in_order():
    client = _SlowTitan()
    texts = [f"text {'x' * n}" for n in range(20)]

    vectors = BedrockEmbeddingModel(client, "amazon.titan-embed-text-v2:0").embed(texts)

    assert [vector[0] for vector in vectors] == [float(len(text)) for text in texts]
    assert client.most == embedding.BEDROCK_CONCURRENCY


def test_bedrock_embeds_each_text_of_a_list_in_the_callers_context():
    """As one text's call does: the tests hold every AWS call a handler makes to its function's grants by the
    running function, a context variable (tests/support/iam); in a bare pool thread the calls went unchecked."""
    client = _SlowTitan()
    token = _CALLER.set("IndexerFunction")
    try:
        BedrockEmbeddingModel(client, "amazon.titan-embed-text-v2:0").embed(["one", "two", "three"])
    finally:
        _CALLER.reset(token)

    assert client.callers == ["IndexerFunction"] * 3


@pytest.mark.parametrize("code", ["ThrottlingException", "ModelTimeoutException", "AccessDeniedException"])
def test_bedrock_errors_are_embedding_unavailable(code):
    client, model = _bedrock()
    with Stubber(client) as stub:
        stub.add_client_error("invoke_model", service_error_code=code, http_status_code=400)
        with pytest.raises(EmbeddingUnavailable, match=code):
            model.embed(["text"])


def test_bedrock_vector_of_another_dimension_is_refused():
    client, model = _bedrock()
    with Stubber(client) as stub:
        stub.add_response("invoke_model", _titan_answer([0.1] * 256))
        with pytest.raises(EmbeddingUnavailable, match="256, not 1024"):
            model.embed(["text"])


def test_bedrock_provider_is_built_with_the_timeout():
    settings = Settings(embedding_model="bedrock:amazon.titan-embed-text-v2:0")
    model = embedding_model_from_settings(settings, timeout_s=1.5)

    assert isinstance(model, BedrockEmbeddingModel)
    config = model.client.meta.config
    assert (config.read_timeout, config.connect_timeout, config.retries["total_max_attempts"]) == (1.5, 1.5, 2)


def test_no_embedding_model_configured_is_none():
    assert embedding_model_from_settings(Settings(), timeout_s=1) is None


@pytest.mark.parametrize("spec", ["titan", "local:x", "openai:", "bedrock"])
def test_an_unknown_embedding_provider_is_a_settings_error(spec):
    with pytest.raises(ValueError, match="MEMORY_EMBEDDING_MODEL must be bedrock:<modelId> or openai:<model>"):
        Settings(embedding_model=spec)
