"""What a deployer chooses at deploy time: the dashboard (with its OIDC issuer) or none, the functions'
architecture, and the Serverless Application Repository's record of the application."""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

import pytest

from local.template import ROOT, load_template
from tests.support.cfn_rules import condition, parameter_values, refusals, resolve_conditions
from tests.support.sam import needs_sam, transformed_template

ISSUER = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"


@pytest.fixture(scope="module")
def transformed() -> dict[str, Any]:
    return transformed_template()


def deployed(template: dict[str, Any], **given: str) -> dict[str, Any]:
    """The resources CloudFormation would create with these parameters, their conditions resolved."""
    values = parameter_values(**given)
    return {
        name: resolve_conditions(resource, values)
        for name, resource in template["Resources"].items()
        if "Condition" not in resource or condition(resource["Condition"], values)
    }


def _referred(node: Any) -> set[str]:
    """Every name ``node`` refers to with Ref, GetAtt or a Sub's ${...}."""
    text = json.dumps(node)
    return set(re.findall(r'"(?:Ref|Fn::GetAtt)": \[?"([A-Za-z0-9]+)', text)) | set(
        re.findall(r"\$\{([A-Za-z0-9]+)[.}]", text)
    )


DASHBOARD_PATHS = re.compile(r"^/v1/(memory|admin)/")


@pytest.mark.slow
@needs_sam
def test_without_an_issuer_no_dashboard_route_or_resource_exists(transformed: dict[str, Any]) -> None:
    resources = deployed(transformed)  # the defaults: DashboardIssuer empty

    dashboard = {name for name in transformed["Resources"] if name.startswith(("Management", "Dashboard"))}
    assert len(dashboard) > 30  # the function, its role, log group and route permissions, the hosting
    assert not dashboard & set(resources)
    assert not dashboard & _referred(resources)
    body = resources["MemoryApi"]["Properties"]["Body"]
    assert not [path for path in body["paths"] if DASHBOARD_PATHS.match(path)]
    assert set(resources["MemoryApiApiGatewayDefaultStage"]["Properties"]["RouteSettings"]) == {"GET /v1/health"}
    # SAM cannot leave the authorizer out; no route uses it and its issuer never resolves.
    routes = json.dumps(body["paths"])
    assert "DashboardJwt" not in routes
    authorizer = body["components"]["securitySchemes"]["DashboardJwt"]["x-amazon-apigateway-authorizer"]
    assert authorizer["jwtConfiguration"]["issuer"] == "https://no-dashboard.invalid/"


@pytest.mark.slow
@needs_sam
def test_with_an_issuer_the_dashboard_function_and_its_routes_exist(transformed: dict[str, Any]) -> None:
    resources = deployed(transformed, DashboardIssuer=ISSUER)

    assert {"ManagementFunction", "ManagementFunctionRole", "ManagementLogs"} <= set(resources)
    body = resources["MemoryApi"]["Properties"]["Body"]
    events = load_template()["Resources"]["ManagementFunction"]["Properties"]["Events"].values()
    assert {event["Properties"]["Path"] for event in events} <= set(body["paths"])
    assert len(resources["MemoryApiApiGatewayDefaultStage"]["Properties"]["RouteSettings"]) == 10
    authorizer = body["components"]["securitySchemes"]["DashboardJwt"]["x-amazon-apigateway-authorizer"]
    assert authorizer["jwtConfiguration"]["issuer"] == {"Ref": "DashboardIssuer"}
    alarm = resources["LambdaErrorsAlarm"]["Properties"]["Metrics"]
    assert "management" in [metric["Id"] for metric in alarm] and "management" in alarm[-1]["Expression"]


def test_the_alarms_sum_exactly_the_functions_they_watch() -> None:
    for given in ({}, {"DashboardIssuer": ISSUER}):
        values = parameter_values(**given)
        for name in ("LambdaErrorsAlarm", "LambdaThrottlesAlarm"):
            metrics = resolve_conditions(load_template()["Resources"][name]["Properties"]["Metrics"], values)
            *watched, total = metrics
            summed = re.fullmatch(r"SUM\(\[(.*)\]\)", total["Expression"])
            assert summed and summed.group(1).split(", ") == [metric["Id"] for metric in watched], (name, given)


def test_the_dashboards_settings_are_refused_without_its_issuer() -> None:
    assert refusals() == []
    assert refusals(DashboardClientId="client") == ["DashboardSettingsNeedAnIssuer"]
    assert refusals(DashboardTokenOrigin="https://auth.example.org") == ["DashboardSettingsNeedAnIssuer"]
    assert "DashboardSettingsNeedAnIssuer" in refusals(DashboardHosting="true", DashboardClientId="client")
    assert refusals(DashboardIssuer=ISSUER, DashboardHosting="true", DashboardClientId="client") == []
    assert not condition("HostDashboard", parameter_values(DashboardHosting="true"))


def test_every_function_and_the_layer_run_on_the_architecture_parameter() -> None:
    template = load_template()
    parameter = template["Parameters"]["Architecture"]
    assert (parameter["Default"], sorted(parameter["AllowedValues"])) == ("arm64", ["arm64", "x86_64"])
    assert template["Globals"]["Function"]["Architectures"] == [{"Ref": "Architecture"}]
    functions = [r for r in template["Resources"].values() if r["Type"] == "AWS::Serverless::Function"]
    assert functions and not [f for f in functions if "Architectures" in f["Properties"]]
    layer = template["Resources"]["SharedLayer"]
    assert layer["Properties"]["CompatibleArchitectures"] == [{"Ref": "Architecture"}]
    assert layer["Metadata"]["BuildArchitecture"] == {"Ref": "Architecture"}


def test_sam_publish_finds_the_applications_record() -> None:
    record = load_template()["Metadata"]["AWS::ServerlessRepo::Application"]
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]

    assert {"Name", "Description", "Author", "SemanticVersion"} <= set(record)
    assert record["SemanticVersion"] == version
    assert (ROOT / record["ReadmeUrl"]).is_file()
    assert "Fn::" not in json.dumps(record) and "Ref" not in json.dumps(record)  # no intrinsic is allowed there
    assert len(record["Description"]) <= 256 and len(record["Labels"]) <= 10


@pytest.mark.slow
@needs_sam
def test_the_deployers_permissions_name_every_resource_type_the_stack_may_hold(transformed: dict[str, Any]) -> None:
    deploying = (ROOT / "docs" / "deploying.md").read_text()
    section = deploying.split("## What the deployer needs", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ", 1)[0] for line in section.splitlines() if line.startswith("| `AWS::")]

    documented = {name for row in rows for name in re.findall(r"`(AWS::[A-Za-z0-9]+::[A-Za-z0-9]+)`", row)}
    assert documented == {resource["Type"] for resource in transformed["Resources"].values()}
