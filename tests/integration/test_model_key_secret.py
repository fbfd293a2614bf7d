"""The model API key is read from Secrets Manager or an SSM SecureString (OPENAI_API_KEY_SECRET), once per
sandbox, when no plain OPENAI_API_KEY is set (issue 16, item 10)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from agent_memory.basics.settings import Settings
from agent_memory.providers.clients import api_key_from, openai_http


@pytest.fixture(autouse=True)
def _fresh_cache():
    api_key_from.cache_clear()
    yield
    api_key_from.cache_clear()


def test_the_key_comes_from_a_secrets_manager_secret():
    with mock_aws():
        arn = boto3.client("secretsmanager").create_secret(Name="model-key", SecretString="sk-from-secret\n")["ARN"]

        client = openai_http(Settings(openai_api_key_secret=arn), timeout_s=1)

    assert client.headers["Authorization"] == "Bearer sk-from-secret"


def test_the_key_comes_from_an_ssm_secure_string():
    with mock_aws():
        ssm = boto3.client("ssm")
        ssm.put_parameter(Name="/memory/model-key", Value="sk-from-ssm", Type="SecureString")
        arn = "arn:aws:ssm:eu-west-1:123456789012:parameter/memory/model-key"

        client = openai_http(Settings(openai_api_key_secret=arn), timeout_s=1)

    assert client.headers["Authorization"] == "Bearer sk-from-ssm"


def test_a_plain_key_wins_and_no_secret_is_read():
    client = openai_http(Settings(openai_api_key="sk-local", openai_api_key_secret=None), timeout_s=1)

    assert client.headers["Authorization"] == "Bearer sk-local"


def test_a_secret_setting_that_is_not_an_arn_is_refused_at_start():
    with pytest.raises(ValueError, match="openai_api_key_secret"):
        Settings(openai_api_key_secret="model-key")
