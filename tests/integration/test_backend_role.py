"""With ``MEMORY_BACKEND_ROLE_ARN`` (the template's ``BackendRoleArn``), the tools, ``context`` and the platform's
routes answer only the chat backend's role: another SigV4 caller, even one IAM lets in, is a 403 and nothing is
written or erased (docs/deploying.md "The chat backend's IAM role")."""

from __future__ import annotations

import json

import pytest

from agent_memory import bootstrap
from local.template import load_handler
from tests.support.events import load_event
from tests.support.scopes import note_texts, private

ROLE = "arn:aws:iam::123456789012:role/chat-backend"


def send(name, body, caller, lambda_context):
    event = load_event(name, body)
    if caller is None:
        event["requestContext"]["authorizer"] = {}
    else:
        event["requestContext"]["authorizer"]["iam"]["userArn"] = caller
    function = {"context": "ContextFunction"}.get(name, "PlatformFunction" if "/" in name else "ToolsFunction")
    return load_handler(function)(event, lambda_context)


@pytest.fixture
def backend_role(monkeypatch):
    monkeypatch.setenv("MEMORY_BACKEND_ROLE_ARN", ROLE)
    bootstrap.reset()


@pytest.mark.parametrize(
    "caller",
    [
        "arn:aws:sts::123456789012:assumed-role/chat-backend/session-1",
        "arn:aws:iam::123456789012:role/chat-backend",
    ],
)
def test_the_backends_role_and_its_sessions_are_answered(aws, lambda_context, backend_role, caller):
    result = send("remember", {"context": private(), "arguments": {"text": "a fact"}}, caller, lambda_context)

    assert result["statusCode"] == 201


@pytest.mark.parametrize(
    "caller",
    [
        "arn:aws:sts::123456789012:assumed-role/intern-sandbox/session-1",
        "arn:aws:sts::999999999999:assumed-role/chat-backend/session-1",  # the same name in another account
        "arn:aws:iam::123456789012:user/chat-backend",
        "arn:aws:sts::123456789012:assumed-role/chat-backend-old/s",
        None,
    ],
)
@pytest.mark.parametrize("route", ["remember", "context"])
def test_any_other_caller_is_403_and_nothing_is_written(aws, lambda_context, backend_role, caller, route):
    body = {"context": private()} if route == "context" else {"context": private(), "arguments": {"text": "planted"}}

    result = send(route, body, caller, lambda_context)

    assert result["statusCode"] == 403
    assert note_texts(aws, "user#u-1") == []


def test_unset_every_iam_caller_is_answered(aws, lambda_context):
    caller = "arn:aws:sts::123456789012:assumed-role/intern-sandbox/session-1"

    result = send("remember", {"context": private(), "arguments": {"text": "a fact"}}, caller, lambda_context)

    assert result["statusCode"] == 201


@pytest.mark.parametrize("name", ["platform/user_export", "platform/user_erase", "platform/user_usage"])
def test_the_platform_routes_refuse_another_role_exactly_as_the_tools_do(aws, lambda_context, backend_role, name):
    """They answered 200 to any role IAM let in: an erase by another role erased the user's notes."""
    backend, other = "arn:aws:sts::123456789012:assumed-role/chat-backend/s", ROLE.replace("chat-backend", "intern")
    send("remember", {"context": private(), "arguments": {"text": "a fact"}}, backend, lambda_context)

    refused = send(name, None, other, lambda_context)
    tools = send("remember", {"context": private(), "arguments": {"text": "planted"}}, other, lambda_context)

    assert (refused["statusCode"], json.loads(refused["body"])) == (403, json.loads(tools["body"]))
    assert note_texts(aws, "user#u-1") == ["a fact"]
