"""Configuration, read from the environment once per process (CONTRACT §2)."""

from __future__ import annotations

import os
from datetime import datetime
from functools import cache

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator


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
    consolidation_queue_url: str | None = Field(default=None, description="unset: the planner folds in-process")
    consolidation_max_receives: int = Field(default=3, ge=1)
    consolidation_claim_s: int = Field(default=330, ge=0)

    @field_validator("opensearch_endpoint", mode="before")
    @classmethod
    def _blank_endpoint_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("consolidation_queue_url", mode="before")
    @classmethod
    def _blank_queue_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("chat_model", "embedding_model", "openai_api_key", "memory_now", "local_jwt_secret", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

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
        if provider not in ("bedrock", "openai") or not name:
            raise ValueError(f"{_ENV[str(info.field_name)]} must be bedrock:<modelId> or openai:<model>")
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
    "consolidation_queue_url": "MEMORY_CONSOLIDATION_QUEUE_URL",
    "consolidation_max_receives": "MEMORY_CONSOLIDATION_MAX_RECEIVES",
    "consolidation_claim_s": "MEMORY_CONSOLIDATION_CLAIM_S",
}


@cache
def get_settings() -> Settings:
    """The process's settings; cached because the environment of a Lambda sandbox never changes."""
    return Settings.model_validate({field: os.environ[var] for field, var in _ENV.items() if var in os.environ})
