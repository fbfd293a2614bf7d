"""docs/api.md §3 scope binding: the conversation decides the scope; the model can never name one."""

from __future__ import annotations

import base64
import json

import pytest

from local.template import load_handler
from tests.support.calls import ROUTE_FUNCTIONS
from tests.support.events import load_event
from tests.support.scopes import private, shared


def _items(aws):
    """Every item of the table, read per known partition (tests only; the service never scans)."""
    rows = []
    for pk in ("user#u-1", "user#u-2", "ws#w-a", "ws#w-b"):
        rows += aws.query(
            TableName="MemoryTable", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": pk}}
        )["Items"]
    return rows


def test_private_conversation_writes_the_callers_personal_memory(call, aws):
    answer = call("remember", {"context": private("u-1", workspace_id="w-a"), "arguments": {"text": "likes tea"}})

    assert answer.status == 201
    assert {item["pk"]["S"] for item in _items(aws)} == {"user#u-1"}
    assert call("context", {"context": private("u-1")}).body["scope"] == "personal"


def test_shared_conversation_writes_the_workspace_team_memory(call, aws):
    answer = call("remember", {"context": shared("w-a"), "arguments": {"text": "deploys on Tuesday"}})

    assert answer.status == 201
    assert {item["pk"]["S"] for item in _items(aws)} == {"ws#w-a"}
    team = call("context", {"context": shared("w-a", user="u-2")}).body
    assert team["scope"] == "team"
    assert [n["text"] for n in team["recent_notes"]] == ["deploys on Tuesday"]


def test_workspace_a_never_sees_or_touches_workspace_b(call, aws):
    call("remember", {"context": shared("w-a"), "arguments": {"text": "secret of A"}})
    call("update_memory", {"context": shared("w-a"), "arguments": {"content": "# A only"}})

    b = call("context", {"context": shared("w-b")}).body
    personal = call("context", {"context": private("u-1")}).body

    for view in (b, personal):
        assert view["recent_notes"] == []
        assert view["document"]["version"] == 0
        assert "secret of A" not in view["system_prompt"] and "A only" not in view["system_prompt"]


@pytest.mark.parametrize("route", ["remember", "update_memory", "context"])
def test_someone_elses_private_thread_is_403_and_nothing_is_written(call, aws, route):
    body = {"context": private("u-1", thread_owner_id="u-2")}
    if route != "context":
        body["arguments"] = {"text": "x"} if route == "remember" else {"content": "x"}

    answer = call(route, body)

    assert answer.status == 403
    assert answer.body["error"]["code"] == "forbidden"
    assert _items(aws) == []


def test_own_private_thread_with_thread_owner_id_is_allowed(call):
    assert (
        call("remember", {"context": private("u-1", thread_owner_id="u-1"), "arguments": {"text": "x"}}).status == 201
    )


@pytest.mark.parametrize("route", ["remember", "update_memory", "context"])
def test_shared_without_workspace_is_422(call, aws, route):
    body = {"context": {"user_id": "u-1", "thread_id": "t-1", "visibility": "shared"}}
    if route != "context":
        body["arguments"] = {"text": "x"} if route == "remember" else {"content": "x"}

    answer = call(route, body)

    assert answer.status == 422
    assert answer.body["details"][0]["loc"] == ["context", "workspace_id"]
    assert _items(aws) == []


@pytest.mark.parametrize("smuggled", ["user_id", "workspace_id", "scope", "visibility", "thread_id"])
@pytest.mark.parametrize("route", ["remember", "update_memory"])
def test_arguments_naming_a_scope_are_422(call, aws, route, smuggled):
    arguments = {"text": "x"} if route == "remember" else {"content": "x"}
    arguments[smuggled] = "w-b"

    answer = call(route, {"context": shared("w-a"), "arguments": arguments})

    assert answer.status == 422
    assert answer.body["error"]["code"] == "invalid_input"
    assert answer.body["details"][0]["loc"] == ["arguments", smuggled]
    assert _items(aws) == []


