"""tests/support/iam: the permissions that the moto tiers hold each handler's AWS calls to, read from
template.yaml as AWS applies them."""

from __future__ import annotations

import copy

import pytest
from botocore.exceptions import ClientError
from opensearchpy import AuthorizationException

from local.template import RUNNING_FUNCTION, load_template
from tests.support.iam import needed, refuse_ungranted, refused_calls
from tests.support.iam.grants import granted, is_allowed, is_granted, statements
from tests.support.opensearch import HeldToTemplate

ACCOUNT = "123456789012"
TABLE = f"arn:aws:dynamodb:eu-west-1:{ACCOUNT}:table/MemoryTable"
QUEUE_URL = f"https://sqs.eu-west-1.amazonaws.com/{ACCOUNT}/memory-ConsolidationQueue-1A2B"
DOMAIN = f"arn:aws:es:eu-west-1:{ACCOUNT}:domain/NotesDomain"
QUEUE = f"arn:aws:sqs:eu-west-1:{ACCOUNT}:memory-ConsolidationQueue-1A2B"
SECRET = f"arn:aws:secretsmanager:eu-west-1:{ACCOUNT}:secret:model-key-AbCdEf"
PARAMETER = f"arn:aws:ssm:eu-west-1:{ACCOUNT}:parameter/memory/model-key"
CHAT_MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
PROFILE = "eu.anthropic.claude-3-7-sonnet-20250219-v1:0"
RERANK_MODEL = "amazon.rerank-v1:0"
EMBEDDING_MODEL = "amazon.titan-embed-text-v2:0"


def foundation_model(model: str) -> str:
    return f"arn:aws:bedrock:eu-west-1::foundation-model/{model}"


class _Service:
    def __init__(self, name: str) -> None:
        self.service_name = name


class _Operation:
    """What botocore hands the hook: the operation's name and its service's."""

    def __init__(self, name: str, service: str = "dynamodb") -> None:
        self.name = name
        self.service_model = _Service(service)


@pytest.fixture
def stack(monkeypatch):
    """The variables through which the template passes its resources and parameters to the functions, as a
    deployed stack would set them (a queue's URL, the secret's ARN, the models)."""
    for name, value in {
        "MEMORY_CONSOLIDATION_QUEUE_URL": QUEUE_URL,
        "MEMORY_CONSOLIDATE_FUNCTION": "memory-ConsolidateFunction-XYZ",
        "OPENAI_API_KEY_SECRET": SECRET,
        "MEMORY_CHAT_MODEL": f"bedrock:{CHAT_MODEL}",
        "MEMORY_RERANK_MODEL": f"bedrock:{RERANK_MODEL}",
        "MEMORY_EMBEDDING_MODEL": f"bedrock:{EMBEDDING_MODEL}",
    }.items():
        monkeypatch.setenv(name, value)


def test_a_transaction_needs_the_action_of_each_of_its_items():
    items = [
        {"Put": {"TableName": "MemoryTable", "Item": {}}},
        {"Update": {"TableName": "MemoryTable", "Key": {}}},
        {"ConditionCheck": {"TableName": "MemoryTable", "Key": {}}},
    ]

    assert needed("dynamodb", "TransactWriteItems", {"TransactItems": items}) == [
        ("dynamodb:PutItem", TABLE),
        ("dynamodb:UpdateItem", TABLE),
        ("dynamodb:ConditionCheckItem", TABLE),
    ]
    assert needed("dynamodb", "BatchGetItem", {"RequestItems": {"MemoryTable": {}}}) == [
        ("dynamodb:BatchGetItem", TABLE)
    ]
    assert needed("dynamodb", "Query", {"TableName": "MemoryTable", "IndexName": "Unconsolidated"}) == [
        ("dynamodb:Query", f"{TABLE}/index/Unconsolidated")
    ]


