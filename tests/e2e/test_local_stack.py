"""End to end: ``python -m local.server``, as ``make run`` starts it, driven over real HTTP and boto3."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import boto3
import pytest
from agent_memory_client import flush_before_compaction, flush_lambda_client
from moto.server import ThreadedMotoServer

from local.token import mint
from tests.support.events import event_body
from tests.support.fake_openai import fake_openai_server
from tests.support.stack import (
    FAKE_CREDENTIALS,
    README_CONTEXT,
    REMEMBER_LINE,
    ROOT,
    Stack,
    http,
    local_opener,
    memory_context,
    remember,
    running_stack,
)

pytestmark = pytest.mark.slow


def test_the_readme_session_remembers_a_note_and_injects_it(stack: Stack) -> None:
    remembered = remember(stack, README_CONTEXT, "Prefers metric units")

    assert remembered.status == 201, remembered.body
    note = remembered.body["note"]
    assert (note["position"], note["day"], note["text"]) == (1, "2026-12-03", "Prefers metric units")
    assert remembered.body["truncated"] is False

    context = memory_context(stack, README_CONTEXT)

    assert context.status == 200, context.body
    assert context.body["scope"] == "personal"
    assert note in context.body["recent_notes"]
    assert "Prefers metric units" in context.body["system_prompt"]


def test_each_request_is_one_line_on_stderr_and_no_metrics_blob_on_stdout(stack: Stack) -> None:
    def remember_lines() -> list[str]:
        return [line for line in stack.stderr().splitlines() if REMEMBER_LINE.match(line)]

    before = remember_lines()

    assert remember(stack, {**README_CONTEXT, "user_id": "u-log"}, "Logged once").status == 201

    assert len(remember_lines()) == len(before) + 1
    assert '"_aws"' not in stack.stdout()  # POWERTOOLS_METRICS_DISABLED: no EMF on the console


def test_a_private_context_in_another_users_thread_is_403_and_writes_nothing(stack: Stack) -> None:
    context = {"user_id": "u-3", "thread_id": "t-1", "visibility": "private"}

    refused = remember(stack, {**context, "thread_owner_id": "u-4"}, "Not mine to keep")

    assert refused.status == 403
    assert set(refused.body) == {"error"}
    assert isinstance(refused.body["error"]["code"], str) and refused.body["error"]["message"]
    assert memory_context(stack, context).body["recent_notes"] == []


def test_arguments_that_name_a_scope_are_422(stack: Stack) -> None:
    body = {"context": README_CONTEXT, "arguments": {"text": "x", "scope": "team"}}

    refused = http(stack, "POST", "/v1/tools/remember", body)

    assert refused.status == 422
    assert isinstance(refused.body["error"]["code"], str) and refused.body["error"]["message"]


def test_an_unknown_path_is_404_and_a_wrong_method_405_in_the_error_shape(stack: Stack) -> None:
    missing = http(stack, "GET", "/v1/nowhere")
    wrong_method = http(stack, "GET", "/v1/tools/remember")

    assert missing.status == 404
    assert missing.body["error"]["code"] == "not_found"
    assert wrong_method.status == 405
    assert wrong_method.body["error"]["code"] == "method_not_allowed"
    assert wrong_method.headers["Allow"] == "POST"


def test_the_tool_list_has_the_three_tools(stack: Stack) -> None:
    tools = http(stack, "GET", "/v1/tools")

    assert tools.status == 200
    assert sorted(tool["name"] for tool in tools.body["tools"]) == ["recall", "remember", "update_memory"]


def test_recall_finds_a_note_in_its_own_scope_only(stack: Stack) -> None:
    mine = {"user_id": "u-recall", "thread_id": "t-1", "visibility": "private"}
    team = {"user_id": "u-recall", "thread_id": "t-2", "visibility": "shared", "workspace_id": "w-recall"}
    remember(stack, team, "Deploys the billing service on Tuesdays")
    note = remember(stack, mine, "Deploys the kubernetes cluster on Fridays").body["note"]

    found = http(stack, "POST", "/v1/tools/recall", {"context": mine, "arguments": {"query": "Kubernetes deploys"}})

    assert found.status == 200, found.body
    assert found.body["mode"] == "hybrid"  # local:minilm, the stack's default
    assert [{k: v for k, v in hit.items() if k != "score"} for hit in found.body["notes"]] == [note]
    blank = http(stack, "POST", "/v1/tools/recall", {"context": mine, "arguments": {"query": " "}})
    assert blank.status == 422


def test_with_nothing_set_recall_is_hybrid_and_finds_a_note_that_shares_no_word_with_the_question(
    stack: Stack,
) -> None:
    """A newcomer's first recall: the stack says it uses local:minilm, and finds the note by its meaning."""
    context = {"user_id": "u-newcomer", "thread_id": "t-1", "visibility": "private"}
    note = remember(stack, context, "Prefers metric units").body["note"]

    question = {"query": "what measurement system does the user like?"}
    found = http(stack, "POST", "/v1/tools/recall", {"context": context, "arguments": question})

    assert found.status == 200, found.body
    assert found.body["mode"] == "hybrid"
    assert [hit["id"] for hit in found.body["notes"]] == [note["id"]]
    assert "  Embeddings     local:minilm" in stack.stderr()


