"""One request path, by construction: every route of template.yaml's HTTP API declares the body it reads
(``agent_memory.edges.requests.reading.reads``; a model, or none), and reads it the one way. Each route is sent,
by a caller of its class, a body that is not JSON and a JSON body its model refuses: every refusal has the
contract's error shape (``{"error": {"code", "message"}}``, and ``details`` only on a 422), the chat backend's
routes answer 400 ``malformed_request`` for what is not JSON and the dashboard's 422 ``json_invalid``, as
docs/api.md §6 says, and nothing is written. Every integer query parameter and path parameter a route
validates is refused in the same words when it is not a plain decimal."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.edges.callers import ROUTES, Caller, route_key
from agent_memory.edges.requests.declared import declared_body
from local.api_gateway import HttpRequest, api_gateway_event
from local.lambda_context import LambdaContext
from local.openapi import OPENAPI
from local.template import Route, http_routes, load_handler, load_module
from local.token import mint
from tests.support.scopes import write_note

PATH_VALUES = {"user_id": "u-1", "workspace_id": "w-3", "note_id": "n-1", "version": "1"}
DASHBOARD = (Caller.MEMBER, Caller.OPERATOR)
NOT_JSON = b'{"context": '
UNKNOWN_KEY = json.dumps({"not_in_any_model": 1}).encode()


def _key(route: Route) -> str:
    return route.route_key


def _resolver_route(route: Route) -> Any:
    """The route as its function's resolver serves it."""
    app = load_module(route.function).app
    (served,) = [each for each in app.routes() if route_key(each.method, each.path) == route.route_key]
    return served


def _send(route: Route, body: bytes | None, query: str = "", path: dict[str, str] | None = None) -> tuple[int, Any]:
    """``route`` called by a caller of its class (the local stack: no IAM, tokens verified with its secret)."""
    values = {**PATH_VALUES, **(path or {})}
    headers = [("host", "api.example.com"), ("content-type", "application/json")]
    if ROUTES[route.route_key] in DASHBOARD:
        admin = ROUTES[route.route_key] is Caller.OPERATOR
        headers.append(("authorization", f"Bearer {mint('u-1', ['w-3'], admin=admin)}"))
    target = route.path.format_map(values) + (f"?{query}" if query else "")
    request = HttpRequest(route.method, target, "HTTP/1.1", "10.0.0.1", headers, body or b"")
    parameters = {name: value for name, value in values.items() if f"{{{name}}}" in route.path}
    result = load_handler(route.function)(api_gateway_event(request, route, parameters), LambdaContext())
    return result["statusCode"], json.loads(result["body"]) if result.get("body") else None


@pytest.fixture
def local_stack(aws: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("MEMORY_BACKEND_ROLE_ARN", raising=False)
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", "local-dev-secret")
    bootstrap.reset()
    for scope in (Scope("personal", "u-1"), Scope("team", "w-3")):
        write_note(scope, datetime(2026, 12, 1, tzinfo=UTC), f"a note of {scope.key}")
    return aws


def _table(client: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.scan(TableName="MemoryTable")["Items"]
    return sorted(items, key=lambda item: (item["pk"]["S"], item["sk"]["S"]))


def _refusal(status: int, body: Any) -> tuple[int, str]:
    """The refusal's status and code, after checking it has the contract's error shape."""
    assert set(body) == {"error"} or (status == 422 and set(body) == {"error", "details"}), body
    assert set(body["error"]) == {"code", "message"} and body["error"]["message"], body
    return status, body["error"]["code"]


def test_every_route_declares_the_body_it_reads_and_the_openapi_document_describes_it():
    documented = json.loads(OPENAPI.read_text())["paths"]
    for route in http_routes():
        body = declared_body(_resolver_route(route).func, route.route_key)
        operation = documented[route.path][route.method.lower()]
        described = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        assert described == ({"$ref": f"#/components/schemas/{body.model.__name__}"} if body else None), route


BODIES = [route for route in http_routes() if declared_body(_resolver_route(route).func, route.route_key)]


@pytest.mark.parametrize("route", BODIES, ids=_key)
def test_each_route_with_a_body_refuses_a_broken_one_the_one_way_and_writes_nothing(local_stack, route):
    before = _table(local_stack)
    dashboard = ROUTES[route.route_key] in DASHBOARD

    status, body = _send(route, NOT_JSON)
    assert _refusal(status, body) == ((422, "invalid_input") if dashboard else (400, "malformed_request"))
    if dashboard:
        assert body["details"][0]["type"] == "json_invalid"

    status, body = _send(route, UNKNOWN_KEY)
    assert _refusal(status, body) == (422, "invalid_input")
    assert any(detail["type"] in ("missing", "extra_forbidden") for detail in body["details"]), body
    assert body["error"]["message"].startswith(("the request does not match", "the import does not match")), body

    status, body = _send(route, None)
    assert _refusal(status, body) == (422, "invalid_input")
    assert "required" in body["error"]["message"], body
    assert _table(local_stack) == before


@pytest.mark.parametrize(
    "route",
    [route for route in http_routes() if route not in BODIES and ROUTES[route.route_key] in DASHBOARD],
    ids=_key,
)
def test_each_dashboard_route_without_a_body_still_refuses_a_broken_one_and_writes_nothing(local_stack, route):
    """The dashboard reads every request's body before routing (a broken one is refused before its parameters
    are looked at)."""
    before = _table(local_stack)

    status, body = _send(route, NOT_JSON)

    assert _refusal(status, body) == (422, "invalid_input") and body["details"][0]["type"] == "json_invalid"
    assert _table(local_stack) == before


def _integer_parameters(route: Route) -> list[tuple[str, str]]:
    """(where, name) of each integer parameter the route validates: ``query`` or ``path``."""
    dependant = _resolver_route(route).dependant
    return [
        (where, field.name)
        for where, fields in (("query", dependant.query_params), ("path", dependant.path_params))
        for field in fields
        if field.field_info.annotation is int
    ]


INTEGERS = [(route, where, name) for route in http_routes() for where, name in _integer_parameters(route)]


@pytest.mark.parametrize(
    ("route", "where", "name"), INTEGERS, ids=[f"{route.route_key} {name}" for route, _, name in INTEGERS]
)
def test_each_integer_parameter_is_a_plain_decimal(local_stack, route, where, name):
    before = _table(local_stack)
    for odd in ("+1", "1_0", "1.0", "0x1"):
        query, path = (f"{name}={odd}", None) if where == "query" else ("", {name: odd})

        status, body = _send(route, None, query, path)

        assert _refusal(status, body) == (422, "invalid_input"), odd
        assert body["details"] == [
            {
                "loc": [where, name],
                "msg": "must be a plain decimal integer (digits only, at most 18)",
                "type": "plain_integer",
            }
        ]
    assert _table(local_stack) == before


def test_a_refusal_lists_the_parameters_problems_then_the_bodys(local_stack):
    """One 422 for a request whose path and body are both wrong, the path's problem first, as ever."""
    (restore,) = [
        route for route in http_routes() if route.route_key.endswith("/personal/document/versions/{version}/restore")
    ]

    status, body = _send(restore, json.dumps({"expected_version": "1", "zz": 0}).encode(), path={"version": "0"})

    assert _refusal(status, body) == (422, "invalid_input")
    assert [(detail["loc"], detail["type"]) for detail in body["details"]] == [
        (["path", "version"], "greater_than_equal"),
        (["body", "expected_version"], "int_type"),
        (["body", "zz"], "extra_forbidden"),
    ]
    assert (
        body["error"]["message"]
        == "the request does not match the contract: `path.version`: " + body["details"][0]["msg"]
    )
