"""The deploying guide and the client cannot drift from template.yaml: parameters, the backend's policy, the routes."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from local.template import http_routes, load_template
from tests.support.docs import CLIENT_METHODS, OVERRIDE, code_blocks

ROOT = Path(__file__).resolve().parents[2]


def test_every_samconfig_example_names_only_template_parameters_with_allowed_values() -> None:
    parameters = load_template()["Parameters"]
    examples = [tomllib.loads(block) for block in code_blocks("toml")]

    assert len(examples) == 2  # the minimal and the full set
    for example in examples:
        deploy = example["default"]["deploy"]["parameters"]
        assert deploy["capabilities"] == "CAPABILITY_IAM"
        overrides = {
            key: value.strip('"').replace('\\"', '"') for key, value in OVERRIDE.findall(deploy["parameter_overrides"])
        }
        assert overrides and set(overrides) <= set(parameters), set(overrides) - set(parameters)
        for key, value in overrides.items():
            spec = parameters[key]
            assert value in [str(allowed) for allowed in spec.get("AllowedValues", [value])], (key, value)
            assert re.fullmatch(spec.get("AllowedPattern", ".*"), value), (key, value)
    minimal, full = (
        set(OVERRIDE.findall(e["default"]["deploy"]["parameters"]["parameter_overrides"])) for e in examples
    )
    assert {key for key, _ in minimal} == {"ChatModel"}  # no dashboard, no index: nothing else is needed
    elsewhere = {
        "OpenAIApiKeySecret",
        "OpenSearchEndpoint",
        "OpenSearchResourceArn",
        "NotesDomainSubnetIds",
        "NotesDomainSecurityGroupIds",
        "KmsKeyArn",
    }  # openai: models; NotesIndex=existing; a private network and your own key (their own section)
    assert {key for key, _ in full} == set(parameters) - elsewhere


def test_the_backend_policy_allows_exactly_the_turn_traffics_iam_routes_and_the_flush() -> None:
    (policy,) = (parsed for parsed in map(json.loads, code_blocks("json")) if isinstance(parsed, dict))  # not the key's
    tools, flush = policy["Statement"]
    iam_routes = {  # the platform's routes are granted apart (PlatformOperationsPolicy, tests/infra)
        route.route_key
        for route in http_routes()
        if route.authorizer == "AWS_IAM" and not route.path.startswith("/v1/platform/")
    }

    assert tools["Action"] == "execute-api:Invoke"
    assert {
        " ".join(arn.split("/$default/")[1].split("/", 1)).replace(" ", " /") for arn in tools["Resource"]
    } == iam_routes
    assert flush["Action"] == "lambda:InvokeFunction" and ":function:" in flush["Resource"]


def test_every_route_of_the_template_has_its_client_method() -> None:
    def generic(route_key: str) -> str:
        return re.sub(r"/v1/memory/(personal|workspaces/\{workspace_id\})", "{base}", route_key)

    routes = {generic(route.route_key) for route in http_routes()}
    missing = routes - set(CLIENT_METHODS)

    assert missing == set(), f"routes without a client method: {sorted(missing)}"
    assert set(CLIENT_METHODS) <= routes


@pytest.mark.parametrize("page", ["deploying.md", "client.md"])
def test_the_pages_links_resolve(page: str) -> None:
    text = (ROOT / "docs" / page).read_text()
    for target in re.findall(r"\]\(([^)#:]+)\)", text):
        assert (ROOT / "docs" / target).resolve().exists(), target
