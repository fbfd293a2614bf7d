"""``make openapi``: write docs/openapi.json, the OpenAPI document of the whole HTTP API, from the code.

Every route that ``template.yaml`` gives the HTTP API is described, and nothing else:

- Powertools builds each API function's paths from its routes and their annotations
  (``get_openapi_json_schema``): parameters, and every route's answers (``responses=``, from
  ``agent_memory.edges.responses``);
- every route reads its body itself (``agent_memory.edges.requests.reading``), so each request body is the
  model the route declares (``reads``): for a tool, its ``arguments`` model in an envelope (``tool_request``);
- each operation's security is its route's authorizer in the template: SigV4 (``AWS_IAM``) for the chat
  backend's routes, the JWT authorizer for the dashboard's, none for the health check;
- the request examples are the bodies of ``events/``, the realistic events the tests and ``sam local`` use.

A test fails when the committed file drifts from what this generates.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aws_lambda_powertools.event_handler.openapi.models import APIKey, APIKeyIn, HTTPBearer, SecurityBase
from pydantic import BaseModel

from local.template import ROOT, Route, http_routes, load_module

OPENAPI = ROOT / "docs" / "openapi.json"
EVENTS = ROOT / "events"
REF = "#/components/schemas/"

SECURITY_SCHEMES: dict[str, SecurityBase] = {
    "backendSigV4": APIKey.model_validate(
        {
            "type": "apiKey",
            "in": APIKeyIn.header,
            "name": "Authorization",
            "description": "AWS Signature Version 4, signed by the chat backend's IAM role, which needs "
            "`execute-api:Invoke` on the route: the HTTP API's `AWS_IAM` authorizer checks it before any code "
            "runs, and refuses with API Gateway's own 403. The local stack checks no signature.",
            "x-amazon-apigateway-authtype": "awsSigv4",
        }
    ),
    "dashboardJwt": HTTPBearer(
        bearerFormat="JWT",
        description="A JWT of the dashboard's OIDC provider. In AWS the HTTP API's JWT authorizer checks its "
        "issuer and audience (the `DashboardIssuer` and `DashboardAudience` parameters); the local stack checks "
        "it itself: HS256 with `$MEMORY_LOCAL_JWT_SECRET`, issuer `memory-local`, audience `memory-dashboard` "
        "(`make token`). Claims: `sub` (the user), `workspaces`, `memory_admin`.",
    ),
}
# template.yaml's authorizer of a route -> the operation's security requirement ([]: open).
SECURITY: dict[str, list[dict[str, list[str]]]] = {
    "AWS_IAM": [{"backendSigV4": []}],
    "DashboardJwt": [{"dashboardJwt": []}],
    "NONE": [],
}


def _request_models(app: Any) -> dict[str, type[BaseModel]]:
    """Route key -> the body model each route of ``app`` declares (``reads``)."""
    from agent_memory.edges.callers import route_key
    from agent_memory.edges.requests.declared import declared_body

    models: dict[str, type[BaseModel]] = {}
    for route in app.routes():
        key = route_key(route.method, route.path)
        body = declared_body(route.func, key)
        if body is not None:
            models[key] = body.model
    return models


def _event_examples() -> dict[str, dict[str, Any]]:
    """Route key -> ``{event name: {"value": body}}``: the JSON bodies of the API events under ``events/``."""
    examples: dict[str, dict[str, Any]] = {}
    for path in sorted(EVENTS.rglob("*.json")):
        event = json.loads(path.read_text())
        if event.get("version") == "2.0" and event.get("body") and "routeKey" in event:
            examples.setdefault(event["routeKey"], {})[path.stem] = {"value": json.loads(event["body"])}
    return examples


def _add_schemas(schemas: dict[str, Any], new: dict[str, Any]) -> None:
    for name, schema in new.items():
        if schemas.setdefault(name, schema) != schema:
            raise ValueError(f"two different schemas are both named {name!r}")


def _model_schema(schemas: dict[str, Any], model: type[BaseModel]) -> dict[str, str]:
    """Put ``model`` (and the models it uses) into the components; return the reference to it."""
    schema = model.model_json_schema(ref_template=REF + "{model}")
    _add_schemas(schemas, {**schema.pop("$defs", {}), model.__name__: schema})
    return {"$ref": REF + model.__name__}


def _named_by_title(document: dict[str, Any]) -> dict[str, Any]:
    """The document with each schema named by its title, references included: an answer's class is
    ``NoteAnswer`` and its title the published ``Note`` (``agent_memory.domain.shapes.published_name``), which the
    clients' types are named after; every other schema's title is its class's name already."""
    names = {name: schema.get("title", name) for name, schema in document["components"]["schemas"].items()}
    if len(set(names.values())) != len(names):
        raise ValueError(f"two schemas share a title: {sorted(names)}")
    text = re.sub(re.escape(REF) + r'([^"]+)"', lambda found: f'{REF}{names[found[1]]}"', json.dumps(document))
    renamed: dict[str, Any] = json.loads(text)
    schemas = renamed["components"]["schemas"]
    renamed["components"]["schemas"] = {names[name]: schema for name, schema in schemas.items()}
    return renamed


