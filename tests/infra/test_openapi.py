"""docs/openapi.json describes exactly the HTTP API that template.yaml declares, with its authorizers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local.openapi import OPENAPI, SECURITY
from local.template import http_routes

METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(OPENAPI.read_text())
    return loaded


def operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method.upper(), path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    }


def test_every_route_of_the_template_is_documented_and_nothing_else(document):
    routed = {(route.method, route.path) for route in http_routes()}

    assert set(operations(document)) == routed


def test_each_operation_requires_what_its_route_authorizer_checks(document):
    documented = operations(document)
    schemes = document["components"]["securitySchemes"]

    for route in http_routes():
        security = documented[(route.method, route.path)]["security"]
        assert security == SECURITY[route.authorizer], route.route_key
        assert all(name in schemes for requirement in security for name in requirement)
    assert schemes["backendSigV4"]["x-amazon-apigateway-authtype"] == "awsSigv4"
    assert (schemes["dashboardJwt"]["type"], schemes["dashboardJwt"]["scheme"]) == ("http", "bearer")
    assert "security" not in document  # no global default: health is open, every other route says who may call


def test_every_body_taking_route_describes_its_body_and_every_answer_its_shape(document):
    schemas = document["components"]["schemas"]
    for (method, path), operation in operations(document).items():
        if method in {"POST", "PUT"} and path != "/v1/admin/consolidation/runs":
            body = operation["requestBody"]
            assert body["required"] is True, path
            reference = body["content"]["application/json"]["schema"]["$ref"]
            assert schemas[reference.rsplit("/", 1)[1]]["additionalProperties"] is False, path
        for status, answer in operation["responses"].items():
            if status == "204":
                assert "content" not in answer
                continue
            reference = answer["content"]["application/json"]["schema"]["$ref"]
            name = reference.rsplit("/", 1)[1]
            assert schemas[name]["additionalProperties"] is False, (method, path, status)
            if int(status) >= 400:
                assert name == "ErrorBody", (method, path, status)


def test_the_tool_bodies_are_the_envelope_around_the_tools_own_arguments(document):
    from agent_memory.edges.tool_catalog import tool_definitions

    schemas = document["components"]["schemas"]
    for tool in tool_definitions():
        operation = document["paths"][f"/v1/tools/{tool['name']}"]["post"]
        request = schemas[operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]]
        assert request["required"] == ["context", "arguments"]
        assert request["properties"]["context"] == {"$ref": "#/components/schemas/ConversationContext"}
        arguments = schemas[request["properties"]["arguments"]["$ref"].rsplit("/", 1)[1]]
        assert set(arguments["properties"]) == set(tool["parameters"]["properties"])
    context = document["paths"]["/v1/context"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert schemas[context["$ref"].rsplit("/", 1)[1]]["required"] == ["context"]
