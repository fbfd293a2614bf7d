"""template.yaml is the single source of truth: it must lint, validate, build, and grant only what is used."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from local.template import ROOT, load_template

SAM = os.environ.get("SAM_CLI") or shutil.which("sam")
needs_sam = pytest.mark.skipif(
    not SAM or not Path(SAM).exists(), reason="the SAM CLI is installed by `make test` (.venv-sam)"
)


def _run(*command: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SAM_CLI_TELEMETRY": "0"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_cfn_lint_passes():
    result = _run(str(Path(sys.executable).parent / "cfn-lint"), "template.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
@needs_sam
def test_sam_validate_lint_passes():
    result = _run(SAM, "validate", "--lint", "--region", "eu-west-1")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
@needs_sam
def test_sam_build_builds_every_function_and_the_layer(tmp_path):
    build = tmp_path / "build"
    result = _run(SAM, "build", "--build-dir", str(build), "--cache-dir", str(tmp_path / "cache"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (build / "SharedLayer" / "python" / "agent_memory" / "service.py").exists()
    assert (build / "SharedLayer" / "python" / "aws_lambda_powertools").is_dir()
    assert (build / "SharedLayer" / "python" / "pydantic").is_dir()
    for function in ("ToolsFunction", "ContextFunction", "FlushFunction"):
        assert (build / function / "app.py").exists()


def _resources(kind):
    return {name: r for name, r in load_template()["Resources"].items() if r["Type"] == kind}


def test_the_table_is_durable_encrypted_and_streams_both_images():
    table = load_template()["Resources"]["MemoryTable"]
    props = table["Properties"]
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["SSESpecification"]["SSEEnabled"] is True
    assert props["DeletionProtectionEnabled"] is True
    assert props["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"


def test_tool_and_context_routes_use_iam_and_only_health_is_open():
    api = load_template()["Resources"]["MemoryApi"]["Properties"]
    assert api["Auth"] == {"EnableIamAuthorizer": True, "DefaultAuthorizer": "AWS_IAM"}
    open_routes = []
    for _name, function in _resources("AWS::Serverless::Function").items():
        for event in function["Properties"].get("Events", {}).values():
            if event["Properties"].get("Auth", {}).get("Authorizer") == "NONE":
                open_routes.append(event["Properties"]["Path"])
    assert open_routes == ["/v1/health"]


# What each function's code calls on the table; a policy may grant exactly this, on the table only.
TABLE_ACTIONS = {
    "ToolsFunction": {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
        "dynamodb:BatchGetItem",  # recall reads its k best notes whole in one request
    },
    "ContextFunction": {"dynamodb:GetItem", "dynamodb:Query"},
    "FlushFunction": {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
}


@pytest.mark.parametrize("function", sorted(TABLE_ACTIONS))
def test_each_function_gets_least_privilege_on_the_table(function):
    statements = []
    for policy in load_template()["Resources"][function]["Properties"]["Policies"]:
        if "Statement" in policy:
            statements += policy["Statement"]
    table_statements = [s for s in statements if any(a.startswith("dynamodb:") for a in s["Action"])]
    assert len(table_statements) == 1
    statement = table_statements[0]
    assert set(statement["Action"]) == TABLE_ACTIONS[function]
    assert statement["Resource"] == {"Fn::GetAtt": "MemoryTable.Arn"}
    for s in statements:
        actions = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
        assert all("*" not in action for action in actions)


def test_the_flush_has_a_short_timeout_and_the_toggle():
    flush = load_template()["Resources"]["FlushFunction"]["Properties"]
    assert flush["Timeout"] <= 10
    assert flush["Environment"]["Variables"]["SURFSENSE_MEMORY_FLUSH"] == {"Ref": "MemoryFlush"}
    assert "Events" not in flush  # invoked directly, never through the HTTP API
