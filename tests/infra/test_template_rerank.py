"""The reranking model in template.yaml: only the functions that recall may call it, only when it is set."""

from __future__ import annotations

import re

import pytest

from local.template import load_template

RECALLING = ("ToolsFunction", "ManagementFunction")

_RERANK_MODEL_ARN = {
    "Fn::Sub": [
        "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${ModelId}",
        {"ModelId": {"Fn::Select": [1, {"Fn::Split": ["bedrock:", {"Fn::Sub": "${RerankModel}bedrock:"}]}]}},
    ]
}


def _rerank_policies(properties):
    return [
        policy["Fn::If"]
        for policy in properties.get("Policies", [])
        if isinstance(policy, dict) and "Fn::If" in policy and policy["Fn::If"][0] == "HasRerankModel"
    ]


@pytest.mark.parametrize("function", RECALLING)
def test_recall_may_rerank_with_the_named_model_only_when_it_is_set(function):
    properties = load_template()["Resources"][function]["Properties"]

    [(_, granted, otherwise)] = _rerank_policies(properties)

    rerank, invoke = granted["Statement"]
    assert (rerank["Action"], rerank["Resource"]) == ("bedrock:Rerank", "*")  # Rerank has no resource type
    assert (invoke["Action"], invoke["Resource"]) == ("bedrock:InvokeModel", _RERANK_MODEL_ARN)
    assert otherwise == {"Ref": "AWS::NoValue"}
    assert properties["Environment"]["Variables"]["MEMORY_RERANK_MODEL"] == {"Ref": "RerankModel"}


def test_no_other_function_may_rerank_and_the_default_is_off():
    template = load_template()
    others = {
        name: resource["Properties"]
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function" and name not in RECALLING
    }

    for name, properties in others.items():
        assert not _rerank_policies(properties), name
        assert "MEMORY_RERANK_MODEL" not in properties.get("Environment", {}).get("Variables", {}), name
    parameter = template["Parameters"]["RerankModel"]
    assert parameter["Default"] == ""
    assert template["Conditions"]["HasRerankModel"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "RerankModel"}, ""]}]}


@pytest.mark.parametrize(
    ("value", "allowed"),
    [
        ("", True),
        ("bedrock:amazon.rerank-v1:0", True),
        ("bedrock:cohere.rerank-v3-5:0", True),
        ("amazon.rerank-v1:0", False),
        ("openai:rerank", False),
        ("bedrock:", False),
    ],
)
def test_the_parameter_allows_what_the_setting_allows(value, allowed):
    from agent_memory.basics.settings import Settings

    pattern = load_template()["Parameters"]["RerankModel"]["AllowedPattern"]

    assert bool(re.fullmatch(pattern, value)) is allowed
    try:
        Settings.model_validate({"rerank_model": value})
        accepted = True
    except ValueError:
        accepted = False
    assert accepted is allowed