@pytest.mark.parametrize(
    "context",
    [
        {"user_id": "u 1", "thread_id": "t-1", "visibility": "private"},
        {"user_id": "u#1", "thread_id": "t-1", "visibility": "private"},
        {"user_id": "x" * 129, "thread_id": "t-1", "visibility": "private"},
        {"user_id": "", "thread_id": "t-1", "visibility": "private"},
        {"user_id": "u-1", "thread_id": "t/1", "visibility": "private"},
        {"user_id": "u-1", "thread_id": "t-1", "visibility": "shared", "workspace_id": "w#b"},
        {"user_id": "u-1", "thread_id": "t-1", "visibility": "public"},
        {"user_id": "u-1", "visibility": "private"},
        {"thread_id": "t-1", "visibility": "private"},
        {"user_id": 7, "thread_id": "t-1", "visibility": "private"},
        {"user_id": "u-1", "thread_id": "t-1", "visibility": "private", "document_version": -1},
        {"user_id": "u-1", "thread_id": "t-1", "visibility": "private", "document_version": "4"},
        {"user_id": "u-1", "thread_id": "t-1", "visibility": "private", "document_version": 1.5},
        {"user_id": "u-1", "thread_id": "t-1", "visibility": "private", "scope": "team"},
    ],
)
def test_bad_context_is_422_and_nothing_is_written(call, aws, context):
    answer = call("remember", {"context": context, "arguments": {"text": "x"}})

    assert answer.status == 422
    assert answer.body["error"]["code"] == "invalid_input"
    assert _items(aws) == []


def test_ids_at_the_limits_of_the_pattern_are_accepted(call):
    context = private("A.z_9@-" + "x" * 121, thread="t")
    assert call("remember", {"context": context, "arguments": {"text": "x"}}).status == 201


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ("not json", 400),
        ("{", 400),
        ("[]", 422),
        ('"text"', 422),
        ("{}", 422),
        ('{"context": null, "arguments": {"text": "x"}}', 422),
        ('{"context": {"user_id": "u-1", "thread_id": "t-1", "visibility": "private"}}', 422),
        ('{"context": {"user_id": "u-1", "thread_id": "t-1", "visibility": "private"}, "arguments": []}', 422),
        ('{"context": {"user_id": "u-1", "thread_id": "t-1", "visibility": "private"}, "arguments": {"text": 5}}', 422),
        ('{"context": {"user_id": "u-1", "thread_id": "t-1", "visibility": "private"}, "arguments": {}}', 422),
        ('{"context": {"user_id": "u-1", "thread_id": "t-1", "visibility": "private"}, "arguments": {}, "x": 1}', 422),
    ],
)
def test_malformed_bodies_are_4xx_with_the_error_shape(call, aws, raw, status):
    answer = call("remember", raw_body=raw)

    assert answer.status == status
    assert set(answer.body) <= {"error", "details"}
    assert set(answer.body["error"]) == {"code", "message"}
    assert "Traceback" not in answer.body["error"]["message"]
    assert _items(aws) == []


@pytest.mark.parametrize("route", ["remember", "update_memory", "recall", "context"])
def test_a_body_that_is_not_utf8_is_400_not_500(aws, lambda_context, route):
    """API Gateway passes such a body base64-encoded; decoding it once raised (a 500). Found by tests/fuzz."""
    event = load_event(route)
    event["body"], event["isBase64Encoded"] = base64.b64encode(b"\xff\xfe{not utf-8").decode(), True

    result = load_handler(ROUTE_FUNCTIONS[route])(event, lambda_context)

    assert result["statusCode"] == 400
    assert json.loads(result["body"])["error"]["code"] == "malformed_request"
    assert _items(aws) == []


def test_empty_body_is_422(call):
    answer = call("context", raw_body="")

    assert answer.status == 422
    assert answer.body["error"]["code"] == "invalid_input"


def test_context_takes_no_arguments(call):
    answer = call("context", {"context": private(), "arguments": {}})
    assert answer.status == 422
    assert answer.body["details"][0]["loc"] == ["arguments"]
