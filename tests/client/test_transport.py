"""Timeouts, bounded retries with jitter on 429/503, the idempotency key of a write, and typed errors: the same
for the blocking and the async clients (each test runs with both)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from agent_memory_client import (
    BadRequest,
    ConversationContext,
    Forbidden,
    MemoryApiError,
    MemoryClient,
    MemoryTransportError,
    RateLimited,
    ServiceUnavailable,
)

from tests.support.clients import Flavour

CTX = ConversationContext(user_id="u-1", thread_id="t-1")
NOTE = {"id": "2026-12-03.1", "day": "2026-12-03", "position": 1, "text": "x"}


class Script:
    """Answers the requests in turn with the scripted responses (or raises a scripted transport error)."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def client_for(flavour: Flavour, script: Script, sleeps: list[float], attempts: int = 3) -> MemoryClient:
    retry = flavour.retry(sleeps, max_attempts=attempts, base_delay_s=0.1, max_delay_s=2.0)
    return flavour.memory("http://127.0.0.1:3000", retry=retry, http=flavour.mock(script))


def error(status: int, code: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": code.replace("_", " ")}}, headers=headers)


def test_a_503_then_a_429_are_retried_with_the_same_idempotency_key(flavour: Flavour) -> None:
    script = Script(
        error(503, "storage_unavailable", {"Retry-After": "1"}),
        error(429, "throttled"),
        httpx.Response(201, json={"note": NOTE, "truncated": False}),
    )
    sleeps: list[float] = []

    answer = client_for(flavour, script, sleeps).remember(CTX, "x")

    assert answer["note"]["id"] == NOTE["id"]
    keys = {request.headers["idempotency-key"] for request in script.requests}
    assert len(script.requests) == 3 and len(keys) == 1
    assert sleeps[0] >= 1.0  # Retry-After is honoured
    assert 0 <= sleeps[1] <= 0.2  # full jitter within base * 2**(attempt-1)


def test_every_write_gets_its_own_key_and_reads_none(flavour: Flavour) -> None:
    script = Script(*(httpx.Response(200, json={"notes": [], "mode": "keyword"}) for _ in range(2)))
    client = client_for(flavour, script, [])
    client.recall(CTX, "q")
    script.answers = [httpx.Response(201, json={}), httpx.Response(201, json={})]
    client.remember(CTX, "a")
    client.remember(CTX, "b", idempotency_key="my-key")

    assert "idempotency-key" not in script.requests[0].headers
    assert script.requests[1].headers["idempotency-key"] != "my-key"
    assert script.requests[2].headers["idempotency-key"] == "my-key"


def test_retries_are_bounded_then_the_typed_error_is_raised(flavour: Flavour) -> None:
    script = Script(*(error(503, "storage_unavailable") for _ in range(3)))
    sleeps: list[float] = []

    with pytest.raises(ServiceUnavailable) as raised:
        client_for(flavour, script, sleeps).get_context(CTX)

    assert len(script.requests) == 3 and len(sleeps) == 2
    assert (raised.value.status, raised.value.code) == (503, "storage_unavailable")


def test_a_quota_until_midnight_is_not_waited_for(flavour: Flavour) -> None:
    script = Script(error(429, "quota_exceeded", {"Retry-After": "49500"}))
    sleeps: list[float] = []

    with pytest.raises(RateLimited) as raised:
        client_for(flavour, script, sleeps).remember(CTX, "x")

    assert sleeps == [] and len(script.requests) == 1
    assert raised.value.code == "quota_exceeded" and raised.value.retry_after_s == 49500


def test_lost_connections_are_retried_then_reported(flavour: Flavour) -> None:
    script = Script(httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.Response(200, json={"tools": []}))
    assert client_for(flavour, script, []).list_tools() == []

    script = Script(httpx.ConnectError("refused"), httpx.ConnectError("refused"))
    with pytest.raises(MemoryTransportError, match="ConnectError"):
        client_for(flavour, script, [], attempts=2).list_tools()


@pytest.mark.parametrize(
    ("answer", "expected", "code"),
    [
        (lambda: error(400, "malformed_request"), BadRequest, "malformed_request"),
        (lambda: error(415, "unsupported_media_type"), BadRequest, "unsupported_media_type"),
        (lambda: httpx.Response(403, json={"message": "Forbidden"}), Forbidden, "http_error"),  # API Gateway's refusal
        (lambda: httpx.Response(502, text="Bad Gateway"), ServiceUnavailable, "http_error"),
        (lambda: httpx.Response(418, json={"error": {"code": "teapot", "message": "no"}}), MemoryApiError, "teapot"),
    ],
)
def test_each_refusal_is_its_typed_error(
    flavour: Flavour, answer: Callable[[], httpx.Response], expected: type, code: str
) -> None:
    """``answer`` makes the response afresh: a response is read once, and each flavour reads its own."""
    response = answer()
    with pytest.raises(expected) as raised:
        client_for(flavour, Script(response), []).list_tools()
    assert raised.value.code == code and raised.value.status == response.status_code


def test_the_timeout_reaches_httpx_and_a_204_is_none(flavour: Flavour) -> None:
    script = Script(httpx.Response(204))
    management = flavour.management("http://127.0.0.1:3000", token=lambda: "fresh-token", http=flavour.mock(script))
    assert management.delete_note("2026-12-03.1", workspace="w-1") is None
    assert script.requests[0].url.path == "/v1/memory/workspaces/w-1/notes/2026-12-03.1"
    assert script.requests[0].headers["authorization"] == "Bearer fresh-token"

    client = flavour.memory("http://127.0.0.1:3000", timeout_s=1.5)
    assert client._transport._http.timeout == httpx.Timeout(1.5)


def test_an_unknown_keyword_is_a_type_error_as_for_any_function(flavour: Flavour) -> None:
    with pytest.raises(TypeError, match="regoin"):
        flavour.memory("http://127.0.0.1:3000", regoin="eu-west-1")
    with pytest.raises(TypeError, match=r"arguments: timeout$"):
        flavour.management("http://127.0.0.1:3000", token="t", timeout=3)
