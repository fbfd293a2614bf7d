"""The embedding port and its two real providers, chosen by ``MEMORY_EMBEDDING_MODEL`` (docs/api.md §2).

- ``bedrock:<modelId>``: Bedrock ``InvokeModel`` through boto3, with Titan Text Embeddings v2's request
  (``inputText``, ``dimensions``, ``normalize``). Titan takes one text per call, so a list is embedded
  ``BEDROCK_CONCURRENCY`` calls at a time (boto3 clients are thread-safe).
- ``openai:<model>``: any OpenAI-compatible ``/embeddings`` server (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``),
  many texts per call. The request asks for ``dimensions: 1024``: the model must support it (OpenAI's
  ``text-embedding-3-*`` do; ``text-embedding-ada-002`` and servers that refuse the field do not, and
  then every call fails and recall stays in keyword mode, counted as ``RecallEmbeddingFailed``).

Every vector has ``MEMORY_EMBEDDING_DIMENSIONS`` numbers (default ``EMBEDDING_DIMENSION``, 1,024, the notes
index's ``knn_vector`` dimension): both remote providers ask for it, and an answer of another length is an
error, never a vector written or searched with. ``local:minilm`` (all-MiniLM-L6-v2 in process, numpy only:
``providers.minilm``; opt-in) pads its 384 numbers with zeros to the setting.
Every call is bounded by the timeout given at construction. Callers degrade on ``EmbeddingUnavailable``
(recall answers with BM25, the indexer writes the note without its vector): embeddings improve recall,
they never decide whether it works. A note's vector on the write path is one bounded call
(``NoteVectorWriter``), stored as ``search.vectors`` encodes it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from functools import partial
from typing import Any, Protocol

from agent_memory.basics.errors import EmbeddingUnavailable
from agent_memory.basics.settings import Settings
from agent_memory.providers.clients import RemoteModel, provider_from_spec
from agent_memory.search.vectors import encode

EMBEDDING_DIMENSION = 1024  # Titan Text Embeddings v2's default; an OpenAI-compatible model is asked for it too
BEDROCK_CONCURRENCY = 8


class EmbeddingModel(Protocol):
    """Texts in, one vector per text out, in order; raises EmbeddingUnavailable on any failure."""

    def embed(self, texts: list[str]) -> list[list[float]]: ...


def _checked(vector: object, dimensions: int = EMBEDDING_DIMENSION) -> list[float]:
    """A vector of the configured dimension with finite numbers, or EmbeddingUnavailable."""
    if not isinstance(vector, list) or len(vector) != dimensions:
        size = len(vector) if isinstance(vector, list) else type(vector).__name__
        raise EmbeddingUnavailable(f"the embedding model answered a vector of {size}, not {dimensions}")
    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in vector):
        raise EmbeddingUnavailable("the embedding model answered a vector with a value that is not a finite number")
    if not any(vector):
        raise EmbeddingUnavailable("the embedding model answered a zero vector (no direction for cosine)")
    return [float(x) for x in vector]


@dataclass(frozen=True)
class _RemoteEmbedding(RemoteModel):
    _: KW_ONLY
    dimensions: int = EMBEDDING_DIMENSION


class BedrockEmbeddingModel(_RemoteEmbedding):
    def embed(self, texts: list[str]) -> list[list[float]]:
        if len(texts) <= 1:
            return [self._embed_one(text) for text in texts]
        import contextvars
        from concurrent.futures import ThreadPoolExecutor  # only Titan needs it, and only for a list

        with ThreadPoolExecutor(max_workers=min(BEDROCK_CONCURRENCY, len(texts))) as pool:
            # each call in a copy of the caller's context (its context variables), as one text's call has it
            calls = [pool.submit(contextvars.copy_context().run, self._embed_one, text) for text in texts]
            return [call.result() for call in calls]

    def _embed_one(self, text: str) -> list[float]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            answer = self.client.invoke_model(
                modelId=self.model,
                contentType="application/json",
                accept="application/json",
                body=json.dumps({"inputText": text, "dimensions": self.dimensions, "normalize": True}),
            )
            vector = json.loads(answer["body"].read())["embedding"]
        except (BotoCoreError, ClientError, KeyError, TypeError, ValueError) as error:
            raise EmbeddingUnavailable(f"the embedding model failed: {type(error).__name__}") from error
        return _checked(vector, self.dimensions)


class OpenAIEmbeddingModel(_RemoteEmbedding):
    def embed(self, texts: list[str]) -> list[list[float]]:
        import httpx

        if not texts:
            return []
        try:
            response = self.client.post(
                "embeddings",
                json={"model": self.model, "input": texts, "dimensions": self.dimensions},
            )
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            vectors = [item["embedding"] for item in data]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as error:
            raise EmbeddingUnavailable(f"the embedding model failed: {type(error).__name__}") from error
        if len(vectors) != len(texts):
            raise EmbeddingUnavailable(f"the embedding model answered {len(vectors)} vectors for {len(texts)} texts")
        return [_checked(vector, self.dimensions) for vector in vectors]


def embedding_model_from_settings(settings: Settings, *, timeout_s: float) -> EmbeddingModel | None:
    """The deployment's embedding model, or None when ``MEMORY_EMBEDDING_MODEL`` is unset."""
    if settings.embedding_model == "local:minilm":
        from agent_memory.providers.minilm import MiniLMEmbeddingModel

        return MiniLMEmbeddingModel(dimensions=settings.embedding_dimensions)
    makers: dict[str, Callable[[Any, str], EmbeddingModel]] = {
        "bedrock": partial(BedrockEmbeddingModel, dimensions=settings.embedding_dimensions),
        "openai": partial(OpenAIEmbeddingModel, dimensions=settings.embedding_dimensions),
    }
    return provider_from_spec(settings.embedding_model, settings, makers, timeout_s=timeout_s, connect_timeout_s=2)


class NoteVectorWriter:
    """The write path's vectors: a note text's stored vector, or None (no vector is better than no note).

    Bounded by ``timeout_s`` whatever the provider's own bounds (``deadline.within``); a failure or a
    timeout writes the note without its vector, counted as ``NoteVectorFailed``: BM25 finds it at once,
    and the vector fill (``make reindex``) adds the vector later.
    """

    def __init__(self, embedder: EmbeddingModel, *, tag: int, timeout_s: float) -> None:
        self._embedder = embedder
        self._tag = tag
        self._timeout_s = timeout_s

    def __call__(self, text: str) -> bytes | None:
        from agent_memory.basics.deadline import DeadlineExceeded, within
        from agent_memory.basics.observability import logger, metrics

        try:
            [vector] = within(self._timeout_s, lambda: self._embedder.embed([text]), name="note-vector")
            return encode(vector, tag=self._tag)
        except (EmbeddingUnavailable, DeadlineExceeded, ValueError) as error:
            logger.warning("embedding a note failed; it is written without its vector", extra={"why": str(error)})
            metrics.add_metric(name="NoteVectorFailed", unit="Count", value=1)
            return None
