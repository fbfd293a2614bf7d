"""The clients both model ports use: Bedrock's runtime through boto3, and an OpenAI-compatible server through httpx.

Built once per port and process, each bounded by the port's timeout and at most two attempts, so a slow
or failing model fails the call instead of hanging it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from agent_memory.basics.settings import Settings

Port = TypeVar("Port")


@dataclass(frozen=True)
class RemoteModel:
    """A model named ``model`` on its provider's bounded ``client``: boto3's ``bedrock-runtime`` for Bedrock, an
    httpx client for an OpenAI-compatible server."""

    client: Any
    model: str


def provider_from_spec(
    spec: str | None,
    settings: Settings,
    makers: Mapping[str, Callable[[Any, str], Port]],
    *,
    timeout_s: float,
    connect_timeout_s: float,
) -> Port | None:
    """The provider that a ``bedrock:<modelId>`` or ``openai:<model>`` setting names, on its bounded client:
    ``makers[provider](client, name)``."""
    if spec is None:
        return None
    provider, _, name = spec.partition(":")  # the settings guarantee a known provider and a name
    if provider == "bedrock":
        return makers[provider](bedrock_runtime(timeout_s=timeout_s, connect_timeout_s=connect_timeout_s), name)
    return makers[provider](openai_http(settings, timeout_s=timeout_s), name)


def bedrock_runtime(*, timeout_s: float, connect_timeout_s: float) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=min(timeout_s, connect_timeout_s),
        read_timeout=timeout_s,
        retries={"mode": "standard", "total_max_attempts": 2},
    )
    return boto3.client("bedrock-runtime", config=config)


def openai_http(settings: Settings, *, timeout_s: float) -> Any:
    """An httpx client on ``OPENAI_BASE_URL``, with the API key as its bearer token when there is one:
    ``OPENAI_API_KEY`` (the local stack), else the secret ``OPENAI_API_KEY_SECRET`` names (AWS)."""
    import httpx

    key = settings.openai_api_key or (
        api_key_from(settings.openai_api_key_secret) if settings.openai_api_key_secret else None
    )
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    base_url = settings.openai_base_url.rstrip("/") + "/"
    return httpx.Client(base_url=base_url, headers=headers, timeout=timeout_s)


@cache
def api_key_from(arn: str) -> str:
    """The key kept in a Secrets Manager secret or an SSM SecureString parameter, read once per sandbox.

    Only the functions that call a model are given the ARN and the permission to read it (template.yaml).
    """
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=2, read_timeout=5, retries={"mode": "standard", "total_max_attempts": 3})
    if ":secretsmanager:" in arn:
        secret: str = boto3.client("secretsmanager", config=config).get_secret_value(SecretId=arn)["SecretString"]
        return secret.strip()
    name = "/" + arn.split(":parameter/", 1)[1]
    answer = boto3.client("ssm", config=config).get_parameter(Name=name, WithDecryption=True)
    value: str = answer["Parameter"]["Value"]
    return value.strip()
