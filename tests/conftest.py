"""Shared fixtures: AWS on moto with the tables of template.yaml, handlers as Lambda runs them, a context."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory import runtime
from local.template import load_handler, table_definitions
from tests.events import load_event

NOW = "2026-12-03T10:15:00Z"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fake credentials, a fixed clock, no model, quiet telemetry; settings re-read for every test."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        "MEMORY_TABLE_NAME": "MemoryTable",
        "MEMORY_NOW": NOW,
        "POWERTOOLS_SERVICE_NAME": "agent-memory",
        "POWERTOOLS_METRICS_NAMESPACE": "AgentMemory",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("MEMORY_CHAT_MODEL", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    runtime.reset()
    yield
    runtime.reset()


@pytest.fixture
def aws() -> Iterator[Any]:
    """moto with every table of template.yaml; yields a DynamoDB client to inspect the table with."""
    with mock_aws():
        client = boto3.client("dynamodb")
        for definition in table_definitions().values():
            client.create_table(**definition)
        yield client


@dataclass(frozen=True)
class LambdaContext:
    function_name: str = "ToolsFunction"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:eu-west-1:123456789012:function:ToolsFunction"
    aws_request_id: str = "c6af9ac6-7b61-11e6-9a41-93e812345678"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext()


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


Call = Callable[..., Answer]


@pytest.fixture
def call(aws: Any, lambda_context: LambdaContext) -> Call:
    """Send a route's event (events/<name>.json, body swapped) through its function's handler."""
    functions = {"remember": "ToolsFunction", "update_memory": "ToolsFunction", "list_tools": "ToolsFunction",
                 "health": "ToolsFunction", "context": "ContextFunction"}

    def _call(name: str, body: Any = ..., *, raw_body: str | None = None) -> Answer:
        event = load_event(name, raw_body=raw_body) if body is ... else load_event(name, body, raw_body=raw_body)
        result = load_handler(functions[name])(event, lambda_context)
        payload = json.loads(result["body"]) if result.get("body") else None
        return Answer(result["statusCode"], payload, result.get("headers", {}))

    return _call


def private(user: str = "u-1", thread: str = "t-1", **extra: Any) -> dict[str, Any]:
    return {"user_id": user, "thread_id": thread, "visibility": "private", **extra}


def shared(workspace: str, user: str = "u-1", thread: str = "t-2", **extra: Any) -> dict[str, Any]:
    return {"user_id": user, "thread_id": thread, "visibility": "shared", "workspace_id": workspace, **extra}
