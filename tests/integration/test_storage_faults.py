"""docs/api.md §6 "Storage faults": a DynamoDB that times out or cannot be reached is a 503 with Retry-After
(for a write: the outcome is unknown), never a 500; and an unversioned update_memory never answers 409.

Faults are injected where botocore has given up: a wrapper around the real moto client raises botocore's
own exceptions (a read timeout, a connect timeout, an endpoint it cannot reach, a closed connection).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from agent_memory import bootstrap
from agent_memory.storage.client import make_dynamodb_client
from tests.support.management import SECRET, USER, manage
from tests.support.scopes import private

URL = "https://dynamodb.eu-west-1.amazonaws.com"
FAULTS = {
    "read-timeout": lambda: ReadTimeoutError(endpoint_url=URL),
    "connect-timeout": lambda: ConnectTimeoutError(endpoint_url=URL),
    "unreachable": lambda: EndpointConnectionError(endpoint_url=URL),
    "closed": lambda: ConnectionClosedError(endpoint_url=URL),
}
WRITES = ("put_item", "update_item", "transact_write_items", "delete_item")


class TimingOutClient:
    """The real client, except that the named operations raise a botocore fault (retries spent)."""

    def __init__(self, real: Any, operations: set[str], fault: Any) -> None:
        self._real, self._operations, self._fault = real, operations, fault

    def __getattr__(self, name: str) -> Any:
        if name not in self._operations:
            return getattr(self._real, name)

        def _fail(**_: Any) -> Any:
            raise self._fault()

        return _fail


@pytest.fixture
def storage_down(aws, monkeypatch):
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", SECRET)

    def _inject(fault: str, *operations: str) -> None:
        bootstrap.provide(
            make_dynamodb_client=lambda *a, **k: TimingOutClient(
                make_dynamodb_client(*a, **k), set(operations), FAULTS[fault]
            ),
        )
        bootstrap.reset()

    return _inject


def _assert_503(answer) -> None:
    assert answer.status == 503, answer.body
    assert answer.body["error"]["code"] == "storage_unavailable"
    assert "outcome is unknown" in answer.body["error"]["message"]
    assert {k.lower(): v for k, v in answer.headers.items()}.get("retry-after", "").isdigit()


@pytest.mark.parametrize("fault", FAULTS)
def test_tool_writes_on_a_storage_timeout_are_503_with_retry_after(call, storage_down, fault):
    storage_down(fault, *WRITES)

    _assert_503(call("remember", {"context": private(), "arguments": {"text": "during the outage"}}))
    _assert_503(call("update_memory", {"context": private(), "arguments": {"content": "during the outage"}}))


@pytest.mark.parametrize("fault", ["read-timeout", "unreachable"])
def test_reads_on_a_storage_timeout_are_503_and_context_degrades(call, storage_down, fault):
    storage_down(fault, "query", "get_item")

    recalled = call("recall", {"context": private(), "arguments": {"query": "anything"}})
    context = call("context", {"context": private()})

    assert recalled.status in (200, 503)  # recall may answer from what it could read; never a 500
    assert context.status == 200 and set(context.body["degraded"]) <= {"document", "notes"}


@pytest.mark.parametrize("fault", ["read-timeout", "connect-timeout"])
def test_dashboard_writes_on_a_storage_timeout_are_503(storage_down, fault):
    storage_down(fault, *WRITES)

    _assert_503(manage("personal_put_document", token=USER, body={"content": "x", "expected_version": 0}))


@pytest.mark.parametrize("code", ["ThrottlingException", "ProvisionedThroughputExceededException"])
def test_a_throttle_not_wrapped_by_a_store_is_still_503(call, aws, monkeypatch, code):
    from botocore.exceptions import ClientError

    class Throttled(TimingOutClient):
        pass

    bootstrap.provide(
        make_dynamodb_client=lambda *a, **k: Throttled(
            make_dynamodb_client(*a, **k),
            set(WRITES) | {"query", "get_item"},
            lambda: ClientError({"Error": {"Code": code, "Message": "injected"}}, "Op"),
        ),
    )
    bootstrap.reset()

    _assert_503(call("update_memory", {"context": private(), "arguments": {"content": "x"}}))
