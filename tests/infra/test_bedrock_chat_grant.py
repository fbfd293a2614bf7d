"""The chat model's Bedrock grant names the configured model or inference profile only (docs/deploying.md
"Before the first deploy"): every function that calls the chat model may invoke that foundation model or that
profile in the stack's region, and the foundation models behind the profile only through it
(``bedrock:InferenceProfileArn``), never ``foundation-model/*`` or ``inference-profile/*`` on their own."""

from __future__ import annotations

import json

from local.template import load_template

CHAT_MODEL_ID = {"ModelId": {"Fn::Select": [1, {"Fn::Split": ["bedrock:", {"Fn::Sub": "${ChatModel}bedrock:"}]}]}}
PROFILE = {
    "Fn::Sub": [
        "arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/${ModelId}",
        CHAT_MODEL_ID,
    ]
}
MODEL = {"Fn::Sub": ["arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${ModelId}", CHAT_MODEL_ID]}


def chat_grants() -> dict[str, list[dict]]:
    grants = {}
    for name, resource in load_template()["Resources"].items():
        for policy in resource.get("Properties", {}).get("Policies", []) or []:
            if isinstance(policy, dict) and "Fn::If" in policy and policy["Fn::If"][0] == "HasBedrockChatModel":
                grants[name] = policy["Fn::If"][1]["Statement"]
    return grants


def test_every_function_that_calls_the_chat_model_is_granted_it():
    assert set(chat_grants()) == {
        "ToolsFunction",
        "FlushFunction",
        "ConsolidateFunction",
        "ConsolidateWorkerFunction",
        "ManagementFunction",
    }


def test_the_grant_names_the_configured_model_or_profile_only():
    for name, statements in chat_grants().items():
        direct, through_profile = statements
        assert direct["Resource"] == [MODEL, PROFILE], name
        assert through_profile["Condition"] == {"StringEquals": {"bedrock:InferenceProfileArn": PROFILE}}, name
        assert through_profile["Action"] == "bedrock:InvokeModel"


def test_no_wildcard_without_the_profile_condition():
    for name, statements in chat_grants().items():
        for statement in statements:
            text = json.dumps(statement["Resource"])
            if "/*" in text:
                assert "Condition" in statement, (name, statement["Sid"])
            assert "inference-profile/*" not in text, (name, statement["Sid"])
