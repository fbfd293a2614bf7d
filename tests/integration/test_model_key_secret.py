"""The model API key is read from Secrets Manager or an SSM SecureString (OPENAI_API_KEY_SECRET), once per
sandbox, when no plain OPENAI_API_KEY is set (issue 16, item 10)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from agent_memory import bootstrap
from agent_memory.basics.settings import Settings
from agent_memory.providers.clients import api_key_from, openai_http
from tests.support.events import event_body
from tests.support.fake_openai import fake_openai_server


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


def _stored_key(store: str) -> str:
    """The model key in ``store``, written by the test's own client (unchecked); its ARN."""
    if store == "secretsmanager":
        return str(boto3.client("secretsmanager").create_secret(Name="model-key", SecretString="sk-1")["ARN"])
    boto3.client("ssm").put_parameter(Name="/memory/model-key", Value="sk-1", Type="SecureString")
    return "arn:aws:ssm:eu-west-1:123456789012:parameter/memory/model-key"


@pytest.mark.parametrize(("route", "store"), [("flush", "secretsmanager"), ("extract", "ssm")])
def test_a_function_reads_the_key_with_the_grant_template_yaml_gives_it(call, monkeypatch, route, store):
    """Read in the handler, the key's read is held to its function's policies (tests/support/iam): the flush's
    FlushFunction and the extraction's ToolsFunction may read the secret or parameter OPENAI_API_KEY_SECRET names
    (without that statement, the ``aws`` fixture fails the test with the refused GetSecretValue or GetParameter)."""
    with fake_openai_server(reply="Planning the migration.") as fake:
        monkeypatch.setenv("MEMORY_CHAT_MODEL", "openai:fake")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY_SECRET", _stored_key(store))
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        bootstrap.reset()

        answer = call(route, event_body(route))

        assert answer.status == 200 and fake.calls() == 1
    assert api_key_from.cache_info().misses == 1  # read once, by the handler
