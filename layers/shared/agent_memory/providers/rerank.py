"""The reranking port, its real provider, and the stage recall runs it in (off by default).

``MEMORY_RERANK_MODEL=bedrock:<modelId>`` (e.g. ``bedrock:amazon.rerank-v1:0`` or
``bedrock:cohere.rerank-v3-5:0``) turns it on: recall's best ``MEMORY_RERANK_CANDIDATES`` candidates
(default 20, whichever path found them) are sent with the query to Amazon Bedrock's ``Rerank``
(``bedrock-agent-runtime``: inline text sources, one text query), and the ``k`` the model finds most
relevant are answered, best first, with its relevance scores (0..1). Unset: no client is built and no
call is made.

A reranker improves the order; it never decides whether recall answers. The call gets
``MEMORY_RERANK_TIMEOUT_S`` (default 1 s) in all, without retries (throttling is not waited out). On a
timeout, an error, throttling or an answer that is not a ranking of the candidates, recall keeps the
order it had (fused or BM25), counts ``RerankTimedOut`` or ``RerankFailed``, and logs why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from agent_memory.basics.deadline import DeadlineExceeded, within
from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import Settings

# The most texts one call may carry in this service: recall reads its candidates back in one
# BatchGetItem (100 keys at most), and Bedrock bills a rerank query per 100 documents.
MAX_CANDIDATES = 100


class RerankUnavailable(Exception):
    """The reranking model failed, was throttled, or answered something that is not a ranking."""


class Reranker(Protocol):
    """A query and texts in; ``(place in texts, relevance)`` pairs out, most relevant first.
    Raises RerankUnavailable on any failure."""

    def rerank(self, query: str, texts: list[str]) -> list[tuple[int, float]]: ...


class BedrockReranker:
    """Amazon Bedrock's ``Rerank`` (``bedrock-agent-runtime``), on a bounded boto3 client."""

    def __init__(self, client: Any, model_id: str) -> None:
        self._client = client
        meta = client.meta
        self._model_arn = f"arn:{meta.partition}:bedrock:{meta.region_name}::foundation-model/{model_id}"

    def rerank(self, query: str, texts: list[str]) -> list[tuple[int, float]]:
        from botocore.exceptions import BotoCoreError, ClientError

        if not texts:
            return []
        try:
            answer = self._client.rerank(
                queries=[{"type": "TEXT", "textQuery": {"text": query}}],
                sources=[
                    {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": text}}}
                    for text in texts
                ],
                rerankingConfiguration={
                    "type": "BEDROCK_RERANKING_MODEL",
                    "bedrockRerankingConfiguration": {
                        "numberOfResults": len(texts),
                        "modelConfiguration": {"modelArn": self._model_arn},
                    },
                },
            )
            results = answer["results"]
            return [(result["index"], result["relevanceScore"]) for result in results]
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "error")
            raise RerankUnavailable(f"the reranking model refused: {code}") from error
        except (BotoCoreError, KeyError, TypeError) as error:
            raise RerankUnavailable(f"the reranking model failed: {type(error).__name__}") from error


def ranking(answer: object, count: int, k: int) -> list[tuple[int, float]]:
    """The best ``min(k, count)`` of an answer about ``count`` texts, by relevance (ties keep the model's
    order); RerankUnavailable when it is not a ranking of them: a place out of range or repeated, a
    relevance that is not a finite number, or fewer results than asked."""
    if not isinstance(answer, list):
        raise RerankUnavailable(f"the reranking model answered {type(answer).__name__}, not a list")
    seen: set[int] = set()
    for pair in answer:
        place, relevance = pair if isinstance(pair, tuple) and len(pair) == 2 else (None, None)
        if not isinstance(place, int) or isinstance(place, bool) or not 0 <= place < count or place in seen:
            raise RerankUnavailable(f"the reranking model answered a place that is not one of {count}: {place!r}")
        if not isinstance(relevance, (int, float)) or isinstance(relevance, bool) or not math.isfinite(relevance):
            raise RerankUnavailable(f"the reranking model answered a relevance that is not a number: {relevance!r}")
        seen.add(place)
    wanted = min(k, count)
    if len(answer) < wanted:
        raise RerankUnavailable(f"the reranking model ranked {len(answer)} of {count} texts, fewer than {wanted}")
    return sorted(answer, key=lambda pair: -pair[1])[:wanted]


@dataclass(frozen=True, slots=True)
class RerankStage:
    """Recall's reranking step: how many candidates it takes, and the reordering within its time."""

    reranker: Reranker
    candidates: int = 20
    timeout_s: float = 1.0

    def window(self, k: int) -> int:
        """How many candidates recall should gather when it will answer ``k``."""
        return max(k, self.candidates)

    def reorder(self, query: str, texts: list[str], k: int) -> list[tuple[int, float]] | None:
        """The ``k`` most relevant of ``texts`` (their places, with relevance), or None: recall keeps its order."""
        if len(texts) < 2:
            return None  # nothing to reorder: no call
        try:
            answer = within(self.timeout_s, lambda: self.reranker.rerank(query, texts), name="rerank")
            return ranking(answer, len(texts), k)
        except DeadlineExceeded:
            logger.warning("reranking timed out; answering in recall's own order", extra={"budget_s": self.timeout_s})
            metrics.add_metric(name="RerankTimedOut", unit="Count", value=1)
        except Exception as error:  # noqa: BLE001 - any reranker fault degrades to the order recall had
            why = str(error) if isinstance(error, RerankUnavailable) else type(error).__name__
            logger.warning("reranking failed; answering in recall's own order", extra={"why": why})
            metrics.add_metric(name="RerankFailed", unit="Count", value=1)
        return None


def rerank_model_from_settings(settings: Settings) -> Reranker | None:
    """The reranking model ``MEMORY_RERANK_MODEL`` names, on its own bounded client; None when it is unset."""
    if settings.rerank_model is None:
        return None
    import boto3
    from botocore.config import Config

    budget = settings.rerank_timeout_s
    config = Config(
        connect_timeout=min(budget, 1.0),
        read_timeout=budget,
        retries={"mode": "standard", "total_max_attempts": 1},  # no retry fits the budget; degrade instead
    )
    client = boto3.client("bedrock-agent-runtime", config=config)
    model_id = settings.rerank_model.removeprefix("bedrock:")
    return BedrockReranker(client, model_id)


def rerank_stage(reranker: Reranker | None, settings: Settings) -> RerankStage | None:
    """Recall's reranking step around ``reranker`` (None: no step), with the settings' candidates and budget."""
    if reranker is None:
        return None
    return RerankStage(reranker, candidates=settings.rerank_candidates, timeout_s=settings.rerank_timeout_s)
