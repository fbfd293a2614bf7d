"""The clients both model ports use: Bedrock's runtime through boto3, and an OpenAI-compatible server through httpx.

Built once per port and process, each bounded by the port's timeout and at most two attempts, so a slow
or failing model fails the call instead of hanging it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from agent_memory.settings import Settings

Port = TypeVar("Port")


def provider_from_spec(
    spec: str | None,
    settings: Settings,
    *,
    timeout_s: float,
    connect_timeout_s: float,
    bedrock: Callable[[Any, str], Port],
    openai: Callable[[Any, str], Port],
) -> Port | None:
    """The provider that a ``bedrock:<modelId>`` or ``openai:<model>`` setting names, on its bounded client."""
    if spec is None:
        return None
    provider, _, name = spec.partition(":")  # the settings guarantee a known provider and a name
    if provider == "bedrock":
        return bedrock(bedrock_runtime(timeout_s=timeout_s, connect_timeout_s=connect_timeout_s), name)
    return openai(openai_http(settings, timeout_s=timeout_s), name)


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
    """An httpx client on ``OPENAI_BASE_URL``, with ``OPENAI_API_KEY`` as its bearer token when set."""
    import httpx

    headers = {"Authorization": f"Bearer {settings.openai_api_key}"} if settings.openai_api_key else {}
    base_url = settings.openai_base_url.rstrip("/") + "/"
    return httpx.Client(base_url=base_url, headers=headers, timeout=timeout_s)
