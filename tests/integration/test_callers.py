"""Who may call what, by construction: every route of template.yaml's HTTP API has one class of caller in
``agent_memory.edges.callers.ROUTES``, and answers only that class. Each route is sent every kind of caller
the service knows, as in-process API Gateway events through its function's handler: the chat backend's role,
another IAM role, a dashboard member's token, an operator's token, and nothing. A refused caller gets the
error shape's 401 or 403 and changes nothing; an admitted one gets past the check (whatever the route then
answers). Run as deployed in AWS (``MEMORY_BACKEND_ROLE_ARN`` set, tokens read from the JWT authorizer's
claims) and as the local stack (no IAM, tokens verified with the local secret)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import api_gateway

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.edges.callers import ROUTES, Caller
from local.api_gateway import HttpRequest, api_gateway_event
from local.lambda_context import LambdaContext
from local.template import Route, http_routes, load_handler, load_template
from local.token import mint
from tests.support.scopes import write_note

ROLE = "arn:aws:iam::123456789012:role/chat-backend"
ROLE_ARNS = {
    "backend role": "arn:aws:sts::123456789012:assumed-role/chat-backend/session-1",
    "another role": "arn:aws:sts::123456789012:assumed-role/intern-sandbox/session-1",
}
# The dashboard's callers: a member of w-3 (and no operator), an operator member of no workspace.
TOKENS = {
    "member token": {"sub": "u-1", "workspaces": ["w-3"], "admin": False},
    "operator token": {"sub": "u-9", "workspaces": [], "admin": True},
}
KINDS = [*ROLE_ARNS, *TOKENS, "no credentials"]
PATH_VALUES = {"user_id": "u-1", "workspace_id": "w-3", "note_id": "n-1", "version": "1"}
TEMPLATE_AUTHORIZERS = {Caller.BACKEND: "AWS_IAM", Caller.MEMBER: "DashboardJwt", Caller.OPERATOR: "DashboardJwt"}
TEMPLATE_AUTHORIZERS[Caller.OPEN] = "NONE"


def route_key(route: Route) -> str:
    return route.route_key


def admitted(route: Route, mode: str) -> set[str]:
    """The kinds of caller a route's class admits. On the local stack nothing checks a signature, so every
    caller without a dashboard token stands for the backend. An operator's token is a dashboard user's: on a
    personal route it reaches the operator's own memory."""
    caller = ROUTES[route.route_key]
    if caller is Caller.OPEN:
        return set(KINDS)
    if caller is Caller.BACKEND:
        return {"backend role"} if mode == "aws" else {*ROLE_ARNS, "no credentials"}
    if caller is Caller.OPERATOR:
        return {"operator token"}
    return {"member token"} if "{workspace_id}" in route.path else set(TOKENS)


def event(route: Route, kind: str, mode: str) -> dict[str, Any]:
    """The API Gateway event of a call to ``route`` by ``kind``, as the local stack builds it; in AWS with the
    context its authorizer adds (the IAM caller, or the JWT's claims as API Gateway flattens them)."""
    path = route.path.format_map(PATH_VALUES)
    parameters = {name: value for name, value in PATH_VALUES.items() if f"{{{name}}}" in route.path}
    headers = [("host", "api.example.com"), ("accept", "application/json")]
    if kind in ROLE_ARNS:
        headers.append(("authorization", "AWS4-HMAC-SHA256 Credential=ASIAEXAMPLE/20261206/eu-west-1/execute-api"))
    if kind in TOKENS:
        claims = TOKENS[kind]
        headers.append(("authorization", f"Bearer {mint(claims['sub'], claims['workspaces'], admin=claims['admin'])}"))
    request = HttpRequest(route.method, path, "HTTP/1.1", "10.0.0.1", headers, b"")
    built = api_gateway_event(request, route, parameters)
    if mode == "aws" and kind in ROLE_ARNS:
        built["requestContext"]["authorizer"] = {"iam": {"accountId": "123456789012", "userArn": ROLE_ARNS[kind]}}
    elif mode == "aws" and kind in TOKENS:
        claims = TOKENS[kind]
        flattened = {"sub": claims["sub"], "workspaces": f"[{' '.join(claims['workspaces'])}]"}
        flattened |= {"memory_admin": "true"} if claims["admin"] else {}
        built["requestContext"]["authorizer"] = {"jwt": {"claims": flattened, "scopes": None}}
    return built