def test_each_services_call_needs_the_action_of_its_iam_reference_on_the_resource_it_names():
    assert needed("sqs", "SendMessageBatch", {"QueueUrl": QUEUE_URL, "Entries": []}) == [("sqs:SendMessage", QUEUE)]
    assert needed("sqs", "DeleteMessageBatch", {"QueueUrl": QUEUE_URL}) == [("sqs:DeleteMessage", QUEUE)]
    assert needed("lambda", "Invoke", {"FunctionName": "consolidate", "InvocationType": "Event"}) == [
        ("lambda:InvokeFunction", f"arn:aws:lambda:eu-west-1:{ACCOUNT}:function:consolidate")
    ]
    assert needed("lambda", "Invoke", {"FunctionName": f"{ACCOUNT}:function:consolidate", "Qualifier": "live"}) == [
        ("lambda:InvokeFunction", f"arn:aws:lambda:eu-west-1:{ACCOUNT}:function:consolidate:live")
    ]
    assert needed("secretsmanager", "GetSecretValue", {"SecretId": SECRET}) == [
        ("secretsmanager:GetSecretValue", SECRET)
    ]
    assert needed("ssm", "GetParameter", {"Name": "/memory/model-key", "WithDecryption": True}) == [
        ("ssm:GetParameter", PARAMETER)
    ]
    assert needed("bedrock-runtime", "Converse", {"modelId": CHAT_MODEL}) == [
        ("bedrock:InvokeModel", foundation_model(CHAT_MODEL))
    ]
    assert needed("bedrock-runtime", "ConverseStream", {"modelId": PROFILE}) == [
        ("bedrock:InvokeModelWithResponseStream", f"arn:aws:bedrock:eu-west-1:{ACCOUNT}:inference-profile/{PROFILE}")
    ]
    assert needed("bedrock-runtime", "InvokeModel", {"modelId": EMBEDDING_MODEL}) == [
        ("bedrock:InvokeModel", foundation_model(EMBEDDING_MODEL))
    ]
    rerank = {"bedrockRerankingConfiguration": {"modelConfiguration": {"modelArn": foundation_model(RERANK_MODEL)}}}
    assert needed("bedrock-agent-runtime", "Rerank", {"rerankingConfiguration": rerank}) == [
        ("bedrock:Rerank", "*"),
        ("bedrock:InvokeModel", foundation_model(RERANK_MODEL)),
    ]


def test_an_opensearch_request_needs_its_methods_action_on_its_path_of_the_notes_domain():
    assert needed("es", "POST", {"path": "/notes/_search"}) == [("es:ESHttpPost", f"{DOMAIN}/notes/_search")]
    assert needed("es", "HEAD", {"path": "/_alias/notes"}) == [("es:ESHttpHead", f"{DOMAIN}/_alias/notes")]
    assert is_granted("ToolsFunction", "es:ESHttpPost", f"{DOMAIN}/_msearch")
    assert not is_granted("ToolsFunction", "es:ESHttpPut", f"{DOMAIN}/notes-v1")  # recall only reads
    assert is_granted("IndexerFunction", "es:ESHttpPut", f"{DOMAIN}/notes-v1")  # through its own role
    assert not is_granted("IndexerFunction", "es:ESHttpDelete", f"{DOMAIN}/notes-v1/_doc/1")
    assert not is_granted("PlatformFunction", "es:ESHttpPost", DOMAIN.replace("NotesDomain", "Other") + "/_bulk")
    assert not is_granted("ContextFunction", "es:ESHttpGet", f"{DOMAIN}/notes/_search")


def test_a_refused_opensearch_request_fails_with_the_domains_403_before_it_is_sent():
    connection = HeldToTemplate(host="127.0.0.1", port=9, timeout=1)  # the discard port: a request sent fails else
    token = RUNNING_FUNCTION.set("ContextFunction")
    try:
        with pytest.raises(AuthorizationException) as refused:
            connection.perform_request("POST", "/notes/_search", body=b"{}")
    finally:
        RUNNING_FUNCTION.reset(token)
        refused_calls.clear()

    assert refused.value.status_code == 403
    assert f"ContextFunction is not allowed es:ESHttpPost on {DOMAIN}/notes/_search" in str(refused.value.info)


def test_a_call_the_check_does_not_map_needs_nothing_it_could_grant():
    assert needed("s3", "GetObject", {"Bucket": "b", "Key": "k"}) is None
    assert needed("lambda", "DeleteFunction", {"FunctionName": "f"}) is None


