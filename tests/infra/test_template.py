"""template.yaml is the single source of truth: it must lint, validate, build, and grant only what is used."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from local.template import ROOT, http_routes, load_template
from tests.support.sam import SAM, needs_sam


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


# ELF's e_machine (bytes 18-19, little-endian) of each architecture's shared objects.
ELF_MACHINE = {"arm64": 183, "x86_64": 62}


@pytest.mark.slow
@needs_sam
@pytest.mark.parametrize("architecture", ["arm64", "x86_64"])
def test_sam_build_builds_every_function_and_the_layer_for_the_architecture(tmp_path, architecture):
    build = tmp_path / "build"
    result = _run(
        SAM,
        "build",
        "--build-dir",
        str(build),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--parameter-overrides",
        f"Architecture={architecture}",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"architecture: {architecture}" in result.stdout + result.stderr
    compiled = {}  # every shared object of the layer's wheels (pydantic-core, numpy, PyStemmer...) and its machine
    for path in (build / "SharedLayer" / "python").rglob("*.so*"):
        with path.open("rb") as elf:
            header = elf.read(20)
        if header[:4] == b"\x7fELF":
            compiled[path.name] = int.from_bytes(header[18:20], "little")
    assert any(name.startswith("_pydantic_core") for name in compiled)
    assert set(compiled.values()) == {ELF_MACHINE[architecture]}, compiled
    assert (build / "SharedLayer" / "python" / "agent_memory" / "bootstrap.py").exists()
    assert (build / "SharedLayer" / "python" / "aws_lambda_powertools").is_dir()
    assert (build / "SharedLayer" / "python" / "pydantic").is_dir()
    for function in (
        "ToolsFunction",
        "ContextFunction",
        "FlushFunction",
        "ConsolidateFunction",
        "ConsolidateWorkerFunction",
        "ManagementFunction",
        "PlatformFunction",
        "IndexerFunction",
    ):
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


def test_tool_and_context_routes_use_iam_dashboard_routes_jwt_and_only_health_is_open():
    auth = load_template()["Resources"]["MemoryApi"]["Properties"]["Auth"]
    assert (auth["EnableIamAuthorizer"], auth["DefaultAuthorizer"]) == (True, "AWS_IAM")
    jwt = auth["Authorizers"]["DashboardJwt"]["JwtConfiguration"]
    client_id = {"Fn::If": ["HasDashboardClientId", {"Ref": "DashboardClientId"}, {"Ref": "AWS::NoValue"}]}
    issuer = {"Fn::If": ["HasDashboard", {"Ref": "DashboardIssuer"}, "https://no-dashboard.invalid/"]}
    assert jwt == {"issuer": issuer, "audience": [{"Ref": "DashboardAudience"}, client_id]}
    authorizers: dict[str, set[str]] = {}
    for name, function in _resources("AWS::Serverless::Function").items():
        for event in function["Properties"].get("Events", {}).values():
            if event["Type"] == "HttpApi":
                authorizer = event["Properties"].get("Auth", {}).get("Authorizer", "AWS_IAM")
                authorizers.setdefault(authorizer, set()).add(
                    name if authorizer != "NONE" else event["Properties"]["Path"]
                )
    assert authorizers == {
        "AWS_IAM": {"ToolsFunction", "ContextFunction", "PlatformFunction"},
        "DashboardJwt": {"ManagementFunction"},
        "NONE": {"/v1/health"},
    }


# What each function's code calls on the table; a policy may grant exactly this, on the table only.
TABLE_ACTIONS = {
    "ToolsFunction": {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
        "dynamodb:BatchGetItem",  # recall reads its k best notes whole in one request
        "dynamodb:ConditionCheckItem",  # a note write whose every answer was lost is settled (lost_note_writes)
        "dynamodb:DeleteItem",  # update_memory's save deletes the oldest version past the history's length
    },
    "ContextFunction": {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem"},  # the injection record
    "FlushFunction": {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:ConditionCheckItem",  # a flush note whose every answer was lost is settled
    },
    "ManagementFunction": {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",  # the characters counter
        "dynamodb:BatchWriteItem",  # erase
    },
    "PlatformFunction": {  # the backend's export, import, erase and usage
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",  # the erase's record and counts; an import's day counters and record
        "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:PutItem",  # an import's notes (in their transactions), its record, its document's version
        "dynamodb:ConditionCheckItem",  # an imported note whose every answer was lost is settled
    },
    "ConsolidateFunction": {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:Query",
        "dynamodb:ConditionCheckItem",  # the scope's erase mark must not have moved when a fold is saved
    },
}
TABLE_ACTIONS["ConsolidateWorkerFunction"] = TABLE_ACTIONS["ConsolidateFunction"]
# Functions that read the sparse index get it named, not a wildcard over every index.
INDEX_READERS = {"ConsolidateFunction": {"Fn::Sub": "${MemoryTable.Arn}/index/Unconsolidated"}}


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
    table = {"Fn::GetAtt": "MemoryTable.Arn"}
    expected = [table, INDEX_READERS[function]] if function in INDEX_READERS else table
    assert statement["Resource"] == expected
    for s in statements:
        actions = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
        assert all("*" not in action for action in actions)


def test_the_flush_has_a_short_timeout_and_the_toggle():
    flush = load_template()["Resources"]["FlushFunction"]["Properties"]
    assert flush["Timeout"] <= 10
    assert flush["Environment"]["Variables"]["SURFSENSE_MEMORY_FLUSH"] == {"Ref": "MemoryFlush"}
    assert "Events" not in flush  # invoked directly, never through the HTTP API


def test_the_nightly_schedule_retries_and_keeps_what_it_cannot_deliver():
    resources = load_template()["Resources"]
    function = resources["ConsolidateFunction"]["Properties"]
    nightly = function["Events"]["Nightly"]
    assert nightly["Type"] == "Schedule"
    assert nightly["Properties"]["RetryPolicy"]["MaximumRetryAttempts"] >= 1
    assert nightly["Properties"]["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": "ConsolidationDeadLetters.Arn"}}
    assert resources["ConsolidationDeadLetters"]["Properties"]["SqsManagedSseEnabled"] == {
        "Fn::If": ["HasKmsKey", {"Ref": "AWS::NoValue"}, True]
    }  # SSE-SQS, or KmsKeyArn (test_template_isolation)
    assert function["Timeout"] == 900
    # Runs never overlap through the run lease (storage/consolidation_store.py), not reserved concurrency,
    # which a new account's 10-execution limit cannot spare.
    assert "ReservedConcurrentExecutions" not in function


def test_the_committed_openapi_document_matches_the_code():
    from local.openapi import OPENAPI, generate

    assert OPENAPI.read_text() == generate(), "docs/openapi.json is stale: run `make openapi`"


def test_every_management_route_is_jwt_authorized_and_in_the_openapi_document():
    import json

    from local.openapi import OPENAPI

    documented = {
        (method.upper(), path) for path, item in json.loads(OPENAPI.read_text())["paths"].items() for method in item
    }
    events = load_template()["Resources"]["ManagementFunction"]["Properties"]["Events"].values()
    routed = set()
    for event in events:
        assert event["Properties"]["Auth"] == {"Authorizer": "DashboardJwt"}
        routed.add((event["Properties"]["Method"], event["Properties"]["Path"]))
    assert routed <= documented  # tests/infra/test_openapi.py: every route of the template, and nothing else


# The notes index is optional (NotesIndex: none, create or existing): without it, no indexer, no domain
# and no index permission exist.
INDEXER_RESOURCES = ("IndexerFunction", "IndexerRole", "IndexerLogs", "IndexerFailures")
DOMAIN_RESOURCES = ("NotesDomain", "NotesDomainLogs", "NotesDomainLogsPolicy")
ENDPOINT = {
    "Fn::If": [
        "CreatesNotesDomain",
        {"Fn::Sub": "https://${NotesDomain.DomainEndpoint}"},
        {"Ref": "OpenSearchEndpoint"},
    ]
}
DOMAIN_INDICES = {
    "Fn::Sub": [
        "${Domain}/*",
        {
            "Domain": {
                "Fn::If": ["CreatesNotesDomain", {"Fn::GetAtt": "NotesDomain.Arn"}, {"Ref": "OpenSearchResourceArn"}]
            }
        },
    ]
}


def test_the_index_resources_exist_only_with_a_notes_index_and_the_domain_only_when_created():
    template = load_template()
    assert template["Parameters"]["NotesIndex"]["Default"] == "none"
    conditions = template["Conditions"]
    assert conditions["CreatesNotesDomain"] == {"Fn::Equals": [{"Ref": "NotesIndex"}, "create"]}
    assert conditions["UsesExistingIndex"] == {"Fn::Equals": [{"Ref": "NotesIndex"}, "existing"]}
    assert conditions["HasOpenSearch"] == {
        "Fn::Or": [{"Fn::Condition": "CreatesNotesDomain"}, {"Fn::Condition": "UsesExistingIndex"}]
    }
    for name in INDEXER_RESOURCES:
        assert template["Resources"][name]["Condition"] == "HasOpenSearch", name
    for name in DOMAIN_RESOURCES:
        assert template["Resources"][name]["Condition"] == "CreatesNotesDomain", name
    assert template["Outputs"]["IndexerFailureQueueUrl"]["Condition"] == "HasOpenSearch"
    assert {"ExistingIndexIsNamed", "OnlyAnExistingIndexIsNamed"} <= set(template["Rules"])


def test_the_created_domain_is_encrypted_tls_only_logged_and_leaves_access_to_iam():
    domain = load_template()["Resources"]["NotesDomain"]["Properties"]
    assert domain["EngineVersion"] == "OpenSearch_2.19"  # what make opensearch and the test tier run
    assert domain["EncryptionAtRestOptions"]["Enabled"] is True  # with KmsKeyArn's key when given
    assert domain["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert domain["DomainEndpointOptions"]["EnforceHTTPS"] is True
    assert domain["DomainEndpointOptions"]["TLSSecurityPolicy"].startswith("Policy-Min-TLS-1-2")
    [statement] = domain["AccessPolicies"]["Statement"]
    assert statement["Principal"] == {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}}
    assert set(domain["LogPublishingOptions"]) == {"ES_APPLICATION_LOGS", "SEARCH_SLOW_LOGS"}


@pytest.mark.parametrize("function", ["ToolsFunction", "ManagementFunction", "PlatformFunction"])
def test_recall_gets_the_endpoint_only_when_there_is_an_index(function):
    variables = load_template()["Resources"][function]["Properties"]["Environment"]["Variables"]
    assert variables["OPENSEARCH_ENDPOINT"] == {"Fn::If": ["HasOpenSearch", ENDPOINT, {"Ref": "AWS::NoValue"}]}
    indexer = load_template()["Resources"]["IndexerFunction"]["Properties"]["Environment"]["Variables"]
    assert indexer["OPENSEARCH_ENDPOINT"] == ENDPOINT


def test_the_indexer_reads_the_stream_with_partial_failures_retries_and_an_on_failure_queue():
    resources = load_template()["Resources"]
    stream = resources["IndexerFunction"]["Properties"]["Events"]["TableStream"]
    props = stream["Properties"]
    assert stream["Type"] == "DynamoDB"
    assert props["Stream"] == {"Fn::GetAtt": "MemoryTable.StreamArn"}
    assert props["StartingPosition"] == "LATEST"
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["BisectBatchOnFunctionError"] is True
    assert 1 <= props["MaximumRetryAttempts"] <= 20
    assert props["BatchSize"] == 100
    assert props["MaximumBatchingWindowInSeconds"] >= 1
    assert props["DestinationConfig"]["OnFailure"] == {
        "Type": "SQS",
        "Destination": {"Fn::GetAtt": "IndexerFailures.Arn"},
    }
    [only_notes] = props["FilterCriteria"]["Filters"]
    assert json.loads(only_notes["Pattern"]) == {"dynamodb": {"Keys": {"sk": {"S": [{"prefix": "note#"}]}}}}
    assert resources["IndexerFailures"]["Properties"]["SqsManagedSseEnabled"] == {
        "Fn::If": ["HasKmsKey", {"Ref": "AWS::NoValue"}, True]
    }  # SSE-SQS, or KmsKeyArn (test_template_isolation)


def _indexer_statements():
    [policy] = load_template()["Resources"]["IndexerRole"]["Properties"]["Policies"]
    statements = []
    for statement in policy["PolicyDocument"]["Statement"]:
        if "Fn::If" in statement:
            statements += [branch for branch in statement["Fn::If"][1:] if branch != {"Ref": "AWS::NoValue"}]
        else:
            statements.append(statement)
    return {s["Sid"]: s for s in statements}


def test_the_indexer_role_is_least_privilege():
    """Its own role (not SAM's AWSLambdaDynamoDBExecutionRole, which reads every stream of the account)."""
    function = load_template()["Resources"]["IndexerFunction"]["Properties"]
    assert function["Role"] == {"Fn::GetAtt": "IndexerRole.Arn"}
    assert "Policies" not in function
    statements = _indexer_statements()
    stream = statements["ReadTheTableStream"]
    assert set(stream["Action"]) == {"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}
    assert stream["Resource"] == {"Fn::GetAtt": "MemoryTable.StreamArn"}
    dynamodb = {a for s in statements.values() for a in _actions(s) if a.startswith("dynamodb:")}
    assert dynamodb == set(stream["Action"]) | {"dynamodb:ListStreams"}  # no item on the table is read or written
    assert statements["SendFailedBatches"]["Resource"] == {"Fn::GetAtt": "IndexerFailures.Arn"}
    assert statements["WriteOwnLogs"]["Resource"] == {"Fn::GetAtt": "IndexerLogs.Arn"}
    domain = statements["WriteTheNotesIndexDomain"]
    assert set(domain["Action"]) == {
        "es:ESHttpGet",
        "es:ESHttpHead",
        "es:ESHttpPut",
        "es:ESHttpPost",  # _bulk: upserts, in-place updates and removals of a batch
    }
    assert domain["Resource"] == DOMAIN_INDICES
    assert statements["WriteTheNotesIndexCollection"]["Resource"] == {"Ref": "OpenSearchResourceArn"}
    for statement in statements.values():
        assert all("*" not in action for action in _actions(statement))
        if statement["Resource"] == "*":
            assert statement["Sid"] in {"ListStreams", "Tracing"}  # no resource-level permissions exist


@pytest.mark.parametrize("function", ["ToolsFunction", "ManagementFunction", "PlatformFunction"])
def test_recall_may_only_search_the_index(function):
    """Recall searches; the platform's erase removes through _bulk (POST) and counts: neither creates nor puts."""
    granted = {}
    for policy in load_template()["Resources"][function]["Properties"]["Policies"]:
        if "Fn::If" in policy and policy["Fn::If"][0].startswith("HasOpenSearch"):
            [statement] = policy["Fn::If"][1]["Statement"]
            granted[policy["Fn::If"][0]] = (set(_actions(statement)), statement["Resource"])
    assert granted == {
        "HasOpenSearchDomain": (
            {"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost"},
            DOMAIN_INDICES,
        ),
        "HasOpenSearchCollection": ({"aoss:APIAccessAll"}, {"Ref": "OpenSearchResourceArn"}),
    }


def _actions(statement):
    return statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]


_EMBEDDING_MODEL_ARN = {
    "Fn::Sub": [
        "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${ModelId}",
        {"ModelId": {"Fn::Select": [1, {"Fn::Split": ["bedrock:", {"Fn::Sub": "${EmbeddingModel}bedrock:"}]}]}},
    ]
}


@pytest.mark.parametrize("function", ["ToolsFunction", "ManagementFunction", "FlushFunction"])
def test_embedding_may_invoke_only_the_named_bedrock_model(function):
    properties = load_template()["Resources"][function]["Properties"]
    [granted] = [
        policy["Fn::If"]
        for policy in properties["Policies"]
        if "Fn::If" in policy and policy["Fn::If"][0] == "HasBedrockEmbeddingModel"
    ]
    [statement] = granted[1]["Statement"]
    assert (statement["Action"], statement["Resource"]) == ("bedrock:InvokeModel", _EMBEDDING_MODEL_ARN)
    assert properties["Environment"]["Variables"]["MEMORY_EMBEDDING_MODEL"] == {"Ref": "EmbeddingModel"}


def test_the_indexer_may_invoke_only_the_named_embedding_model():
    statement = _indexer_statements()["EmbedNotesWithBedrock"]
    assert (statement["Action"], statement["Resource"]) == ("bedrock:InvokeModel", _EMBEDDING_MODEL_ARN)
    # With or without an index: without one, vectors are stored on the notes (docs/recall-quality.md).
    assert "EmbedsWithBedrock" not in load_template()["Conditions"]


def test_the_platforms_routes_are_granted_apart_from_the_turn_traffics():
    """PlatformOperationsPolicy: execute-api:Invoke on exactly the platform's routes, for a role of their own."""
    resources = load_template()["Resources"]
    (statement,) = resources["PlatformOperationsPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    prefix = "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${MemoryApi}/$default/"
    granted = set()
    for resource in statement["Resource"]:
        assert resource["Fn::Sub"].startswith(prefix)
        method, path = resource["Fn::Sub"].removeprefix(prefix).split("/", 1)
        granted.add((method, "/" + path))
    routes = {
        (route.method, re.sub(r"\{\w+\}", "*", route.path))
        for route in http_routes()
        if route.function == "PlatformFunction"
    }
    assert statement["Action"] == "execute-api:Invoke"
    assert granted == routes and len(routes) == 8
    assert all(route.authorizer == "AWS_IAM" for route in http_routes() if route.path.startswith("/v1/platform/"))
    platform = json.dumps(resources["PlatformFunction"])
    assert "ChatModel" not in platform  # it calls no chat model: an import's document is refused over the hard limit
    assert "EmbeddingModel" in platform  # it embeds an imported note, as remember does, when vectors are in the table