def send(route: Route, kind: str, mode: str) -> tuple[int, Any]:
    result = load_handler(route.function)(event(route, kind, mode), LambdaContext())
    return result["statusCode"], json.loads(result["body"]) if result.get("body") else None


@pytest.fixture(params=["aws", "local"])
def mode(request, monkeypatch) -> str:
    if request.param == "aws":
        monkeypatch.setenv("MEMORY_BACKEND_ROLE_ARN", ROLE)
        monkeypatch.delenv("MEMORY_LOCAL_JWT_SECRET", raising=False)
    else:
        monkeypatch.delenv("MEMORY_BACKEND_ROLE_ARN", raising=False)
        monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", "local-dev-secret")
    bootstrap.reset()
    return str(request.param)


def table(client: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.scan(TableName="MemoryTable")["Items"]
    return sorted(items, key=lambda item: (item["pk"]["S"], item["sk"]["S"]))


def api_events() -> list[tuple[str, str]]:
    """Every function's API events in template.yaml, REST (``Api``) or HTTP (``HttpApi``): (type, route key)."""
    return [
        (event["Type"], f"{event['Properties']['Method'].upper()} {event['Properties']['Path']}")
        for resource in load_template()["Resources"].values()
        if resource["Type"] == "AWS::Serverless::Function"
        for event in resource["Properties"].get("Events", {}).values()
        if event["Type"] in ("Api", "HttpApi")
    ]


def test_the_table_names_exactly_the_templates_routes_each_behind_the_authorizer_of_its_class():
    routes = http_routes()

    assert {kind for kind, _ in api_events()} == {"HttpApi"}  # one HTTP API: its resolvers check every route
    assert sorted(ROUTES) == sorted(key for _, key in api_events()) == sorted(route.route_key for route in routes)
    assert {route.route_key: route.authorizer for route in routes} == {
        key: TEMPLATE_AUTHORIZERS[caller] for key, caller in ROUTES.items()
    }


@pytest.mark.parametrize("route", http_routes(), ids=route_key)
def test_each_route_answers_its_class_of_caller_and_refuses_every_other(aws, monkeypatch, mode, route):
    for scope in (Scope("personal", "u-1"), Scope("personal", "u-9"), Scope("team", "w-3")):
        write_note(scope, datetime(2026, 12, 1, tzinfo=UTC), f"a note of {scope.key}")
    before = table(aws)
    welcome = admitted(route, mode)
    ran: list[str] = []

    def tripwire(self: api_gateway.Route, *args: Any, **kwargs: Any) -> None:
        """Nothing of a route (its middlewares, its validation, its code) may run for a refused caller."""
        ran.append(f"{self.method} {self.path}")
        raise AssertionError("a route ran for a refused caller")

    for kind in sorted(set(KINDS) - welcome):
        with monkeypatch.context() as patched:
            patched.setattr(api_gateway.Route, "__call__", tripwire)
            status, body = send(route, kind, mode)
        needs_a_token = ROUTES[route.route_key] in (Caller.MEMBER, Caller.OPERATOR) and kind not in TOKENS
        expected = (401, "unauthorized") if needs_a_token else (403, "forbidden")
        assert (status, body["error"]["code"]) == expected, kind
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, kind
    assert ran == []
    assert table(aws) == before

    for kind in sorted(welcome):
        status, body = send(route, kind, mode)
        assert status not in (401, 403), (kind, body)
        assert body != {"error": {"code": "not_found", "message": "no such route"}}, kind  # its function serves it


@pytest.mark.parametrize(
    "route", [route for route in http_routes() if ROUTES[route.route_key] is Caller.BACKEND], ids=route_key
)
def test_every_backend_route_refuses_another_role_exactly_as_the_tools_do(aws, monkeypatch, route):
    monkeypatch.setenv("MEMORY_BACKEND_ROLE_ARN", ROLE)
    bootstrap.reset()
    (remember,) = [each for each in http_routes() if each.route_key == "POST /v1/tools/remember"]

    assert send(route, "another role", "aws") == send(remember, "another role", "aws")
