"""Configuration is validated once, with errors an operator can act on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from agent_memory.basics.clock import iso, utc_now
from agent_memory.basics.settings import Settings, get_settings


@pytest.mark.parametrize("spec", ["bedrock:anthropic.claude-3-haiku-20240307-v1:0", "openai:gpt-4o-mini"])
def test_known_chat_model_specs(spec):
    assert Settings(chat_model=spec).chat_model == spec


@pytest.mark.parametrize("spec", ["gpt-4o", "bedrock:", "openai:", "anthropic:claude", ":x"])
def test_unknown_chat_model_specs_are_refused(spec):
    with pytest.raises(ValidationError, match="MEMORY_CHAT_MODEL"):
        Settings(chat_model=spec)


def test_blank_values_mean_unset(monkeypatch):
    monkeypatch.setenv("MEMORY_CHAT_MODEL", "  ")
    monkeypatch.setenv("MEMORY_NOW", "")
    get_settings.cache_clear()

    settings = get_settings()

    assert settings.chat_model is None and settings.memory_now is None


@pytest.mark.parametrize(
    ("endpoint", "concurrency", "expected"),
    [(None, None, 8), ("http://127.0.0.1:5000", None, 1), ("http://127.0.0.1:5000", "4", 4), (None, "4", 4)],
)
def test_a_local_dynamodb_folds_one_group_at_a_time_unless_told_otherwise(monkeypatch, endpoint, concurrency, expected):
    for name, value in (("AWS_ENDPOINT_URL_DYNAMODB", endpoint), ("MEMORY_CONSOLIDATION_CONCURRENCY", concurrency)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    get_settings.cache_clear()

    assert get_settings().consolidation_concurrency == expected


def test_memory_now_freezes_the_clock(monkeypatch):
    monkeypatch.setenv("MEMORY_NOW", "2026-12-03T23:59:59+02:00")
    get_settings.cache_clear()

    assert utc_now() == datetime(2026, 12, 3, 21, 59, 59, tzinfo=UTC)
    assert iso(utc_now()) == "2026-12-03T21:59:59.000Z"


def test_memory_now_without_an_offset_is_refused():
    with pytest.raises(ValidationError, match="UTC offset"):
        Settings(memory_now="2026-12-03T10:00:00")


def test_max_groups_0_means_no_limit_and_a_negative_one_is_refused(monkeypatch):
    monkeypatch.setenv("MEMORY_CONSOLIDATION_MAX_GROUPS", "0")
    monkeypatch.setenv("MEMORY_CONSOLIDATION_QUEUE_URL", " ")
    get_settings.cache_clear()

    settings = get_settings()

    assert settings.consolidation_max_groups == 0 and settings.consolidation_queue_url is None
    with pytest.raises(ValidationError, match="consolidation_max_groups"):
        Settings(consolidation_max_groups=-1)
