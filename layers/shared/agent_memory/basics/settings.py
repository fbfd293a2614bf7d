"""Configuration, read from the environment once per process (docs/api.md §2)."""

from __future__ import annotations

import os
import re
from datetime import datetime
from functools import cache
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

# The redaction detectors a deployment may add (``domain.redaction`` has one detector of each, marked ``extra``).
REDACT_EXTRA_KINDS = frozenset({"email", "phone"})
_ROLE_ARN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$"
# all-MiniLM-L6-v2's vector size (``providers.minilm``): ``local:minilm`` pads its vectors up to the size, never down.
MINILM_DIMENSIONS = 384


def minilm_fits(dimensions: int) -> None:
    """ValueError when ``local:minilm``'s vectors cannot have ``dimensions`` numbers."""
    if dimensions < MINILM_DIMENSIONS:
        raise ValueError(
            f"local:minilm makes {MINILM_DIMENSIONS}-number vectors: "
            f"MEMORY_EMBEDDING_DIMENSIONS={dimensions} is too small"
        )


class Settings(BaseModel):
    """Everything a function needs to know about its deployment."""

    model_config = ConfigDict(frozen=True)

    table_name: str = "MemoryTable"
    chat_model: str | None = None
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: str | None = None
    memory_now: datetime | None = Field(default=None, description="local stack only: frozen clock")
    dynamodb_connect_timeout_s: float = 1.0
    dynamodb_read_timeout_s: float = 2.0
    dynamodb_max_attempts: int = 3
    chat_timeout_s: float = 60.0
    memory_flush: bool = True
    local_jwt_secret: str | None = None
    consolidate_function: str = "ConsolidateFunction"
    consolidation_min_age_days: int = Field(default=7, ge=0)
    consolidation_max_groups: int = Field(default=50, ge=0, description="0: no limit")
    consolidation_max_notes: int = Field(default=200, ge=1)
    consolidation_max_chars: int = Field(default=20_000, ge=2_000)
    consolidation_concurrency: int = Field(default=8, ge=1, le=64)
    consolidation_reserve_s: float = Field(default=120.0, ge=0)
    opensearch_endpoint: str | None = Field(default=None, description="the notes index; unset: keyword fallback")
    opensearch_timeout_s: float = 2.0
    embedding_model: str | None = Field(default=None, description="unset: no semantic search")
    embedding_timeout_s: float = Field(default=2.0, gt=0)
    openai_api_key_secret: str | None = Field(
        default=None,
        pattern=r"^arn:aws[a-z-]*:(secretsmanager|ssm):",
        description="the ARN of a Secrets Manager secret or an SSM SecureString parameter holding OPENAI_API_KEY",
    )
    embedding_dimensions: int = Field(default=1024, ge=1, le=16_000, description="checked against every vector")
    recall_keyword_weight: float = Field(default=0.8, ge=0, le=1, description="BM25's share of the fused score")
    recall_diversity_weight: float = Field(
        default=1.0, ge=0, le=1, description="relevance's share of each MMR pick; 1: no diversity"
    )
    recall_expansion_terms: int = Field(default=3, ge=0, le=10, description="feedback terms added to BM25; 0: off")
    recall_date_boost: float = Field(
        default=1.0, ge=0, le=10, description="added to notes written on the days a query names (x the best score)"
    )
    recall_neighbours: int = Field(
        default=1, ge=0, le=3, description="same-conversation notes each side of a strong hit joining recall; 0: off"
    )
    recall_question_weight: float = Field(
        default=0.8, ge=0, le=1, description="a candidate note that asks a question: its score times this; 1: off"
    )
    redact_extra: frozenset[str] = Field(default=frozenset(), description="email, phone: also redacted")
    quota_notes_per_day: int = Field(default=500, ge=1)
    quota_notes_per_member_day: int = Field(default=100, ge=1)
    quota_chars: int = Field(default=2_000_000, ge=1)
    injection_ttl_days: int = Field(default=30, ge=1)
    # The chat backend's IAM role: when set, the only caller the tools and context answer (edges.auth).
    backend_role_arn: str | None = Field(default=None, pattern=_ROLE_ARN)
    opensearch_shards: int = Field(default=1, ge=1, le=1024, description="a new notes index version's shards")
    opensearch_replicas: int = Field(default=0, ge=0, le=15, description="a new notes index version's replicas")

    @field_validator("redact_extra", mode="before")
    @classmethod
    def _extra_kinds(cls, value: object) -> object:
        """``MEMORY_REDACT_EXTRA``: comma-separated kinds, each one of ``REDACT_EXTRA_KINDS``."""
        if not isinstance(value, str):
            return value
        kinds = frozenset(part.strip().lower() for part in value.split(",") if part.strip())
        unknown = kinds - REDACT_EXTRA_KINDS
        if unknown:
            raise ValueError(
                f"MEMORY_REDACT_EXTRA names unknown kinds {sorted(unknown)}; known: {sorted(REDACT_EXTRA_KINDS)}"
            )
        return kinds

    consolidation_queue_url: str | None = Field(default=None, description="unset: the planner folds in-process")
    consolidation_max_receives: int = Field(default=3, ge=1)
    consolidation_claim_s: int = Field(default=330, ge=0)
    rerank_model: str | None = Field(default=None, description="bedrock:<modelId>; unset: recall is not reranked")
    rerank_timeout_s: float = Field(default=1.0, gt=0, le=10, description="the whole rerank call's budget")
    rerank_candidates: int = Field(default=20, ge=2, le=100, description="how many of recall's best are reranked")

    @field_validator("rerank_model", mode="before")
    @classmethod
    def _rerank_model(cls, value: object) -> object:
        """``MEMORY_RERANK_MODEL``: blank is unset; else Bedrock's Rerank with a model id (providers.rerank)."""
        if not isinstance(value, str) or not value.strip():
            return None if isinstance(value, str) else value
        if not _RERANK_MODEL.fullmatch(value.strip()):
            raise ValueError("MEMORY_RERANK_MODEL must be bedrock:<modelId>, e.g. bedrock:amazon.rerank-v1:0")
        return value.strip()

    @field_validator(
        "opensearch_endpoint",
        "consolidation_queue_url",
        "chat_model",
        "embedding_model",
        "openai_api_key",
        "memory_now",
        "local_jwt_secret",
        "openai_api_key_secret",
        "backend_role_arn",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("chat_model", "embedding_model", mode="before")
    @classmethod
    def _none_is_no_model(cls, value: object) -> object:
        """``MEMORY_CHAT_MODEL=none``, ``MEMORY_EMBEDDING_MODEL=none``: no such model, said explicitly (the local
        stack reads an unset one as its in-process default)."""
        return None if isinstance(value, str) and value.strip().lower() == "none" else value

    @field_validator("memory_flush", mode="before")
    @classmethod
    def _flush_toggle(cls, value: object) -> object:
        """``false``, ``0``, ``no`` or ``off``, in any case, turn the flush off; anything else leaves it on."""
        if isinstance(value, str):
            return value.strip().lower() not in {"false", "0", "no", "off"}
        return value

    @field_validator("chat_model", "embedding_model")
    @classmethod
    def _known_provider(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        provider, _, name = value.partition(":")
        if value == "local:minilm" and info.field_name == "embedding_model":
            return value  # in process (providers.minilm): the local stack's default
        if value == "local:extractive" and info.field_name == "chat_model":
            return value  # no model: the flush summarises the messages itself (memory.summary)
        if provider not in ("bedrock", "openai") or not name:
            raise ValueError(f"{_ENV[str(info.field_name)]} must be bedrock:<modelId> or openai:<model>")
        return value

    @field_validator("opensearch_endpoint")
    @classmethod
    def _endpoint_url(cls, value: str | None) -> str | None:
        """An http:// (a local node) or https:// (SigV4) URL with a host and a valid port: anything else would fail
        with a traceback where the index's client is first made (``localhost:9200`` has no host to an URL parser)."""
        if value is None:
            return None
        url = urlsplit(value.strip())
        try:
            port_ok = url.port is None or url.port > 0  # ``port`` raises ValueError out of 0..65535
        except ValueError:
            port_ok = False
        if url.scheme not in ("http", "https") or not url.hostname or not port_ok:
            raise ValueError("OPENSEARCH_ENDPOINT must be an http:// or https:// URL, e.g. http://127.0.0.1:9200")
        return value.strip()

    @field_validator("embedding_dimensions")
    @classmethod
    def _fits_local_minilm(cls, value: int, info: ValidationInfo) -> int:
        """Checked with the other settings, so that the process stops at start with one line, not with a traceback
        when the model is first built (``embedding_model`` is declared, and so validated, before this field)."""
        if info.data.get("embedding_model") == "local:minilm":
            minilm_fits(value)
        return value

    @field_validator("memory_now")
    @classmethod
    def _must_be_utc(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("MEMORY_NOW must carry a UTC offset, e.g. 2026-12-03T10:00:00Z")
        return value


_ENV = {
    "table_name": "MEMORY_TABLE_NAME",
    "chat_model": "MEMORY_CHAT_MODEL",
    "openai_base_url": "OPENAI_BASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "memory_now": "MEMORY_NOW",
    "dynamodb_connect_timeout_s": "MEMORY_DYNAMODB_CONNECT_TIMEOUT_S",
    "dynamodb_read_timeout_s": "MEMORY_DYNAMODB_READ_TIMEOUT_S",
    "dynamodb_max_attempts": "MEMORY_DYNAMODB_MAX_ATTEMPTS",
    "chat_timeout_s": "MEMORY_CHAT_TIMEOUT_S",
    "memory_flush": "SURFSENSE_MEMORY_FLUSH",
    "local_jwt_secret": "MEMORY_LOCAL_JWT_SECRET",
    "consolidate_function": "MEMORY_CONSOLIDATE_FUNCTION",
    "consolidation_min_age_days": "MEMORY_CONSOLIDATION_MIN_AGE_DAYS",
    "consolidation_max_groups": "MEMORY_CONSOLIDATION_MAX_GROUPS",
    "consolidation_max_notes": "MEMORY_CONSOLIDATION_MAX_NOTES",
    "consolidation_max_chars": "MEMORY_CONSOLIDATION_MAX_CHARS",
    "consolidation_concurrency": "MEMORY_CONSOLIDATION_CONCURRENCY",
    "consolidation_reserve_s": "MEMORY_CONSOLIDATION_RESERVE_S",
    "opensearch_endpoint": "OPENSEARCH_ENDPOINT",
    "opensearch_timeout_s": "MEMORY_OPENSEARCH_TIMEOUT_S",
    "embedding_model": "MEMORY_EMBEDDING_MODEL",
    "embedding_timeout_s": "MEMORY_EMBEDDING_TIMEOUT_S",
    "openai_api_key_secret": "OPENAI_API_KEY_SECRET",
    "embedding_dimensions": "MEMORY_EMBEDDING_DIMENSIONS",
    "recall_keyword_weight": "MEMORY_RECALL_KEYWORD_WEIGHT",
    "recall_diversity_weight": "MEMORY_RECALL_DIVERSITY_WEIGHT",
    "recall_expansion_terms": "MEMORY_RECALL_EXPANSION_TERMS",
    "recall_date_boost": "MEMORY_RECALL_DATE_BOOST",
    "recall_neighbours": "MEMORY_RECALL_NEIGHBOURS",
    "recall_question_weight": "MEMORY_RECALL_QUESTION_WEIGHT",
    "redact_extra": "MEMORY_REDACT_EXTRA",
    "quota_notes_per_day": "MEMORY_QUOTA_NOTES_PER_DAY",
    "backend_role_arn": "MEMORY_BACKEND_ROLE_ARN",
    "quota_notes_per_member_day": "MEMORY_QUOTA_NOTES_PER_MEMBER_DAY",
    "quota_chars": "MEMORY_QUOTA_CHARS",
    "injection_ttl_days": "MEMORY_INJECTION_TTL_DAYS",
    "consolidation_queue_url": "MEMORY_CONSOLIDATION_QUEUE_URL",
    "consolidation_max_receives": "MEMORY_CONSOLIDATION_MAX_RECEIVES",
    "consolidation_claim_s": "MEMORY_CONSOLIDATION_CLAIM_S",
    "rerank_model": "MEMORY_RERANK_MODEL",
    "rerank_timeout_s": "MEMORY_RERANK_TIMEOUT_S",
    "rerank_candidates": "MEMORY_RERANK_CANDIDATES",
    "opensearch_shards": "MEMORY_OPENSEARCH_SHARDS",
    "opensearch_replicas": "MEMORY_OPENSEARCH_REPLICAS",
}
# A Bedrock foundation model id (provider.name-version:n), the only reranker there is (providers.rerank).
_RERANK_MODEL = re.compile(r"bedrock:[a-z0-9-]+\.[A-Za-z0-9._-]+(:[0-9]+)?")


@cache
def get_settings() -> Settings:
    """The process's settings; cached because the environment of a Lambda sandbox never changes.

    Against a DynamoDB that ``AWS_ENDPOINT_URL_DYNAMODB`` names (a local one), the in-process consolidation folds
    one group at a time unless told otherwise: moto's server is not thread-safe (a cancelled transaction restores
    its copy of the table over what concurrent requests wrote: a note's mark lost, a note folded twice)."""
    values = {field: os.environ[var] for field, var in _ENV.items() if var in os.environ}
    if os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
        values.setdefault("consolidation_concurrency", "1")
    return Settings.model_validate(values)


class SettingsError(RuntimeError):
    """A setting the service cannot use: raised at start (the local stack, a Lambda's initialisation)."""


def require_valid_settings() -> Settings:
    """The settings, or SettingsError with one line naming the variable, e.g.
    ``MEMORY_CONSOLIDATION_MAX_NOTES=0 is refused: Input should be greater than or equal to 1``.

    Called when a process starts, so that a bad setting stops it there instead of failing every request.
    """
    from pydantic import ValidationError

    try:
        return get_settings()
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        variable = _ENV.get(field, field)
        shown = os.environ.get(variable, "")
        raise SettingsError(f"{variable}={shown[:80]} is refused: {first['msg']}") from None