def test_parallel_requests_each_get_their_own_answer(stack: Stack) -> None:
    """The handlers share Powertools' current event: the stack must not let one request read another's."""
    users = [f"u-par-{i}" for i in range(16)]

    with ThreadPoolExecutor(max_workers=len(users)) as pool:
        answers = list(pool.map(lambda user: remember(stack, {**README_CONTEXT, "user_id": user}, user), users))

    assert [answer.status for answer in answers] == [201] * len(users)
    assert [(a.body["note"]["origin"]["user_id"], a.body["note"]["text"]) for a in answers] == [(u, u) for u in users]


# --- The Lambda Invoke API -------------------------------------------------------------------------------------


def test_boto3_invokes_a_function_by_its_logical_id(lambda_client: Any) -> None:
    invoked = lambda_client.invoke(FunctionName="ToolsFunction", Payload=(ROOT / "events/health.json").read_bytes())

    assert invoked["StatusCode"] == 200
    assert "FunctionError" not in invoked
    assert invoked["ExecutedVersion"] == "$LATEST"
    payload = json.load(invoked["Payload"])
    assert payload["statusCode"] == 200
    assert json.loads(payload["body"]) == {"status": "ok"}


def test_an_unknown_function_raises_resource_not_found(lambda_client: Any) -> None:
    with pytest.raises(lambda_client.exceptions.ResourceNotFoundException):
        lambda_client.invoke(FunctionName="NoSuchFunction", Payload=b"{}")


def test_a_function_that_raises_is_an_unhandled_function_error(lambda_client: Any) -> None:
    invoked = lambda_client.invoke(FunctionName="ToolsFunction", Payload=b"{}")  # not an API Gateway event

    assert invoked["StatusCode"] == 200
    assert invoked["FunctionError"] == "Unhandled"
    assert set(json.load(invoked["Payload"])) >= {"errorMessage", "errorType", "stackTrace"}


@pytest.mark.parametrize(("invocation_type", "status"), [("Event", 202), ("DryRun", 204)])
def test_event_and_dry_run_invocations(lambda_client: Any, invocation_type: str, status: int) -> None:
    payload = (ROOT / "events/health.json").read_bytes()

    invoked = lambda_client.invoke(FunctionName="ToolsFunction", InvocationType=invocation_type, Payload=payload)

    assert invoked["StatusCode"] == status


# --- Storage elsewhere ------------------------------------------------------------------------------------------


def test_an_external_endpoint_keeps_its_tables_and_data_across_restarts(tmp_path: Path) -> None:
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    _, port = moto.get_host_and_port()
    endpoint = f"http://127.0.0.1:{port}"
    dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, **FAKE_CREDENTIALS)
    context = {"user_id": "u-ext", "thread_id": "t-1", "visibility": "private"}
    try:
        with running_stack(tmp_path / "first", AWS_ENDPOINT_URL_DYNAMODB=endpoint) as first:
            note = remember(first, context, "Deploys happen on Tuesdays").body["note"]
        created_at = dynamodb.describe_table(TableName="MemoryTable")["Table"]["CreationDateTime"]

        with running_stack(tmp_path / "second", AWS_ENDPOINT_URL_DYNAMODB=endpoint) as second:
            injected = memory_context(second, context)

        assert injected.status == 200
        assert note in injected.body["recent_notes"]
        assert dynamodb.describe_table(TableName="MemoryTable")["Table"]["CreationDateTime"] == created_at
    finally:
        # moto's state belongs to this process, not to the server: leave nothing for the next test.
        local_opener.open(urllib.request.Request(f"http://127.0.0.1:{port}/moto-api/reset", method="POST"), timeout=10)
        moto.stop()


