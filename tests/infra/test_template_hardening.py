"""template.yaml, issue 16 item 10: the model key from a secret and only where a model is called, reserved
concurrency for the per-turn and compaction paths, per-route throttles, alarms, and an on-failure
destination for asynchronous consolidation runs."""

from __future__ import annotations

import json
from typing import Any

from local.template import load_template

MODEL_CALLERS = {
    "ToolsFunction",
    "PlatformFunction",  # an import embeds each note, as remember does, when recall keeps vectors in the table
    "FlushFunction",
    "ConsolidateFunction",
    "ConsolidateWorkerFunction",
    "ManagementFunction",
    "IndexerFunction",
}


def _functions() -> dict[str, dict[str, Any]]:
    resources = load_template()["Resources"]
    return {name: r for name, r in resources.items() if r["Type"] == "AWS::Serverless::Function"}


def test_no_function_gets_the_model_key_as_a_plain_variable():
    template = load_template()
    assert "OpenAIApiKey" not in template["Parameters"]
    assert "OPENAI_API_KEY" not in template["Globals"]["Function"]["Environment"]["Variables"]
    for name, function in _functions().items():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        assert "OPENAI_API_KEY" not in variables, name


def test_only_the_functions_that_call_a_model_may_read_its_key():
    for name, function in _functions().items():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        has_secret = variables.get("OPENAI_API_KEY_SECRET") == {"Ref": "OpenAIApiKeySecret"}
        assert has_secret == (name in MODEL_CALLERS), name
    context = json.dumps(_functions()["ContextFunction"])
    assert "OpenAIApiKeySecret" not in context and "secretsmanager" not in context
    for name in MODEL_CALLERS - {"IndexerFunction"}:
        policies = json.dumps(_functions()[name]["Properties"]["Policies"])
        assert '"Resource": {"Ref": "OpenAIApiKeySecret"}' in policies, name
    assert "OpenAIApiKeySecret" in json.dumps(load_template()["Resources"]["IndexerRole"])


def test_context_and_flush_have_reserved_concurrency_parameters():
    parameters = load_template()["Parameters"]
    for name, parameter in (
        ("ContextFunction", "ContextReservedConcurrency"),
        ("FlushFunction", "FlushReservedConcurrency"),
    ):
        assert parameters[parameter]["Type"] == "Number"
        reserved = _functions()[name]["Properties"]["ReservedConcurrentExecutions"]
        assert {"Ref": parameter} in reserved["Fn::If"], name


def test_the_dashboard_and_health_routes_have_their_own_throttles():
    api = load_template()["Resources"]["MemoryApi"]["Properties"]
    routes = api["RouteSettings"]
    default = api["DefaultRouteSettings"]
    assert routes["GET /v1/health"]["ThrottlingRateLimit"] < default["ThrottlingRateLimit"]
    dashboard = [key for key in routes if " /v1/memory/" in key or " /v1/admin/" in key]
    assert len(dashboard) >= 8
    assert not any("/v1/context" in key or "/v1/tools" in key for key in routes)  # they keep the stage's budget
    paths = {
        f"{event['Properties']['Method'].upper()} {event['Properties']['Path']}"
        for function in _functions().values()
        for event in function["Properties"].get("Events", {}).values()
        if event["Type"] == "HttpApi"
    }
    assert set(routes) <= paths  # every throttled route exists


def test_alarms_cover_5xx_lambda_errors_and_throttles_and_the_indexer_failures():
    alarms = {n: r for n, r in load_template()["Resources"].items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    text = json.dumps(alarms)
    assert '"MetricName": "5xx"' in text
    assert '"MetricName": "Errors"' in text and '"MetricName": "Throttles"' in text
    assert "IndexerFailures.QueueName" in json.dumps(alarms["IndexerFailuresAlarm"]["Properties"]["Dimensions"])
    functions = ("ToolsFunction", "ContextFunction", "FlushFunction", "ConsolidateFunction", "ManagementFunction")
    for name in (*functions, "PlatformFunction"):
        assert json.dumps({"Ref": name}) in json.dumps(alarms["LambdaErrorsAlarm"]), name


def test_an_asynchronous_consolidation_run_that_fails_has_a_destination():
    config = _functions()["ConsolidateFunction"]["Properties"]["EventInvokeConfig"]
    assert config["DestinationConfig"]["OnFailure"]["Type"] == "SQS"
    assert "ConsolidationDeadLetters" in json.dumps(config["DestinationConfig"]["OnFailure"]["Destination"])
