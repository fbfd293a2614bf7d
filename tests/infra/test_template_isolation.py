"""template.yaml's two isolation options: the created OpenSearch domain in a VPC (NotesDomainSubnetIds and
NotesDomainSecurityGroupIds, with the functions that reach it in the same subnets), and a customer-managed KMS
key (KmsKeyArn) for the table, the queues, the log groups and the domain, used by each function only through the
service whose data it touches."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from local.template import load_template
from tests.support.cfn_rules import condition, parameter_values, refusals
from tests.support.docs import code_blocks

ISSUER = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"
KEY = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
SUBNETS = "subnet-0a1b2c3d4e5f60718,subnet-0f1e2d3c4b5a69788"
GROUPS = "sg-0123456789abcdef0"
NO_VALUE = {"Ref": "AWS::NoValue"}
WITH_KEY = {"Fn::If": ["HasKmsKey", {"Ref": "KmsKeyArn"}, NO_VALUE]}
IN_VPC = {
    "Fn::If": [
        "NotesDomainInVpc",
        {
            "SubnetIds": {"Fn::Split": [",", {"Ref": "NotesDomainSubnetIds"}]},
            "SecurityGroupIds": {"Fn::Split": [",", {"Ref": "NotesDomainSecurityGroupIds"}]},
        },
        NO_VALUE,
    ]
}
DOMAIN_CLIENTS = {"ToolsFunction", "ManagementFunction", "PlatformFunction", "IndexerFunction"}
QUEUE_USERS = {"ConsolidateFunction", "ConsolidateWorkerFunction", "IndexerFunction"}


def resources(kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in load_template()["Resources"].items() if r["Type"] == kind}


def managed_policies(name: str) -> list[Any]:
    """The managed policies a function is given: its SAM ``Policies`` that are references, or its own role's."""
    resource = load_template()["Resources"][name]
    if "Role" in resource["Properties"]:
        role = load_template()["Resources"][resource["Properties"]["Role"]["Fn::GetAtt"].split(".")[0]]
        return list(role["Properties"].get("ManagedPolicyArns", []))
    return [policy for policy in resource["Properties"]["Policies"] if "Statement" not in policy]


# --- the customer-managed key -------------------------------------------------------------------------------


def test_the_key_is_optional_and_an_arn_when_given() -> None:
    spec = load_template()["Parameters"]["KmsKeyArn"]

    assert spec["Default"] == ""
    assert re.fullmatch(spec["AllowedPattern"], KEY)
    assert not re.fullmatch(spec["AllowedPattern"], "alias/agent-memory")  # an alias would not scope the grants
    assert condition("HasKmsKey", parameter_values(KmsKeyArn=KEY))
    assert not condition("HasKmsKey", parameter_values())


def test_with_a_key_the_table_every_queue_every_log_group_and_the_domain_use_it() -> None:
    table = load_template()["Resources"]["MemoryTable"]["Properties"]["SSESpecification"]
    assert table == {
        "SSEEnabled": True,
        "SSEType": {"Fn::If": ["HasKmsKey", "KMS", NO_VALUE]},
        "KMSMasterKeyId": WITH_KEY,
    }
    queues = resources("AWS::SQS::Queue")
    assert len(queues) == 4
    for name, queue in queues.items():
        assert queue["Properties"]["KmsMasterKeyId"] == WITH_KEY, name
        assert queue["Properties"]["SqsManagedSseEnabled"] == {"Fn::If": ["HasKmsKey", NO_VALUE, True]}, name
    groups = resources("AWS::Logs::LogGroup")
    assert len(groups) >= 10
    for name, group in groups.items():
        assert group["Properties"]["KmsKeyId"] == WITH_KEY, name
    domain = load_template()["Resources"]["NotesDomain"]["Properties"]
    assert domain["EncryptionAtRestOptions"] == {"Enabled": True, "KmsKeyId": WITH_KEY}


@pytest.mark.parametrize(
    ("policy", "service", "actions"),
    [
        ("TableKeyUse", "dynamodb", ["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"]),
        ("QueueKeyUse", "sqs", ["kms:Decrypt", "kms:GenerateDataKey"]),
    ],
)
def test_the_key_is_used_only_through_its_service(policy: str, service: str, actions: list[str]) -> None:
    resource = load_template()["Resources"][policy]
    [statement] = resource["Properties"]["PolicyDocument"]["Statement"]

    assert resource["Condition"] == "HasKmsKey"
    assert (statement["Effect"], statement["Action"], statement["Resource"]) == ("Allow", actions, {"Ref": "KmsKeyArn"})
    via = statement["Condition"]["StringEquals"]["kms:ViaService"]
    assert via == {"Fn::Sub": f"{service}.${{AWS::Region}}.amazonaws.com"}