# --- The gateway's translation, in process (no handler can be made to misbehave over HTTP) ---------------------


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key of nested dicts, as dotted paths: the shape of an event, whatever its values."""
    if not isinstance(value, dict):
        return set()
    return {path for key, inner in value.items() for path in {prefix + key} | key_paths(inner, f"{prefix}{key}.")}


def test_the_stack_builds_events_of_the_shape_of_the_repos_events() -> None:
    from local.server import HttpRequest, api_gateway_event, api_routes

    route = next(route for route in api_routes() if route.route_key == "POST /v1/context")
    headers = [("Host", "127.0.0.1:3000"), ("Content-Type", "application/json"), ("X-Tag", "a"), ("x-tag", "b")]
    request = HttpRequest("POST", "/v1/context?k=1&k=2", "HTTP/1.1", "127.0.0.1", headers, b'{"context": {}}')

    event = api_gateway_event(request, route, {})

    reference = json.loads((ROOT / "events/context.json").read_text())
    reference["requestContext"].pop("authorizer")  # the IAM authorizer's identity: none locally, no SigV4
    not_headers = {path for path in key_paths(reference) if not path.startswith("headers.")}  # the client's own
    assert not_headers <= key_paths(event)
    assert event["headers"]["x-tag"] == "a,b"
    assert event["queryStringParameters"] == {"k": "1,2"}
    assert (event["body"], event["isBase64Encoded"]) == ('{"context": {}}', False)
    binary = api_gateway_event(replace(request, body=b"\xff"), route, {})
    assert (binary["body"], binary["isBase64Encoded"]) == ("/w==", True)


@pytest.mark.parametrize(
    "result",
    [
        {"statusCode": "200"},
        {"statusCode": 200, "body": {"not": "a string"}},
        {"statusCode": 200, "headers": ["x"]},
        {"statusCode": 200, "body": "!!", "isBase64Encoded": True},
        {"statusCode": 200, "headers": {"x": "a\r\nInjected: yes"}},
        {1, 2},
    ],
)
def test_a_result_the_gateway_cannot_read_is_a_502_in_the_error_shape(result: Any) -> None:
    from local.server import GatewayError, http_reply

    with pytest.raises(GatewayError) as refused:
        http_reply("ToolsFunction", result)

    assert refused.value.reply.status == 502
    assert json.loads(refused.value.reply.body)["error"]["code"] == "bad_gateway"


# --- The flush, through the chat backend's client helper ------------------------------------------------------


def test_the_client_helper_flushes_through_the_invoke_api_once_per_event(tmp_path: Path) -> None:
    summary = "Planning the billing migration; open: payments sign-off."
    with (
        fake_openai_server(reply=summary) as model,
        running_stack(tmp_path, MEMORY_CHAT_MODEL="openai:fake", OPENAI_BASE_URL=model.base_url) as running,
    ):
        client = flush_lambda_client(endpoint_url=f"http://127.0.0.1:{running.lambda_port}", **FAKE_CREDENTIALS)
        payload = event_body("flush")

        def flush() -> dict[str, Any]:
            return flush_before_compaction(
                client,
                "FlushFunction",
                context=payload["context"],
                compaction_id=payload["compaction_id"],
                messages=payload["messages"],
            )

        first, second = flush(), flush()
        turn = memory_context(running, payload["context"]).body
        model_calls = model.calls()

    assert first["status"] == "written"
    assert first["note"]["text"] == summary
    assert second == {"status": "duplicate", "note": first["note"]}
    assert model_calls == 1
    assert [note["text"] for note in turn["recent_notes"]] == [summary]


# --- The dashboard API ------------------------------------------------------------------------------------------


def test_the_dashboard_api_checks_the_local_token_itself(stack: Stack) -> None:
    user = mint("u-5", ["w-5"])
    remember(stack, {"user_id": "u-5", "thread_id": "t-1", "visibility": "shared", "workspace_id": "w-5"}, "team fact")

    assert http(stack, "GET", "/v1/memory/personal/document").status == 401
    assert http(stack, "GET", "/v1/memory/workspaces/w-6/document", token=user).status == 403
    saved = http(stack, "PUT", "/v1/memory/personal/document", {"content": "# mine", "expected_version": 0}, token=user)
    notes = http(stack, "GET", "/v1/memory/workspaces/w-5/notes?days=2", token=user)

    assert saved.status == 200 and saved.body["document"]["version"] == 1
    assert notes.status == 200 and notes.body["days"][0]["notes"][0]["text"] == "team fact"


def test_an_operator_starts_a_run_and_sees_it_listed(stack: Stack) -> None:
    operator = mint("ops", [], admin=True)

    started = http(stack, "POST", "/v1/admin/consolidation/runs", token=operator)
    assert started.status == 202
    deadline = time.monotonic() + 20
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        runs = http(stack, "GET", "/v1/admin/consolidation/runs?limit=5", token=operator).body["runs"]
        if any(run["run_id"] == started.body["run_id"] and run["finished_at"] for run in runs):
            break
        time.sleep(0.2)
    run = next(run for run in runs if run["run_id"] == started.body["run_id"])
    assert run["finished_at"] is not None and run["failures"] == []
