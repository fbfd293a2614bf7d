"""Management authorization reads the same path that the resolver routes on.

On a named API Gateway stage the raw path carries the stage (``/prod/v1/memory/...``) and Powertools routes
on the path without it. A membership or operator check that read the raw path would not recognise the
route, and let a non-member reach a workspace's team memory. Found by hardening (issue 7).
"""

from __future__ import annotations

import json

import pytest

from agent_memory import bootstrap
from local.lambda_context import LambdaContext
from local.template import load_handler
from local.token import mint
from tests.support.events import load_event
from tests.support.scopes import shared


@pytest.fixture(autouse=True)
def local_auth(monkeypatch):
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", "local-dev-secret")
    bootstrap.reset()


def _on_stage(event_name: str, stage: str, path: str, token: str) -> tuple[int, dict]:
    event = load_event(f"management/{event_name}")
    event["requestContext"]["stage"] = stage
    raw = path if stage == "$default" else f"/{stage}{path}"
    event["rawPath"] = event["requestContext"]["http"]["path"] = raw
    event["headers"]["authorization"] = f"Bearer {token}"
    del event["requestContext"]["authorizer"]
    result = load_handler("ManagementFunction")(event, LambdaContext())
    return result["statusCode"], json.loads(result["body"]) if result.get("body") else {}


@pytest.mark.parametrize("stage", ["$default", "prod", "v1"])
def test_a_non_member_is_refused_a_workspace_on_any_stage(call, aws, stage):
    call("update_memory", {"context": shared("w-2"), "arguments": {"content": "team w-2 only"}})

    status, body = _on_stage("team_document", stage, "/v1/memory/workspaces/w-2/document", mint("u-3", ["w-1"]))

    assert status == 403
    assert "team w-2 only" not in json.dumps(body)


@pytest.mark.parametrize("stage", ["$default", "prod"])
def test_a_member_reaches_the_workspace_on_any_stage(call, aws, stage):
    call("update_memory", {"context": shared("w-2"), "arguments": {"content": "team w-2 only"}})

    status, body = _on_stage("team_document", stage, "/v1/memory/workspaces/w-2/document", mint("u-3", ["w-2"]))

    assert status == 200 and body["document"]["content"] == "team w-2 only"


@pytest.mark.parametrize("stage", ["$default", "prod"])
def test_a_non_operator_is_refused_the_admin_routes_on_any_stage(aws, stage):
    status, _ = _on_stage("list_runs", stage, "/v1/admin/consolidation/runs", mint("u-3", []))

    assert status == 403


@pytest.mark.parametrize(("event_name", "expected"), [("team_document", 403), ("list_runs", 403), ("start_run", 403)])
def test_the_routes_check_again_even_if_the_check_before_routing_were_bypassed(
    aws, lambda_context, event_name, expected
):
    import sys

    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    from agent_memory.edges.auth import Principal

    app = sys.modules[load_handler("ManagementFunction").__module__].app
    app.append_context(principal=Principal(user_id="u-1", workspaces=frozenset(), admin=False))
    try:  # the plain resolver's resolve: routing without the check of the caller's class
        result = APIGatewayHttpResolver.resolve(app, load_event(f"management/{event_name}"), lambda_context)
    finally:
        app.clear_context()

    assert result["statusCode"] == expected