def test_every_function_uses_the_key_through_dynamodb_and_only_the_queues_users_through_sqs() -> None:
    functions = resources("AWS::Serverless::Function")
    assert len(functions) == 8
    for name in functions:
        policies = managed_policies(name)
        assert {"Fn::If": ["HasKmsKey", {"Ref": "TableKeyUse"}, NO_VALUE]} in policies, name
        uses_queues = {"Fn::If": ["HasKmsKey", {"Ref": "QueueKeyUse"}, NO_VALUE]} in policies
        assert uses_queues == (name in QUEUE_USERS), name


def test_the_guide_gives_the_key_policy_for_the_services_that_write_with_the_key_themselves() -> None:
    """CloudWatch Logs writes the log groups, EventBridge the nightly schedule's dead letters: their service
    principals need the key policy, which the guide gives as statements to add."""
    [statements] = [parsed for parsed in map(json.loads, code_blocks("json")) if isinstance(parsed, list)]
    principals = {statement["Principal"]["Service"].split(".")[0] for statement in statements}

    assert principals == {"logs", "events"}
    dead_letters = load_template()["Resources"]["ConsolidationDeadLettersPolicy"]["Properties"]["PolicyDocument"]
    assert dead_letters["Statement"][0]["Principal"] == {"Service": "events.amazonaws.com"}


# --- the domain in a VPC ------------------------------------------------------------------------------------


def test_the_domain_is_in_a_vpc_only_when_created_with_subnets_and_security_groups() -> None:
    in_vpc = {"NotesIndex": "create", "NotesDomainSubnetIds": SUBNETS, "NotesDomainSecurityGroupIds": GROUPS}

    assert condition("NotesDomainInVpc", parameter_values(**in_vpc))
    assert not condition("NotesDomainInVpc", parameter_values(NotesIndex="create"))
    assert not condition("NotesDomainInVpc", parameter_values())
    assert load_template()["Resources"]["NotesDomain"]["Properties"]["VPCOptions"] == IN_VPC
    assert refusals(DashboardIssuer=ISSUER, **in_vpc) == []


@pytest.mark.parametrize(
    ("given", "refused"),
    [
        ({"NotesDomainSubnetIds": SUBNETS, "NotesDomainSecurityGroupIds": GROUPS}, ["NotesDomainVpcIsWhole"]),
        ({"NotesIndex": "create", "NotesDomainSubnetIds": SUBNETS}, ["NotesDomainVpcIsWhole"]),
        ({"NotesIndex": "create", "NotesDomainSecurityGroupIds": GROUPS}, ["OnlyAVpcDomainHasSecurityGroups"]),
    ],
)
def test_half_a_vpc_or_a_vpc_without_a_created_domain_is_refused(given: dict[str, str], refused: list[str]) -> None:
    assert refusals(DashboardIssuer=ISSUER, **given) == refused


@pytest.mark.parametrize(
    ("parameter", "bad"), [("NotesDomainSubnetIds", "subnet-1, subnet-2"), ("NotesDomainSecurityGroupIds", "default")]
)
def test_the_network_ids_are_checked_by_pattern(parameter: str, bad: str) -> None:
    pattern = load_template()["Parameters"][parameter]["AllowedPattern"]

    assert re.fullmatch(pattern, "")
    assert re.fullmatch(pattern, SUBNETS if parameter == "NotesDomainSubnetIds" else GROUPS)
    assert not re.fullmatch(pattern, bad)


def test_exactly_the_functions_that_reach_the_domain_run_in_its_vpc() -> None:
    for name, function in resources("AWS::Serverless::Function").items():
        has_vpc = function["Properties"].get("VpcConfig") == IN_VPC
        assert has_vpc == (name in DOMAIN_CLIENTS), name
        reaches_domain = "OPENSEARCH_ENDPOINT" in function["Properties"].get("Environment", {}).get("Variables", {})
        assert reaches_domain == (name in DOMAIN_CLIENTS), name


def test_outside_a_vpc_no_function_may_create_network_interfaces() -> None:
    """SAM attaches AWSLambdaVPCAccessExecutionRole to a function whose VpcConfig is written at all: the three SAM
    roles deny its creating actions again outside a VPC; the indexer's own role gets it only in a VPC."""
    for name in DOMAIN_CLIENTS - {"IndexerFunction"}:
        [deny] = [
            policy
            for policy in load_template()["Resources"][name]["Properties"]["Policies"]
            if "Fn::If" in policy and policy["Fn::If"][0] == "NotesDomainInVpc"
        ]
        assert deny["Fn::If"][1] == NO_VALUE
        [statement] = deny["Fn::If"][2]["Statement"]
        assert statement["Effect"] == "Deny"
        assert set(statement["Action"]) == {"ec2:CreateNetworkInterface", "ec2:AssignPrivateIpAddresses"}
    vpc_access = {
        "Fn::If": [
            "NotesDomainInVpc",
            {"Fn::Sub": "arn:${AWS::Partition}:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"},
            NO_VALUE,
        ]
    }
    assert vpc_access in managed_policies("IndexerFunction")
