"""The local stack refuses what a web page on another site can send it (docs/local-stack.md): a body not
declared as JSON on a JSON route (text/plain, a form or no type: what a browser sends cross-site without a
preflight), a Host that is not loopback (DNS rebinding) and an Origin that is not loopback, the development
sign-in included. The stack may point at a real table; no page a developer opens may write to it."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.stack import Stack, printed_sign_in_address

pytestmark = pytest.mark.slow

REMEMBER = json.dumps(
    {"context": {"user_id": "u-x", "thread_id": "t-1", "visibility": "private"}, "arguments": {"text": "planted"}}
)


def send(stack: Stack, method: str, path: str, body: str | None, headers: dict[str, str]) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", stack.api_port, timeout=10)
    try:
        connection.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        data = body.encode() if body is not None else b""
        connection.putheader("Content-Length", str(len(data)))
        connection.endheaders(data)
        answer = connection.getresponse()
        raw = answer.read()
        return answer.status, json.loads(raw) if raw else None
    finally:
        connection.close()


def notes_of_u_x(stack: Stack) -> list[str]:
    body = json.dumps({"context": {"user_id": "u-x", "thread_id": "t-1", "visibility": "private"}})
    status, answer = send(stack, "POST", "/v1/context", body, {"Content-Type": "application/json"})
    assert status == 200
    return [note["text"] for note in answer["recent_notes"]]


@pytest.fixture(autouse=True)
def _nothing_planted(stack: Stack) -> Iterator[None]:
    yield
    assert "planted" not in notes_of_u_x(stack)


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None]
)
def test_a_body_not_declared_as_json_is_415(stack: Stack, content_type: str | None) -> None:
    headers = {"Content-Type": content_type} if content_type else {}

    status, answer = send(stack, "POST", "/v1/tools/remember", REMEMBER, headers)

    assert (status, answer["error"]["code"]) == (415, "unsupported_media_type")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:3000", "192.168.1.20:3000", "127.0.0.1.evil.example"])
def test_a_host_that_is_not_loopback_is_refused(stack: Stack, host: str) -> None:
    status, answer = send(
        stack, "POST", "/v1/tools/remember", REMEMBER, {"Host": host, "Content-Type": "application/json"}
    )

    assert (status, answer["error"]["code"]) == (403, "forbidden")


@pytest.mark.parametrize("origin", ["https://evil.example", "http://127.0.0.1.evil.example", "null", "file://"])
@pytest.mark.parametrize("path", ["/v1/tools/remember", "/dashboard/dev-token"])
def test_an_origin_that_is_not_loopback_is_refused(stack: Stack, origin: str, path: str) -> None:
    body = REMEMBER if path.startswith("/v1") else json.dumps({"sub": "u-x", "workspaces": [], "admin": True})

    status, answer = send(stack, "POST", path, body, {"Origin": origin, "Content-Type": "application/json"})

    assert (status, answer["error"]["code"]) == (403, "forbidden")


def admitted(stack: Stack) -> str:
    """The Cookie header a browser holds after opening the printed address (its 303 sets it)."""
    target = urlsplit(printed_sign_in_address(stack))
    connection = http.client.HTTPConnection("127.0.0.1", stack.api_port, timeout=10)
    try:
        connection.request("GET", f"{target.path}?{target.query}")
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 303 and answer.getheader("Location") == "/dashboard/"
        cookie = answer.getheader("Set-Cookie") or ""
    finally:
        connection.close()
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
    return cookie.split(";", 1)[0]


def test_the_dev_sign_in_needs_the_key_printed_at_start(stack: Stack) -> None:
    own = {"Origin": f"http://127.0.0.1:{stack.api_port}", "Content-Type": "application/json"}
    body = json.dumps({"sub": "u-z", "workspaces": [], "admin": True})
    key = parse_qs(urlsplit(printed_sign_in_address(stack)).query)["key"][0]

    assert send(stack, "POST", "/dashboard/dev-token", body, own)[0] == 403
    wrong = {**own, "Cookie": "memory_local_sign_in=not-the-key"}
    assert send(stack, "POST", "/dashboard/dev-token", body, wrong)[0] == 403
    assert send(stack, "GET", "/dashboard/?key=not-the-key", None, {})[0] == 403
    assert len(key) >= 20  # a made one: the test stack does not set MEMORY_LOCAL_SIGN_IN_KEY
    assert send(stack, "POST", "/dashboard/dev-token", body, {**own, "Cookie": admitted(stack)})[0] == 200


def test_the_stacks_own_pages_and_clients_still_get_in(stack: Stack) -> None:
    own = {"Origin": f"http://127.0.0.1:{stack.api_port}", "Content-Type": "application/json"}
    localhost = {"Host": f"localhost:{stack.api_port}", "Content-Type": "APPLICATION/JSON; charset=utf-8"}
    token_body = json.dumps({"sub": "u-y", "workspaces": [], "admin": False})
    note = REMEMBER.replace("u-x", "u-y")

    assert send(stack, "POST", "/dashboard/dev-token", token_body, {**own, "Cookie": admitted(stack)})[0] == 200
    assert send(stack, "POST", "/v1/tools/remember", note, own)[0] == 201
    assert send(stack, "POST", "/v1/tools/remember", note, localhost)[0] == 201