def _used_schemas(document: dict[str, Any]) -> set[str]:
    """The component schemas that the paths reach, directly or through other schemas."""
    schemas = document["components"]["schemas"]
    used: set[str] = set()
    pending = set(re.findall(re.escape(REF) + r'([^"]+)"', json.dumps(document["paths"])))
    while pending:
        name = pending.pop()
        used.add(name)
        pending |= set(re.findall(re.escape(REF) + r'([^"]+)"', json.dumps(schemas[name]))) - used
    return used


def _operation(document: dict[str, Any], route: Route) -> dict[str, Any]:
    try:
        operation: dict[str, Any] = document["paths"][route.path][route.method.lower()]
    except KeyError:
        raise ValueError(f"template.yaml routes {route.route_key} to {route.function}, which lacks it") from None
    return operation


def build() -> dict[str, Any]:
    """The document: every route of the template's HTTP API, from the functions that serve them."""
    routes = http_routes()
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    bodies: dict[str, type[BaseModel]] = {}
    for function in dict.fromkeys(route.function for route in routes):
        app = load_module(function).app
        bodies.update(_request_models(app))
        part = json.loads(app.get_openapi_json_schema())
        for path, item in part["paths"].items():
            paths.setdefault(path, {}).update(item)
        _add_schemas(schemas, part.get("components", {}).get("schemas", {}))
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Agent memory",
            "version": "1.0.0",
            "description": "Durable memory for chat agents. The chat backend calls the tools and the per-turn "
            "context with the conversation context it alone knows (docs/api.md §3); the dashboard manages personal "
            'and team memory with a user\'s JWT (docs/api.md §5). Errors are `{"error": {"code", "message"}}`, '
            "never a stack trace.",
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                name: scheme.model_dump(by_alias=True, exclude_none=True, mode="json")
                for name, scheme in SECURITY_SCHEMES.items()
            },
        },
    }
    examples = _event_examples()
    for route in routes:
        operation = _operation(document, route)
        operation["security"] = SECURITY[route.authorizer]
        if route.route_key in bodies:
            content = {"schema": _model_schema(schemas, bodies[route.route_key])}
            operation["requestBody"] = {"required": True, "content": {"application/json": content}}
        if route.route_key in examples and "requestBody" in operation:
            operation["requestBody"]["content"]["application/json"]["examples"] = examples[route.route_key]
        for answer in operation["responses"].values():
            if not answer.get("content"):
                answer.pop("content", None)  # a 204 has no body
    routed = {(route.path, route.method.lower()) for route in routes}
    extra = [(path, method) for path, item in paths.items() for method in item if (path, method) not in routed]
    if extra:
        raise ValueError(f"routes that template.yaml does not give the HTTP API: {extra}")
    document = _named_by_title(document)
    used = _used_schemas(document)
    schemas = document["components"]["schemas"]
    document["components"]["schemas"] = {name: schema for name, schema in schemas.items() if name in used}
    return document


def generate() -> str:
    """The document as text, keys sorted, so that a diff shows only real changes."""
    return json.dumps(build(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    OPENAPI.write_text(generate())
    print(f"wrote {OPENAPI.relative_to(ROOT)}")