def test_a_grant_on_the_table_is_not_a_grant_on_its_indexes():
    assert is_granted("ConsolidateFunction", "dynamodb:Query", TABLE)
    assert is_granted("ConsolidateFunction", "dynamodb:Query", f"{TABLE}/index/Unconsolidated")
    assert not is_granted("ToolsFunction", "dynamodb:Query", f"{TABLE}/index/Unconsolidated")
    assert not is_granted("ToolsFunction", "dynamodb:Query", TABLE.replace("MemoryTable", "OtherTable"))


def test_a_statement_under_a_condition_counts_and_names_its_index():
    assert is_granted("ToolsFunction", "dynamodb:SearchVectors", f"{TABLE}/index/NoteVectors")
    assert not is_granted("ToolsFunction", "dynamodb:SearchVectors", f"{TABLE}/index/Elsewhere")
    assert not is_granted("ContextFunction", "dynamodb:SearchVectors", f"{TABLE}/index/NoteVectors")


def test_the_planner_may_send_to_the_queue_its_environment_names_and_no_other(stack):
    assert is_granted("ConsolidateFunction", "sqs:SendMessage", QUEUE)
    assert not is_granted("ConsolidateFunction", "sqs:SendMessage", QUEUE.replace("Consolidation", "Other"))
    assert not is_granted("ConsolidateFunction", "sqs:DeleteMessage", QUEUE)
    assert not is_granted("ConsolidateWorkerFunction", "sqs:SendMessage", QUEUE)
    assert not is_granted("ToolsFunction", "sqs:SendMessage", QUEUE)


def test_only_the_dashboard_may_start_a_run_and_only_of_the_consolidation(stack):
    consolidate = f"arn:aws:lambda:eu-west-1:{ACCOUNT}:function:memory-ConsolidateFunction-XYZ"

    assert is_granted("ManagementFunction", "lambda:InvokeFunction", consolidate)
    assert not is_granted("ManagementFunction", "lambda:InvokeFunction", consolidate.replace("Consolidate", "Flush"))
    assert not is_granted("ManagementFunction", "lambda:InvokeFunction", f"{consolidate}:live")
    assert not is_granted("ToolsFunction", "lambda:InvokeFunction", consolidate)


