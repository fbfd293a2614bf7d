"""What each method returns is docs/openapi.json's schema for its route: every typed dictionary of
``agent_memory_client.types`` is the schema of its name (keys, required keys, value types), each client method
returns its route's schema, and the async clients have the blocking ones' methods, awaited."""

from __future__ import annotations

import inspect
import json
import operator
from functools import reduce
from pathlib import Path
from typing import Any, Literal, get_args, get_type_hints, is_typeddict

import pytest
from agent_memory_client import (
    AsyncManagementClient,
    AsyncMemoryClient,
    AsyncPlatformOperations,
    ManagementClient,
    MemoryClient,
    PlatformOperations,
    types,
)

from tests.support.docs import CLIENT_METHODS

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = json.loads((ROOT / "docs" / "openapi.json").read_text())
SCHEMAS = OPENAPI["components"]["schemas"]
ANSWERS = {name: kind for name, kind in vars(types).items() if is_typeddict(kind) and kind.__module__ == types.__name__}
NOT_HTTP = {"FlushResult"}  # FlushFunction's answer, over Lambda Invoke (docs/api.md §4)


def python_type(schema: dict[str, Any]) -> Any:
    """The Python type that a JSON Schema of the API describes."""
    if "$ref" in schema:
        return ANSWERS[schema["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in schema:
        return reduce(operator.or_, (python_type(option) for option in schema["anyOf"]))
    if "const" in schema:
        return Literal[schema["const"]]
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    if schema["type"] == "array":
        return list[python_type(schema["items"])]  # type: ignore[misc]
    if schema["type"] == "object":
        return dict[str, Any]
    return {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)}[schema["type"]]


@pytest.mark.parametrize("name", sorted(set(ANSWERS) - NOT_HTTP))
def test_each_answer_type_is_the_openapi_schema_of_its_name(name: str) -> None:
    answer, schema = ANSWERS[name], SCHEMAS[name]
    fields = get_type_hints(answer)

    assert set(fields) == set(schema["properties"])
    assert answer.__required_keys__ == set(schema.get("required", []))
    assert fields == {key: python_type(value) for key, value in schema["properties"].items()}


def route_answer(route: str) -> Any:
    """The Python type of a route's success answer in docs/openapi.json (None for a 204)."""
    method, path = route.split(" ")
    for base in ("/v1/memory/personal", "/v1/memory/workspaces/{workspace_id}"):
        if (operation := OPENAPI["paths"].get(path.replace("{base}", base), {}).get(method.lower())) is not None:
            break
    (success,) = (answer for status, answer in operation["responses"].items() if status.startswith("2"))
    if "content" not in success:
        return type(None)
    schema = success["content"]["application/json"]["schema"]
    if schema == {"$ref": "#/components/schemas/Tools"}:  # GET /v1/tools: the method answers the list it holds
        return python_type(SCHEMAS["Tools"]["properties"]["tools"])
    return python_type(schema)


@pytest.mark.parametrize("route", sorted(CLIENT_METHODS))
def test_each_method_returns_its_routes_schema(route: str) -> None:
    (returned,) = get_args(get_type_hints(CLIENT_METHODS[route])["return"])  # Call[<the answer>]
    assert returned == route_answer(route)


@pytest.mark.parametrize(
    ("blocking", "awaited"),
    [
        (MemoryClient, AsyncMemoryClient),
        (ManagementClient, AsyncManagementClient),
        (PlatformOperations, AsyncPlatformOperations),
    ],
)
def test_the_async_clients_have_the_blocking_ones_methods_awaited(blocking: type, awaited: type) -> None:
    def methods(client: type) -> dict[str, inspect.Signature]:
        return {
            name: inspect.signature(getattr(client, name))
            for name in dir(client)
            if not name.startswith("_") and callable(getattr(client, name)) and name not in {"close", "aclose"}
        }

    assert methods(blocking) == methods(awaited)
    if awaited is AsyncPlatformOperations:
        client = AsyncMemoryClient("http://127.0.0.1:9").admin
        pending = client.erase(user="u-1")
    elif awaited is AsyncManagementClient:
        client = awaited("http://127.0.0.1:9", token="t")
        pending = client.start_run()
    else:
        client = awaited("http://127.0.0.1:9")
        pending = client.health()
    assert inspect.iscoroutine(pending)
    pending.close()
