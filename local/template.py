"""Read ``template.yaml``, the single source of truth: tables, functions and their HTTP routes.

The tests and the local stack build their DynamoDB tables and their routing from here, so neither can
drift from what ``sam deploy`` creates.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache, wraps
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"
# The logical id of the function whose handler is running in this context, while it runs: what a call to AWS is
# made as, so that the tests can hold each call to that function's policies (tests/support/iam).
RUNNING_FUNCTION: ContextVar[str | None] = ContextVar("running_function", default=None)


class _CfnLoader(yaml.SafeLoader):
    """A YAML loader that accepts CloudFormation's short-form tags (``!Ref``, ``!GetAtt``...) as plain data."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    return {name: value}


_CfnLoader.add_multi_constructor("!", _tag)


@cache
def load_template() -> dict[str, Any]:
    return yaml.load(TEMPLATE.read_text(), Loader=_CfnLoader)  # noqa: S506 - a SafeLoader subclass


def _resources(kind: str) -> dict[str, dict[str, Any]]:
    return {name: res for name, res in load_template()["Resources"].items() if res["Type"] == kind}


def table_definitions() -> dict[str, dict[str, Any]]:
    """``create_table`` arguments for every table, named by logical id (the local name of the table)."""
    tables = {}
    for name, resource in _resources("AWS::DynamoDB::Table").items():
        props = resource["Properties"]
        definition = {
            "TableName": name,
            "AttributeDefinitions": props["AttributeDefinitions"],
            "KeySchema": props["KeySchema"],
            "BillingMode": props["BillingMode"],
        }
        if "GlobalSecondaryIndexes" in props:
            definition["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
        if "VectorIndexes" in props:
            definition["VectorIndexes"] = _local_vector_indexes(props["VectorIndexes"])
        if "StreamSpecification" in props:
            definition["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
        tables[name] = definition
    return tables


def _local_vector_indexes(declared: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's vector indexes as the local stack and the tests create them: always (the template declares them
    under a condition, an embedding model without OpenSearch: locally, recall uses them only then), with the
    dimensions of ``MEMORY_EMBEDDING_DIMENSIONS`` when set, else the template's default."""
    _, indexes, _ = declared["Fn::If"]
    default = load_template()["Parameters"]["EmbeddingDimensions"]["Default"]
    dimensions = int(os.environ.get("MEMORY_EMBEDDING_DIMENSIONS") or default)
    return [{**index, "Dimensions": dimensions} for index in indexes]


@dataclass(frozen=True)
class Route:
    function: str
    method: str
    path: str
    pattern: re.Pattern[str]
    authorizer: str = "NONE"  # who API Gateway lets through: AWS_IAM, a JWT authorizer's name, or NONE

    @property
    def route_key(self) -> str:
        return f"{self.method} {self.path}"


def _path_pattern(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(path)) + "$")


def _default_authorizer(event: dict[str, Any]) -> str:
    """The ``DefaultAuthorizer`` of the HTTP API that the event names (``ApiId: !Ref <api>``); NONE if it has none."""
    api = event["Properties"].get("ApiId", {}).get("Ref")
    resource = load_template()["Resources"].get(api, {}) if isinstance(api, str) else {}
    return str(resource.get("Properties", {}).get("Auth", {}).get("DefaultAuthorizer", "NONE"))


def http_routes() -> list[Route]:
    """Every ``HttpApi`` event of every function, as the local stack must route them."""
    routes = []
    for name, resource in _resources("AWS::Serverless::Function").items():
        for event in resource["Properties"].get("Events", {}).values():
            if event["Type"] == "HttpApi":
                props = event["Properties"]
                path, method = props["Path"], props["Method"].upper()
                authorizer = props.get("Auth", {}).get("Authorizer") or _default_authorizer(event)
                routes.append(Route(name, method, path, _path_pattern(path), authorizer))
    return routes


def function_names() -> list[str]:
    return list(_resources("AWS::Serverless::Function"))


@cache
def load_handler(function: str) -> Callable[[dict[str, Any], Any], Any]:
    """Import a function's handler from its ``CodeUri`` and ``Handler``, as Lambda would.

    Every function's module is ``app``, so each is loaded under its own name to keep them apart. Like a
    Lambda sandbox, a process serves one event at a time through it: Powertools' resolver keeps the
    current event on a class attribute, so concurrent events need concurrent processes.
    """
    return _running_as(function)


@cache
def _running_as(function: str) -> Callable[[dict[str, Any], Any], Any]:
    """The handler, run with ``RUNNING_FUNCTION`` set to its function (one wrapper per function, so the same
    function's handler is the same object each time it is loaded)."""
    attribute = load_template()["Resources"][function]["Properties"]["Handler"].rpartition(".")[2]
    handler: Callable[[dict[str, Any], Any], Any] = getattr(load_module(function), attribute)

    @wraps(handler)
    def running(event: dict[str, Any], context: Any) -> Any:
        token = RUNNING_FUNCTION.set(function)
        try:
            return handler(event, context)
        finally:
            RUNNING_FUNCTION.reset(token)

    return running


@cache
def load_module(function: str) -> ModuleType:
    """The module of a function's handler (``app``), loaded once under the function's own name."""
    props = load_template()["Resources"][function]["Properties"]
    module_name = props["Handler"].rpartition(".")[0]
    path = ROOT / props["CodeUri"] / f"{module_name.replace('.', '/')}.py"
    spec = importlib.util.spec_from_file_location(f"_handler_{function}", path)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
