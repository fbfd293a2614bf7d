"""The dashboard's routes called in-process with local tokens (the handler verifies them itself)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from agent_memory import bootstrap
from local.lambda_context import LambdaContext
from local.template import load_handler
from local.token import mint
from tests.support.calls import Answer
from tests.support.events import load_event

SECRET = "local-dev-secret"


@pytest.fixture(autouse=True)
def local_auth(monkeypatch):
    """The handler verifies tokens itself, as in the local stack (no API Gateway authorizer here)."""
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", SECRET)
    bootstrap.reset()


def manage(event_name, *, path=None, query=None, body=..., token=None, headers=None, lambda_context=None) -> Answer:
    """Send events/management/<event_name>.json with another path, query, body or token."""
    event = load_event(f"management/{event_name}")
    if path is not None:
        event["rawPath"] = event["requestContext"]["http"]["path"] = path
    if query is not None:
        event["rawQueryString"] = urlencode(query)
        event["queryStringParameters"] = {k: str(v) for k, v in query.items()} or None
    if body is not ...:
        event["body"] = body if isinstance(body, str) else json.dumps(body)
    event["headers"].pop("authorization", None)
    if token is not None:
        event["headers"]["authorization"] = f"Bearer {token}"
    event["headers"].update(headers or {})
    del event["requestContext"]["authorizer"]  # locally there is no authorizer: the token is all there is
    result = load_handler("ManagementFunction")(event, lambda_context or LambdaContext())
    payload = json.loads(result["body"]) if result.get("body") else None
    return Answer(result["statusCode"], payload, result.get("headers", {}))


USER = mint("u-1", ["w-3", "w-7"])


OTHER = mint("u-2", ["w-9"])


ADMIN = mint("ops", [], admin=True)
