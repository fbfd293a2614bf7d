"""The functions' permissions as AWS applies them, for the tests on moto, which checks none.

Every AWS call made while a function's handler runs (``local.template.RUNNING_FUNCTION``) must be granted by
that function's policies in template.yaml: each action it needs, on the resource it names. A path that only a
rare fault takes (the settling of a write whose every answer was lost sends a ConditionCheck) could otherwise
call an action its function lacks and pass every test, then fail on AWS with AccessDenied. Here the call is
refused with ``AccessDeniedException``, as on AWS, and recorded, so the test fails even where the code degrades
past the refusal (``refused_calls``, checked after each test by the ``aws`` fixture).

What a call needs follows each service's IAM reference (``needed``): DynamoDB's ``TransactWriteItems`` needs the
action of each item, SQS's ``SendMessageBatch`` ``sqs:SendMessage``, Bedrock's ``Converse`` ``bedrock:InvokeModel``
on the model, ``Rerank`` ``bedrock:Rerank`` and ``bedrock:InvokeModel`` on the reranking model, Lambda's ``Invoke``
``lambda:InvokeFunction``; an OpenSearch request ``es:ESHttp<Method>`` on the path of the domain the template
creates (``NotesDomain``, its logical id its local name, as a table's). A service this module does not map is
refused too, so that a new one gets mapped rather than pass unchecked. Not checked: what a call needs beyond
its own resource (``kms:Decrypt`` on the key behind a SecureString or a secret, the foundation models behind an
inference profile), which the template cannot name; a Serverless collection's data access policy.

botocore's calls are held by ``refuse_ungranted`` (on the test session's ``before-parameter-build`` event);
OpenSearch's requests, which are HTTP, by ``tests.support.opensearch.HeldToTemplate`` (the OpenSearch tier's
connection class).

What a function is granted is read from template.yaml for the stack the test runs (``grants.py``); the ARNs of
both sides are built alike (``arns.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from botocore.exceptions import ClientError

from local.template import RUNNING_FUNCTION
from tests.support.iam.arns import domain_arn, function_arn, model_arn, of, parameter_arn, queue_arn, table_arn
from tests.support.iam.grants import decided, stack_of

_TRANSACT_ITEM_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
# SQS grants its batch operations through their single actions (SQS developer guide, "batch actions").
_SQS_ACTIONS = {f"{action}Batch": action for action in ("SendMessage", "DeleteMessage", "ChangeMessageVisibility")}
_BEDROCK_ACTIONS = {
    "InvokeModel": "InvokeModel",
    "Converse": "InvokeModel",
    "InvokeModelWithResponseStream": "InvokeModelWithResponseStream",
    "ConverseStream": "InvokeModelWithResponseStream",
}

NOTES_DOMAIN = "NotesDomain"

refused_calls: list[str] = []


def needed(service: str, operation: str, params: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """The (action, resource ARN) pairs a call needs; None when this module maps no such call."""
    needs = _NEEDS.get(service)
    return needs(operation, params) if needs is not None else None


def _dynamodb(operation: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
    if operation in ("TransactWriteItems", "TransactGetItems"):
        return [
            (f"dynamodb:{_TRANSACT_ITEM_ACTIONS[kind]}", table_arn(body["TableName"]))
            for item in params["TransactItems"]
            for kind, body in item.items()
        ]
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [(f"dynamodb:{operation}", table_arn(table)) for table in params["RequestItems"]]
    return [(f"dynamodb:{operation}", table_arn(params["TableName"], params.get("IndexName")))]


def _sqs(operation: str, params: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    if "QueueUrl" not in params:
        return None
    return [(f"sqs:{_SQS_ACTIONS.get(operation, operation)}", queue_arn(params["QueueUrl"]))]


def _lambda(operation: str, params: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    if operation not in ("Invoke", "InvokeWithResponseStream"):
        return None
    return [("lambda:InvokeFunction", function_arn(params["FunctionName"], params.get("Qualifier")))]


def _secretsmanager(operation: str, params: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    if operation not in ("GetSecretValue", "DescribeSecret"):
        return None
    secret = params["SecretId"]
    return [(f"secretsmanager:{operation}", secret if secret.startswith("arn:") else of("secretsmanager", secret))]


def _ssm(operation: str, params: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    names = {"GetParameter": [params.get("Name")], "GetParameters": params.get("Names", [])}.get(operation)
    if names is None:
        return None
    return [(f"ssm:{operation}", parameter_arn(name)) for name in names]


def _bedrock_runtime(operation: str, params: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    action = _BEDROCK_ACTIONS.get(operation)
    return None if action is None else [(f"bedrock:{action}", model_arn(params["modelId"]))]


def _bedrock_agent_runtime(operation: str, params: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """Rerank has no resource type (any ``Resource: "*"``) and needs InvokeModel on its model (Bedrock's user
    guide, "Permissions for reranking")."""
    if operation != "Rerank":
        return None
    configuration = params["rerankingConfiguration"]["bedrockRerankingConfiguration"]["modelConfiguration"]
    return [("bedrock:Rerank", "*"), ("bedrock:InvokeModel", model_arn(configuration["modelArn"]))]


def _opensearch(method: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A request to the notes domain, by its HTTP method (``es:ESHttpPost`` for ``_bulk`` and ``_search``)."""
    return [(f"es:ESHttp{method.capitalize()}", domain_arn(NOTES_DOMAIN, params["path"]))]


_NEEDS: dict[str, Callable[[str, Mapping[str, Any]], list[tuple[str, str]] | None]] = {
    "dynamodb": _dynamodb,
    "sqs": _sqs,
    "lambda": _lambda,
    "secretsmanager": _secretsmanager,
    "ssm": _ssm,
    "bedrock-runtime": _bedrock_runtime,
    "bedrock-agent-runtime": _bedrock_agent_runtime,
    "es": _opensearch,
}


def refuse_ungranted(params: dict[str, Any], model: Any, **_: Any) -> None:
    """botocore's ``before-parameter-build`` hook: an ungranted call fails as AWS would fail it."""
    why = refusal(model.service_model.service_name, model.name, params)
    if why is not None:
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": why}}, model.name)


def refusal(service: str, operation: str, params: Mapping[str, Any]) -> str | None:
    """Why AWS would refuse this call if made now, recorded in ``refused_calls``; None if granted, or if no
    handler is running (a test's own call)."""
    function = RUNNING_FUNCTION.get()
    if function is None:
        return None
    needs = needed(service, operation, params)
    if needs is None:
        refused_calls.append(f"{function} called {service} {operation}, which tests/support/iam maps to no IAM action")
        return refused_calls[-1]
    stack = stack_of(function)
    for action, resource in needs:
        if not decided(function, stack, action, resource):
            refused_calls.append(
                f"{function} is not allowed {action} on {resource} (template.yaml grants it no such statement)"
            )
            return refused_calls[-1]
    return None


@contextmanager
def running_as(function: str | None) -> Iterator[None]:
    """Calls made as ``function`` (None: the test's own, unchecked) while a handler runs: a test that plays
    another caller's writes in the middle of a handler's call (an erase, a dashboard delete) makes them as
    that caller, not as the handler's function."""
    token = RUNNING_FUNCTION.set(function)
    try:
        yield
    finally:
        RUNNING_FUNCTION.reset(token)