@pytest.mark.parametrize("function", ["ToolsFunction", "FlushFunction", "ConsolidateWorkerFunction", "IndexerFunction"])
def test_the_model_key_is_readable_by_the_functions_that_call_a_model_and_only_it(stack, function, monkeypatch):
    assert is_granted(function, "secretsmanager:GetSecretValue", SECRET)
    assert not is_granted(function, "secretsmanager:GetSecretValue", SECRET.replace("model-key", "other"))
    assert not is_granted("ContextFunction", "secretsmanager:GetSecretValue", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY_SECRET", PARAMETER)
    assert is_granted(function, "ssm:GetParameter", PARAMETER)
    assert not is_granted(function, "ssm:GetParameter", PARAMETER.replace("model-key", "other"))


def test_each_function_may_invoke_the_models_it_calls_and_no_other(stack):
    chat, embedding, rerank = map(foundation_model, (CHAT_MODEL, EMBEDDING_MODEL, RERANK_MODEL))

    assert is_granted("ToolsFunction", "bedrock:InvokeModel", chat)
    assert is_granted("ToolsFunction", "bedrock:InvokeModel", embedding)
    assert is_granted("ToolsFunction", "bedrock:Rerank", "*")
    assert is_granted("ToolsFunction", "bedrock:InvokeModel", rerank)
    assert not is_granted("ToolsFunction", "bedrock:InvokeModel", foundation_model("anthropic.claude-opus"))
    assert not is_granted("ToolsFunction", "bedrock:InvokeModelWithResponseStream", chat)
    assert not is_granted("FlushFunction", "bedrock:Rerank", "*")
    assert is_granted("IndexerFunction", "bedrock:InvokeModel", embedding)  # through its own role
    assert not is_granted("IndexerFunction", "bedrock:InvokeModel", chat)
    assert not any(is_granted("ContextFunction", "bedrock:InvokeModel", model) for model in (chat, embedding))


def test_the_chat_model_through_an_inference_profile_is_granted_on_the_profile(stack, monkeypatch):
    monkeypatch.setenv("MEMORY_CHAT_MODEL", f"bedrock:{PROFILE}")
    [(action, profile)] = needed("bedrock-runtime", "Converse", {"modelId": PROFILE}) or []

    assert is_granted("FlushFunction", action, profile)
    assert not is_granted("FlushFunction", action, profile.replace("eu.", "us."))


def test_a_deny_wins_and_a_statement_with_a_condition_grants_nothing():
    template = {
        "Resources": {
            "Fn": {
                "Properties": {
                    "Policies": [
                        {"Statement": [{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}]},
                        {"Statement": [{"Effect": "Deny", "Action": "sqs:DeleteMessage", "Resource": "*"}]},
                        {
                            "Statement": [
                                {
                                    "Effect": "Allow",
                                    "Action": "lambda:InvokeFunction",
                                    "Resource": "*",
                                    "Condition": {"StringEquals": {"aws:SourceAccount": ACCOUNT}},
                                }
                            ]
                        },
                    ]
                }
            }
        }
    }
    granted_here = statements(template, "Fn", {})

    assert is_allowed(granted_here, "sqs:SendMessage", QUEUE)
    assert not is_allowed(granted_here, "sqs:DeleteMessage", QUEUE)
    assert not is_allowed(granted_here, "lambda:InvokeFunction", "arn:aws:lambda:eu-west-1:1:function:f")


def test_the_planners_batch_is_refused_where_the_template_lacks_its_grant(stack):
    """Shown on tests/integration/test_consolidation_fanout.py: with SendTheNightsGroups removed from
    template.yaml, its planner tests fail with ``ConsolidateFunction is not allowed sqs:SendMessage``."""
    without = copy.deepcopy(load_template())
    for policy in without["Resources"]["ConsolidateFunction"]["Properties"]["Policies"]:
        if isinstance(policy, dict) and "Statement" in policy:
            policy["Statement"] = [s for s in policy["Statement"] if s["Sid"] != "SendTheNightsGroups"]
    local = {"ConsolidationQueue": QUEUE_URL}
    [(action, queue)] = needed("sqs", "SendMessageBatch", {"QueueUrl": QUEUE_URL, "Entries": []}) or []

    assert is_allowed(statements(load_template(), "ConsolidateFunction", local), action, queue)
    assert not is_allowed(statements(without, "ConsolidateFunction", local), action, queue)


def test_granted_follows_the_environment_of_the_test_that_runs(stack, monkeypatch):
    before = granted("ConsolidateFunction")
    monkeypatch.setenv("MEMORY_CONSOLIDATION_QUEUE_URL", f"http://127.0.0.1:5000/{ACCOUNT}/local-queue")

    assert granted("ConsolidateFunction") != before
    assert is_granted("ConsolidateFunction", "sqs:SendMessage", f"arn:aws:sqs:eu-west-1:{ACCOUNT}:local-queue")
    assert not is_granted("ConsolidateFunction", "sqs:SendMessage", QUEUE)


def test_a_call_outside_a_handler_is_not_checked_and_one_inside_is_refused_as_on_aws():
    refuse_ungranted({"TableName": "MemoryTable", "Key": {}}, _Operation("DeleteItem"))  # the test's own client
    token = RUNNING_FUNCTION.set("ContextFunction")
    try:
        refuse_ungranted({"TableName": "MemoryTable", "Key": {}}, _Operation("GetItem"))
        with pytest.raises(ClientError) as refused:
            refuse_ungranted({"TableName": "MemoryTable", "Key": {}}, _Operation("DeleteItem"))
        with pytest.raises(ClientError):
            refuse_ungranted({"QueueUrl": QUEUE_URL, "Entries": []}, _Operation("SendMessageBatch", "sqs"))
        with pytest.raises(ClientError):
            refuse_ungranted({"Bucket": "b", "Key": "k"}, _Operation("GetObject", "s3"))
    finally:
        RUNNING_FUNCTION.reset(token)
    try:
        assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
        grants_none = "(template.yaml grants it no such statement)"
        assert refused_calls == [
            f"ContextFunction is not allowed dynamodb:DeleteItem on {TABLE} {grants_none}",
            f"ContextFunction is not allowed sqs:SendMessage on {QUEUE} {grants_none}",
            "ContextFunction called s3 GetObject, which tests/support/iam maps to no IAM action",
        ]
    finally:
        refused_calls.clear()
